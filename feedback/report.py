"""``report.html``: one self-contained page (inline SVG, no scripts) that says what the period
looked like, what was selected and why, and which queries fail worst."""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd

from collector.quality import STRATA
from collector.redaction import redact

_COLOURS = ("#c0392b", "#e67e22", "#8e44ad", "#2980b9", "#27ae60")
STYLE = """body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:72em}
table{border-collapse:collapse;margin:1em 0}td,th{padding:.25em .6em;border-bottom:1px solid #ddd;
text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}h2{margin-top:2em}
.legend span{display:inline-block;margin-right:1.2em}.legend i{display:inline-block;width:.9em;
height:.9em;margin-right:.3em;vertical-align:middle}"""


def bar_chart(categories: list[str], series: dict[str, list[float]], percent: bool) -> str:
    """Grouped vertical bars, one group per category, as inline SVG with a legend."""
    width, height, pad = 640, 220, 30
    top = max((v for values in series.values() for v in values if v == v), default=0.0) or 1.0
    group = (width - pad) / max(len(categories), 1)
    bar = group * 0.8 / max(len(series), 1)
    parts = [f'<svg width="{width}" height="{height + 40}" role="img">']
    for i, category in enumerate(categories):
        x0 = pad + i * group + group * 0.1
        parts.append(f'<text x="{x0 + group * 0.4:.1f}" y="{height + 16}" '
                     f'text-anchor="middle" font-size="12">{escape(category)}</text>')
        for j, (name, values) in enumerate(series.items()):
            value = values[i]
            if value != value:  # NaN: no data, no bar
                continue
            h = (height - 20) * value / top
            x = x0 + j * bar
            label = f"{value:.1%}" if percent else f"{value:,.0f}"
            parts.append(
                f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
                f'fill="{_COLOURS[j % len(_COLOURS)]}"><title>{escape(name)} {escape(category)}'
                f': {label}</title></rect><text x="{x + bar / 2 - 1:.1f}" y="{height - h - 3:.1f}"'
                f' text-anchor="middle" font-size="10">{label}</text>')
    parts.append("</svg>")
    legend = "".join(f'<span><i style="background:{_COLOURS[j % len(_COLOURS)]}"></i>'
                     f"{escape(name)}</span>" for j, name in enumerate(series))
    return "".join(parts) + f'<div class="legend">{legend}</div>'


def table(frame: pd.DataFrame, columns: dict[str, str]) -> str:
    head = "".join(f"<th>{escape(title)}</th>" for title in columns.values())
    rows = []
    for record in frame[list(columns)].itertuples(index=False):
        cells = []
        for value in record:
            if isinstance(value, float):
                cells.append('<td class="n">' + ("—" if value != value else f"{value:.3f}")
                             + "</td>")
            elif isinstance(value, int):
                cells.append(f'<td class="n">{value:,}</td>')
            else:
                cells.append(f"<td>{escape(str(value))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def stratum_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Traffic-weighted failure rates per stratum (NaN where a stratum has no searches)."""
    sums = frame.groupby("stratum")[["searches", "zero_result", "reformulated", "abandoned",
                                     "clicked"]].sum().reindex(list(STRATA)).fillna(0)
    with_results = sums["searches"] - sums["zero_result"]
    return pd.DataFrame({
        "zero-result rate": sums["zero_result"] / sums["searches"].where(sums["searches"] > 0),
        "reformulation rate": sums["reformulated"] / sums["searches"].where(sums["searches"] > 0),
        "abandonment rate": sums["abandoned"] / with_results.where(with_results > 0),
        "CTR": sums["clicked"] / with_results.where(with_results > 0)})


def render(summary: dict[str, Any], frame: pd.DataFrame, chosen: pd.DataFrame,
           top_failing: pd.DataFrame, agreement: str = "") -> str:
    """The page; ``agreement``: the judges' agreement section (HTML), when there are raters."""
    rates = stratum_rates(frame)
    counts = chosen.groupby(["stratum", "selected_as"]).size().unstack(fill_value=0).reindex(
        list(STRATA), fill_value=0)
    selected_series = {kind: [float(counts[kind].get(s, 0)) if kind in counts else 0.0
                              for s in STRATA] for kind in ("failing", "calibration")}
    facts = "".join(f"<tr><th>{escape(k)}</th><td>{escape(redact(str(v)))}</td></tr>"
                    for k, v in summary.items())
    signals = {"query": "query", "application": "application", "stratum": "stratum",
               "searches": "searches", "reason": "reason", "failure": "failure (lower bound)",
               "zero_result_rate": "zero-result", "reformulation_rate": "reformulation",
               "abandonment_rate": "abandonment", "impact": "impact"}
    return f"""<!doctype html><html><head><meta charset="utf-8">
<title>searchpulse feedback — judgment candidates</title><style>{STYLE}</style></head><body>
<h1>Judgment-set candidates</h1><table>{facts}</table>
<h2>Failure rates per stratum</h2>
{bar_chart(list(STRATA), {k: list(v) for k, v in rates.items()}, percent=True)}
<h2>What was selected, and why</h2>
<p>Per stratum: the highest-impact failing queries (impact = searches × failure, the largest
excess of a Wilson lower bound — zero results, reformulated, abandoned, not clicked — over the
application's own rate), plus traffic-weighted random non-failing queries for calibration.</p>
{bar_chart(list(STRATA), selected_series, percent=False)}
{table(chosen, {"topic": "topic", **signals, "selected_as": "selected as",
                "pooled_documents": "documents to judge"})}
<h2>Top failing queries of the period</h2>
{table(top_failing, signals)}
{agreement}
</body></html>
"""
