"""The judgment round trip through the other side's own rules: the feedback job's files as the
judges' tools import them, the judges' grades back through `searchpulse judgments import`, and
the exported grades read by ir_measures, trectools, Quepid's importers and SRW's parser."""

from __future__ import annotations

import contextlib
import io
import json
import math
import zlib
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from ir_measures import Judged, nDCG
from trectools import TrecQrel

from collector.config import load_config
from collector.replay import replay
from feedback.candidates.handoff import SRW_MAX_QUERIES, file_stem, quepid_line, write_query_sets
from searchpulse import EXIT_OK, main
from tests.conftest import UBI

SHARED = "camping tent"  # typed in both applications: two queries in every tool
QUERIES = {"web": [SHARED, "rain jacket", "head torch", "nowhere to be found"],
           "app": [SHARED, "sleeping bag"]}
ZERO_RESULTS = "nowhere to be found"
# Quepid's book importer creates a pair from its own keys (query_doc_pairs columns)
BOOK_PAIR_COLUMNS = {"query_text", "doc_id", "position", "document_fields", "information_need",
                     "notes", "options"}


def _store(directory: Path) -> str:
    ubi = UBI()
    records, at = [], 0.0
    for application, queries in QUERIES.items():
        for query in queries:
            hits = () if query == ZERO_RESULTS else tuple(
                f"{application}-{query.split()[0]}-{i}" for i in range(1, 6))
            for client in range(6):  # six clients each: k-anonymity passes
                at += 1
                records.append(ubi.query(f"{application}-{query}-{client}", query, at,
                                         client=f"{application}-{client}", hits=hits,
                                         app=application))
    log = directory / "ubi.jsonl"
    log.write_bytes(b"\n".join(records) + b"\n")
    store = f"sqlite:///{directory / 'aggregates.db'}"
    replay([str(log)], load_config(environ={}), store=store)
    return store


