"""``evaluate --html``: one self-contained page — the verdict first, the differences with their
intervals as a picture, the measures per slice of each run, and the queries that got worse and
better (sortable, filterable by stratum)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

import pandas as pd

from collector.judgments.measures import label
from feedback.evaluate.query_changes import describe_moved, worse_and_better
from feedback.evaluate.scoring import Comparison, format_p
from feedback.evaluate.text import interval, run_line
from feedback.pages.charts import bar_chart, interval_plot
from feedback.pages.page import document, stratum_filter, table


def _signed(value: float) -> str:
    return "—" if value != value else f"{value:+.4f}"


def _score(value: float) -> str:
    return "—" if value != value else f"{value:.4f}"


def page(result: dict[str, Any], names: Sequence[str], top: int) -> str:
    """``top``: the queries listed as worse and as better (``--top``; --json has every one)."""
    runs = result["runs"]
    comparison: Comparison | None = result.get("comparison")
    # the chart shows the first gated measure (with one run: the first measure)
    first = (comparison.verdicts["measure"].iloc[0] if comparison is not None
             else result["measures"][0])
    strata = [s for s in runs[0]["summary"]["slice"] if s.startswith("stratum=")]
    parts = ["<h1>Offline evaluation</h1>"]
    if comparison is not None:  # what failed, on which queries, first
        gate, every = _differences(comparison, names)
        parts += [_verdict(comparison, names), gate, _queries(comparison, result["k"], top)]
    by_slice = {name: run["summary"].set_index("slice")[first]
                for name, run in zip(names, runs, strict=True)}
    categories = ["all", *strata]
    parts += [f"<h2>{escape(first)} per stratum</h2>",
              bar_chart([c.removeprefix("stratum=") for c in categories],
                        {name: [float(s.get(c, float("nan"))) for c in categories]
                         for name, s in by_slice.items()}, unit="score",
                        title=f"{first} per stratum")]
    if comparison is not None:
        parts.append(every)
    columns = {"slice": "slice", "rankings": "rankings", "unranked": "unranked (0)",
               **{m: label(m, result["notes"]) for m in result["measures"]}}
    for name, run in zip(names, runs, strict=True):
        parts.append(f"<h2>{escape(run_line(name, run, result['ranked_only']))}</h2>"
                     f"{table(run['summary'], columns)}")
    return document("searchpulse evaluate", "".join(parts), script=comparison is not None)


def _verdict(comparison: Comparison, names: Sequence[str]) -> str:
    verdicts = comparison.verdicts
    failed = verdicts[verdicts["regression"]]
    if len(failed):
        listed = "; ".join(f"{v.measure} on {v.slice} (Δ {v.delta:+.4f}, p {format_p(v.p)})"
                           for v in failed.itertuples())
        text = f"The gate fails: {escape(names[1])} regresses against {escape(names[0])} on "
        return f'<p class="verdict fail">{text}{escape(listed)}.</p>'
    return (f'<p class="verdict pass">No significant regression of {escape(names[1])} against '
            f"{escape(names[0])} on any gated measure and slice.</p>")


def _differences(comparison: Comparison, names: Sequence[str]) -> tuple[str, str]:
    """(the gate: its pictures and table; every measure and slice)."""
    verdicts = comparison.verdicts[comparison.verdicts["paired"] > 0]
    plots = []
    for measure, rows in verdicts.groupby("measure", sort=False):
        lines = [(r.slice, r.delta, r.ci_low, r.ci_high, "worse" if r.regression else "neutral")
                 for r in rows.itertuples()]
        chart = interval_plot(lines, float(rows["margin"].iloc[0]),
                              f"{measure}: Δ and 95 % interval per slice")
        plots.append(f"<figure>{chart}<figcaption>{escape(measure)}: Δ (B − A) and its 95 % "
                     "interval per slice; dashed: the margin below which the gate fails when "
                     "p is below its significance</figcaption></figure>")
    gate = verdicts.assign(
        interval=[interval(r) for r in verdicts.to_dict(orient="records")],
        moved=[f"{int(r.losses):,} / {int(r.wins):,}" for r in verdicts.itertuples()],
        rule=[f"Δ < −{r.margin:g}, p < {r.significance:g}" for r in verdicts.itertuples()],
        regression=verdicts["regression"].map({True: "FAILS", False: "passes"}))
    gate_columns = {"measure": "measure", "slice": "slice", "paired": "paired",
                    "mean_a": f"A: {names[0]}", "mean_b": f"B: {names[1]}", "delta": "Δ",
                    "interval": "95 % interval", "p": "p", "moved": "worse / better",
                    "rule": "fails when", "regression": "gate"}
    table_all = comparison.table.assign(
        interval=[interval(r) for r in comparison.table.to_dict(orient="records")])
    all_columns = {"slice": "slice", "measure": "measure", "paired": "paired",
                   "mean_a": "A", "mean_b": "B", "delta": "Δ", "interval": "95 % interval",
                   "p": "p (randomization)", "wins": "wins", "losses": "losses", "ties": "ties"}
    formats = {"delta": _signed, "p": format_p, "mean_a": _score, "mean_b": _score}
    return (f"<h2>{escape(names[1])} − {escape(names[0])}: the gate</h2>{''.join(plots)}"
            f"{table(gate, gate_columns, formats)}",
            "<h2>Every measure and slice</h2>"
            "<p class=\"note\">Δ = B − A; the interval is the paired randomization test "
            "inverted (docs/evaluate.md); p below 0.001 is shown as such.</p>"
            f"{table(table_all, all_columns, formats, sortable=True, table_id='measures')}")


def _queries(comparison: Comparison, k: int, top: int) -> str:
    first = comparison.verdicts["measure"].iloc[0]
    worse, better = worse_and_better(comparison.queries, first, top)
    measures = list(dict.fromkeys(comparison.verdicts["measure"]))
    rows = []
    for q in [*worse, *better]:
        row: dict[str, Any] = {"query": q["query"], "application": q["application"],
                               "stratum": q["stratum"], "moved": describe_moved(q, 8)}
        for m in measures:
            row[f"{m} A"], row[f"{m} B"] = q["measures"][m]["a"], q["measures"][m]["b"]
            row[f"{m} Δ"] = q["measures"][m]["delta"]
        rows.append(row)
    columns = {"query": "query", "application": "application", "stratum": "stratum"}
    formats = {}
    for m in measures:
        columns.update({f"{m} A": f"{m} A", f"{m} B": f"{m} B", f"{m} Δ": f"{m} Δ"})
        formats.update({f"{m} A": _score, f"{m} B": _score, f"{m} Δ": _signed})
    columns["moved"] = f"entered (+) / left (−) the top {k}, grade in brackets"
    if not rows:
        return "<h2>Queries that got worse and better</h2><p>No ranking changed.</p>"
    frame = pd.DataFrame(rows, columns=list(columns))
    strata = sorted({q["stratum"] for q in comparison.queries})
    shown = (f"the {len(worse):,} that dropped most and the {len(better):,} that rose most on "
             f"{escape(first)}, of {len(comparison.queries):,} changed rankings (--json lists "
             "every one)")
    listed = table(frame, columns, formats, sortable=True, table_id="queries",
                   row_strata=list(frame["stratum"]))
    return (f"<h2>Queries that got worse and better</h2><p>{shown}. Click a column to sort."
            f"</p>{stratum_filter('queries', strata)}{listed}")
