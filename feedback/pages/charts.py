"""The reports' pictures, drawn here as inline SVG: a page opens offline, from a file, in any
browser, with nothing fetched (no chart library, no CDN). Every chart says what it shows in a
``<title>`` (read by screen readers and shown on hover) and labels its values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

COLOURS = ("#c0392b", "#e67e22", "#8e44ad", "#2980b9", "#27ae60")
LABELS: dict[str, Callable[[float], str]] = {
    "percent": lambda v: f"{v:.1%}",
    "count": lambda v: f"{v:,.0f}",
    "score": lambda v: f"{v:.3f}",
}


def bar_chart(categories: Sequence[str], series: dict[str, Sequence[float]], unit: str,
              title: str = "") -> str:
    """Grouped vertical bars, one group per category, with a legend. ``unit``: how values are
    labelled — ``percent`` (a rate), ``count`` or ``score`` (a measure in 0..1, as a decimal)."""
    label_of = LABELS[unit]
    width, height, pad = 640, 220, 30
    top = max((v for values in series.values() for v in values if v == v), default=0.0) or 1.0
    group = (width - pad) / max(len(categories), 1)
    bar = group * 0.8 / max(len(series), 1)
    parts = [f'<svg class="chart" width="{width}" height="{height + 40}" role="img">'
             f"<title>{escape(title or ', '.join(series))}</title>"]
    for i, category in enumerate(categories):
        x0 = pad + i * group + group * 0.1
        parts.append(f'<text x="{x0 + group * 0.4:.1f}" y="{height + 16}" '
                     f'text-anchor="middle" font-size="12">{escape(category)}</text>')
        for j, (name, values) in enumerate(series.items()):
            value = values[i]
            if value != value:  # NaN: no data, no bar
                continue
            h = max((height - 20) * value / top, 0.0)
            x = x0 + j * bar
            label = label_of(value)
            parts.append(
                f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
                f'fill="{COLOURS[j % len(COLOURS)]}"><title>{escape(name)} {escape(category)}'
                f': {label}</title></rect><text x="{x + bar / 2 - 1:.1f}" y="{height - h - 3:.1f}"'
                f' text-anchor="middle" font-size="10">{label}</text>')
    parts.append(f'<line x1="{pad}" y1="{height}" x2="{width}" y2="{height}" stroke="#999"/>'
                 "</svg>")
    return "".join(parts) + legend(list(series))


def legend(names: Sequence[str]) -> str:
    items = "".join(f'<span><i style="background:{COLOURS[j % len(COLOURS)]}"></i>'
                    f"{escape(name)}</span>" for j, name in enumerate(names))
    return f'<div class="legend">{items}</div>'


def grid(values: Sequence[Sequence[float | None]], rows: Sequence[str], columns: Sequence[str],
         fill: Callable[[float | None, int, int], str], text: Callable[[float | None], str],
         title: str, row_axis: str = "", column_axis: str = "", cell: int = 34) -> str:
    """A matrix of coloured cells with their values: a confusion matrix, pairwise agreement.
    ``fill(value, i, j)``: a cell's colour; ``text(value)``: its label."""
    left = max(40, 7 * max((len(r) for r in rows), default=0) + 12)
    longest = max((len(c) for c in columns), default=0)
    top = 40 if longest <= 3 else 5 * longest + 20  # long names stand rotated
    width, height = left + len(columns) * cell + 10, top + len(rows) * cell + 24
    parts = [f'<svg class="chart" width="{width}" height="{height}" role="img">'
             f"<title>{escape(title)}</title>"]
    if column_axis:
        parts.append(f'<text x="{left}" y="11" font-size="11">{escape(column_axis)} →</text>')
    if row_axis:
        parts.append(f'<text x="2" y="{height - 6}" font-size="11">↑ {escape(row_axis)}'
                     "</text>")
    for j, name in enumerate(columns):
        x = left + j * cell + cell / 2
        if longest > 3:
            parts.append(f'<text x="{x:.1f}" y="{top - 6}" font-size="11" '
                         f'transform="rotate(-45 {x:.1f} {top - 6})">{escape(name)}</text>')
        else:
            parts.append(f'<text x="{x:.1f}" y="{top - 8}" font-size="11" '
                         f'text-anchor="middle">{escape(name)}</text>')
    for i, name in enumerate(rows):
        parts.append(f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4:.1f}" '
                     f'font-size="11" text-anchor="end">{escape(name)}</text>')
        for j, value in enumerate(values[i]):
            x, y = left + j * cell, top + i * cell
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell - 1}" height="{cell - 1}" '
                f'fill="{fill(value, i, j)}"><title>{escape(rows[i])} × {escape(columns[j])}: '
                f'{escape(text(value))}</title></rect><text x="{x + cell / 2:.1f}" '
                f'y="{y + cell / 2 + 4:.1f}" font-size="10" text-anchor="middle">'
                f"{escape(text(value))}</text>")
    parts.append("</svg>")
    return "".join(parts)


