"""The simulator's returning users (SimulationSpec.users): heavy-tailed searches per user, a
click propensity per user, one variant per user, and the ground truth still exact."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from collector.exposition.summary import replay_summary
from collector.sources.simulator import SimulationSpec, Simulator, personal
from tests.collector.test_properties import _rounded, without_sparse_tail_retiming


def _searches_by_client(records):
    searches: Counter[str] = Counter()
    variants: dict[str, set] = {}
    for raw in records:
        record = json.loads(raw)
        if "user_query" in record and (record.get("query_attributes") or {}).get("page") is None:
            searches[record["client_id"]] += 1
            variants.setdefault(record["client_id"], set()).add(
                (record.get("query_attributes") or {}).get("variant"))
    return searches, variants


@pytest.fixture(scope="module")
def returning():
    simulator = Simulator(SimulationSpec(seed=3, sessions=4000, users=500,
                                         interleaving_preference=0.0))
    return simulator, list(simulator.records())


def test_users_return_heavy_tailed_each_in_one_variant(returning):
    _, records = returning
    searches, variants = _searches_by_client(records)
    counts = sorted(searches.values(), reverse=True)
    assert len(counts) <= 500
    mean = sum(counts) / len(counts)
    top = sum(counts[: len(counts) // 10])
    assert top / sum(counts) > 0.3  # the busiest tenth of users make over 30 % of searches
    assert counts[0] > 8 * mean
    assert all(len(v) == 1 for v in variants.values())  # the unit of randomization
    assert {next(iter(v)) for v in variants.values()} == {None, "control", "treatment",
                                                          "interleaved"}


def test_returning_users_replay_to_their_ground_truth(returning, engine, tmp_path):
    simulator, records = returning
    strata = tmp_path / "strata.csv"
    strata.write_text(simulator.strata_csv())
    got = replay_summary(engine(records, **{"strata.file": str(strata)}))
    assert _rounded(got) == _rounded(without_sparse_tail_retiming(got, simulator.truth.summary()))


def test_click_propensity_varies_by_user_and_the_effect_is_known():
    assert personal(0.6, 0.0, 0.0) == 0.6  # exactly: the default traffic does not change
    assert personal(0.6, 1.0, 0.0) == pytest.approx(1 / (1 + math.exp(-(math.log(1.5) + 1))))
    assert personal(0.6, 0.0, 0.05) == pytest.approx(0.65)
    assert personal(0.99, 0.0, 0.05) == 1.0


def test_a_treatment_effect_moves_ctr():
    def ctr(effect):
        simulator = Simulator(SimulationSpec(seed=9, sessions=6000, users=2000,
                                             treatment_click_effect=effect))
        clicked = {v: [0, 0] for v in ("control", "treatment")}
        queries = {}
        for raw in simulator.records():
            record = json.loads(raw)
            attrs = record.get("query_attributes") or {}
            if "user_query" in record and attrs.get("variant") and attrs.get("page") is None:
                queries[record["query_id"]] = attrs["variant"]
                clicked[attrs["variant"]][1] += 1
            elif record.get("action_name") == "click" and record["query_id"] in queries:
                clicked[queries.pop(record["query_id"])][0] += 1
        return {v: c / n for v, (c, n) in clicked.items()}

    same, lifted = ctr(0.0), ctr(0.15)
    assert abs(same["treatment"] - same["control"]) < 0.04
    assert lifted["treatment"] - lifted["control"] > 0.08
