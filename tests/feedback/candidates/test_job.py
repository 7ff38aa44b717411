"""`searchpulse feedback` end to end on simulated traffic whose failing queries are known by
construction: the selection, quotas, calibration, exclusions, PII, pooling, every output format,
determinism, both stores (SQLite and a real PostgreSQL give the same files) and bad input."""

from __future__ import annotations

import json
from datetime import date
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from collector.config import load_config
from collector.outcomes import normalize_query
from collector.replay import replay
from collector.series.strata import load_strata_csv
from collector.sources.simulator import SimulationSpec, Simulator
from collector.store.query_store import open_store
from searchpulse import EXIT_INPUT, EXIT_OK, main

SPEC = SimulationSpec(seed=3, sessions=20_000)
QUOTAS = {"head": 25, "torso": 50, "tail": 100, "known_item": 25}  # the defaults
CALIBRATION_SHARE = 0.2
PERSONAL = ["mail john.doe@example.com invoice", "call +44 20 7946 0958",
            "card 4111 1111 1111 1111", "customer 123456789012345678"]


def _personal_records() -> list[bytes]:
    """Searches for personal data, all without results: they would rank high if kept. Ten days
    after the simulated traffic, so they are not late for it nor it for them."""
    records = []
    for n, text in enumerate(PERSONAL):
        for i in range(30):
            records.append(json.dumps({
                "query_id": f"pii-{n}-{i}", "user_query": text, "client_id": f"pii-{n}-{i}",
                "timestamp": int((SPEC.start + 10 * 86400 + 60 * n + i) * 1000),
                "application": "web",
                "query_response_hit_ids": []}).encode() + b"\n")
    return records


def simulated_store(directory: Path, spec: SimulationSpec = SPEC
                    ) -> tuple[Simulator, Path, str]:
    """The simulator's traffic and the personal-data searches, replayed into a SQLite store."""
    simulator = Simulator(spec)
    log = directory / "ubi.jsonl"
    log.write_bytes(b"".join([*simulator.records(), *_personal_records()]))
    store = f"sqlite:///{directory / 'aggregates.db'}"
    replay([str(log)], load_config(environ={}), store=store)
    return simulator, log, store


@pytest.fixture(scope="module")
def simulation(tmp_path_factory):
    simulator, log, store = simulated_store(tmp_path_factory.mktemp("feedback"))
    return simulator.vocab, log, store


def run_job(store: str, out: Path, capsys, *extra: str) -> dict:
    assert main(["feedback", "--store", store, "--since", "2026-01-01", "--out", str(out),
                 "--json", *extra]) == EXIT_OK
    return json.loads(capsys.readouterr().out)


def by_construction(vocab, query: str) -> str:
    if query in vocab.broken:
        return "broken"  # always zero results
    if query in vocab.poor:
        return "poor"  # clicked a quarter as often
    if query not in vocab.strata:
        return "off-vocabulary"  # reformulation variants, SKUs: half without results
    return ""


def test_selects_the_failing_queries_within_quotas(simulation, tmp_path, capsys):
    vocab, _, store = simulation
    summary = run_job(store, tmp_path / "out", capsys)
    candidates = pd.read_csv(tmp_path / "out" / "candidates.csv", keep_default_na=False)
    failing = candidates[candidates["selected_as"] == "failing"]
    truth = failing["query"].map(lambda q: by_construction(vocab, q))
    assert (truth != "").mean() >= 0.95, failing[truth == ""]
    # every (application, query) failing by construction with enough traffic to tell:
    # always without results from 8 searches on, clicked a quarter as often from 20 on
    totals = open_store(store).totals("2026-01-01")
    evident = totals[(totals["query"].isin(vocab.broken) & (totals["searches"] >= 8))
                     | (totals["query"].isin(vocab.poor) & (totals["searches"] >= 20))]
    evident = set(zip(evident["application"], evident["query"], strict=True))
    assert len(evident) >= 7
    assert evident <= set(zip(failing["application"], failing["query"], strict=True))
    for stratum, quota in QUOTAS.items():
        rows = candidates[candidates["stratum"] == stratum]
        calibration = rows[rows["selected_as"] == "calibration"]
        assert len(rows) <= quota
        assert len(calibration) == round(quota * CALIBRATION_SHARE), stratum
        # never a query evidently failing (a poor query seen 3 times is no evidence: it may
        # be sampled as healthy, as any query of its traffic)
        assert not evident & set(zip(calibration["application"], calibration["query"],
                                     strict=True))
    assert summary["candidates"] == len(candidates)
    assert summary["calibration_candidates"] == sum(round(q * 0.2) for q in QUOTAS.values())
    assert set(summary["shortfall"]) <= {"tail", "head"}  # few tail queries are provably bad