# an interval's colour: what it says about the change (interval_plot)
TONES = {"worse": "#c0392b", "better": "#1e8449", "neutral": "#2c3e50"}


def interval_plot(rows: Sequence[tuple[str, float, float, float, str]], margin: float | None,
                  title: str, axis: str = "") -> str:
    """Mean differences with their intervals, one line per (label, Δ, low, high, tone: a key
    of TONES); the zero line, the margin the gate tolerates (dashed) when given, and ``axis``
    (what the direction means, e.g. "better →") under the zero."""
    height = 24 * len(rows) + 40
    left, width = 230, 640
    ends = [v for _, d, lo, hi, _ in rows for v in (d, lo, hi) if v == v]
    span = max((abs(v) for v in [*ends, margin or 0.0]), default=0.0) or 0.01
    span *= 1.15

    def x(value: float) -> float:
        return left + (value + span) / (2 * span) * (width - left - 20)

    parts = [f'<svg class="chart" width="{width}" height="{height}" role="img">'
             f"<title>{escape(title)}</title>",
             f'<line x1="{x(0):.1f}" y1="10" x2="{x(0):.1f}" y2="{height - 24}" '
             'stroke="#555"/>',
             f'<text x="{x(0):.1f}" y="{height - 8}" font-size="10" text-anchor="middle">0'
             f"{'  ' + escape(axis) if axis else ''}</text>",
             f'<text x="{x(-span):.1f}" y="{height - 8}" font-size="10">{-span:+.3f}</text>',
             f'<text x="{x(span):.1f}" y="{height - 8}" font-size="10" text-anchor="end">'
             f"{span:+.3f}</text>"]
    if margin:
        parts.append(f'<line x1="{x(-margin):.1f}" y1="10" x2="{x(-margin):.1f}" '
                     f'y2="{height - 24}" stroke="#c0392b" stroke-dasharray="4 3"><title>'
                     f"margin −{margin:g}</title></line>")
    for i, (label, delta, low, high, tone) in enumerate(rows):
        y = 22 + 24 * i
        colour = TONES[tone]
        parts.append(f'<text x="{left - 10}" y="{y + 4}" font-size="11" text-anchor="end">'
                     f"{escape(label)}</text>")
        if low == low:
            parts.append(f'<line x1="{x(low):.1f}" y1="{y}" x2="{x(high):.1f}" y2="{y}" '
                         f'stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(delta):.1f}" cy="{y}" r="4" fill="{colour}"><title>'
                     f"{escape(label)}: Δ {delta:+.4f}, 95 % interval [{low:+.4f}, {high:+.4f}]"
                     "</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


def diverging_bars(categories: Sequence[str], values: Sequence[float | None], title: str,
                   axis: str) -> str:
    """Horizontal bars left (negative) or right (positive) of zero: a signed difference per
    category, e.g. how far an automatic judge grades above or below the humans."""
    height = 26 * len(categories) + 36
    left, width, label = 150, 600, 56  # room for a value's label beyond the longest bar
    span = max((abs(v) for v in values if v is not None and v == v), default=0.0) or 1.0
    middle = left + (width - left) / 2
    scale = ((width - left) / 2 - label) / span
    parts = [f'<svg class="chart" width="{width}" height="{height}" role="img">'
             f"<title>{escape(title)}</title>",
             f'<line x1="{middle:.1f}" y1="6" x2="{middle:.1f}" y2="{height - 22}" '
             'stroke="#555"/>',
             f'<text x="{middle:.1f}" y="{height - 6}" font-size="10" text-anchor="middle">'
             f"{escape(axis)}</text>"]
    for i, (category, value) in enumerate(zip(categories, values, strict=True)):
        y = 10 + 26 * i
        parts.append(f'<text x="{left - 8}" y="{y + 13}" font-size="11" text-anchor="end">'
                     f"{escape(category)}</text>")
        if value is None or value != value:
            parts.append(f'<text x="{middle + 6:.1f}" y="{y + 13}" font-size="10">no data'
                         "</text>")
            continue
        length = max(abs(value) * scale, 1.0)
        x = middle if value >= 0 else middle - length
        colour = "#c0392b" if value > 0 else "#2980b9"
        parts.append(f'<rect x="{x:.1f}" y="{y}" width="{length:.1f}" height="18" '
                     f'fill="{colour}"><title>{escape(category)}: {value:+.3f}</title></rect>'
                     f'<text x="{x + length + 4 if value >= 0 else x - 4:.1f}" y="{y + 13}" '
                     f'font-size="10" text-anchor="{"start" if value >= 0 else "end"}">'
                     f"{value:+.3f}</text>")
    parts.append("</svg>")
    return "".join(parts)
