"""What every report page shares: its style, its tables and its shell. A page is one file with
nothing to fetch; a table marked sortable sorts by a click on its header and, with a stratum
filter, shows one stratum — a few lines of inline script, and without it the page still reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Any

import pandas as pd

from collector.control_characters import visible_html
from collector.privacy.redaction import redact

STYLE = """body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:80em}
table{border-collapse:collapse;margin:1em 0}td,th{padding:.25em .6em;border-bottom:1px solid #ddd;
text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
h2{margin-top:2em}.legend span{display:inline-block;margin-right:1.2em}.legend i{display:
inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle}
table.sortable th{cursor:pointer}table.sortable th:after{content:" ⇅";color:#aaa}
.verdict{padding:.6em 1em;border-radius:4px;font-weight:600}.fail{background:#fdecea;
color:#922}.pass{background:#e8f6ee;color:#185}.note{color:#666}.narrative p{max-width:60em;
line-height:1.5}figure{display:inline-block;margin:0 1.5em 1em 0;vertical-align:top}
figcaption{font-size:.9em;color:#444}.wide{overflow-x:auto}
.band{display:inline-block;padding:0 .4em;border-radius:3px}"""

# Sort a table by the clicked column (numbers by data-v, else text); filter by stratum.
SCRIPT = """document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, column) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var up = th.dataset.order !== 'up'; th.dataset.order = up ? 'up' : 'down';
      function key(row) { var cell = row.cells[column];
        return cell.dataset.v !== undefined ? parseFloat(cell.dataset.v) : cell.textContent; }
      rows.sort(function (a, b) { var x = key(a), y = key(b);
        return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1); });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
document.querySelectorAll('select.stratum-filter').forEach(function (select) {
  select.addEventListener('change', function () {
    document.querySelectorAll(select.dataset.target + ' tbody tr').forEach(function (row) {
      row.hidden = select.value !== '' && row.dataset.stratum !== select.value; });
  });
});"""


def cell(value: Any, formatter: Callable[[Any], str] | None = None) -> str:
    """One ``<td>``: numbers right-aligned with their value for sorting, NaN as —."""
    if formatter is not None:
        shown = formatter(value)
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
        return (f'<td class="n" data-v="{value}">{escape(shown)}</td>' if number
                else f"<td>{escape(shown)}</td>")
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, float):
        return ('<td class="n">—</td>' if value != value
                else f'<td class="n" data-v="{value}">{value:.3f}</td>')
    if isinstance(value, int):
        return f'<td class="n" data-v="{value}">{value:,}</td>'
    return f"<td>{escape('' if value is None else str(value))}</td>"


def table(frame: pd.DataFrame, columns: dict[str, str],
          formats: dict[str, Callable[[Any], str]] | None = None, sortable: bool = False,
          table_id: str = "", row_strata: Sequence[str] | None = None) -> str:
    """``frame``'s ``columns`` (name → title) as a table, in a box that scrolls when it is
    wider than the window; ``formats``: per column, how a value
    is shown; ``row_strata``: each row's stratum, for the stratum filter."""
    formats = formats or {}
    head = "".join(f"<th>{escape(title)}</th>" for title in columns.values())
    rows = []
    for i, record in enumerate(frame[list(columns)].itertuples(index=False)):
        cells = "".join(cell(v, formats.get(c)) for c, v in zip(columns, record, strict=True))
        stratum = f' data-stratum="{escape(row_strata[i])}"' if row_strata is not None else ""
        rows.append(f"<tr{stratum}>{cells}</tr>")
    attributes = (' class="sortable"' if sortable else "") + (f' id="{table_id}"' if table_id
                                                              else "")
    # in a box that scrolls sideways: a table wider than the window is never cut off
    return (f'<div class="wide"><table{attributes}><thead><tr>{head}</tr></thead><tbody>'
            f"{''.join(rows)}</tbody></table></div>")


def stratum_filter(target: str, strata: Sequence[str]) -> str:
    options = "".join(f'<option value="{escape(s)}">{escape(s)}</option>' for s in strata)
    return (f'<label>Stratum: <select class="stratum-filter" data-target="#{target}">'
            f'<option value="">all</option>{options}</select></label>')


def facts(items: Sequence[tuple[str, str]]) -> str:
    """A two-column table of already-worded facts."""
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(redact(v))}</td></tr>"
                   for k, v in items)  # a store URL's password never reaches a page
    return f"<table>{rows}</table>"


def document(title: str, body: str, script: bool = False) -> str:
    """The page; a control character any value held (HTML has no escape for one) as
    ``\\xNN``."""
    code = f"<script>{SCRIPT}</script>" if script else ""
    return visible_html(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}'
        f'</title><link rel="icon" href="data:,"><style>{STYLE}</style></head><body>{body}'
        f"{code}</body></html>\n")
