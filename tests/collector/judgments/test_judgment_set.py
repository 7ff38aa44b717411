"""collector/judgments/judgment_set.py: several raters' grades combine into the final grade by
Quepid's rule and round half up, a named rater's later grade replaces the earlier one while
anonymous grades are all kept, and the set's CSV holds one row per grade, since a set graded in
Quepid and one combined here must agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.judgments.judgment_set import JudgmentSet, combine, round_half_up


@pytest.mark.parametrize(("grades", "final"), [
    ([2], 2),
    ([1, 2], 1.5),  # fewer than three: the mean
    ([3, 3, 3, 0], 3),  # the three highest agree
    ([3, 3, 1], 1),  # they do not: the lowest of the three (trust the pessimist)
    ([0, 3, 2, 2], 2),
])
def test_combine_is_quepids_rule(grades: list[float], final: float) -> None:
    assert combine(grades) == final


@pytest.mark.parametrize(("value", "rounded"), [(2.5, 3), (1.5, 2), (0.5, 1), (2.49, 2), (0, 0)])
def test_round_half_up_as_ruby_rounds(value: float, rounded: int) -> None:
    assert round_half_up(value) == rounded


def _panel() -> JudgmentSet:
    return JudgmentSet.of([
        ("web", "tent", "d1", "ann", 3), ("web", "tent", "d1", "ben", 2),
        ("web", "tent", "d2", "ann", 1), ("web", "tent", "d2", "ben", 3),
        ("web", "tent", "d2", "cy", 3),
        ("", "tent", "d3", "", 2), ("", "tent", "d3", "", 0),
    ])


def test_final_grades_per_item_with_their_raters() -> None:
    final = _panel().final()
    assert list(final.columns) == ["application", "query", "doc_id", "grade", "raters"]
    assert final.to_dict("records") == [
        {"application": "", "query": "tent", "doc_id": "d3", "grade": 1, "raters": 2},
        {"application": "web", "query": "tent", "doc_id": "d1", "grade": 3, "raters": 2},
        {"application": "web", "query": "tent", "doc_id": "d2", "grade": 1, "raters": 3},
    ]
    assert JudgmentSet.of([]).final().empty


def test_a_named_raters_later_grade_replaces_the_earlier_anonymous_ones_all_stay() -> None:
    first = JudgmentSet.of([("web", "tent", "d1", "ann", 0), ("web", "tent", "d1", "", 1)])
    later = JudgmentSet.of([("web", "tent", "d1", "ann", 3), ("web", "tent", "d1", "", 1)])
    merged = JudgmentSet.merged([first, later])
    assert len(merged) == 3
    assert sorted(zip(merged.grades["rater"], merged.grades["grade"], strict=True)) == [
        ("", 1.0), ("", 1.0), ("ann", 3.0)]
    assert merged.raters == ["ann"]
    assert len(JudgmentSet.merged([])) == 0


def test_judged_queries_and_raters() -> None:
    panel = _panel()
    assert panel.judged_queries() == {("web", "tent"), ("", "tent")}
    assert panel.raters == ["ann", "ben", "cy"]


def test_the_set_is_written_one_row_per_grade_in_order(tmp_path: Path) -> None:
    path = tmp_path / "judgments.csv"
    JudgmentSet.of([("web", "tent", "d2", "ben", 3), ("web", "tent", "d1", "ann", 2.5),
                    ("", "tent", "d1", "", 0)]).write(path)
    assert path.read_text().splitlines() == [
        "application,query,doc_id,rater,grade",
        ",tent,d1,,0",
        "web,tent,d1,ann,2.5",
        "web,tent,d2,ben,3",
    ]
