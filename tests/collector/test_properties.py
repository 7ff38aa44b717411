"""Invariants over random traffic: outcome counts are bounded, and arrival order within the
allowed lateness does not change any total."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.exposition.summary import replay_summary
from collector.sources.simulator import SimulationSpec, Simulator

_STATELESS_FIXTURES = [HealthCheck.function_scoped_fixture]  # factories, no state across runs
QUERIES = ["shoes", "shoe", "running shoes", "tent", "Tent", "lamp", "desk lamp", "x"]

step = st.tuples(
    st.sampled_from(["search", "click", "convert", "page", "impression"]),
    st.integers(min_value=0, max_value=3),  # session
    st.floats(min_value=0.0, max_value=400.0),  # gap after the previous step
    st.sampled_from(QUERIES),
    st.booleans(),  # zero results
    st.integers(min_value=0, max_value=12),  # position
)


def build(ubi, steps) -> list[tuple[float, bytes]]:
    records: list[tuple[float, bytes]] = []
    t = 0.0
    last: dict[int, str] = {}
    for n, (kind, session, gap, text, zero, position) in enumerate(steps):
        t += gap
        client = f"c{session}"
        if kind == "search" or session not in last:
            qid = f"q{n}"
            last[session] = qid
            records.append((t, ubi.query(qid, text, t, client=client, total_hits=0 if zero else 9)))
        elif kind == "page":
            records.append((t, ubi.query(f"p{n}", text, t, client=client, page=2)))
        else:
            action = {"click": "click", "convert": "purchase", "impression": "impression"}[kind]
            records.append((t, ubi.event(last[session], action, t, position, client=client,
                                         obj=f"d{n}")))
    return records


def jitter(records: list[tuple[float, bytes]], seed: int, within: float) -> list[bytes]:
    rng = random.Random(seed)
    delayed = sorted(((t + rng.uniform(0, within), i, raw) for i, (t, raw) in
                      enumerate(records)))
    return [raw for _, _, raw in delayed]


@settings(max_examples=150, deadline=None, suppress_health_check=_STATELESS_FIXTURES)
@given(st.lists(step, min_size=1, max_size=40), st.integers(0, 10**6))
def test_outcomes_are_bounded_and_order_within_lateness_does_not_matter(ubi, engine, steps,
                                                                        seed):
    records = build(ubi, steps)
    in_order = replay_summary(engine([raw for _, raw in records]))
    shuffled = replay_summary(engine(jitter(records, seed, within=29.0)))
    assert shuffled == in_order
    s = in_order
    assert s["reformulated_searches"] + s["abandoned_searches"] + s["zero_result_exits"] \
        <= s["searches"]
    assert s["clicked_searches"] <= s["searches_with_results"]
    assert s["converted_searches"] <= s["searches_with_results"]
    assert s["abandoned_searches"] <= s["searches_with_results"]
    assert s["zero_result_exits"] <= s["zero_result_searches"]
    assert s["late_events"] == 0 and s["invalid_records"] == 0
    assert s["records"] == len(records)


@settings(max_examples=5, deadline=None, suppress_health_check=_STATELESS_FIXTURES,
          derandomize=True, database=None)  # the same seeds in every run
@given(st.integers(0, 10**6))
def test_simulated_traffic_replays_to_its_ground_truth(engine, tmp_path_factory, seed):
    simulator = Simulator(SimulationSpec(seed=seed, sessions=300, invalid_rate=0.02))
    records = list(simulator.records())
    strata = tmp_path_factory.mktemp("strata") / "strata.csv"
    strata.write_text(simulator.strata_csv())
    got = replay_summary(engine(records, **{"strata.file": str(strata)}))
    assert _rounded(got) == _rounded(without_sparse_tail_retiming(got, simulator.truth.summary()))


def without_sparse_tail_retiming(got: dict, truth: dict) -> dict:
    """The truth, but with the engine's count of retimed records, which must be tiny: in the
    sparse tail of a log a click long after its search, with no newer query to place it by,
    cannot be told from a fast device clock (docs/architecture.md, the stream clock's bound);
    every count must still be exact."""
    assert got["retimed_records"] <= max(2, got["records"] // 1000), got["retimed_records"]
    return {**truth, "retimed_records": got["retimed_records"]}


def _rounded(value):
    """Float sums differ in the last bits with summation order; counts must match exactly."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return round(value, 9) if isinstance(value, float) else value
