"""`searchpulse evaluate` and the live judged scores: the seeds' worked examples exactly, the
live implementation against ir_measures on random cases, live judged NDCG on a replay equal to
`evaluate` on the same log, and the gate's exit code on a regression in one stratum."""

from __future__ import annotations

import contextlib
import io
import json
import math
import random

import ir_measures
import pytest
from ir_measures import Judged, nDCG

from collector.config import load_config
from collector.judgments.measures import err_at
from collector.replay import replay
from collector.series.judged_relevance import JudgedQuery, JudgedRankings
from searchpulse import EXIT_INPUT, EXIT_OK, EXIT_REGRESSION, main
from tests.conftest import UBI

# The seeds' shared list: query A returns 8 documents with these grades.
SHARED = [3, 2, 0, 3, 1, 0, 2, 0]


def ndcg(k: int = 10) -> str:
    """The default NDCG (gain 2^g − 1) as ir_measures writes it."""
    return f"nDCG(gains={{2:3,3:7}})@{k}"


def _doc(query: str, rank: object) -> str:
    return f"{query.replace(' ', '_')}-{rank}"


def _write_case(tmp_path, lists: dict[str, list[int]], extra: dict[str, list[int]] | None = None
                ) -> tuple[str, str, str]:
    """judgments.csv, topics and a TREC run for queries whose ranking has ``lists`` grades
    (document ``q-i`` at rank i); ``extra``: grades of judged documents not in the ranking."""
    judgments = tmp_path / "judgments.csv"
    topics = tmp_path / "topics.tsv"
    run = tmp_path / "a.run"
    rows, topic_lines, run_lines = [], [], []
    for n, (query, grades) in enumerate(lists.items(), start=1):
        topic_lines.append(f"t{n}\t{query}\n")
        for rank, grade in enumerate(grades, start=1):
            rows.append(f",{query},{_doc(query, rank)},ann,{grade}\n")
            run_lines.append(f"t{n} Q0 {_doc(query, rank)} {rank} {0.5 / rank} a\n")
        for i, grade in enumerate((extra or {}).get(query, [])):
            rows.append(f",{query},{_doc(query, 'unshown')}-{i},ann,{grade}\n")
    judgments.write_text("application,query,doc_id,rater,grade\n" + "".join(rows))
    topics.write_text("".join(topic_lines))
    run.write_text("".join(run_lines))
    return str(judgments), str(topics), str(run)


def evaluate(*argv: str, code: int = EXIT_OK) -> dict:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["evaluate", *argv, "--json"]) == code
    return json.loads(printed.getvalue())


def _all(result: dict, run: int = 0) -> dict:
    return next(r for r in result["runs"][run]["summary"] if r["slice"] == "all")


def test_the_seeds_shared_list(tmp_path):
    # one relevant document outside the eight shown: 6 relevant known for recall
    judgments, topics, run = _write_case(tmp_path, {"running shoes": SHARED},
                                         extra={"running shoes": [2]})
    result = evaluate("--judgments", judgments, "--topics", topics, "--run", run, "--k", "5")
    row = _all(result)
    assert row["P@5"] == pytest.approx(0.8)  # 4 relevant in the top 5
    assert row["R@5"] == pytest.approx(4 / 6, abs=5e-4)  # 0.667
    assert row["RR"] == 1.0
    # the seed's AP and NDCG@5 count the eight shown documents as all that is judged
    judgments, topics, run = _write_case(tmp_path, {"running shoes": SHARED,
                                                    "trail shoes review": [0, 3, 2, 0, 1]})
    result = evaluate("--judgments", judgments, "--topics", topics, "--run", run, "--k", "5",
                      "--strata", str(_strata(tmp_path, {"running shoes": "head"})))
    by_slice = {r["slice"]: r for r in result["runs"][0]["summary"]}
    assert by_slice["stratum=head"]["AP"] == pytest.approx(0.8529, abs=5e-5)  # AP_A
    assert by_slice["stratum=tail"]["AP"] == pytest.approx(0.5889, abs=5e-5)  # AP_B
    assert by_slice["all"]["AP"] == pytest.approx(0.7209, abs=5e-5)  # MAP
    assert by_slice["stratum=head"][ndcg(5)] == pytest.approx(12.2943 / 14.5953, abs=5e-5)
    swapped = [3, 2, 3, 0, 1, 0, 2, 0]  # the grade-3 at rank 4 moved up to rank 3
    judgments, topics, run = _write_case(tmp_path, {"running shoes": swapped})
    result = evaluate("--judgments", judgments, "--topics", topics, "--run", run, "--k", "5")
    assert _all(result)[ndcg(5)] == pytest.approx(0.8756, abs=5e-5)


