"""feedback/evaluate/ci_report.py: the gate's verdict as JUnit XML and as a Markdown job summary
stays whole whatever the users' query text, since CI systems parse both and a query must never
break a table, open a link or inject HTML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

HOSTILE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                  max_size=30)


def _cells_per_row(markdown: str) -> list[tuple[int, int]]:
    """(cells, header cells of its table) per table row of ``markdown``."""
    rows, header, count = [], 0, 0
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.type == "tr_open":
            count = 0
        elif token.type in ("td_open", "th_open"):
            count += 1
        elif token.type == "tr_close":
            header = count if not rows or header == 0 else header
            rows.append((count, header))
        elif token.type == "table_close":
            header = 0
    return rows


@settings(max_examples=40, deadline=None)
@given(query=HOSTILE, application=HOSTILE)
@example(query="0", application="\x00")  # pandas' string == drops a trailing NUL
def test_any_query_text_keeps_the_xml_and_the_markdown_whole(query, application):
    """A judged query of any text, worse in B: the XML parses and names it, every row of the
    summary's tables has its header's cells, and no text becomes HTML or a link."""
    import pandas as pd

    from collector.judgments.gate import Rule
    from collector.judgments.measures import parse
    from feedback.evaluate import ci_report
    from feedback.evaluate.scoring import Rankings, evaluate

    final = pd.DataFrame({"application": [application, application, "x"],
                          "query": [query, query, "other"], "doc_id": ["d1", "d2", "d1"],
                          "grade": [3, 0, 3]})
    searches = [f"s{i}" for i in range(12)]  # twelve searches: p of the test far below 0.05
    a = Rankings({**{(application, query, s): ["d1", "d2"] for s in searches},
                  ("x", "other", ""): ["d1"]})
    b = Rankings({**{(application, query, s): ["d2", "d1"] for s in searches},
                  ("x", "other", ""): ["d1"]})
    strata = pd.Series(["head", "tail"], index=[query, "other"]).groupby(level=0).first()
    result = evaluate([a, b], final, strata, parse(["nDCG@10"], "test"),
                      [Rule("nDCG@10", 0.0, 0.05, ("all", "application"))], 10, 3)
    assert result["regression"]
    document = ET.fromstring(ci_report.junit(result, [f"{query}.run", "b.run"]).encode())
    failures = document.findall(".//failure")
    assert failures and all(ci_report.xml_text(repr(query)) in f.text for f in failures)
    summary = ci_report.markdown(result, [f"{query}.run", "b.run"], 10)
    rows = _cells_per_row(summary)
    assert rows and all(cells == header for cells, header in rows)
    assert not any(t.type.startswith(("html", "link")) or t.type == "image"
                   for block in MarkdownIt("commonmark").enable("table").parse(summary)
                   for t in [block, *(block.children or [])])
