"""`evaluate` as CI runs it: TREC qrels and runs as they come (no topics file), measures named
as ir_measures names them and computed as it computes them, gate rules per measure and slice,
intervals, and the verdict as JUnit XML (read back by junitparser) and as a Markdown job summary
(parsed by markdown-it-py), whatever the query text."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import xml.etree.ElementTree as ET

import ir_measures
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from junitparser import Failure, JUnitXml, Skipped
from markdown_it import MarkdownIt

from collector.config import ConfigError, load_config
from feedback.evaluate.randomization import paired
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


def test_ndcg_with_and_without_gains_together_each_as_alone():
    """ir_measures 0.4.3 can swap the two when asked together (collector/judgments/measures.py)."""
    from collector.judgments.measures import Ranked, defaults, parse, score

    rankings = [Ranked(["a", "b", "c"], {"a": 0, "b": 3, "c": 1}),
                Ranked(["c", "a"], {"a": 2, "c": 0, "d": 3})]
    exponential, linear = defaults(5, 3)[0], parse(["nDCG@5"], "test")[0]
    alone = {m: score([m], rankings, 3)[m] for m in (exponential, linear)}
    for together in ([exponential, linear], [linear, exponential]):
        assert score(together, rankings, 3) == alone
    assert alone[exponential] != alone[linear]


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


@pytest.mark.parametrize(("rule", "message"), [
    ("nDCG@@10", "not a measure ir_measures can parse"),
    ("Bogus@10", "measure not found"),
    ("nDCG@10 margin=-1", "margin must be >= 0"),
    ("nDCG@10 significance=2", "significance must be between 0 and 1"),
    ("nDCG@10 slices=everything", "slice 'everything'"),
    ("nDCG@10 colour=red", "unknown option 'colour'"),
    ("ERR(judged_only=True)@10", "unsupported params found: ['judged_only']"),
])
def test_a_bad_gate_rule_names_the_key(rule, message):
    with pytest.raises(ConfigError) as raised:
        load_config(environ={"SEARCHPULSE_EVALUATE_GATE": rule})
    assert str(raised.value).startswith("evaluate.gate (from SEARCHPULSE_EVALUATE_GATE)")
    assert message in str(raised.value)


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


def test_the_interval_agrees_with_a_resampling_bootstrap():
    rng = np.random.default_rng(3)
    differences = np.column_stack([rng.normal(-0.02, 0.15, 400), rng.exponential(0.1, 400)])
    test = paired(differences)
    resampled = np.array([differences[rng.integers(0, 400, 400)].mean(axis=0)
                          for _ in range(4000)])
    low, high = np.percentile(resampled, [2.5, 97.5], axis=0)
    width = high - low
    assert np.all(np.abs(test.low - low) < 0.06 * width)
    assert np.all(np.abs(test.high - high) < 0.06 * width)
    assert np.all(test.low < differences.mean(axis=0)) and np.all(
        differences.mean(axis=0) < test.high)
    assert test.p[1] < 0.001  # exponential: all positive


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=40))
def test_the_interval_holds_the_mean_and_p_is_a_probability(values):
    differences = np.array(values)[:, None]
    test = paired(differences, rounds=500)
    mean = differences.mean()
    assert test.low[0] <= mean + 1e-9 and mean - 1e-9 <= test.high[0]
    assert 0 < test.p[0] <= 1
    if not differences.any():
        assert test.p[0] == 1 and test.low[0] == test.high[0] == 0


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


HOSTILE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                  max_size=30)


def _cells_per_row(markdown: str) -> list[tuple[int, int]]:
    """(cells, header cells of its table) per table row of ``markdown``."""
    rows, header, count = [], 0, 0
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.type == "tr_open":
            count = 0
        elif token.type in ("td_open", "th_open"):
            count += 1
        elif token.type == "tr_close":
            header = count if not rows or header == 0 else header
            rows.append((count, header))
        elif token.type == "table_close":
            header = 0
    return rows


@settings(max_examples=40, deadline=None)
@given(query=HOSTILE, application=HOSTILE)
@example(query="0", application="\x00")  # pandas' string == drops a trailing NUL
def test_any_query_text_keeps_the_xml_and_the_markdown_whole(query, application):
    """A judged query of any text, worse in B: the XML parses and names it, every row of the
    summary's tables has its header's cells, and no text becomes HTML or a link."""
    import pandas as pd

    from collector.judgments.gate import Rule
    from collector.judgments.measures import parse
    from feedback.evaluate import ci_report
    from feedback.evaluate.scoring import Rankings, evaluate

    final = pd.DataFrame({"application": [application, application, "x"],
                          "query": [query, query, "other"], "doc_id": ["d1", "d2", "d1"],
                          "grade": [3, 0, 3]})
    searches = [f"s{i}" for i in range(12)]  # twelve searches: p of the test far below 0.05
    a = Rankings({**{(application, query, s): ["d1", "d2"] for s in searches},
                  ("x", "other", ""): ["d1"]})
    b = Rankings({**{(application, query, s): ["d2", "d1"] for s in searches},
                  ("x", "other", ""): ["d1"]})
    strata = pd.Series(["head", "tail"], index=[query, "other"]).groupby(level=0).first()
    result = evaluate([a, b], final, strata, parse(["nDCG@10"], "test"),
                      [Rule("nDCG@10", 0.0, 0.05, ("all", "application"))], 10, 3)
    assert result["regression"]
    document = ET.fromstring(ci_report.junit(result, [f"{query}.run", "b.run"]).encode())
    failures = document.findall(".//failure")
    assert failures and all(ci_report.xml_text(repr(query)) in f.text for f in failures)
    summary = ci_report.markdown(result, [f"{query}.run", "b.run"], 10)
    rows = _cells_per_row(summary)
    assert rows and all(cells == header for cells, header in rows)
    assert not any(t.type.startswith(("html", "link")) or t.type == "image"
                   for block in MarkdownIt("commonmark").enable("table").parse(summary)
                   for t in [block, *(block.children or [])])


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
