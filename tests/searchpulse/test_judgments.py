"""searchpulse/judgments.py: `searchpulse judgments import` reports what it refused and
replaced and writes only whole grades, and a set with grades above the scale is exit 3 with the
rows kept, for import, agreement and evaluate alike, since a half-read judgment set must never
pass for a success."""

from __future__ import annotations

import json


def test_judgments_import_reports_both_and_writes_only_whole_grades(tmp_path, capsys):
    from searchpulse import main

    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\ttent\n")
    qrels = tmp_path / "judged.qrels"
    qrels.write_text("t1 0 d1 2.5\nt1 0 d2 1\nt1 0 d2 2\nt1 0 d3 3\n")
    out = tmp_path / "out"
    assert main(["judgments", "import", str(qrels), "--topics", str(topics), "--out", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["not_judged"] == {"not_an_integer": 1}
    assert summary["duplicate_grades"]["grades_replaced"] == 1
    assert summary["duplicate_grades"]["by_rater"] == {"judged.qrels": 1}
    assert (out / "trec" / "qrels.txt").read_text() == "t1 0 d2 2\nt1 0 d3 3\n"


def test_grades_above_the_scale_are_rejected_kept_and_exit_3(tmp_path, capsys, caplog):
    """Judges who graded 0..4 against a 0..3 scale: each grade 4 is rejected with its reason,
    counted and kept in rejected.csv (the others are written), and the command is not a
    success (README: bad input is exit 3); agreement and evaluate refuse such a set too."""
    from searchpulse import main

    ratings = tmp_path / "ratings.csv"
    ratings.write_text("query,docid,rating\ntent,d1,4\ntent,d2,2\nlamp\x1b,d3,4\n")
    out = tmp_path / "out"
    assert main(["judgments", "import", str(ratings), "--out", str(out), "--json"]) == 3
    summary = json.loads(capsys.readouterr().out)
    assert summary["rejected"] == {"off_scale": 2}
    assert summary["not_judged"] == {}
    assert summary["final_grades"] == {"2": 1}
    assert (out / "rejected.csv").read_text().splitlines() == [
        "file,row,reason,application,query,doc_id,rater,grade",
        f"{ratings},1,off_scale,,tent,d1,ratings.csv,4",
        f"{ratings},3,off_scale,,lamp\\x1b,d3,ratings.csv,4"]
    assert (f"2 grades above the scale 0..3 (judgments.max_grade), first {ratings} judgment 1 "
            f"('tent', d1): 4") in caplog.text
    assert f"the rows are in {out / 'rejected.csv'}" in caplog.text
    assert main(["judgments", "agreement", str(ratings)]) == 3
    run = tmp_path / "a.run"
    run.write_text("tent Q0 d1 1 1.0 a\n")
    assert main(["evaluate", "--judgments", str(ratings), "--run", str(run)]) == 3