def run(*argv: str) -> dict:
    """``searchpulse ARGV --json``; its JSON output."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*argv, "--json"]) == EXIT_OK
    return json.loads(printed.getvalue())


@pytest.fixture(scope="module")
def handed_out(tmp_path_factory) -> tuple[Path, dict]:
    directory = tmp_path_factory.mktemp("handoff")
    out = directory / "out"
    summary = run("feedback", "--store", _store(directory), "--out", str(out),
                  "--since", "2026-01-01", "--set", "feedback.min_searches=1",
                  "--set", "feedback.failure_threshold=0.01",
                  "--set", "feedback.calibration_share=0.5")
    return out, summary


def _topics(out: Path) -> dict[str, tuple[str, str]]:
    queries = dict(line.split("\t") for line in
                   (out / "trec/topics.tsv").read_text().splitlines())
    applications = dict(line.split("\t") for line in
                        (out / "trec/topic-applications.tsv").read_text().splitlines())
    return {topic: (applications[topic], query) for topic, query in queries.items()}


def test_every_query_of_every_application_is_handed_out_once(handed_out):
    out, summary = handed_out
    topics = _topics(out)
    assert sorted(topics.values()) == sorted((a, q) for a, qs in QUERIES.items() for q in qs)
    for line in (out / "trec/topics.tsv").read_text().splitlines():
        assert len(line.split("\t")) == 2  # ir_datasets' TSV topics: id<TAB>text, nothing more
    pool = [line.split(" ") for line in (out / "trec/pool.txt").read_text().splitlines()]
    assert {(t, d) for t, d in pool} == {
        (t, f"{a}-{q.split()[0]}-{i}") for t, (a, q) in topics.items() if q != ZERO_RESULTS
        for i in range(1, 6)}
    empty = [t for t, (_, q) in topics.items() if q == ZERO_RESULTS]
    assert summary["topics_without_documents"] == empty


def test_quepid_books_follow_the_book_importer(handed_out):
    out, _ = handed_out
    books = {p.name: json.loads(p.read_text()) for p in (out / "quepid").iterdir()}
    assert set(books) == {"web.book.json", "app.book.json"}
    for name, book in books.items():
        application = name.split(".")[0]
        assert set(book) == {"name", "scale", "show_rank", "support_implicit_judgements",
                             "query_doc_pairs"}
        assert book["scale"] == [0, 1, 2, 3]
        pairs = book["query_doc_pairs"]
        assert all(set(p) <= BOOK_PAIR_COLUMNS and p["query_text"] and p["doc_id"]
                   and isinstance(p["position"], int) for p in pairs)
        expected = {(q, f"{application}-{q.split()[0]}-{i}") for q in QUERIES[application]
                    if q != ZERO_RESULTS for i in range(1, 6)}
        assert {(p["query_text"], p["doc_id"]) for p in pairs} == expected
        # one pair per (query, document): Quepid upserts pairs by query_text/doc_id
        assert len(pairs) == len(expected)
        assert sorted(p["position"] for p in pairs if p["query_text"] == SHARED) == [1, 2, 3, 4,
                                                                                   5]


def test_srw_query_sets_follow_the_plugin(handed_out, tmp_path):
    out, _ = handed_out
    for application, queries in QUERIES.items():
        body = json.loads((out / f"srw/{application}.query-set.json").read_text())
        assert set(body) == {"name", "description", "sampling", "querySetQueries"}
        assert body["sampling"] == "manual"
        assert sorted(q["queryText"] for q in body["querySetQueries"]) == sorted(queries)
    many = pd.DataFrame({"application": "web",
                         "query": [f"query {i}" for i in range(2 * SRW_MAX_QUERIES + 5)]})
    assert write_query_sets(tmp_path, many, "t") == {}
    parts = [tmp_path / f"web.query-set-{n}.json" for n in (1, 2, 3)]
    sizes = [len(json.loads(p.read_text())["querySetQueries"]) for p in parts]
    assert sizes == [SRW_MAX_QUERIES, SRW_MAX_QUERIES, 5]
    assert [json.loads(p.read_text())["name"] for p in parts] == \
        [f"web · searchpulse t-{n}" for n in (1, 2, 3)]


def _graded(document: str) -> int:
    return zlib.crc32(document.encode()) % 4


def test_filled_qrels_come_back_and_ir_measures_reads_them(handed_out, tmp_path):
    """Judges grade the pool in TREC form; one topic stays a template (-1 everywhere); a
    second judge grades half. The import writes only real grades: ir_measures and trectools
    read exactly those, and nDCG is what the definition gives."""
    out, _ = handed_out
    pool = [line.split(" ") for line in (out / "trec/pool.txt").read_text().splitlines()]
    topics = sorted({t for t, _ in pool})
    template_topic = topics[-1]
    first = tmp_path / "anna.qrels"
    first.write_text("".join(f"{t} 0 {d} {-1 if t == template_topic else _graded(d)}\n"
                             for t, d in pool))
    second = tmp_path / "ben.qrels"
    second.write_text("".join(f"{t} 0 {d} {_graded(d)}\n" for t, d in pool[::2]
                              if t != template_topic))
    judged_out = tmp_path / "judged"
    summary = run("judgments", "import", str(first), str(second), "--topics",
                  str(out / "trec/topics.tsv"), "--topic-applications",
                  str(out / "trec/topic-applications.tsv"), "--out", str(judged_out))
    graded_pool = [(t, d) for t, d in pool if t != template_topic]
    assert summary["not_judged"] == {"negative": len(pool) - len(graded_pool)}
    assert summary["judged_documents"] == len(graded_pool)

    qrels = list(ir_measures.read_trec_qrels(str(judged_out / "trec/qrels.txt")))
    assert len(qrels) == len(graded_pool)
    assert {q.query_id for q in qrels} == set(topics) - {template_topic}
    assert {(q.query_id, q.doc_id): q.relevance for q in qrels} == {
        (t, d): _graded(d) for t, d in graded_pool}  # both judges agree: the final grade
    trec = TrecQrel(str(judged_out / "trec/qrels.txt")).qrels_data
    assert len(trec) == len(graded_pool) and trec["query"].nunique() == len(topics) - 1
    assert (judged_out / "trec/topics.tsv").read_text() == "".join(
        f"{t}\t{q}\n" for t, (_, q) in sorted(_topics(out).items()) if t in {
            q.query_id for q in qrels})

    # the production ranking (the pool's order) scored against the filled grades
    production = tmp_path / "production.run"
    shown = {t: [d for tt, d in pool if tt == t] + ["never-judged"] for t in topics}
    production.write_text("".join(f"{t} Q0 {d} {rank} {100 - rank} production\n"
                                  for t in topics for rank, d in enumerate(shown[t], 1)))
    ndcg = nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7}) @ 10  # exponential gain, 2^g − 1
    results = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        [ndcg, Judged @ 10], ir_measures.read_trec_qrels(
            str(judged_out / "trec/qrels.txt")), ir_measures.read_trec_run(str(production)))}
    for topic in set(topics) - {template_topic}:
        grades = [_graded(d) for t, d in pool if t == topic]
        dcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(grades))
        ideal = sum((2 ** g - 1) / math.log2(i + 2)
                    for i, g in enumerate(sorted(grades, reverse=True)))
        expected = dcg / ideal if ideal else 0.0
        assert results[(topic, str(ndcg))] == pytest.approx(expected)
        assert results[(topic, "Judged@10")] == pytest.approx(5 / 6)  # of six shown
    assert not any(t == template_topic for t, _ in results)  # no qrels: not scored at all


def test_quepid_csv_rows_its_importer_accepts_or_refuses():
    """Quepid's import modal splits lines on \\n and, when a line has more than three
    comma-separated parts, wants exactly two double quotes; ratings_importer.rb needs doc_id
    and rating. A row that cannot pass is refused (counted), never written broken."""
    assert quepid_line("tent", "d1", 2) == "tent,d1,2"
    assert quepid_line("tent, 4 person", "d1", 2) == '"tent, 4 person",d1,2'
    assert quepid_line('5" nails', "d1", 0) == '"5"" nails",d1,0'  # ≤ 3 parts: no check
    assert quepid_line('tent, 5" pegs', "d1", 1) is None  # four quotes in a 4-part line
    assert quepid_line("tent, large", "d,1", 1) is None  # two quoted fields
    assert quepid_line("tent", "d\n1", 1) is None


def test_judged_sets_exported_for_every_tool(tmp_path):
    """judgments.csv → Quepid ratings CSV (only rated rows, exact header, \\n line ends), SRW
    judgments (ratings as strings, no empty list), one file per application."""
    judgments = tmp_path / "judgments.csv"
    judgments.write_text("application,query,doc_id,rater,grade\n"
                         "shop/eu,tent,d1,ann,3\nshop/eu,tent,d1,ben,1\nshop/eu,tent,d2,ann,\n"
                         'web,"tent, 5"" pegs",d3,ann,2\nweb,lamp,d4,ann,0\n')
    out = tmp_path / "out"
    summary = run("judgments", "import", str(judgments), "--out", str(out))
    assert summary["quepid_rows_refused"] == 1  # the quoted query with a comma: in SRW only
    assert summary["not_judged"] == {"unrated": 1}
    stem = file_stem("shop/eu")
    assert stem != "shop_eu" and stem.startswith("shop_eu-")  # never another app's file
    quepid = (out / f"quepid/{stem}.ratings.csv").read_bytes()
    assert quepid == b"query,docid,rating\ntent,d1,2\n"  # (3 + 1) / 2, rounded half up
    assert (out / "quepid/web.ratings.csv").read_text() == "query,docid,rating\nlamp,d4,0\n"
    for path in (out / "srw").iterdir():
        body = json.loads(path.read_text())
        assert body["type"] == "IMPORT_JUDGMENT" and body["judgmentRatings"]
        for entry in body["judgmentRatings"]:
            assert set(entry) == {"query", "ratings"} and entry["query"] and entry["ratings"]
            for rating in entry["ratings"]:
                assert isinstance(rating["docId"], str) and rating["docId"]
                assert isinstance(rating["rating"], str)
                float(rating["rating"])  # what the plugin's Float.parseFloat accepts
    web = json.loads((out / "srw/web.judgments.json").read_text())
    assert web["judgmentRatings"] == [
        {"query": "lamp", "ratings": [{"docId": "d4", "rating": "0.000"}]},
        {"query": 'tent, 5" pegs', "ratings": [{"docId": "d3", "rating": "2.000"}]}]


def test_the_feedback_report_shows_the_judges_agreement(handed_out, tmp_path):
    out, _ = handed_out
    store = f"sqlite:///{out.parent / 'aggregates.db'}"
    judgments = tmp_path / "judgments.csv"
    judgments.write_text("application,query,doc_id,rater,grade\n" + "".join(
        f"web,old query {i},d{i},{rater},{(i + shift) % 4}\n" for i in range(40)
        for rater, shift in (("ann", 0), ("ben", i % 3 == 0))))
    run("feedback", "--store", store, "--out", str(tmp_path / "out"), "--since", "2026-01-01",
        "--set", "feedback.min_searches=1", "--judgments", str(judgments))
    report = (tmp_path / "out/report.html").read_text()
    assert "<h2>Judges' agreement</h2>" in report and "ann (rows) × ben (columns)" in report
    assert "Judges' agreement" not in (out / "report.html").read_text()  # no judgments given
