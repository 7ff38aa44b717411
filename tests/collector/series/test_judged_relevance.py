"""Live judged scoring: exact values on hand-computed rankings, which searches are scored, and
the judgment set reloaded on change without a restart (a broken file keeps the last good set)."""

from __future__ import annotations

import math
import os

import pytest

from collector import watched_file
from collector.config import ConfigError
from collector.series.judged_relevance import JudgedQuery, JudgedRankings, JudgmentsFile

HEADER = "application,query,doc_id,rater,grade\n"


def test_ndcg_err_and_coverage_by_hand():
    judged = JudgedQuery({"a": 3, "b": 2, "c": 0, "d": 1, "z": 3})
    rankings = JudgedRankings((), 3)
    # shown a, x (unjudged), b; ideal 3, 3, 2, 1, 0
    ndcg, err, coverage = rankings.score(judged, ["a", "x", "b"])
    dcg = 7 + 3 / math.log2(4)
    ideal = 7 + 7 / math.log2(3) + 3 / 2 + 1 / math.log2(5)
    assert ndcg == pytest.approx(dcg / ideal)
    assert err == pytest.approx(7 / 8 + (1 / 8) * (3 / 8) / 3)
    assert coverage == pytest.approx(2 / 3)
    # integer hit ids are looked up as text; only the first 10 count
    assert rankings.score(JudgedQuery({"7": 1}), [7])[2] == 1.0
    assert rankings.score(JudgedQuery({"k": 3}), ["x"] * 10 + ["k"]) == (0.0, 0.0, 0.0)
    # every judged document grade 0: no ideal, NDCG 0 (trec_eval's convention)
    assert rankings.score(JudgedQuery({"a": 0}), ["a"]) == (0.0, 0.0, 1.0)


def test_remembered_scores_equal_fresh_ones_on_every_path():
    """A query's memo answers by the ranking's hash or by its grades: rankings that differ only
    by unjudged documents or by documents of equal grade share a score, any other change does
    not, and a full memo forgets its oldest entries, never a wrong score."""
    grades = {"a": 3, "b": 2, "c": 2, "d": 0}
    rankings = JudgedRankings((), 3)

    def fresh(shown: list[str]) -> tuple[float, float, float]:
        return rankings.score(JudgedQuery(grades), shown)

    remembering = JudgedQuery(grades)
    shown = [["a", "b", "x"], ["a", "b", "y"], ["a", "c", "x"], ["b", "a", "x"], ["a", "b", "x"],
             ["a", "d", "x"], ["a", "x", "x"]]
    shown += [["a", f"u{i}", "b"] for i in range(40)] + shown  # past MEMO: evicted, rescored
    for ranking in shown:
        assert rankings.score(remembering, ranking) == fresh(ranking)
    assert fresh(["a", "b", "x"]) == fresh(["a", "c", "y"]) != fresh(["b", "a", "x"])
    # a grade-0 document gains nothing but is judged: same NDCG and ERR, not the same coverage
    assert fresh(["a", "d", "x"])[:2] == fresh(["a", "x", "x"])[:2]
    assert (fresh(["a", "d", "x"])[2], fresh(["a", "x", "x"])[2]) == (2 / 3, 1 / 3)


def test_an_application_row_wins_over_one_for_every_application():
    rankings = JudgedRankings([("", "tent", "d1", 3), ("web", "tent", "d1", 0),
                               ("", "lamp", "d2", 1)], 3)
    assert rankings.lookup("web", "tent").grades == {"d1": 0}
    assert rankings.lookup("mobile", "tent").grades == {"d1": 3}
    assert rankings.lookup("web", "lamp").grades == {"d2": 1}
    assert rankings.lookup("web", "sofa") is None
    assert len(rankings) == 3


def test_only_first_pages_with_hit_ids_of_judged_queries_are_scored(ubi, engine, tmp_path):
    judgments = tmp_path / "judgments.csv"
    judgments.write_text(HEADER + ",tent,d1,ann,3\n,tent,d2,ann,1\n")
    e = engine([ubi.query("q1", "Tent", 0, hits=["d1", "d2"]),  # scored: NDCG 1
                ubi.query("q2", "tent", 1, client="c2", hits=["d2", "d1"]),  # scored
                ubi.query("q3", "tent", 2, client="c3", hits=[]),  # zero results
                ubi.query("q4", "tent", 3, client="c4", hits=None, total_hits=40),  # no ids
                ubi.query("q5", "tent", 4, client="c1", hits=["d9"], page=2),  # page 2
                ubi.query("q1", "tent", 5, hits=["d1"]),  # a duplicate
                ubi.query("q6", "lamp", 6, client="c5")],  # not judged
               **{"judgments.file": str(judgments)})
    series = [s for s in e.view().series if s.judged_searches]
    assert sum(s.judged_searches for s in series) == 2
    swapped = (1 + 7 / math.log2(3)) / (7 + 1 / math.log2(3))
    assert sum(s.judged_ndcg_sum for s in series) == pytest.approx(1 + swapped)
    assert sum(s.judged_coverage_sum for s in series) == 2.0


def test_the_judgment_set_is_reloaded_on_change(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(watched_file, "RELOAD_CHECK_S", 0.0)
    path = tmp_path / "judgments.csv"
    path.write_text(HEADER + ",tent,d1,ann,3\n")
    watched = JudgmentsFile(str(path), 3)
    assert watched.current().lookup("", "tent").grades == {"d1": 3}
    path.write_text(HEADER + ",tent,d1,ann,1\n,lamp,d2,ann,2\n")
    os.utime(path, (1, 2_000_000_000))  # a new modification time, whatever the clock
    assert watched.current().lookup("", "tent").grades == {"d1": 1}
    assert watched.current().lookup("", "lamp") is not None
    path.write_text('{"query_doc_pairs": [')  # broken: the last good set stays
    os.utime(path, (1, 2_000_000_100))
    assert watched.current().lookup("", "lamp") is not None
    assert "keeping the previous version" in caplog.text
    path.unlink()  # gone: the last good set stays, quietly
    assert watched.current().lookup("", "tent").grades == {"d1": 1}


def test_an_unusable_judgments_file_at_start_names_the_setting(tmp_path, capsys):
    from searchpulse import EXIT_USAGE, main

    log = tmp_path / "ubi.jsonl"
    log.write_text("")
    assert main(["replay", str(log), "--judgments", str(tmp_path / "missing.csv")]) == \
        EXIT_USAGE
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ConfigError, match=r"^judgments.file: .*broken.json"):
        JudgmentsFile(str(broken), 3)
