"""``experiments --html``: the verdict report of ``feedback.experiments`` on one self-contained
page: per application its sample-ratio test, per rate each variant with its interval and its
difference from the control."""

from __future__ import annotations

from html import escape
from typing import Any

from collector.experiment_stats import RATES
from feedback.report import STYLE

_VERDICT_COLOURS = {"better": "#27ae60", "worse": "#c0392b", "guardrail breached": "#c0392b",
                    "inconclusive": "#7f8c8d"}


def _cell(value: Any, percent: bool = False) -> str:
    if value is None:
        return '<td class="n">—</td>'
    if isinstance(value, float):
        return f'<td class="n">{value:.2%}</td>' if percent else f'<td class="n">{value:.4g}</td>'
    if isinstance(value, int):
        return f'<td class="n">{value:,}</td>'
    return f"<td>{escape(str(value))}</td>"


def _interval(rated: dict[str, Any]) -> str:
    if rated.get("value") is None:
        return "<td>no data</td>"
    return (f'<td class="n">{rated["value"]:.2%} [{rated["low"]:.2%}, '
            f'{rated["high"]:.2%}]</td>')


def _rate_table(variants: dict[str, Any]) -> str:
    head = ("<tr><th>rate</th><th>variant</th><th>value [95 %]</th><th>Δ vs control "
            "[95 %], points</th><th>verdict</th><th>power</th><th>more searches for 80 %"
            "</th><th>more units</th></tr>")
    rows = []
    for rate in RATES:
        for variant, entry in variants.items():
            rated = entry["rates"][rate.ratio]
            diff = rated.get("difference")
            cells = [f"<td>{escape(rate.title)}</td>", f"<td>{escape(variant)}</td>",
                     _interval(rated)]
            if diff is None:
                cells.append('<td colspan="5"></td>')
            else:
                colour = _VERDICT_COLOURS[diff["verdict"]]
                cells += [f'<td class="n">{diff["value"] * 100:+.2f} '
                          f'[{diff["low"] * 100:+.2f}, {diff["high"] * 100:+.2f}]</td>',
                          f'<td style="color:{colour}"><b>{escape(diff["verdict"])}</b></td>',
                          _cell(diff["power"], percent=True), _cell(diff["searches_needed"]),
                          _cell(diff["units_needed"])]
            rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def page(report: dict[str, Any]) -> str:
    design = report["design"]
    split = design["split"]
    parts = [f"<p>95 % intervals clustered by client: the delta method over "
             f"{design['unit_buckets']} hashed client buckets (t = {design['t']:.4f}); "
             f"control variant <b>{escape(design['control_variant'])}</b>; design "
             f"{escape(split if isinstance(split, str) else str(split))}.</p>"]
    for application, found in report["applications"].items():
        parts.append(f"<h2>{escape(application)}</h2>")
        srm = found["sample_ratio"]
        if srm is not None:
            flag = " — <b style=\"color:#c0392b\">sample-ratio mismatch</b>" if srm["mismatch"] \
                else ""
            parts.append(f"<p>Sample ratio: χ² {srm['chi2']:.2f} ({srm['df']} df), p = "
                         f"{srm['p_value']:.4g} over {srm['units']:,} units{flag}</p>")
        rows = "".join(f"<tr><td>{escape(v)}</td>{_cell(e['units'])}{_cell(e['searches'])}"
                       f"</tr>" for v, e in found["variants"].items())
        parts.append(f"<table><tr><th>variant</th><th>units</th><th>searches</th></tr>{rows}"
                     f"</table>{_rate_table(found['variants'])}")
        for variant, entry in found["variants"].items():
            inter = entry.get("interleaving")
            if not inter:
                continue
            rows = "".join(f"<tr><td>{escape(team)}</td>{_cell(inter['wins'][team])}"
                           f"{_interval(delta)}</tr>" for team, delta in inter["delta"].items())
            parts.append(f"<h3>Interleaving ({escape(variant)}): {inter['ties']:,} ties</h3>"
                         f"<table><tr><th>team</th><th>wins</th><th>Δ [95 %]</th></tr>{rows}"
                         f"</table>")
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>searchpulse experiments'
            f"</title><style>{STYLE}</style></head><body><h1>Experiment verdicts</h1>"
            + "".join(parts) + "</body></html>\n")
