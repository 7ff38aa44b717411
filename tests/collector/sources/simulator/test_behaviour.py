"""collector/sources/simulator/behaviour.py: a simulated user's chances — of finding nothing
(vocabulary, unknown and broken queries), of clicking (poor queries, known items), each changed
by an incident only in its window and application — clicks decaying with the position as 1/r,
and typos of one swap or one dropped character, since the truth every engine count is judged
against is drawn from these chances."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from collector.sources.simulator import SimulationSpec, Simulator
from collector.sources.simulator.applications import APPS
from collector.sources.simulator.behaviour import _typo, examined_position
from collector.sources.simulator.rankings import PAGE_SIZE
from collector.sources.simulator.spec import Incident

WEB, MOBILE = (next(app for app in APPS if app.name == name) for name in ("web", "mobile"))


@pytest.fixture(scope="module")
def simulator() -> Simulator:
    return Simulator(SimulationSpec(seed=3, sessions=1, incidents=[
        Incident.parse("zero_results@web:x5:1m+1m"),
        Incident.parse("known_item_zero_results@mobile:x4:0+1m"),
        Incident.parse("clicks@web:x2:0+1m")]))


def _times(simulator: Simulator) -> tuple[int, int]:
    """(in the first minute, in the second), in ms of event time."""
    start = int(simulator.spec.start * 1000)
    return start + 30_000, start + 90_000


def _plain(simulator: Simulator) -> str:
    """A vocabulary query neither broken nor poor."""
    vocab = simulator.vocab
    return next(q for q in vocab.queries if q not in vocab.broken and q not in vocab.poor)


def test_the_chance_of_finding_nothing_by_query(simulator: Simulator) -> None:
    first, second = _times(simulator)
    broken = next(iter(simulator.vocab.broken))
    assert simulator._zero_result_probability(_plain(simulator), False, WEB, first) == 0.03
    assert simulator._zero_result_probability("zzqx unknown", False, WEB, first) == 0.5
    assert simulator._zero_result_probability(broken, False, WEB, first) == 1.0
    # the zero-results incident of web, in its window only: × 5, at most 1
    assert simulator._zero_result_probability(_plain(simulator), False, WEB, second) == \
        pytest.approx(0.15)
    assert simulator._zero_result_probability("zzqx unknown", False, WEB, second) == 1.0
    assert simulator._zero_result_probability(_plain(simulator), False, MOBILE, second) == 0.03


def test_a_known_item_incident_hits_only_known_items_of_its_application(
        simulator: Simulator) -> None:
    first, _ = _times(simulator)
    sku = simulator.vocab.skus[0].lower()
    assert simulator._zero_result_probability(sku, True, MOBILE, first) == 1.0  # 0.5 × 4
    assert simulator._zero_result_probability(sku, True, WEB, first) == 0.5
    assert simulator._zero_result_probability(sku, False, MOBILE, first) == 0.5


def test_the_chance_of_a_click_by_query_and_incident(simulator: Simulator) -> None:
    first, second = _times(simulator)
    poor = next(iter(simulator.vocab.poor))
    sku = simulator.vocab.skus[0]

    def click(query: str, t: int) -> float:
        return simulator._click_probability(simulator._planned(WEB, None, query, t), WEB, t)

    assert (click(_plain(simulator), second), click(poor, second), click(sku, second)) == \
        (0.6, 0.15, 0.75)
    assert click(_plain(simulator), first) == 0.3  # the clicks incident divides it by 2


def test_a_search_knows_its_stratum(simulator: Simulator) -> None:
    _, second = _times(simulator)
    plain = simulator._planned(WEB, None, _plain(simulator).upper(), second)
    assert plain.normalized == _plain(simulator)
    assert plain.stratum == simulator.vocab.strata[_plain(simulator)]
    assert simulator._planned(WEB, None, simulator.vocab.skus[0], second).stratum == 3


def test_clicks_fall_on_position_r_with_weight_one_over_r() -> None:
    rng = random.Random(1)
    draws = Counter(examined_position(rng) for _ in range(20_000))
    harmonic = sum(1 / r for r in range(1, PAGE_SIZE + 1))
    for position in range(1, PAGE_SIZE + 1):
        assert draws[position] / 20_000 == pytest.approx(1 / position / harmonic, abs=0.01)
    assert set(draws) == set(range(1, PAGE_SIZE + 1))


def test_a_typo_swaps_two_letters_or_drops_one_next_to_a_space() -> None:
    rng = random.Random(2)
    typos = {_typo(rng, "red tent") for _ in range(200)}
    swaps = {"erd tent", "rde tent", "red etnt", "red tnet", "red tetn"}
    dropped = {"re tent", "redtent"}  # beside the space: a character is dropped
    assert typos <= swaps | dropped and typos & swaps and typos & dropped
