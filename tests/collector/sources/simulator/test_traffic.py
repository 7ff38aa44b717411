"""collector/sources/simulator/traffic.py: the simulator is the same run for the same seed,
delivers its records in delivery-time order counting each in the truth, starts no session in a
lull (every later session starts that much later, drawn as without it), and writes the files
that describe its world — judgments graded by rank, the examination curve 1/r, the strata —
since every replay, benchmark and end-to-end test is measured against this run."""

from __future__ import annotations

import json
import zlib
from collections import Counter, defaultdict
from datetime import datetime

import pytest

from collector.series.quality import STRATA
from collector.sources.simulator import SimulationSpec, Simulator
from collector.sources.simulator.applications import APPS
from collector.sources.simulator.rankings import PAGE_SIZE, ranked
from tests.collector.sources.simulator.sent import is_query

SPEC = {"seed": 3, "sessions": 200}


def _first_queries(spec: SimulationSpec) -> dict[str, int]:
    """Each session's client → its first query's event time in ms."""
    first: dict[str, int] = {}
    for record in map(json.loads, Simulator(spec).records()):
        if is_query(record):
            stamp = record["timestamp"]
            first.setdefault(record["client_id"], stamp if isinstance(stamp, int) else round(
                datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000))
    return first


def test_a_seed_is_one_run() -> None:
    assert list(Simulator(SimulationSpec(**SPEC)).records()) == \
        list(Simulator(SimulationSpec(**SPEC)).records())
    assert list(Simulator(SimulationSpec(**SPEC)).records()) != \
        list(Simulator(SimulationSpec(seed=4, sessions=200)).records())


def test_records_come_in_delivery_order_each_counted() -> None:
    simulator = Simulator(SimulationSpec(seed=3, sessions=50, jitter_s=5.0))
    timed = list(simulator.timed_records())
    deliveries = [delivery for delivery, _ in timed]
    assert deliveries == sorted(deliveries)
    assert simulator.truth.records == len(timed)
    assert simulator.sessions_started == 50


def test_a_lull_moves_every_later_session_by_its_length() -> None:
    plain = _first_queries(SimulationSpec(**SPEC))
    lull = _first_queries(SimulationSpec(**SPEC, lulls=[(10.0, 600.0)]))
    assert plain.keys() == lull.keys()  # the same sessions, drawn as without the lull
    shifts = Counter(lull[client] - plain[client] for client in plain)
    assert set(shifts) == {0, 600_000} and shifts[0] > 20 and shifts[600_000] > 100
    start = SimulationSpec().start * 1000
    assert not [t for t in lull.values() if start + 10_000 <= t < start + 610_000]


def test_the_judgments_grade_the_ranked_documents_by_rank() -> None:
    simulator = Simulator(SimulationSpec(seed=3, sessions=1))
    lines = simulator.judgments_csv(depth=20, share=0.8).splitlines()
    assert lines[0] == "application,query,doc_id,rater,grade"
    grades: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for line in lines[1:]:
        application, query, doc_id, rater, grade = line.split(",")
        assert (application, rater) == ("", "simulator")
        grades[query].append((doc_id, int(grade)))
    judged = {q for q in simulator.vocab.queries if zlib.crc32(q.encode()) % 1000 < 800}
    assert set(grades) == judged  # 80 % of the vocabulary, the same queries every run
    by_rank = [3] * 2 + [2] * 3 + [1] * 5 + [0] * 10
    for query, graded in grades.items():
        assert [doc for doc, _ in graded] == [ranked(query, i) for i in range(20)]
        poor = query in simulator.vocab.poor  # rarely clicked: the best documents rank last
        assert [g for _, g in graded] == ([3 - g for g in by_rank] if poor else by_rank)


def test_the_examination_curve_is_one_over_the_position_for_every_application() -> None:
    curve = json.loads(Simulator.examination_json())
    assert (curve["model"], curve["source"]) == ("position-based", "simulator")
    assert set(curve["applications"]) == {app.name for app in APPS}
    for application in curve["applications"].values():
        assert application["identified"] is True
        assert application["examination"] == pytest.approx(
            [1 / r for r in range(1, PAGE_SIZE + 1)], abs=5e-7)


def test_the_strata_file_names_every_querys_stratum() -> None:
    simulator = Simulator(SimulationSpec(seed=3, sessions=1))
    lines = simulator.strata_csv().splitlines()
    assert lines[0] == "query,stratum"
    rows = dict(line.rsplit(",", 1) for line in lines[1:])
    assert rows == {query: STRATA[s] for query, s in simulator.vocab.strata.items()}
    assert set(rows.values()) <= set(STRATA)
