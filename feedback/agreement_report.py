"""The agreement tables and confusion matrices as HTML: a section of the feedback report and
the page ``searchpulse judgments agreement --html`` writes."""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd

from feedback.agreement import ALL, Agreement
from feedback.page import STYLE, table

_CELL = 34


def heatmap(matrix: list[list[int]], reference: str, judge: str) -> str:
    """A confusion matrix as inline SVG: rows the reference's grades, columns the judge's."""
    size = len(matrix)
    top = max((v for row in matrix for v in row), default=0) or 1
    pad = 60
    width = pad + size * _CELL + 10
    parts = [f'<svg width="{width}" height="{pad + size * _CELL + 24}" role="img">'
             f'<title>{escape(reference)} (rows) × {escape(judge)} (columns)</title>',
             f'<text x="{pad}" y="12" font-size="11">{escape(judge)} →</text>',
             f'<text x="2" y="{pad - 6}" font-size="11">{escape(reference)} ↓</text>']
    for grade in range(size):
        parts.append(f'<text x="{pad + grade * _CELL + _CELL / 2}" y="{pad - 8}" '
                     f'font-size="11" text-anchor="middle">{grade}</text>'
                     f'<text x="{pad - 8}" y="{pad + grade * _CELL + _CELL / 2 + 4}" '
                     f'font-size="11" text-anchor="end">{grade}</text>')
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            shade = int(255 - 200 * value / top)
            colour = f"rgb({shade},{shade},255)" if i != j else f"rgb({shade},255,{shade})"
            x, y = pad + j * _CELL, pad + i * _CELL
            parts.append(
                f'<rect x="{x}" y="{y}" width="{_CELL - 1}" height="{_CELL - 1}" '
                f'fill="{colour}"><title>{escape(reference)} {i}, {escape(judge)} {j}: {value}'
                f'</title></rect><text x="{x + _CELL / 2}" y="{y + _CELL / 2 + 4}" '
                f'font-size="11" text-anchor="middle">{value}</text>')
    parts.append("</svg>")
    return "".join(parts)


_COLUMNS = {"stratum": "stratum", "reference": "reference", "judge": "judge",
            "pairs": "compared pairs", "alpha": "Krippendorff α (ordinal)",
            "kappa": "weighted κ (quadratic)", "exact": "exact", "within_one": "within one",
            "mean_difference": "mean difference (judge − reference)", "note": "note"}


def section(rows: list[Agreement], not_paired: int) -> str:
    """Tables of every agreement row, and the confusion matrix of each pair over all strata."""
    if not rows:
        return "<h2>Judges' agreement</h2><p>No judgment set with named raters.</p>"
    frame = pd.DataFrame([{**{k: getattr(r, k) for k in _COLUMNS}} for r in rows])
    frame["judge"] = frame["judge"].replace("", "(every rater)")
    frame = frame.astype({c: float for c in ("alpha", "kappa", "exact", "within_one",
                                             "mean_difference")})
    frame["pairs"] = frame["pairs"].astype(int)
    maps = "".join(f"<figure>{heatmap(r.confusion, r.reference, r.judge)}</figure>"
                   for r in rows if r.stratum == ALL and r.confusion is not None)
    return (f"<h2>Judges' agreement</h2><p>Per pair of raters and over all raters; an "
            f"automatic rater against the humans' final grade (its calibration). — marks a "
            f"value not reported (see note). {not_paired:,} anonymous grades cannot be "
            f"paired by rater and are not counted.</p>"
            f"{table(frame, _COLUMNS)}<h3>Confusion matrices (all strata)</h3>{maps}")


def page(summary: dict[str, Any], rows: list[Agreement], not_paired: int) -> str:
    facts = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
                    for k, v in summary.items())
    return f"""<!doctype html><html><head><meta charset="utf-8">
<title>searchpulse — judges' agreement</title><style>{STYLE}</style></head><body>
<h1>Judges' agreement</h1><table>{facts}</table>
{section(rows, not_paired)}
</body></html>
"""
