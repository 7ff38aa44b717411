"""``experiments --html``: the verdict report of ``feedback.experiments.verdicts`` on one
self-contained page in the shell every report shares (feedback/pages/page.py): per application its
control, sample-ratio test, its variants' units and searches, a picture of every difference from
the control with its interval (feedback/pages/charts.py) — oriented "better to the right" for
every rate (a lower-is-better rate's difference is drawn negated, and its label says so), green
better, red worse —, per rate each variant with its interval, difference, p-values, ratio and
verdict, and interleaving's Δ per variant."""

from __future__ import annotations

from html import escape
from typing import Any

from collector.series.experiment_stats import RATES
from feedback.experiments.verdicts import clustering, control_note
from feedback.pages.charts import interval_plot
from feedback.pages.page import cell, document

# each verdict's colour in the picture (feedback/pages/charts.py TONES)
_TONE = {"better": "better", "worse": "worse", "guardrail breached": "worse",
         "inconclusive": "neutral"}
_VERDICT_CLASS = {"better": "pass", "worse": "fail", "guardrail breached": "fail",
                  "inconclusive": "note"}


def _percent(value: float) -> str:
    return f"{value:.2%}"


def _interval(rated: dict[str, Any]) -> str:
    if rated.get("value") is None:
        return "<td>no data</td>"
    return (f'<td class="n" data-v="{rated["value"]}">{rated["value"]:.2%} '
            f'[{rated["low"]:.2%}, {rated["high"]:.2%}]</td>')


def _table(head: list[str], rows: list[str]) -> str:
    titles = "".join(f"<th>{escape(title)}</th>" for title in head)
    return (f'<div class="wide"><table><thead><tr>{titles}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table></div>")  # scrolls sideways when wider than the window


def _rate_table(variants: dict[str, Any]) -> str:
    rows = []
    for rate in RATES:
        for variant, entry in variants.items():
            rated = entry["rates"][rate.ratio]
            diff = rated.get("difference")
            cells = [f"<td>{escape(rate.title)}</td>", f"<td>{escape(variant)}</td>",
                     _interval(rated)]
            if diff is None:
                cells.append('<td colspan="8"></td>')
            else:
                relative = rated.get("ratio")
                cells += [f'<td class="n" data-v="{diff["value"]}">{diff["value"] * 100:+.2f} '
                          f'[{diff["low"] * 100:+.2f}, {diff["high"] * 100:+.2f}]</td>',
                          cell(diff["p_value"], _p), cell(diff["p_holm"], _p),
                          f'<td><span class="verdict {_VERDICT_CLASS[diff["verdict"]]}">'
                          f'{escape(diff["verdict"])}</span></td>',
                          "<td></td>" if relative is None else
                          f'<td class="n" data-v="{relative["value"]}">'
                          f'×{relative["value"]:.3f} [{relative["low"]:.3f}, '
                          f'{relative["high"]:.3f}]</td>',
                          cell(diff["power"], _percent), cell(diff["searches_needed"]),
                          cell(diff["units_needed"])]
            rows.append("<tr>" + "".join(cells) + "</tr>")
    return _table(["rate", "variant", "value [95 %]", "Δ vs control [95 %], points", "p",
                   "p (Holm)", "verdict", "ratio to control [95 %]", "power",
                   "more searches for 80 %", "more units"], rows)


def _p(value: float) -> str:
    return f"{value:.3g}"


def _differences(application: str, variants: dict[str, Any]) -> str:
    """Every rate's difference from the control, per variant, as one interval picture with
    better to the right: a lower-is-better rate's Δ and interval are negated."""
    lines = []
    for rate in RATES:
        sign, note = (1, "") if rate.higher_is_better else (-1, ", lower is better: −Δ")
        for variant, entry in variants.items():
            diff = entry["rates"][rate.ratio].get("difference")
            if diff is None:
                continue
            low, high = sorted((sign * diff["low"], sign * diff["high"]))
            lines.append((f"{rate.title} ({variant}{note})", sign * diff["value"], low, high,
                          _TONE[diff["verdict"]]))
    if not lines:
        return ""
    chart = interval_plot(lines, None, f"{application}: differences from the control",
                          axis="better →")
    return (f"<figure>{chart}<figcaption>Each variant's rate minus the control's, with its 95 % "
            "interval, oriented so that better is to the right (a rate where lower is better "
            "is drawn as −Δ, and says so); green: better, red: worse or a guardrail breached "
            "(Holm-adjusted verdicts)</figcaption></figure>")


def page(report: dict[str, Any]) -> str:
    design = report["design"]
    split = design["split"]
    parts = ["<h1>Experiment verdicts</h1>",
             f"<p>{escape(clustering(design))}; design "
             f"{escape(split if isinstance(split, str) else str(split))}. A unit is a "
             "client_id: searches without one are counted, in no statistic.</p>"]
    for application, found in report["applications"].items():
        parts.append(f"<h2>{escape(application)}</h2>"
                     f"<p>{escape(control_note(found, design['control_variant']))}</p>")
        srm = found["sample_ratio"]
        if srm is not None:
            flag = (' — <span class="verdict fail">sample-ratio mismatch</span>'
                    if srm["mismatch"] else "")
            parts.append(f"<p>Sample ratio: χ² {srm['chi2']:.2f} ({srm['df']} df), p = "
                         f"{srm['p_value']:.4g} over {srm['units']:,} units{flag}</p>")
        variants = found["variants"]
        if variants:
            rows = [f"<tr><td>{escape(v)}</td>{cell(e['units'])}{cell(e['searches'])}"
                    f"{cell(e['searches_without_client_id'])}</tr>"
                    for v, e in variants.items()]
            parts.append(_table(["variant", "units", "searches",
                                 "searches without client_id"], rows))
            parts.append(_differences(application, variants))
            parts.append(_rate_table(variants))
        for variant, inter in found["interleaving"].items():
            rows = [f"<tr><td>{escape(team)}</td>{cell(inter['wins'][team])}"
                    f"{_delta(delta)}{cell(delta['p_value'], _p)}</tr>"
                    for team, delta in inter["delta"].items()]
            parts.append(f"<h3>Interleaving ({escape(variant)}): {inter['ties']:,} ties</h3>"
                         + _table(["team", "wins", "Δ [95 %]", "p"], rows))
    return document("searchpulse experiments", "".join(parts))


def _delta(delta: dict[str, Any]) -> str:
    return (f'<td class="n" data-v="{delta["value"]}">{delta["value"]:+.4f} '
            f'[{delta["low"]:+.4f}, {delta["high"]:+.4f}]</td>')
