"""`evaluate`'s terminal output: each run's means per slice; with two runs, the gate's verdicts,
the differences with their intervals, and per gated slice the queries that got worse and better
(the ``top`` of each, the rest in ``--json``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from collector.judgments.measures import label
from feedback.evaluate.query_changes import describe_moved, in_slice, worse_and_better
from feedback.evaluate.scoring import Comparison, format_p


def _number(value: Any) -> str:
    return "—" if value is None or value != value else f"{value:.4f}"


def interval(row: Any, digits: int = 4) -> str:
    low, high = row["ci_low"], row["ci_high"]
    if low != low:
        return "—"
    return f"[{low:+.{digits}f}, {high:+.{digits}f}]"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)


def run_line(name: str, run: dict[str, Any], ranked_only: bool) -> str:
    """``a.run: 2,401 judged of 2,431 rankings; 30 judged topics it ranks nothing for count
    as 0``: what the means are over, the topics a run dropped named by their number."""
    line = f"{name}: {run['judged_rankings']:,} judged of {run['rankings']:,} rankings"
    unranked = run["unranked_topics"]
    if unranked:
        line += (f"; {unranked:,} judged {'topic' if unranked == 1 else 'topics'} it ranks "
                 "nothing for count as 0 (--ranked-only leaves them out)")
    elif ranked_only:
        line += "; judged topics it ranks nothing for left out (--ranked-only)"
    return line


def summary_text(summary: pd.DataFrame, names: Sequence[str],
                 measure_notes: dict[str, str]) -> str:
    rows = [["slice", "rankings", "unranked", *(label(m, measure_notes) for m in names)]]
    rows += [[r["slice"], f"{r['rankings']:,}", f"{r['unranked']:,}",
              *(_number(r[m]) for m in names)] for r in summary.to_dict(orient="records")]
    return _table(rows)


def comparison_text(comparison: Comparison, labels: Sequence[str], k: int, top: int) -> str:
    a, b = labels
    lines = [f"{b} − {a}: mean differences (B − A), 95 % interval, paired randomization p"]
    rows = [["slice", "measure", "paired", "A", "B", "Δ", "95 % interval", "p", "wins",
             "losses", "ties"]]
    for r in comparison.table.to_dict(orient="records"):
        rows.append([r["slice"], r["measure"], f"{r['paired']:,}", _number(r["mean_a"]),
                     _number(r["mean_b"]), f"{r['delta']:+.4f}", interval(r), format_p(r["p"]),
                     str(r["wins"]), str(r["losses"]), str(r["ties"])])
    lines += [_table(rows), "", "gate:"]
    for v in comparison.verdicts.to_dict(orient="records"):
        lines.append("  " + verdict_line(v))
    for v in comparison.verdicts.to_dict(orient="records"):
        if not v["paired"]:
            continue
        worse, better = worse_and_better(in_slice(comparison.queries, v["slice"]),
                                         v["measure"], top)
        for title, chosen in (("worse", worse), ("better", better)):
            lines.append(f"\n{v['slice']}: {title} on {v['measure']} (top {top}; documents "
                         f"that entered + or left − the top {k}, grade in brackets)")
            lines += [query_line(q, v["measure"]) for q in chosen] or ["  none"]
    return "\n".join(lines)


def verdict_line(v: dict[str, Any]) -> str:
    """``FAIL nDCG@10 stratum=head: Δ −0.0312 [−0.05, −0.01], p < 0.001 (margin 0.01, …)``."""
    if not v["paired"]:
        return f"n/a  {v['measure']} {v['slice']}: {v.get('note') or 'no paired rankings'}"
    status = "FAIL" if v["regression"] else "ok  "
    return (f"{status} {v['measure']} {v['slice']}: Δ {v['delta']:+.4f} {interval(v)}, "
            f"p {format_p(v['p'])}, {int(v['losses'])} worse / {int(v['wins'])} better of "
            f"{int(v['paired']):,} (fails below −{v['margin']:g} with p < {v['significance']:g})")


def query_line(q: dict[str, Any], measure: str) -> str:
    m = q["measures"][measure]
    where = f"[{q['application']}] " if q["application"] else ""
    search = f" search {q['search']}" if q["search"] else ""
    return (f"  {m['delta']:+.4f}  {m['a']:.4f} → {m['b']:.4f}  {where}{q['query']!r}"
            f"{search} ({q['stratum']})  {describe_moved(q)}")
