"""`evaluate`'s means against ir_measures' on generated TREC qrels and runs: topics a run has no
ranking for, runs that rank nothing judged, ties in rank, repeated documents, topic ids that
differ only by case. trec_eval's measures to 1e-9 against ``ir_measures.calc_aggregate``; ERR
against gdeval (ir_measures' ERR) to its five printed decimals, at gdeval's maximum grade 4."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import ir_measures
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from searchpulse import EXIT_INPUT, EXIT_OK, main

TOPICS = ["1", "2", "10", "T1", "t1", "q-7"]  # T1 / t1: two topics, as ir_measures reads them
DOCUMENTS = [f"d{i}" for i in range(9)]
K = 5
# gdeval prints five decimals: its ERR is within half a unit of the fifth of the exact value,
# half included (0.109375 is printed 0.10938, and 0.10938 - 0.109375 is 5e-6 plus the float
# subtraction's error: 5.000000000005e-06)
GDEVAL_DIGITS = 5e-6 + 1e-12

Qrels = dict[str, dict[str, int]]
Run = dict[str, list[tuple[str, int]]]  # topic: (document, rank) lines in file order


def _qrels(max_grade: int) -> st.SearchStrategy[Qrels]:
    grades = st.dictionaries(st.sampled_from(DOCUMENTS), st.integers(0, max_grade),
                             min_size=1, max_size=6)
    return st.dictionaries(st.sampled_from(TOPICS), grades, min_size=1)


# ranks from a narrow range, so that ties and repeated documents are common
_lines = st.lists(st.tuples(st.sampled_from(DOCUMENTS), st.integers(1, 6)), max_size=8)
# a topic drawn with no line is one the run ranks nothing for; every topic so: an empty file
RUNS = st.dictionaries(st.sampled_from(TOPICS), _lines).map(
    lambda run: {t: lines for t, lines in run.items() if lines})


def _write(path: Path, qrels: Qrels | None = None, run: Run | None = None) -> str:
    if qrels is not None:
        path.write_text("".join(f"{t} 0 {d} {g}\n" for t, grades in qrels.items()
                                for d, g in grades.items()))
    else:
        assert run is not None
        path.write_text("".join(f"{t} Q0 {d} {r} {-r} tag\n" for t, lines in run.items()
                                for d, r in lines))
    return str(path)


def _once(run: Run) -> Run:
    """The run with each repeated document at its best rank only: trec_eval refuses a repeat,
    and ir_measures keeps whichever line of it comes last (an accident of file order), so the
    reference is the run as `evaluate` reads it (docs/evaluate.md)."""
    out: Run = {}
    for topic, lines in run.items():
        best: dict[str, int] = {}
        for document, rank in lines:
            best[document] = min(rank, best.get(document, rank))
        out[topic] = list(best.items())
    return {t: lines for t, lines in out.items() if lines}


def _untied(run: Run) -> Run:
    """The run with ranks made distinct in trec_eval's order of a tie (document id
    descending): ir_measures' ``judged`` provider breaks a tie in score the other way (document
    id ascending), so on a file with tied scores its Judged@k and trec_eval's measures rank
    the documents differently; `evaluate` orders a tie as trec_eval does, for every measure."""
    out: Run = {}
    for topic, lines in run.items():
        ordered = sorted(sorted(lines, key=lambda line: line[0], reverse=True),
                         key=lambda line: line[1])
        out[topic] = [(document, rank) for rank, (document, _) in enumerate(ordered, start=1)]
    return out


def _evaluate(qrels: str, run: str, max_grade: int, *flags: str) -> tuple[int, dict]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["evaluate", "--judgments", qrels, "--run", run, "--k", str(K),
                     "--set", f"judgments.max_grade={max_grade}", "--json", *flags])
    return code, json.loads(printed.getvalue()) if code == EXIT_OK else {}


def _reference(qrels: Qrels, run: Run, measures: list[str], tmp: Path) -> dict[str, float]:
    """ir_measures' means over its own readers of the files (ERR: gdeval, which reads numeric
    topic ids only, so topics are renumbered for it — ERR does not depend on their names)."""
    qrels_path = _write(tmp / "ref.qrels", qrels=qrels)
    means: dict[str, float] = {}
    for names, ranked in (([m for m in measures if m[:3] not in ("ERR", "Jud")], run),
                          ([m for m in measures if m.startswith("Judged")], _untied(run))):
        means.update({str(m): v for m, v in ir_measures.calc_aggregate(
            [ir_measures.parse_measure(m) for m in names],
            ir_measures.read_trec_qrels(qrels_path),
            ir_measures.read_trec_run(_write(tmp / "ref.run", run=ranked))).items()})
    if not any(m.startswith("ERR") for m in measures):
        return means
    number = {t: str(i + 1) for i, t in enumerate(TOPICS)}
    err = ir_measures.parse_measure(f"ERR@{K}")
    means[str(err)] = ir_measures.calc_aggregate(
        [err],
        ir_measures.read_trec_qrels(_write(tmp / "n.qrels", qrels={
            number[t]: g for t, g in qrels.items()})),
        ir_measures.read_trec_run(_write(tmp / "n.run", run={
            number[t]: lines for t, lines in run.items()})))[err]
    return means


def _judged_topics_ranked(qrels: Qrels, run: Run) -> bool:
    return any(t in qrels for t in run)


@pytest.mark.parametrize("ranked_only", [False, True])
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(qrels=_qrels(4), run=RUNS)
@example(qrels={"T1": {"d1": 3}, "t1": {"d2": 1}, "1": {"d0": 2}},
         run={"T1": [("d1", 1)], "t1": [("d1", 1), ("d2", 2)]})  # case-distinct ids, "1" dropped
@example(qrels={"1": {"d1": 2, "d2": 4}}, run={"1": [("d2", 1), ("d1", 1), ("d2", 3)]})
def test_means_equal_ir_measures(tmp_path, qrels, run, ranked_only):
    """Every measure of the default set (and nDCG with the grade as gain) to 1e-9; ERR to
    gdeval's printed precision. Without --ranked-only a judged topic the run ranks nothing for
    is 0 (calc_aggregate over every qrels topic); with it, the reference's qrels are the ranked
    topics' only (trec_eval without -c)."""
    path = _write(tmp_path / "qrels.txt", qrels=qrels)
    run_path = _write(tmp_path / "run.txt", run=run) if run else None
    if run_path is None or not _judged_topics_ranked(qrels, run):
        if run_path is not None:  # an empty file is refused before any judgment is read
            assert _evaluate(path, run_path, 4)[0] == EXIT_INPUT  # nothing judged was ranked
        return
    code, result = _evaluate(path, run_path, 4, *(["--ranked-only"] if ranked_only else []))
    assert code == EXIT_OK
    summary = result["runs"][0]["summary"][0]
    judged = {t: g for t, g in qrels.items() if not ranked_only or t in run}
    assert summary["rankings"] == len(judged)
    assert result["runs"][0]["unranked_topics"] == len(judged) - len(set(run) & set(qrels))
    expected = _reference(judged, _once(run), result["measures"], tmp_path)
    for measure in result["measures"]:
        tolerance = GDEVAL_DIGITS if measure.startswith("ERR") else 1e-9
        assert summary[measure] == pytest.approx(expected[measure], abs=tolerance), measure
    assert result["notes"][f"ERR@{K}"] == "max grade 4"


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(qrels=_qrels(3), run=RUNS)
def test_trec_eval_gain_ndcg_and_graded_precision_equal_ir_measures(tmp_path, qrels, run):
    """Measures named on the command line, on the default scale (max grade 3)."""
    if not run or not _judged_topics_ranked(qrels, run):
        return
    names = ["nDCG@5", "P(rel=2)@3", "R@100", "AP", "Judged@3"]
    code, result = _evaluate(_write(tmp_path / "qrels.txt", qrels=qrels),
                             _write(tmp_path / "run.txt", run=run), 3,
                             *(f"--measure={m}" for m in names))
    assert code == EXIT_OK
    expected = _reference(qrels, _once(run), names, tmp_path)
    summary = result["runs"][0]["summary"][0]
    for measure in names:
        assert summary[measure] == pytest.approx(expected[measure], abs=1e-9), measure
    assert result["notes"] == {"nDCG@5": "gain = grade"}
