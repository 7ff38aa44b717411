"""Judgment files (Quepid CSV, TREC qrels + topics) and TREC runs."""

from __future__ import annotations

import pytest

from feedback.judgments import JudgmentsError, read_judged, read_run, read_topics


def test_quepid_csv_and_trec_qrels(tmp_path):
    quepid = tmp_path / "quepid.csv"
    quepid.write_text("query,docid,rating\nRed  Tent,d1,3\nred tent,d2,0\nLamp,d9,1\n")
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tCamping Stove\tweb\nt2\tkettle\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("t1 0 d1 2\nt2 0 d4 0\n\n")
    assert read_judged([quepid], None) == {"red tent", "lamp"}
    assert read_judged([quepid, qrels], read_topics(topics)) == {
        "red tent", "lamp", "camping stove", "kettle"}


def test_trec_files_need_topics_and_name_bad_lines(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("t1 0 d1 2\n")
    with pytest.raises(JudgmentsError, match="pass --topics"):
        read_judged([qrels], None)
    with pytest.raises(JudgmentsError, match=r"qrels.txt:1: topic 't1' is not in the topics"):
        read_judged([qrels], {"t2": "x"})
    qrels.write_text("t1 0 d1\n")
    with pytest.raises(JudgmentsError, match=r"qrels.txt:1: expected at least 4"):
        read_judged([qrels], {"t1": "x"})


def test_run_file_top_documents_by_rank(tmp_path):
    run = tmp_path / "bm25.run"
    run.write_text("t1 Q0 d3 3 1.0 bm25\nt1 Q0 d1 1 3.0 bm25\nt1 Q0 d2 2 2.0 bm25\n"
                   "t2 Q0 d9 1 5.0 bm25\n")
    assert read_run(run, {"t1": "tent", "t2": "lamp"}, depth=2) == {
        "tent": ["d1", "d2"], "lamp": ["d9"]}
    run.write_text("t1 Q0 d3 first 1.0 bm25\n")
    with pytest.raises(JudgmentsError, match="rank 'first' is not an integer"):
        read_run(run, {"t1": "tent"}, depth=2)
