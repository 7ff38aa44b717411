"""Search intents (docs/metrics.md "Search intents", "When a search is counted"): keystroke
records of a search-as-you-type box are no search, the intent is the last record of the chain,
reformulation is between intents; a search is counted at its decision."""

from __future__ import annotations

import pytest

from collector.store.query_stats import QueryStats
from tests.conftest import T0


def totals(engine) -> dict[str, float]:
    """The quality counts of every series, summed."""
    names = ("searches", "zero_result", "clicked", "clicks", "abandoned", "keystrokes",
             "with_events")
    out = {name: sum(getattr(s, name) for s in engine.table.series) for name in names}
    out["reformulated"] = sum(sum(s.reformulated.values()) for s in engine.table.series)
    out["first_click_s"] = sum(s.time_to_first_click.sum for s in engine.table.series)
    return out


def typed(ubi, prefix: str, texts: list[str], start: float, gap: float = 0.3,
          client: str = "c1", **kw) -> list[bytes]:
    """The query records a search-as-you-type box sends while ``texts`` are typed, ``gap``
    seconds apart, ids ``prefix0``, ``prefix1``…"""
    return [ubi.query(f"{prefix}{i}", text, start + i * gap, client=client, **kw)
            for i, text in enumerate(texts)]


def test_the_keystrokes_of_a_typed_query_are_one_search_the_last_record_stands_for_it(
        ubi, engine):
    records = typed(ubi, "k", ["r", "ru", "run", "runn", "running shoes"], 0)
    records.append(ubi.click("k4", 1.2 + 3.0))
    got = totals(engine(records))
    assert got == {"searches": 1, "zero_result": 0, "clicked": 1, "clicks": 1, "abandoned": 0,
                   "keystrokes": 4, "with_events": 1, "reformulated": 0,
                   "first_click_s": pytest.approx(3.0)}  # from the intent's own record


def test_backspaces_and_a_fixed_typo_are_keystrokes_too(ubi, engine):
    records = typed(ubi, "k", ["runnign", "runni", "runnin", "running"], 0, gap=0.8)
    got = totals(engine(records))
    assert (got["searches"], got["keystrokes"], got["abandoned"]) == (1, 3, 1)


def test_a_record_the_user_clicked_mid_typing_is_a_search(ubi, engine):
    records = [ubi.query("k0", "run", 0), ubi.click("k0", 1.0),
               ubi.query("k1", "running", 2.0)]
    got = totals(engine(records))
    assert (got["searches"], got["keystrokes"], got["clicked"], got["reformulated"]) == (
        2, 0, 1, 0)  # clicked: not reformulated by the next search


def test_a_click_on_a_keystroke_record_after_its_successor_makes_it_a_search(ubi, engine):
    """Results of "ru" still on screen while "run" was sent: the user acted on them."""
    records = [ubi.query("k0", "ru", 0), ubi.query("k1", "run", 0.3), ubi.click("k0", 0.5)]
    got = totals(engine(records))
    assert (got["searches"], got["keystrokes"], got["clicked"]) == (2, 0, 1)


def test_a_pause_longer_than_the_gap_makes_two_searches_the_first_reformulated(ubi, engine):
    records = [ubi.query("k0", "runn", 0), ubi.query("k1", "running", 6.0)]
    got = totals(engine(records))
    assert (got["searches"], got["keystrokes"], got["reformulated"]) == (2, 0, 1)
    e = engine(records, **{"intents.keystroke_gap_s": 10.0})
    assert (totals(e)["searches"], totals(e)["keystrokes"]) == (1, 1)


def test_the_same_query_again_within_the_gap_is_one_search(ubi, engine):
    got = totals(engine([ubi.query("q1", "tent", 0), ubi.query("q2", "Tent ", 3.0)]))
    assert (got["searches"], got["keystrokes"], got["abandoned"]) == (1, 1, 1)


def test_an_unrelated_query_within_the_gap_is_a_search_of_its_own(ubi, engine):
    got = totals(engine([ubi.query("q1", "tent", 0), ubi.query("q2", "lamp", 1.0)]))
    assert (got["searches"], got["keystrokes"], got["reformulated"]) == (2, 0, 1)


def test_the_intent_before_a_chain_is_reformulated_by_the_chains_intent(ubi, engine):
    records = [ubi.query("q1", "tent", 0), *typed(ubi, "k", ["sh", "sho", "shoes"], 20.0)]
    e = engine(records)
    got = totals(e)
    assert (got["searches"], got["keystrokes"], got["reformulated"]) == (2, 2, 1)
    (series,) = [s for s in e.table.series if sum(s.reformulated.values())]
    assert series.reformulated["other"] == 1  # tent → shoes, not tent → sh


def test_the_rule_is_off_for_the_applications_that_send_only_submitted_queries(ubi, engine):
    records = typed(ubi, "k", ["r", "ru", "run"], 0, app="kiosk")
    records += typed(ubi, "w", ["r", "ru", "run"], 10.0, client="c2")
    e = engine(records, **{"intents.off_applications": ["kiosk"]})
    by_app = {app: sum(s.searches for s in e.table.series if s.application == app)
              for app in ("kiosk", "web")}
    assert by_app == {"kiosk": 3, "web": 1}
    assert totals(e)["keystrokes"] == 2


def test_a_keystroke_is_in_no_top_query_store_row_or_experiment_statistic(ubi, engine):
    stats = QueryStats()
    from collector.config import load_config
    from collector.engine import Engine

    e = Engine(load_config(environ={}, overrides={"privacy.min_distinct_clients": 1}),
               query_stats=stats)
    e.process_all(typed(ubi, "k", ["xq", "xqz", "xqzz"], 0, hits=(), variant="B"))
    e.close()
    assert e.view().released.shown == {"web": [("xqzz", 1)]}
    assert {key[2] for key in stats.rows} == {"xqzz"}
    (experiment,) = e.table.experiments
    assert sum(b.searches for b in experiment.filled()) == 1
    assert totals(e)["zero_result"] == 1


def test_events_naming_a_keystroke_count_for_nothing(ubi, engine):
    records = [ubi.query("k0", "ru", 0), ubi.event("k0", "impression", 0.1),
               ubi.query("k1", "run", 0.3)]
    got = totals(engine(records))
    assert (got["searches"], got["keystrokes"], got["with_events"]) == (1, 1, 0)


def test_a_search_is_counted_at_its_decision_or_when_the_user_acts_on_it(ubi, engine):
    e = engine([ubi.query("q1", "tent", 0), ubi.query("q2", "lamp", 10, client="c2"),
                ubi.click("q2", 20, client="c2")], close=False)
    e.advance(T0 + 250)  # both applied: the clicked one is a person's search, counted at once
    assert (totals(e)["searches"], totals(e)["clicked"], e.sessions.pending) == (1, 1, 2)
    e.advance(T0 + 300 + e.lateness + 1)  # the other at its decision
    assert (totals(e)["searches"], totals(e)["abandoned"]) == (2, 1)
    e.process_all([ubi.click("q2", 400, client="c2", obj="d2")])  # counted as it comes
    e.advance(T0 + 400 + e.lateness + 1)
    assert totals(e)["clicks"] == 2