def test_the_first_lessons_five_results(tmp_path):
    judgments, topics, run = _write_case(tmp_path, {"q": [2, 3, 0, 1, 0]})
    result = evaluate("--judgments", judgments, "--topics", topics, "--run", run, "--k", "5")
    assert _all(result)[ndcg(5)] == pytest.approx(7.85 / 9.39, abs=1e-3)  # 0.84


def test_err_by_its_definition():
    # R = (2^g - 1) / 2^3: 7/8, 0, 3/8 → 7/8 + (1/8)(3/8)/3
    assert err_at([3, 0, 2], 10, 3) == pytest.approx(0.875 + 0.015625)
    assert err_at([None, 1, 3], 2, 3) == pytest.approx(1 / 8 / 2)  # cut at k, unjudged = 0
    assert err_at([], 10, 3) == 0.0


def _strata(tmp_path, strata: dict[str, str]):
    path = tmp_path / "strata.csv"
    path.write_text("query,stratum\n" + "".join(f"{q},{s}\n" for q, s in strata.items()))
    return path


@pytest.mark.parametrize("seed", range(5))
def test_live_scores_equal_ir_measures_on_random_cases(seed):
    rng = random.Random(seed)
    qrels, run, cases = [], [], []
    for q in range(40):
        documents = [f"d{i}" for i in range(rng.randint(1, 25))]
        judged = {d: rng.randint(0, 3) for d in documents if rng.random() < 0.7}
        if not judged:
            continue
        shown = rng.sample(documents, rng.randint(1, len(documents)))
        qrels += [ir_measures.Qrel(str(q), d, g) for d, g in judged.items()]
        run += [ir_measures.ScoredDoc(str(q), d, float(100 - r)) for r, d in enumerate(shown)]
        cases.append((str(q), judged, shown))
    expected = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        [nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7}) @ 10, Judged @ 10], qrels, run)}
    rankings = JudgedRankings((), 3)
    for qid, judged, shown in cases:
        ndcg, err, coverage = rankings.score(JudgedQuery(judged), shown)
        assert ndcg == pytest.approx(expected.get((qid, "nDCG(gains={2:3,3:7})@10"), 0.0))
        assert coverage == pytest.approx(expected[(qid, "Judged@10")])
        assert err == pytest.approx(err_at([judged.get(d) for d in shown], 10, 3))


