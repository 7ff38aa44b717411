"""`evaluate` as CI runs it: TREC qrels and runs as they come (no topics file), measures named
as ir_measures names them and computed as it computes them, gate rules per measure and slice,
intervals, and the verdict as JUnit XML (read back by junitparser) and as a Markdown job summary
(parsed by markdown-it-py). Tests of one module alone are in its mirror (test_ci_report.py,
test_randomization.py, tests/collector/judgments/test_gate.py and test_measures.py)."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re

import ir_measures
import pytest
from junitparser import Failure, JUnitXml, Skipped
from markdown_it import MarkdownIt

from searchpulse import EXIT_INPUT, EXIT_OK, EXIT_REGRESSION, EXIT_USAGE, main

MEASURES = ["nDCG@10", "R@100", "P(rel=2)@5", "AP", "ERR@10"]


def _trec(tmp_path, topics: int = 60, seed: int = 7, worse_every: int = 3):
    """qrels, run A and run B keyed by topic id (no topics file); B moves the best document of
    every ``worse_every``-th topic from rank 1 to rank 40."""
    rng = random.Random(seed)
    qrels, run_a, run_b = [], [], []
    for t in range(topics):
        topic = f"{401 + t}"
        documents = [f"FT{t}-{i}" for i in range(60)]
        grades = {d: rng.choice([0, 0, 0, 1, 2]) for d in documents[:45]}
        grades[documents[0]] = 2
        qrels += [f"{topic} 0 {d} {g}\n" for d, g in grades.items()]
        ranked_a = documents[:]
        ranked_b = documents[:]
        if t % worse_every == 0:
            ranked_b.insert(39, ranked_b.pop(0))
        elif t % worse_every == 1:
            rng.shuffle(ranked_b)
        for ranked, lines in ((ranked_a, run_a), (ranked_b, run_b)):
            lines += [f"{topic} Q0 {d} {r} {100 - r} tag\n" for r, d in enumerate(ranked, 1)]
    paths = []
    for name, lines in (("qrels.txt", qrels), ("a.run", run_a), ("b.run", run_b)):
        path = tmp_path / name
        path.write_text("".join(lines))
        paths.append(str(path))
    return paths


def _run(*argv: str, code: int = EXIT_OK) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["evaluate", *argv]) == code
    return printed.getvalue()


def _ir_measures_means(qrels: str, run: str) -> dict[str, float]:
    """trec_eval's means through ir_measures' own readers and pipeline."""
    measures = [ir_measures.parse_measure(m) for m in MEASURES if m != "ERR@10"]
    aggregate = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(qrels),
                                           ir_measures.read_trec_run(run))
    return {str(m): v for m, v in aggregate.items()}


def test_trec_qrels_and_runs_need_no_topics_and_score_as_ir_measures_does(tmp_path):
    qrels, run_a, run_b = _trec(tmp_path)
    flags = [f"--measure={m}" for m in MEASURES]
    result = json.loads(_run("--judgments", qrels, "--run", run_a, *flags, "--json"))
    summary = result["runs"][0]["summary"][0]
    assert summary["slice"] == "all" and summary["rankings"] == 60
    assert result["measures"] == MEASURES  # named as ir_measures writes them
    expected = _ir_measures_means(qrels, run_a)
    for measure in MEASURES[:-1]:
        assert summary[measure] == pytest.approx(expected[measure], abs=1e-12), measure
    assert summary["ERR@10"] > 0
    # each measure its own cut-off: R@100 sees the best document at rank 40, nDCG@10 not
    result = json.loads(_run("--judgments", qrels, "--run", run_a, "--run", run_b, *flags,
                             "--json", code=EXIT_REGRESSION))
    worst = result["queries"][0]
    assert worst["measures"]["R@100"]["delta"] == 0 and worst["measures"]["nDCG@10"]["delta"] < 0
    assert worst["left"][0]["grade"] == 2 and worst["left"][0]["rank"] == 1
    for side, run in ((0, run_a), (1, run_b)):
        expected = _ir_measures_means(qrels, run)
        got = result["runs"][side]["summary"][0]
        assert got["nDCG@10"] == pytest.approx(expected["nDCG@10"], abs=1e-12)


def test_a_trec_run_against_judgments_by_query_text_says_to_pass_topics(tmp_path, caplog):
    _, run_a, _ = _trec(tmp_path, topics=3)
    judgments = tmp_path / "judgments.csv"
    judgments.write_text("application,query,doc_id,rater,grade\n,red shoes,FT0-0,ann,2\n")
    _run("--judgments", str(judgments), "--run", run_a, code=EXIT_INPUT)
    assert "pass --topics FILE" in caplog.text and "names topics by id" in caplog.text


def test_runs_that_share_no_ranking_are_an_input_error_not_a_pass(tmp_path, caplog):
    qrels, run_a, _ = _trec(tmp_path, topics=4)
    other = tmp_path / "other.run"
    other.write_text("".join(f"9{t} Q0 FT0-0 1 1 x\n" for t in range(3)))
    extra = tmp_path / "more-qrels.txt"
    extra.write_text("".join(f"9{t} 0 FT0-0 1\n" for t in range(3)))
    _run("--judgments", qrels, "--judgments", str(extra), "--run", run_a, "--run", str(other),
         code=EXIT_INPUT)
    assert "no ranking of the second run pairs with one of the first" in caplog.text


def test_gate_rules_per_measure_and_slice(tmp_path):
    qrels, run_a, run_b = _trec(tmp_path)
    # only recall at depth 100 gated: B keeps every relevant document in its top 100
    out = _run("--judgments", qrels, "--run", run_a, "--run", run_b, "--measure", "nDCG@10",
               "--gate", "R@100 margin=0 slices=all", "--json")
    result = json.loads(out)
    assert result["regression"] is False
    assert [(v["measure"], v["slice"]) for v in result["gate"]] == [("R@100", "all")]
    assert result["measures"] == ["nDCG@10", "R@100"]  # a gated measure is computed
    # two rules, each with its own margin and significance; the lenient one passes
    out = _run("--judgments", qrels, "--run", run_a, "--run", run_b, "--gate",
               "nDCG@10 margin=0.5", "--gate", "P(rel=2)@5 margin=0.01 significance=0.01",
               "--json", code=EXIT_REGRESSION)
    gate = {v["measure"]: v for v in json.loads(out)["gate"]}
    assert gate["nDCG@10"]["regression"] is False and gate["nDCG@10"]["margin"] == 0.5
    assert gate["P(rel=2)@5"]["regression"] is True
    assert gate["P(rel=2)@5"]["significance"] == 0.01
    # the same rules from a config file's [evaluate] gate list
    config = tmp_path / "searchpulse.toml"
    config.write_text('[evaluate]\ngate = ["nDCG@10 margin=0.5"]\n')
    out = _run("--config", str(config), "--judgments", qrels, "--run", run_a, "--run", run_b,
               "--json")
    assert [v["measure"] for v in json.loads(out)["gate"]] == ["nDCG@10"]


def test_a_bad_measure_is_a_usage_error(tmp_path, capsys):
    qrels, run_a, _ = _trec(tmp_path, topics=2)
    capsys.readouterr()
    _run("--judgments", qrels, "--run", run_a, "--measure", "nDCG@ten", code=EXIT_USAGE)
    error = capsys.readouterr().err
    assert "evaluate.measures (from command line)" in error and len(error.splitlines()) == 1


def test_one_application_is_no_slice_of_its_own(tmp_path):
    qrels, run_a, run_b = _trec(tmp_path, topics=9)
    result = json.loads(_run("--judgments", qrels, "--run", run_a, "--run", run_b, "--json",
                             code=EXIT_REGRESSION))
    assert {r["slice"] for r in result["runs"][0]["summary"]} == {"all"}
    assert {r["slice"] for r in result["comparison"]} == {"all"}


def test_junit_and_markdown_summary(tmp_path):
    qrels, run_a, run_b = _trec(tmp_path)
    junit, summary = tmp_path / "evaluate.xml", tmp_path / "summary.md"
    _run("--judgments", qrels, "--run", run_a, "--run", run_b, "--gate", "nDCG@10",
         "--gate", "R@100 slices=all|stratum=head", "--junit", str(junit), "--summary",
         str(summary), "--top", "4", code=EXIT_REGRESSION)
    suites = JUnitXml.fromfile(str(junit))
    cases = {(case.classname, case.name): case for suite in suites for case in suite}
    assert set(cases) == {("evaluate.nDCG@10", "all"), ("evaluate.R@100", "all"),
                          ("evaluate.R@100", "stratum=head")}
    failure = cases[("evaluate.nDCG@10", "all")].result[0]
    assert isinstance(failure, Failure) and "p < 0.001" in failure.message
    assert len(re.findall(r"\n  -0\.\d{4}  \d\.\d{4} → \d\.\d{4}  '4\d\d' \(unclassified\)",
                          failure.text)) == 4  # the worst queries, each named
    assert "38 worse / 2 better of 60" in failure.text
    assert cases[("evaluate.R@100", "all")].is_passed
    assert isinstance(cases[("evaluate.R@100", "stratum=head")].result[0], Skipped)
    suite = next(iter(suites))
    assert (suite.tests, suite.failures, suite.skipped) == (3, 1, 1)
    text = summary.read_text()
    assert text.startswith("### ❌ searchpulse evaluate: 1 gated slice regresses")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    assert sum(t.type == "table_open" for t in tokens) == 2  # the verdicts, the worst queries


def test_a_run_that_drops_topics_scores_them_0_and_fails_the_gate(tmp_path):
    """B is A without its first 10 of 60 topics: averaged over the topics it ranks it would
    score 0.4535 against A's 0.4590 on the same 50, and pass (Δ 0 on every ranking it kept);
    scored as trec_eval -c and calc_aggregate score it, B's nDCG is 0.3779 over all 60, 10
    losses, p 0.002: the gate fails. --ranked-only gives the old means, for both runs."""
    qrels, run_a, _ = _trec(tmp_path)
    dropped = tmp_path / "dropped.run"
    dropped.write_text("".join(line for line in open(run_a)
                               if not 401 <= int(line.split()[0]) <= 410))
    ndcg = "nDCG(gains={2:3,3:7})@10"
    argv = ["--judgments", qrels, "--run", run_a, "--run", str(dropped), "--json"]
    result = json.loads(_run(*argv, code=EXIT_REGRESSION))
    assert [r["unranked_topics"] for r in result["runs"]] == [0, 10]
    assert [r["judged_rankings"] for r in result["runs"]] == [60, 50]
    means = [r["summary"][0][ndcg] for r in result["runs"]]
    assert means == [pytest.approx(0.4590, abs=5e-5), pytest.approx(0.3779, abs=5e-5)]
    assert result["runs"][1]["summary"][0]["rankings"] == 60
    verdict = result["gate"][0]
    assert (verdict["paired"], verdict["losses"], verdict["wins"]) == (60, 10, 0)
    assert verdict["regression"] and verdict["p"] < 0.01
    assert ir_measures.calc_aggregate(
        [ir_measures.parse_measure(ndcg)], ir_measures.read_trec_qrels(qrels),
        ir_measures.read_trec_run(str(dropped)))[ir_measures.parse_measure(ndcg)] == \
        pytest.approx(means[1], abs=1e-12)
    ranked_only = json.loads(_run(*argv, "--ranked-only"))
    assert [r["summary"][0][ndcg] for r in ranked_only["runs"]] == [
        pytest.approx(0.4590, abs=5e-5), pytest.approx(0.4535, abs=5e-5)]
    assert ranked_only["gate"][0]["paired"] == 50 and not ranked_only["regression"]


def test_the_page_lists_top_queries_each_way_and_names_the_gains(tmp_path):
    qrels, run_a, run_b = _trec(tmp_path)
    html = tmp_path / "evaluate.html"
    _run("--judgments", qrels, "--run", run_a, "--run", run_b, "--top", "3", "--html",
         str(html), code=EXIT_REGRESSION)
    text = html.read_text()
    queries = text[text.index('id="queries"'):]
    queries = queries[:queries.index("</table>")]
    # the 3 worst of the 20 that got worse (every one before, up to 250) and the one better
    assert queries.count("data-stratum=") == 4
    assert "nDCG(gains={2:3,3:7})@10 (gain 2^g − 1)" in text
    assert "ERR@10 (max grade 3)" in text