def test_already_judged_queries_are_excluded_unfilled_templates_are_not(simulation, tmp_path,
                                                                        capsys):
    _, _, store = simulation
    run_job(store, tmp_path / "first", capsys)
    first = pd.read_csv(tmp_path / "first" / "candidates.csv", keep_default_na=False)
    failing = first[first["selected_as"] == "failing"]
    judged = failing["query"].head(8).tolist()
    unfilled = [q for q in failing["query"].iloc[8:16] if q not in judged][:4]
    quepid = tmp_path / "judged.csv"
    quepid.write_text("query,docid,rating\n" + "".join(f"{q.title()},d1,2\n" for q in judged)
                      + "".join(f"{q},d1,\n" for q in unfilled))  # rows nobody rated
    web = failing[(failing["application"] == "web")
                  & ~failing["query"].isin([*judged, *unfilled])].iloc[0]
    topics = tmp_path / "topics.tsv"
    topics.write_text(f"old-1\t{judged[0]}\nold-2\t{web['query']}\nold-3\t{unfilled[0]}\n")
    applications = tmp_path / "topic-applications.tsv"
    applications.write_text("old-2\tweb\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("old-1 0 d1 3\nold-2 0 d7 1\nold-3 0 d1 -1\n")  # -1: the old template
    summary = run_job(store, tmp_path / "second", capsys, "--judgments", str(quepid),
                      "--judgments", str(qrels), "--topics", str(topics),
                      "--topic-applications", str(applications))
    second = pd.read_csv(tmp_path / "second" / "candidates.csv", keep_default_na=False)
    fresh = second[second["selected_as"].isin(["failing", "calibration"])]
    assert not set(judged) & set(fresh["query"])
    assert not set(judged) & set(second["query"])  # this store has no live judged scores
    assert set(unfilled) <= set(fresh["query"])
    # judged for web only: excluded there, still a candidate wherever else it fails
    assert web["query"] not in set(fresh[fresh["application"] == "web"]["query"])
    assert summary["judgment_rows_not_judged"] == {"negative": 1, "unrated": len(unfilled)}
    assert summary["excluded_already_judged"] >= len(set(judged)) + 1


def test_personal_data_is_dropped_counted_and_written_nowhere(simulation, tmp_path, capsys):
    _, _, store = simulation
    summary = run_job(store, tmp_path / "out", capsys)
    assert summary["dropped_personal_data_queries"] == 4
    assert summary["dropped_personal_data_searches"] == 120
    written = "".join(p.read_text() for p in (tmp_path / "out").rglob("*")
                      if p.is_file()).lower()
    for text in PERSONAL:
        normalized = normalize_query(text)
        assert normalized not in written
    for fragment in ("john.doe", "7946 0958", "4111 1111", "123456789012345678"):
        assert fragment not in written


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)


def test_every_output_parses_in_its_format(simulation, tmp_path, capsys):
    vocab, _, store = simulation
    out = tmp_path / "out"
    run = tmp_path / "new-ranker.run"
    first = tmp_path / "first"
    run_job(store, first, capsys)
    topics_path = first / "trec/topics.tsv"
    topic_lines = [line.split("\t") for line in topics_path.read_text().splitlines()]
    run.write_text("".join(f"{topic} Q0 run-doc-{i} {i} {10 - i} new-ranker\n"
                           for topic, *_ in topic_lines[:3] for i in range(1, 4)))
    summary = run_job(store, out, capsys, "--run", str(run), "--topics", str(topics_path))
    candidates = pd.read_csv(out / "candidates.csv", keep_default_na=False)
    assert list(candidates.columns[:6]) == ["topic", "query", "application", "stratum",
                                            "selected_as", "reason"]
    assert (candidates[candidates["selected_as"] == "failing"]["reason"] != "").all()
    assert candidates["topic"].is_unique
    topics = [line.split("\t") for line in (out / "trec/topics.tsv").read_text().splitlines()]
    assert [t for t in topics] == candidates[["topic", "query"]].values.tolist()  # two columns
    applications = dict(line.split("\t") for line in
                        (out / "trec/topic-applications.tsv").read_text().splitlines())
    assert applications == dict(zip(candidates["topic"], candidates["application"],
                                                strict=True))
    pool = [line.split(" ") for line in (out / "trec/pool.txt").read_text().splitlines()]
    assert all(len(f) == 2 for f in pool) and len(pool) == summary["pooled_documents"]
    pooled_topics = {f[0] for f in pool}
    # every topic has documents to judge, or is reported as having none
    assert sorted(set(candidates["topic"]) - pooled_topics) == \
        summary["topics_without_documents"]
    assert summary["topics_without_documents"]  # zero-result queries show nothing to pool
    assert dict(zip(candidates["topic"], candidates["pooled_documents"], strict=True)) == {
        t: sum(f[0] == t for f in pool) for t in candidates["topic"]}
    # the run's top documents joined the pool of its three queries (in every application)
    run_queries = {t[1] for t in topic_lines[:3]}
    pooled_run_docs = {(f[0], f[1]) for f in pool if f[1].startswith("run-doc-")}
    assert pooled_run_docs == {(t[0], f"run-doc-{i}") for t in topics if t[1] in run_queries
                               for i in range(1, 4)}
    books = {p.name: json.loads(p.read_text()) for p in (out / "quepid").glob("*.book.json")}
    assert set(books) == {f"{a}.book.json" for a in
                          candidates[candidates["pooled_documents"] > 0]["application"]}
    for name, book in books.items():
        application = name.removesuffix(".book.json")
        assert book["name"].startswith(f"{application} · searchpulse candidates ")
        assert book["scale"] == [0, 1, 2, 3] and book["show_rank"] is False
        expected = [(q, d) for t, d in pool for q in [dict(topics)[t]]
                    if applications[t] == application]
        assert [(p["query_text"], p["doc_id"]) for p in book["query_doc_pairs"]] == expected
        assert all(set(p) == {"query_text", "doc_id", "position", "notes"}
                   and p["position"] >= 1 for p in book["query_doc_pairs"])
    for application, rows in candidates.groupby("application"):
        query_set = json.loads((out / f"srw/{application}.query-set.json").read_text())
        assert query_set["sampling"] == "manual"
        assert [q["queryText"] for q in query_set["querySetQueries"]] == list(
            dict.fromkeys(rows["query"]))
    assert not list(out.glob("**/*judgments*")) and not list(out.glob("**/*qrels*"))
    strata = load_strata_csv(out / "strata.csv")  # the collector loads it as strata.file
    assert set(strata.values()) == {0, 1}
    head = {q for q, s in vocab.strata.items() if s == 0}
    assert len(head & {q for q, s in strata.items() if s == 0}) >= 0.8 * len(head)
    parser = _Html()
    parser.feed((out / "report.html").read_text())
    assert parser.tags.count("svg") == 2 and parser.tags.count("table") >= 3


