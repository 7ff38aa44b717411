"""The simulator's oracle applies the written definitions to hand-built plans, exactly: which
query records are keystrokes (docs/metrics.md, "Search intents") — a same query again 3 s
after, a click mid-typing, a pause in typing — reformulation between intents only, abandonment
engaged by any later query record, event coverage, automated clients' searches apart, and what
a tracking outage hides from a collector."""

from __future__ import annotations

import pytest

from collector.outcomes import normalize_query
from collector.sources.simulator.intents import IntentRule
from collector.sources.simulator.oracle import DEFINED, GroundTruth
from collector.sources.simulator.plan import PlannedSearch
from collector.sources.simulator.spec import TrackingOutage

T = 1_767_600_000_000  # ms


def search(at: float, query: str, app: str = "web", zero: bool = False,
           clicks: tuple[float, ...] = (), typed: tuple[tuple[float, str], ...] = (),
           pages: tuple[float, ...] = (), impressions: bool = False,
           conversions: tuple[float, ...] = ()) -> PlannedSearch:
    """A planned search at ``at`` s, its clicks (at position 1), its typing's records."""
    s = PlannedSearch(T + int(at * 1000), query, normalize_query(query), 2, app, None, zero,
                      True, True, clicks=[(T + int(c * 1000), 1) for c in clicks],
                      pages=[T + int(p * 1000) for p in pages],
                      conversions=[T + int(c * 1000) for c in conversions])
    s.typed = [search(t, text, app) for t, text in typed]
    if impressions and not zero:
        s.impressions = [s.ts_ms + 200 + i for i in range(10)]
    return s


def truth_of(*plans: list[PlannedSearch], rule: IntentRule = DEFINED) -> dict:
    truth = GroundTruth(rule)
    for plan in plans:
        truth.add_session(plan)
    return truth.summary()


def counts(summary: dict, *keys: str) -> tuple:
    return tuple(summary[key] for key in keys)


KEYS = ("searches", "keystroke_records", "reformulated_searches", "abandoned_searches",
        "clicked_searches", "searches_with_events")


def test_the_same_query_again_3_s_later_is_one_intent():
    """Nobody clicked it and the same text came 3 s later: by definition the first record
    was a keystroke of the second (equal text continues), whatever the simulator meant."""
    got = truth_of([search(0, "tent"), search(3, "Tent ")])
    assert counts(got, *KEYS) == (1, 1, 0, 1, 0, 0)
    assert got["keystrokes_per_search"] == 1.0
    later = truth_of([search(0, "tent"), search(30, "tent")])  # read the results: two searches
    assert counts(later, *KEYS) == (2, 0, 0, 1, 0, 0)  # the first engaged by the second


def test_a_click_mid_typing_makes_the_partial_record_a_search():
    typing = ((0.2, "r"), (0.5, "ru"), (0.8, "run"), (1.1, "runn"), (1.4, "runni"),
              (1.7, "runnin"))
    partial = search(2.0, "running", clicks=(4.0,), typed=typing)
    final = search(14.0, "running shoes", typed=((12.0, "running s"), (12.6, "running sho"),
                                                  (13.2, "running shoe")))
    got = truth_of([partial, final])
    # two intents; the chain after the click continues "running" but it was acted on
    assert counts(got, *KEYS) == (2, 9, 0, 1, 1, 1)
    assert got["clicks"] == 1 and got["mean_time_to_first_click_s"] == 2.0


def test_a_pause_longer_than_the_gap_splits_the_typing():
    """"runn", then 6 s of nothing, then "running": the prefix is an intent of its own (the
    price of the 5 s gap), reformulated by the chain's intent, at its time and text."""
    final = search(8.0, "running shoes", typed=(
        (0.2, "r"), (0.5, "ru"), (0.8, "run"), (1.0, "runn"), (7.1, "running"),
        (7.5, "running sh")))
    got = truth_of([final])
    assert counts(got, *KEYS) == (2, 5, 1, 1, 0, 0)  # "runn" and the last are intents
    assert got["reformulations_by_kind"] == {"spelling": 0, "specialization": 0,
                                             "generalization": 0, "other": 1}


def test_reformulation_is_between_intents():
    """"tent" is reformulated by the chain's intent "lamp" 21 s later, not by its first
    keystroke "l" (which would make it 'other' at 20 s either way: the kind and time are the
    intent's)."""
    got = truth_of([search(0, "tent"),
                    search(21.0, "tent lamp", typed=((20.0, "t"), (20.3, "te"),
                                                     (20.6, "tent"), (20.8, "tent l")))])
    # "tent" at 0 s and "t" at 20 s: more than the gap apart, so "tent" is an intent
    assert counts(got, *KEYS) == (2, 4, 1, 1, 0, 0)
    assert got["reformulations_by_kind"]["specialization"] == 1


