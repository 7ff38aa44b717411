"""feedback/pages/charts.py: the reports' inline SVG charts draw each value to scale, say what
each mark shows in its ``<title>``, skip what has no data, and escape every label, since a page
must open offline and a query or rater name must never become markup."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from feedback.pages import charts


def _svg(markup: str) -> ET.Element:
    """The chart's <svg> element (a bar chart's legend follows it)."""
    end = markup.index("</svg>") + len("</svg>")
    return ET.fromstring(markup[:end])


def _titled(svg: ET.Element, tag: str) -> dict[str, ET.Element]:
    """The ``tag`` marks of ``svg`` by the text of their <title>."""
    return {mark.findtext("title"): mark for mark in svg.iter(tag)}


def test_bars_are_to_scale_labelled_and_titled() -> None:
    markup = charts.bar_chart(["web", "mobile"], {"A": [0.5, 0.25], "B": [0.1, math.nan]},
                              "percent", title="CTR by run")
    svg = _svg(markup)
    assert svg.findtext("title") == "CTR by run"
    bars = _titled(svg, "rect")
    assert list(bars) == ["A web: 50.0%", "B web: 10.0%", "A mobile: 25.0%"]  # NaN: no bar
    heights = {title: float(bar.get("height")) for title, bar in bars.items()}
    assert heights == {"A web: 50.0%": 200.0, "B web: 10.0%": 40.0, "A mobile: 25.0%": 100.0}
    assert [bar.get("fill") for bar in bars.values()] == [charts.COLOURS[0], charts.COLOURS[1],
                                                          charts.COLOURS[0]]
    assert markup.endswith('<div class="legend"><span><i style="background:#c0392b"></i>A'
                           '</span><span><i style="background:#e67e22"></i>B</span></div>')


@pytest.mark.parametrize(("unit", "label"), [("percent", "12.5%"), ("count", "1,234"),
                                              ("score", "0.125")])
def test_values_are_labelled_by_their_unit(unit: str, label: str) -> None:
    value = {"percent": 0.125, "count": 1234, "score": 0.125}[unit]
    svg = _svg(charts.bar_chart(["all"], {"run": [value]}, unit))
    assert [text.text for text in svg.iter("text")] == ["all", label]
    assert svg.findtext("title") == "run"  # no title given: the series


def test_every_label_is_escaped() -> None:
    hostile = '<script>alert("x")</script> & co'
    markup = charts.bar_chart([hostile], {hostile: [1.0]}, "count", title=hostile)
    assert "<script>" not in markup
    svg = _svg(markup)
    assert svg.findtext("title") == hostile and svg.findtext("text") == hostile


def test_a_grid_colours_and_labels_every_cell() -> None:
    seen: list[tuple[float | None, int, int]] = []

    def fill(value: float | None, i: int, j: int) -> str:
        seen.append((value, i, j))
        return "#eee" if value is None else "#333"

    svg = _svg(charts.grid([[0.9, None], [0.5, 0.7]], ["ann", "ben"], ["ann", "llm"], fill,
                           lambda v: "—" if v is None else f"{v:.2f}", "Pairwise α",
                           row_axis="rater", column_axis="judge"))
    assert seen == [(0.9, 0, 0), (None, 0, 1), (0.5, 1, 0), (0.7, 1, 1)]
    cells = _titled(svg, "rect")
    assert list(cells) == ["ann × ann: 0.90", "ann × llm: —", "ben × ann: 0.50",
                           "ben × llm: 0.70"]
    assert cells["ann × llm: —"].get("fill") == "#eee"
    texts = [text.text for text in svg.iter("text")]
    assert "judge →" in texts and "↑ rater" in texts


def test_an_interval_plot_centres_zero_and_draws_the_margin() -> None:
    svg = _svg(charts.interval_plot(
        [("nDCG@10", -0.02, -0.03, -0.01, "worse"), ("R@100", 0.01, math.nan, math.nan,
                                                     "neutral")],
        margin=0.04, title="B − A", axis="better →"))
    zero, margin = svg.findall("line")[0], _titled(svg, "line")["margin −0.04"]
    # span = 1.15 × the largest |value| (the margin, 0.04): x(v) = 230 + (v + span) / 2span × 390
    span = 0.04 * 1.15

    def x(value: float) -> float:
        return round(230 + (value + span) / (2 * span) * 390, 1)

    assert float(zero.get("x1")) == x(0) == 425.0
    assert float(margin.get("x1")) == x(-0.04) and margin.get("stroke-dasharray") == "4 3"
    points = _titled(svg, "circle")
    worse = points["nDCG@10: Δ -0.0200, 95 % interval [-0.0300, -0.0100]"]
    assert float(worse.get("cx")) == x(-0.02) and worse.get("fill") == charts.TONES["worse"]
    assert points["R@100: Δ +0.0100, 95 % interval [+nan, +nan]"].get("fill") == \
        charts.TONES["neutral"]
    intervals = [line for line in svg.iter("line") if line.get("stroke-width") == "2"]
    assert [(float(i.get("x1")), float(i.get("x2"))) for i in intervals] == \
        [(x(-0.03), x(-0.01))]  # no interval drawn without its ends
    assert "0  better →" in [text.text for text in svg.iter("text")]


def test_diverging_bars_go_right_above_zero_and_left_below() -> None:
    svg = _svg(charts.diverging_bars(["0", "1", "2"], [0.5, -0.25, None], "Judge's bias",
                                     "grades above the humans →"))
    bars = _titled(svg, "rect")
    assert list(bars) == ["0: +0.500", "1: -0.250"]
    middle = 150 + (600 - 150) / 2  # 375
    above, below = bars["0: +0.500"], bars["1: -0.250"]
    assert float(above.get("x")) == middle and above.get("fill") == "#c0392b"
    assert float(below.get("x")) + float(below.get("width")) == pytest.approx(middle)
    assert float(above.get("width")) == pytest.approx(2 * float(below.get("width")))
    assert below.get("fill") == "#2980b9"
    assert "no data" in [text.text for text in svg.iter("text")]
