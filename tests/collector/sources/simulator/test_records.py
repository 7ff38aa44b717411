"""collector/sources/simulator/records.py: each application's records are in its own UBI
dialect, the noise written (page exits, orphan clicks, malformed records, redeliveries) is
exactly what the ground truth counts, and a latency incident multiplies only its application's
latencies in its window, since the engine's counts are judged against that truth."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import datetime

import pytest

from collector.sources.simulator import SimulationSpec, Simulator
from collector.sources.simulator.rankings import PAGE_SIZE
from collector.sources.simulator.records import _INVALID, ORPHAN_PREFIX
from collector.sources.simulator.spec import Incident
from tests.collector.sources.simulator.sent import is_query

ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
SPEC = {"seed": 2, "sessions": 300}


@pytest.fixture(scope="module")
def noisy() -> tuple[Simulator, list[bytes]]:
    simulator = Simulator(SimulationSpec(**SPEC, invalid_rate=0.02, orphan_rate=0.05,
                                         duplicate_rate=0.02))
    return simulator, list(simulator.records())


@pytest.fixture(scope="module")
def by_application() -> dict[tuple[str, str], list[dict]]:
    """(application, query or the event's action) → its records."""
    records = [json.loads(raw) for raw in Simulator(SimulationSpec(**SPEC)).records()]
    application = {r["query_id"]: r["application"] for r in records if is_query(r)}
    grouped: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        kind = "query" if is_query(r) else r["action_name"]
        grouped[(r.get("application") or application.get(r["query_id"], ""), kind)].append(r)
    return grouped


def test_the_noise_sent_is_the_noise_the_truth_counts(noisy: tuple[Simulator, list[bytes]]
                                                     ) -> None:
    simulator, raw = noisy
    invalid = [line for line in raw if line in _INVALID]
    valid = [json.loads(line) for line in raw if line not in _INVALID]
    truth = simulator.truth
    assert len(invalid) == truth.invalid > 0
    assert sum(r.get("action_name") == "page_exit" for r in valid) == truth.ignored > 0
    assert sum(r.get("action_name") == "click" and r["query_id"].startswith(ORPHAN_PREFIX)
               for r in valid) == truth.orphans > 0
    again = Counter(line for line in raw if line not in _INVALID)
    assert sum(n - 1 for n in again.values()) == truth.duplicates > 0


def test_mobile_stamps_milliseconds_the_others_iso_text(
        by_application: dict[tuple[str, str], list[dict]]) -> None:
    for (application, _), records in by_application.items():
        stamps = {type(r["timestamp"]) for r in records}
        if application == "mobile":
            assert stamps == {int}
        else:
            assert stamps == {str}
            assert all(ISO_MS.fullmatch(r["timestamp"]) for r in records)


def test_each_dialect_names_its_results_and_positions(
        by_application: dict[tuple[str, str], list[dict]]) -> None:
    def keys(application: str) -> set[str]:
        return {k for r in by_application[(application, "query")] for k in r}

    assert "query_response_hit_ids" in keys("web") and "query_response_hit_ids" in keys("mobile")
    assert "query_response_objects_ids" in keys("legacy") - keys("web")
    assert not {"query_response_hit_ids", "query_response_objects_ids"} & keys("opensearch")
    for application in ("web", "legacy"):  # 1-based ordinals
        assert all(r["event_attributes"]["position"]["ordinal"] >= 1
                   for r in by_application[(application, "click")])
    # OpenSearch's: an ordinal, or an empty position for a click on a document it cannot place
    positions = Counter(str(r["event_attributes"]["position"].get("ordinal", "none"))
                        for r in by_application[("opensearch", "click")])
    assert 0 < positions["none"] < positions.total() / 2
    assert set(positions) - {"none"} <= {str(n) for n in range(1, PAGE_SIZE + 1)}
    clicks = by_application[("mobile", "click")]  # 0-based ranks
    assert clicks and all("position" not in r["event_attributes"] for r in clicks)
    assert min(r["event_attributes"]["rank"] for r in clicks) == 0


def test_only_opensearch_lists_its_results_as_impressions_one_per_result(
        by_application: dict[tuple[str, str], list[dict]]) -> None:
    assert {application for application, kind in by_application if kind == "impression"} == \
        {"opensearch"}
    ordinals: dict[str, list[int]] = defaultdict(list)
    for r in by_application[("opensearch", "impression")]:
        ordinals[r["query_id"]].append(r["event_attributes"]["position"]["ordinal"])
    # in the order they arrive (jittered), one of each position
    assert ordinals and all(sorted(o) == list(range(1, PAGE_SIZE + 1)) for o in ordinals.values())


def _latencies(spec: SimulationSpec) -> dict[str, tuple[str, float, float]]:
    """query id → (application, offset from the start in s, latency in ms)."""
    found = {}
    for r in map(json.loads, Simulator(spec).records()):
        if is_query(r):
            stamp = r["timestamp"]
            at = (stamp / 1000 if isinstance(stamp, int) else
                  datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
            found[r["query_id"]] = (r["application"], at - spec.start,
                                    r["query_attributes"]["latency_ms"])
    return found


def test_a_latency_incident_multiplies_its_applications_latency_in_its_window() -> None:
    plain = _latencies(SimulationSpec(**SPEC))
    slow = _latencies(SimulationSpec(**SPEC, incidents=[Incident.parse("latency@web:x10:10s+20s")]))
    assert plain.keys() == slow.keys()  # the same searches: only their latency changed
    moved = set()
    for qid, (application, at, latency) in plain.items():
        if application == "web" and 10 <= at < 30:
            assert slow[qid][2] == pytest.approx(10 * latency, abs=0.5)
            moved.add(qid)
        else:
            assert slow[qid][2] == latency
    assert len(moved) > 20