def test_live_judged_ndcg_on_a_replay_equals_evaluate_on_the_log(tmp_path):
    rng = random.Random(3)
    ubi = UBI()
    queries = [f"query {i}" for i in range(12)]
    rows = []
    for query in queries[:9]:  # three queries are not judged
        rows += [f"web,{query},{query}-{d},ann,{rng.randint(0, 3)}\n" for d in range(15)
                 if rng.random() < 0.8]
    judgments = tmp_path / "judgments.csv"
    judgments.write_text("application,query,doc_id,rater,grade\n" + "".join(rows))
    records = []
    for n in range(300):
        query = rng.choice(queries)
        records.append(ubi.query(f"s{n}", query, n * 2.0, client=f"c{n}",
                                 hits=[f"{query}-{d}" for d in rng.sample(range(15), 12)]))
    log = tmp_path / "ubi.jsonl"
    log.write_bytes(b"\n".join(records) + b"\n")
    metrics = tmp_path / "final.prom"
    replay([str(log)], load_config(environ={}, overrides={"judgments.file": str(judgments)}),
           metrics_out=str(metrics))
    sums: dict[str, float] = {}
    for line in metrics.read_text().splitlines():
        if line.startswith("searchpulse_judged_"):
            name = line.split("{")[0]
            sums[name] = sums.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
    count = sums["searchpulse_judged_ndcg_at_10_count"]
    judged_searches = sum(json.loads(r)["user_query"] in queries[:9] for r in records)
    assert count == judged_searches > 200
    result = evaluate("--judgments", str(judgments), "--run", str(log))
    row = _all(result)
    assert row["rankings"] == judged_searches
    assert sums["searchpulse_judged_ndcg_at_10_sum"] / count == pytest.approx(row[ndcg()])
    assert sums["searchpulse_judged_err_at_10_sum"] / count == pytest.approx(row["ERR@10"])
    assert sums["searchpulse_judged_coverage_at_10_sum"] / count == pytest.approx(
        row["Judged@10"])


def test_the_gate_fails_on_a_regression_in_one_stratum(tmp_path):
    """B keeps every head query's ranking and buries the best document of every known-item
    query: the whole set barely moves, the known-item stratum collapses."""
    rng = random.Random(5)
    lists = {f"head query {i}": [rng.randint(0, 3) for _ in range(10)] for i in range(60)}
    lists.update({f"sku {100000 + i}": [3] + [0] * 9 for i in range(20)})
    judgments, topics, run_a = _write_case(tmp_path, lists)
    strata = _strata(tmp_path, {q: "head" for q in lists if q.startswith("head")})
    run_b = tmp_path / "b.run"
    lines = []
    for n, query in enumerate(lists, start=1):
        ranked = [_doc(query, r) for r in range(1, 11)]
        if query.startswith("sku"):
            ranked = ranked[1:] + ranked[:1]
        lines += [f"t{n} Q0 {d} {r} {1 / r} b\n" for r, d in enumerate(ranked, start=1)]
    run_b.write_text("".join(lines))
    common = ["--judgments", judgments, "--topics", topics, "--strata", str(strata),
              "--set", "strata.known_item_patterns=sku \\d+"]
    result = evaluate(*common, "--run", run_a, "--run", str(run_b), code=EXIT_REGRESSION)
    rows = {r["slice"]: r for r in result["comparison"] if r["measure"] == ndcg()}
    assert rows["stratum=known_item"]["losses"] == 20 and rows["stratum=known_item"]["wins"] == 0
    assert rows["stratum=known_item"]["p"] < 0.001
    assert rows["stratum=head"]["delta"] == 0 and rows["stratum=head"]["ties"] == 60
    assert rows["stratum=head"]["p"] == 1.0
    # every known-item query lost the same: its interval is that one value
    drop = 1 / math.log2(11) * 7 / 7 - 1  # the grade-3 from rank 1 to rank 10
    assert rows["stratum=known_item"]["delta"] == pytest.approx(drop)
    assert rows["stratum=known_item"]["ci_low"] == rows["stratum=known_item"]["ci_high"] \
        == pytest.approx(drop)
    assert rows["all"]["ci_low"] < rows["all"]["delta"] < rows["all"]["ci_high"] < 0
    gate = {(v["measure"], v["slice"]): v for v in result["gate"]}
    assert set(gate) == {(ndcg(), s) for s in ("all", "stratum=head", "stratum=known_item")}
    assert gate[(ndcg(), "stratum=known_item")]["regression"] is True
    assert gate[(ndcg(), "stratum=head")]["regression"] is False
    # the worse queries are named: the 20 known-item queries, each with its own numbers
    worst = gate[(ndcg(), "stratum=known_item")]["worst"]
    assert len(worst) == 10 and {q["stratum"] for q in worst} == {"known_item"}
    assert len(result["queries"]) == 20  # every changed ranking in --json, worst first
    assert {q["query"] for q in result["queries"]} == {q for q in lists if q.startswith("sku")}
    first = result["queries"][0]["measures"][ndcg()]
    assert (first["a"], first["b"]) == (1.0, pytest.approx(1 + drop))
    assert result["queries"][0]["entered"] == [] and result["queries"][0]["left"] == []
    # the same change compared the other way round is an improvement: the gate passes
    result = evaluate(*common, "--run", str(run_b), "--run", run_a)
    assert result["regression"] is False
    html = tmp_path / "evaluate.html"
    evaluate(*common, "--run", str(run_b), "--run", run_a, "--html", str(html))
    assert "<svg" in html.read_text() and "known_item" in html.read_text()
    # at k = 1 the best document left the top and a grade-0 one entered
    result = evaluate(*common, "--k", "1", "--run", run_a, "--run", str(run_b),
                      code=EXIT_REGRESSION)
    moved = result["queries"][0]
    query = moved["query"]
    assert moved["left"] == [{"document": _doc(query, 1), "rank": 1, "grade": 3}]
    assert moved["entered"] == [{"document": _doc(query, 2), "rank": 1, "grade": 0}]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["evaluate", *common, "--k", "1", "--run", run_a, "--run",
                     str(run_b), "--top", "3"]) == EXIT_REGRESSION
    text = printed.getvalue()
    assert "FAIL nDCG(gains={2:3,3:7})@1 stratum=known_item: Δ -1.0000 [-1.0000, -1.0000], " \
           "p < 0.001, 20 worse / 0 better of 20" in text
    assert f"+{_doc(query, 2)} (0) −{_doc(query, 1)} (3)" in text
    assert "0.000" not in [line.split()[7] for line in text.splitlines()
                           if line.startswith("stratum=known_item")]