def test_same_seed_same_files_other_seed_other_calibration(simulation, tmp_path, capsys):
    _, _, store = simulation
    for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        run_job(store, tmp_path / name, capsys, "--seed", seed)
    for file in ("candidates.csv", "trec/pool.txt", "trec/topics.tsv", "strata.csv",
                 "quepid/web.book.json", "srw/web.query-set.json"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    a = pd.read_csv(tmp_path / "a" / "candidates.csv", keep_default_na=False)
    c = pd.read_csv(tmp_path / "c" / "candidates.csv", keep_default_na=False)
    failing = ["application", "query"]
    assert a[a["selected_as"] == "failing"][failing].equals(
        c[c["selected_as"] == "failing"][failing])
    assert set(a[a["selected_as"] == "calibration"]["query"]) != set(
        c[c["selected_as"] == "calibration"]["query"])


def test_judgments_above_the_scale_refuse_the_job_before_any_output(simulation, tmp_path,
                                                                    capsys, caplog):
    """A grade above ``judgments.max_grade`` is bad input (as for ``evaluate`` and ``judgments
    agreement``): the job exits 3 naming the file, the row and the key, and writes nothing."""
    _, _, store = simulation
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("t1 0 d1 2\nt1 0 d2 7\n")
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\ttent\n")
    out = tmp_path / "out"
    assert main(["feedback", "--store", store, "--since", "2026-01-01", "--out", str(out),
                 "--judgments", str(qrels), "--topics", str(topics)]) == EXIT_INPUT
    assert f"--judgments: 1 grade above the scale 0..3 (judgments.max_grade), first {qrels} " \
           "judgment 2 ('tent', d2): 7" in caplog.text
    assert not out.exists() or not any(out.iterdir())


def test_postgresql_store_gives_the_same_files(simulation, postgres_database, tmp_path,
                                               capsys):
    _, log, sqlite_store = simulation
    replay([str(log)], load_config(environ={}), store=postgres_database)
    run_job(sqlite_store, tmp_path / "sqlite", capsys)
    run_job(postgres_database, tmp_path / "postgresql", capsys)
    for file in ("candidates.csv", "trec/pool.txt", "strata.csv"):
        assert (tmp_path / "sqlite" / file).read_text() == (
            tmp_path / "postgresql" / file).read_text(), file


def test_the_default_period_ends_at_the_newest_data(simulation, tmp_path, capsys, caplog):
    """A log dated months ago (the simulator's 2026-01-05, then the personal-data searches ten
    days later, each on its own day) works with the default --since 90d: the period ends at the
    newest day in the store (2026-01-15); the summary says how old."""
    _, _, store = simulation
    assert main(["feedback", "--store", store, "--out", str(tmp_path), "--json"]) == EXIT_OK
    summary = json.loads(capsys.readouterr().out)
    assert summary["period"] == "2025-10-17 to 2026-01-15"
    assert summary["candidates"] > 0
    assert summary["days_since_newest_data"] == (date.today() - date(2026, 1, 15)).days
    assert "the newest per-query aggregates are from 2026-01-15" in caplog.text


def test_an_empty_missing_or_unreadable_store_is_a_clear_error(tmp_path, capsys, caplog):
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    open_store(empty).close()  # a store the collector created, with nothing in it yet
    assert main(["feedback", "--store", empty, "--out", str(tmp_path / "out")]) == EXIT_INPUT
    assert "holds no per-query aggregates: run the collector with --store first" in caplog.text
    missing = tmp_path / "missing.db"
    assert main(["feedback", "--store", f"sqlite:///{missing}", "--out",
                 str(tmp_path / "out")]) == EXIT_INPUT
    assert f"store sqlite:///{missing}: unable to open database file" in caplog.text
    assert not missing.exists()  # the job never creates a store
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"\x00not a database\x00" * 512)
    assert main(["feedback", "--store", f"sqlite:///{garbage}", "--out",
                 str(tmp_path / "out")]) == EXIT_INPUT
    assert f"store sqlite:///{garbage}: file is not a database" in caplog.text
    with pytest.raises(SystemExit) as usage:  # a bad period is a usage error, not the store's
        main(["feedback", "--store", empty, "--since", "last quarter", "--out",
              str(tmp_path / "out")])
    assert usage.value.code == 2
    assert "argument --since: expected a number of days like 90d" in capsys.readouterr().err


