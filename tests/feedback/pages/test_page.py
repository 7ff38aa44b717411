"""feedback/pages/page.py: what every report page shares — a cell shows numbers right-aligned
with their value for sorting and NaN as —, a table keeps its columns' order, titles and
per-row strata, every value is escaped, facts are redacted, and the page is one file whose
control characters are written visibly — since every report goes through these few
functions."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from feedback.pages import page


@pytest.mark.parametrize(("value", "html"), [
    (0.12345, '<td class="n" data-v="0.12345">0.123</td>'),
    (math.nan, '<td class="n">—</td>'),
    (1234567, '<td class="n" data-v="1234567">1,234,567</td>'),
    (True, "<td>yes</td>"),
    (False, "<td>no</td>"),  # a bool is no number
    (None, "<td></td>"),
    ("<b>tent</b> & co", "<td>&lt;b&gt;tent&lt;/b&gt; &amp; co</td>"),
])
def test_a_cell_by_its_value(value: object, html: str) -> None:
    assert page.cell(value) == html


def test_a_formatted_cell_keeps_a_numbers_value_for_sorting() -> None:
    def percent(value: float) -> str:
        return f"{value:.0%}" if value == value else "n/a"

    assert page.cell(0.25, percent) == '<td class="n" data-v="0.25">25%</td>'
    assert page.cell(math.nan, percent) == "<td>n/a</td>"  # NaN: nothing to sort by
    assert page.cell("x<", lambda v: v * 2) == "<td>x&lt;x&lt;</td>"


def test_a_table_shows_the_columns_asked_for_in_their_order() -> None:
    frame = pd.DataFrame({"query": ["tent", "<lamp>"], "hits": [3, 0], "ignored": [1, 2]})
    html = page.table(frame, {"hits": "Hits", "query": "Query"}, sortable=True,
                      table_id="queries", row_strata=["head", "tail"])
    assert html == (
        '<div class="wide"><table class="sortable" id="queries"><thead><tr><th>Hits</th>'
        "<th>Query</th></tr></thead><tbody>"
        '<tr data-stratum="head"><td class="n" data-v="3">3</td><td>tent</td></tr>'
        '<tr data-stratum="tail"><td class="n" data-v="0">0</td><td>&lt;lamp&gt;</td></tr>'
        "</tbody></table></div>")
    plain = page.table(frame, {"query": "Query"}, formats={"query": str.upper})
    assert plain.startswith('<div class="wide"><table><thead>') and "<tr><td>TENT</td>" in plain


def test_the_stratum_filter_targets_its_table() -> None:
    assert page.stratum_filter("queries", ["head", "a&b"]) == (
        '<label>Stratum: <select class="stratum-filter" data-target="#queries">'
        '<option value="">all</option><option value="head">head</option>'
        '<option value="a&amp;b">a&amp;b</option></select></label>')


def test_facts_never_show_a_password() -> None:
    assert page.facts([("Store", "postgresql://alice:s3cret@db/app"), ("Period", "<1 day")]) == (
        "<table><tr><th>Store</th><td>postgresql://alice:***@db/app</td></tr>"
        "<tr><th>Period</th><td>&lt;1 day</td></tr></table>")


def test_a_document_is_one_file_with_nothing_to_fetch() -> None:
    html = page.document("Report <1>", "<p>body</p>")
    assert html.startswith('<!doctype html><html lang="en"><head><meta charset="utf-8">'
                           "<title>Report &lt;1&gt;</title><link rel=\"icon\" href=\"data:,\">")
    assert html.endswith("<body><p>body</p></body></html>\n")
    assert "<script>" not in html and "http" not in html.replace('lang="en"', "")
    assert f"<script>{page.SCRIPT}</script></body>" in page.document("t", "", script=True)


def test_a_control_character_is_written_visibly() -> None:
    html = page.document("t", "bell\x07 escape\x1b[31m")
    assert "bell\\x07 escape\\x1b[31m" in html
    assert "\x07" not in html and "\x1b" not in html