def test_the_store_is_a_ranking_source_one_modal_ranking_per_query(tmp_path):
    """"tent" was shown [d1, d2, d3] twice and [d2, d1, d3] once: its modal ranking is
    d1, d2, d3 (each position's most shown document); "lamp" [d9] once. Against d2 = 3, d1 = 0:
    NDCG@10 = (7 / log2 3) / 7 = 1 / log2 3; the store and a log of only the modal ranking agree
    on every measure."""
    ubi = UBI()
    records = [ubi.query("s1", "tent", 0, client="c1", hits=["d1", "d2", "d3"]),
               ubi.query("s2", "Tent", 10, client="c2", hits=["d1", "d2", "d3"]),
               ubi.query("s3", "tent", 20, client="c3", hits=["d2", "d1", "d3"]),
               ubi.query("s4", "lamp", 30, client="c4", hits=["d9"])]
    log = tmp_path / "ubi.jsonl"
    log.write_bytes(b"\n".join(records) + b"\n")
    store = f"sqlite:///{tmp_path / 'aggregates.db'}"
    replay([str(log)], load_config(environ={}, overrides={}), store=store)
    judgments = tmp_path / "judgments.csv"
    judgments.write_text("application,query,doc_id,rater,grade\n,tent,d2,ann,3\n"
                         ",tent,d1,ann,0\n")
    from_store = _all(evaluate("--judgments", str(judgments), "--run", store))
    assert from_store["rankings"] == 1  # lamp is not judged; tent counts once
    assert from_store[ndcg()] == pytest.approx(1 / math.log2(3))
    modal = tmp_path / "modal.jsonl"
    modal.write_bytes(ubi.query("m1", "tent", 0, hits=["d1", "d2", "d3"]) + b"\n")
    assert _all(evaluate("--judgments", str(judgments), "--run", str(modal))) == from_store
    result = main(["evaluate", "--judgments", str(judgments), "--run",
                   f"sqlite:///{tmp_path / 'missing' / 'x.db'}"])
    assert result == EXIT_INPUT