def test_judged_queries_where_judges_and_users_disagree_go_back(simulation, tmp_path, capsys):
    """Judgments built against the users: failing queries graded as ranked perfectly ("judged
    good, users fail"), healthy ones graded as ranked backwards ("judged poor, users succeed"),
    and one judged only on a document production no longer shows (re-pool). The collector scores
    every search of a judged query with the same set and keeps the sums in the store."""
    from collector.sources.simulator import ranked

    _, log, store = simulation
    run_job(store, tmp_path / "first", capsys)
    first = pd.read_csv(tmp_path / "first" / "candidates.csv", keep_default_na=False)
    # applications whose query records list hit ids (opensearch's show documents only through
    # impressions: nothing to score there)
    shown = first[(first["pooled_documents"] >= 10) & first["application"].isin(["web",
                                                                                  "mobile"])]
    failing = shown[shown["selected_as"] == "failing"].head(3)
    healthy = shown[shown["selected_as"] == "calibration"].head(3)
    stale = shown[~shown["query"].isin([*failing["query"], *healthy["query"]])].iloc[0]
    rows = ["application,query,doc_id,rater,grade"]
    for frame, backwards in ((failing, False), (healthy, True)):
        for application, query in zip(frame["application"], frame["query"], strict=True):
            for index in range(20):
                grade = 3 if index < 2 else 2 if index < 5 else 1 if index < 10 else 0
                rows.append(f"{application},{query},{ranked(query, index)},ann,"
                            f"{3 - grade if backwards else grade}")
    rows.append(f"{stale['application']},{stale['query']},retired-document,ann,3")
    judgments = tmp_path / "judgments.csv"
    judgments.write_text("\n".join(rows) + "\n")
    scored_store = f"sqlite:///{tmp_path / 'scored.db'}"
    replay([str(log)], load_config(environ={}, overrides={"judgments.file": str(judgments)}),
           store=scored_store)
    summary = run_job(scored_store, tmp_path / "second", capsys, "--judgments", str(judgments))
    second = pd.read_csv(tmp_path / "second" / "candidates.csv")
    reasons = dict(zip(zip(second["application"], second["query"], strict=True),
                       second["reason"], strict=True))
    for frame, reason in ((failing, "judged good, users fail"),
                          (healthy, "judged poor, users succeed")):
        for key in zip(frame["application"], frame["query"], strict=True):
            assert reasons[key] == reason, key
    assert reasons[(stale["application"], stale["query"])] == "judged query, coverage low"
    mined = second[second["selected_as"].isin(["disagreement", "repool"])]
    assert len(mined) == 7 and summary["judged_queries_scored"] == 7
    assert summary["judged_candidates"] == {"judged good, users fail": 3,
                                            "judged poor, users succeed": 3,
                                            "judged query, coverage low": 1}
    good = mined[mined["reason"] == "judged good, users fail"]
    assert (good["judged_ndcg"] >= 0.8).all() and (good["judged_coverage"] >= 0.6).all()
    assert (mined[mined["reason"] == "judged poor, users succeed"]["judged_ndcg"] <= 0.4).all()
    assert mined[mined["reason"] == "judged query, coverage low"]["judged_coverage"].iloc[0] == 0
