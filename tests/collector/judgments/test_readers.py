"""What the judges' tools return (Quepid book export and CSV, TREC qrels, SRW, judgments.csv),
read into one judgment set; "not judged" is never a grade; TREC runs."""

from __future__ import annotations

import json

import pytest

from collector.judgments.judgment_set import JudgmentSet, combine, round_half_up
from collector.judgments.readers import (
    JudgmentsError,
    Sources,
    read_judgments,
    read_run,
    read_topic_applications,
    read_topics,
)


def rows(reading):
    return sorted(reading.rows)


def test_quepid_csv_empty_rating_is_not_judged(tmp_path):
    quepid = tmp_path / "quepid.csv"
    quepid.write_text("query,docid,rating\nRed  Tent,d1,3\nred tent,d2,\n\"Lamp, desk\",d9,1\n"
                      "lamp,,2\n")
    reading = read_judgments([quepid], Sources(), max_grade=3)
    assert rows(reading) == [("", "lamp, desk", "d9", "quepid.csv", 1.0),
                             ("", "red tent", "d1", "quepid.csv", 3.0)]
    assert reading.not_judged == {"unrated": 1, "no_document": 1}


def test_trec_qrels_negative_grades_are_not_judged(tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tCamping Stove\nt2\tkettle\tweb\n")  # an old three-column file too
    applications = tmp_path / "topic-applications.tsv"
    applications.write_text("t1\tshop\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("t1 0 d1 2\nt1 0 doc%201 0\nt2 0 d4 -1\nt2 0 d5 7\n\n")
    sources = Sources(topics=read_topics(topics),
                      topic_applications=read_topic_applications(applications), rater="anna")
    reading = read_judgments([qrels], sources, max_grade=3)
    assert rows(reading) == [("shop", "camping stove", "d1", "anna", 2.0),
                             ("shop", "camping stove", "doc 1", "anna", 0.0)]
    assert reading.not_judged == {"negative": 1}
    assert reading.rejected == {"off_scale": 1}  # bad input, not an unjudged row
    assert reading.rejected_rows == [(str(qrels), 4, "off_scale", "", "kettle", "d5", "anna",
                                      "7")]


def test_trec_files_need_topics_and_name_bad_lines(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("t1 0 d1 2\n")
    with pytest.raises(JudgmentsError, match="pass --topics"):
        read_judgments([qrels], Sources(), 3)
    with pytest.raises(JudgmentsError, match=r"qrels.txt:1: topic 't1' is not in the topics"):
        read_judgments([qrels], Sources(topics={"t2": "x"}), 3)
    qrels.write_text("t1 0 d1\n")
    with pytest.raises(JudgmentsError, match=r"qrels.txt:1: expected at least 4"):
        read_judgments([qrels], Sources(topics={"t1": "x"}), 3)


def test_quepid_book_export_one_grade_per_rater(tmp_path):
    """The shape of Quepid's book export (api/v1/export/books): judgements carry rating,
    unrateable, judge_later, user_email (absent for an anonymous judgement)."""
    book = tmp_path / "book_export_7.json"
    book.write_text(json.dumps({
        "name": "shop · searchpulse candidates 2026-11-30", "show_rank": False,
        "support_implicit_judgements": False,
        "query_doc_pairs": [
            {"query_text": "Tent", "doc_id": "d1", "position": 1, "document_fields": {},
             "judgements": [
                 {"rating": 3.0, "unrateable": False, "judge_later": False,
                  "user_email": "ann@example.com", "explanation": None},
                 {"rating": 2.0, "unrateable": False, "judge_later": False,
                  "user_email": "bob@example.com"},
                 {"rating": 1.0, "unrateable": False, "judge_later": False}]},
            {"query_text": "tent", "doc_id": "d2", "position": 2, "judgements": [
                {"rating": None, "unrateable": True, "judge_later": False,
                 "user_email": "ann@example.com"},
                {"rating": None, "unrateable": False, "judge_later": True,
                 "user_email": "bob@example.com"}]},
            {"query_text": "tent", "doc_id": "d3", "position": 3, "judgements": []}]}))
    reading = read_judgments([book], Sources(), 3)
    assert rows(reading) == [("shop", "tent", "d1", "", 1.0),
                             ("shop", "tent", "d1", "ann@example.com", 3.0),
                             ("shop", "tent", "d1", "bob@example.com", 2.0)]
    assert reading.not_judged == {"unrateable": 1, "judge_later": 1, "unrated": 1}
    # --application wins over the name; a foreign book's name says nothing
    assert {r[0] for r in read_judgments([book], Sources(application="web"), 3).rows} == {"web"}
    book.write_text(json.dumps({"name": "Team book", "query_doc_pairs": [
        {"query_text": "tent", "doc_id": "d1", "judgements": [{"rating": 1}]}]}))
    assert read_judgments([book], Sources(), 3).rows == [("", "tent", "d1", "", 1.0)]


def test_srw_judgments_both_shapes(tmp_path):
    listed = tmp_path / "srw.json"
    listed.write_text(json.dumps({"name": "x", "type": "IMPORT_JUDGMENT", "judgmentRatings": [
        {"query": "Tent", "ratings": [{"docId": "d1", "rating": "3.000"},
                                      {"docId": "d2", "rating": ""},
                                      {"docId": "d3", "rating": 1}]},
        {"query": "lamp", "ratings": []}]}))
    mapped = tmp_path / "old-srw.json"
    mapped.write_text(json.dumps({"judgmentRatings": {"kettle": [{"docId": "k", "rating": "2"}]}}))
    reading = read_judgments([listed, mapped], Sources(rater="llm"), 3)
    assert rows(reading) == [("", "kettle", "k", "llm", 2.0), ("", "tent", "d1", "llm", 3.0),
                             ("", "tent", "d3", "llm", 1.0)]
    assert reading.not_judged == {"unrated": 2}


def test_judgment_set_file_round_trips(tmp_path):
    judgments = JudgmentSet.of([("shop", "tent", "d,1", "ann", 3.0), ("", "lamp", "d2", "", 1.5),
                                ("shop", "tent", "d,1", "bob", 0.0)])
    judgments.write(tmp_path / "judgments.csv")
    assert (tmp_path / "judgments.csv").read_text().splitlines()[0] == \
        "application,query,doc_id,rater,grade"
    again = read_judgments([tmp_path / "judgments.csv"], Sources(), 3).judgment_set()
    key = ["application", "query", "doc_id", "rater"]
    assert again.grades.sort_values(key).values.tolist() == \
        judgments.grades.sort_values(key).values.tolist()


def test_hostile_files_are_refused_with_the_file_named(tmp_path):
    binary = tmp_path / "photo.jpg"
    binary.write_bytes(b"\xff\xd8\xff\xe0" + bytes(range(256)))
    with pytest.raises(JudgmentsError, match="photo.jpg: not UTF-8"):
        read_judgments([binary], Sources(), 3)
    broken = tmp_path / "book.json"
    broken.write_text('{"query_doc_pairs": [')
    with pytest.raises(JudgmentsError, match="book.json: not valid JSON"):
        read_judgments([broken], Sources(), 3)
    other = tmp_path / "other.json"
    other.write_text('{"hits": []}')
    with pytest.raises(JudgmentsError, match="neither a Quepid book"):
        read_judgments([other], Sources(), 3)
    with pytest.raises(JudgmentsError, match="missing.csv: No such file"):
        read_judgments([tmp_path / "missing.csv"], Sources(), 3)
    bom = tmp_path / "excel.csv"
    bom.write_text("\ufeffquery,docid,rating\ntent,d1,x\ntent,d2,2\n", encoding="utf-8")
    reading = read_judgments([bom], Sources(), 3)
    assert reading.rows == [("", "tent", "d2", "excel.csv", 2.0)]
    assert reading.not_judged == {"not_a_number": 1}


@pytest.mark.parametrize(("grades", "final"), [
    ([2], 2), ([3, 0], 2),  # mean 1.5, rounded half up as Quepid (Ruby) rounds
    ([3, 3, 0], 0),  # the top three disagree: the lowest of them
    ([3, 3, 3, 0], 3),  # the top three agree; below: top three 3, 2, 2 → 2
    ([1, 2, 3, 2], 2), ([0, 1], 1), ([0, 0, 1], 0)])
def test_final_grade_is_quepids_rule(grades, final):
    assert round_half_up(combine(grades)) == final


def test_a_raters_later_grade_replaces_the_earlier_anonymous_ones_stay():
    judgments = JudgmentSet.of([("a", "q", "d", "ann", 1.0), ("a", "q", "d", "ann", 3.0),
                                ("a", "q", "d", "", 0.0), ("a", "q", "d", "", 0.0)])
    assert sorted(judgments.grades["grade"]) == [0.0, 0.0, 3.0]
    final = judgments.final()
    assert final[["grade", "raters"]].values.tolist() == [[0, 3]]  # [3, 0, 0]: min of top 3
    assert judgments.judged_queries() == {("a", "q")}


def test_run_file_top_documents_by_rank(tmp_path):
    run = tmp_path / "bm25.run"
    run.write_text("t1 Q0 d3 3 1.0 bm25\nt1 Q0 d1 1 3.0 bm25\nt1 Q0 d2 2 2.0 bm25\n"
                   "t2 Q0 d9 1 5.0 bm25\n")
    assert read_run(run, {"t1": "tent", "t2": "lamp"}, depth=2) == {
        "tent": ["d1", "d2"], "lamp": ["d9"]}
    run.write_text("t1 Q0 d3 first 1.0 bm25\n")
    with pytest.raises(JudgmentsError, match="rank 'first' is not an integer"):
        read_run(run, {"t1": "tent"}, depth=2)


def test_fractional_and_off_scale_grades_are_refused_and_counted(tmp_path, caplog):
    """trec_eval refuses a relevance of 2.5; so do we (it was imported as 3). Quepid's scales
    are whole grades too; SRW's ratings are real numbers and stay so."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("t1 0 d1 2.5\nt1 0 d2 3\nt1 0 d3 4\nt1 0 d4 -1\nt1 0 d5 nan\n"
                     "t1 0 d6 2.0\nt1 0 d7 0.0001\n")
    quepid = tmp_path / "quepid.csv"
    quepid.write_text("query,docid,rating\ntent,d1,1.5\ntent,d2,1\n")
    srw = tmp_path / "srw.json"
    srw.write_text(json.dumps({"judgmentRatings": [
        {"query": "tent", "ratings": [{"docId": "d3", "rating": "0.734"}]}]}))
    reading = read_judgments([qrels, quepid, srw], Sources(topics={"t1": "tent"}), 3)
    assert rows(reading) == [("", "tent", "d2", "qrels.txt", 3.0),
                             ("", "tent", "d2", "quepid.csv", 1.0),
                             ("", "tent", "d3", "srw.json", 0.734),
                             ("", "tent", "d6", "qrels.txt", 2.0)]
    assert reading.not_judged == {"not_an_integer": 3, "negative": 1, "not_a_number": 1}
    assert reading.rejected == {"off_scale": 1}
    assert reading.refusal() == (
        f"1 grade above the scale 0..3 (judgments.max_grade), first {qrels} judgment 3 "
        "('tent', d3): 4; if the judges graded on another scale, set judgments.max_grade to "
        "its top")
    assert not reading.regraded and "graded again" not in caplog.text


def test_a_rater_grading_an_item_twice_is_counted_and_named(tmp_path, caplog):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("t1 0 d1 1\nt1 0 d2 0\nt1 0 d1 3\nt2 0 d1 2\n")
    book = tmp_path / "book.json"
    book.write_text(json.dumps({"name": "web · searchpulse candidates", "query_doc_pairs": [
        {"query_text": "lamp", "doc_id": "d9", "judgements": [
            {"user_email": "ann@x", "rating": 1}, {"user_email": "ann@x", "rating": 2},
            {"user_email": "bob@x", "rating": 2}, {"rating": 0}, {"rating": 0}]}]}))
    reading = read_judgments([qrels, book], Sources(topics={"t1": "tent", "t2": "stove"}), 3)
    assert reading.duplicates() == {
        "grades_replaced": 2, "by_rater": {"ann@x": 1, "qrels.txt": 1},
        "first": ["qrels.txt graded (any application, 'tent', d1) 1, then 3: the later grade "
                  "is kept",
                  "ann@x graded (web, 'lamp', d9) 1, then 2: the later grade is kept"]}
    assert "2 items graded again by the same rater (the later grade kept): qrels.txt " \
           "graded (any application, 'tent', d1) 1, then 3" in caplog.text
    final = reading.judgment_set().final().set_index(["query", "doc_id"])["grade"]
    assert final[("tent", "d1")] == 3  # the later grade, as before: now said, not silent
    # ann's later 2 (her 1 replaced), bob's 2, two anonymous 0s: the top three (2, 2, 0)
    # disagree, so the lowest (Quepid's rule)
    assert final[("lamp", "d9")] == 0