def test_a_search_the_next_typing_continues_within_the_gap_is_a_keystroke():
    """"red shoes" unclicked, and 3 s later the box sends "r" (select all, type): "r" is a
    prefix of it (a deletion), so it was a keystroke, and "running shoes" the intent."""
    got = truth_of([search(0, "red shoes"),
                    search(5.0, "running shoes", typed=((3.0, "r"), (3.4, "run"),
                                                         (4.2, "running s")))])
    assert counts(got, *KEYS) == (1, 4, 0, 1, 0, 0)


def test_any_later_query_record_engages_a_search_a_keystroke_too():
    """"tent" at 0; typing starts at 298 s and its intent comes at 302 s: the keystroke at
    298 s is a later query record within the window (not abandoned), the intent comes after
    the reformulation window (not reformulated)."""
    got = truth_of([search(0, "tent"),
                    search(302.0, "lamp", typed=((298.0, "l"), (300.0, "la"), (301.0, "lam")))])
    assert counts(got, *KEYS) == (2, 3, 0, 1, 0, 0)  # the abandoned one is "lamp"


def test_event_coverage_counts_any_event_by_the_decision():
    got = truth_of([search(0, "tent", impressions=True)], [search(0, "lamp", pages=(20,))],
                   [search(0, "desk", clicks=(301,))], [search(0, "fan", zero=True)],
                   [search(0, "rug", conversions=(100,))])
    assert got["searches_with_events"] == 3  # impressions, a next page, a conversion
    assert got["searches_with_results"] == 4 and got["event_coverage"] == 0.75
    assert got["clicked_searches"] == 1  # the late click still counts as a click


def test_a_clicked_keystroke_is_a_search():
    """A click on a record within its decision makes it a search, even after the next one."""
    got = truth_of([search(0, "tent", clicks=(5,)), search(2, "tent lamp")])
    # not clicked before "tent lamp": reformulated by it; its click engages "tent lamp"
    assert counts(got, *KEYS) == (2, 0, 1, 0, 1, 1)


def test_the_rule_is_off_for_applications_that_send_submitted_queries():
    plan = [search(3.0, "tent", app="legacy", typed=((1.0, "t"), (2.0, "te")))]
    assert counts(truth_of(plan), *KEYS) == (1, 2, 0, 1, 0, 0)
    off = truth_of(plan, rule=IntentRule(off_applications=frozenset({"legacy"})))
    assert counts(off, *KEYS) == (3, 0, 2, 1, 0, 0)  # "t" → "te" → "tent": spelling twice


def test_automated_searches_are_apart_and_keystrokes_of_bots_are_keystrokes():
    truth = GroundTruth(bot_kinds=("monitor", "crawler"))
    monitor = [search(t, "tent") for t in (0, 3, 60)]  # 3 s apart: the first a keystroke
    for this, after in zip(monitor, [*monitor[1:], None], strict=True):
        truth.add_automated("monitor", this, after)
    truth.add_session([search(0, "lamp", clicks=(5,))])
    got = truth.summary()
    assert counts(got, "searches", "automated_searches", "keystroke_records") == (1, 2, 1)
    assert got["automated_share"] == pytest.approx(2 / 3)
    assert got["automated_by_kind"] == {"monitor": 2, "crawler": 0}
    assert got["ctr"] == 1.0  # people's rates only
    assert got["by_application"]["web"]["automated_searches"] == 2


def test_a_tracking_outage_hides_events_from_the_collector_not_from_the_truth():
    start = T / 1000
    truth = GroundTruth(outages=(TrackingOutage("web", 60, 60),), start=start)
    typing = ((60.2, "r"), (60.5, "run"))
    plan = [search(61.0, "running", clicks=(62.0,), typed=typing),  # clicked in the outage
            search(70.0, "running shoes", typed=((66.0, "running s"),)),
            search(200.0, "tent", clicks=(201.0,))]  # after it: seen
    truth.add_session(plan)
    got = truth.summary()
    assert counts(got, *KEYS) == (3, 3, 1, 0, 2, 2)  # what people did
    seen = got["observable"]
    # without its click "running" continues into "running s" 5 s later: a keystroke
    assert counts(seen, *KEYS) == (2, 4, 1, 0, 1, 1)
    assert got["tracking_outages"] == [{
        "application": "web", "start": "2026-01-05T08:01:00Z", "end": "2026-01-05T08:02:00Z",
        "searches_in_window": 2, "searches_with_hidden_events": 1, "hidden_events": {}}]
    assert set(got) - set(seen) == {"observable", "tracking_outages"}
