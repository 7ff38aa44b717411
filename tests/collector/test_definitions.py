"""Each definition of docs/metrics.md on hand-built record sequences, with exact numbers."""

from __future__ import annotations

import pytest

from collector.exposition.summary import replay_summary as summary


def test_search_with_click_counts_ctr_time_to_first_click_and_reciprocal_rank(ubi, run):
    s = run([ubi.query("q1", "shoes", 0), ubi.click("q1", 12.5, position=4),
             ubi.click("q1", 40, position=1, obj="d2")])
    assert (s["searches"], s["clicked_searches"], s["clicks"]) == (1, 1, 2)
    assert s["ctr"] == 1.0
    assert s["mean_time_to_first_click_s"] == 12.5
    assert s["mrr_first_click"] == 0.25  # the first click by event time was at position 4
    assert (s["abandoned_searches"], s["reformulated_searches"]) == (0, 0)


def test_zero_result_by_total_hits_or_empty_hit_list_and_unknown_count(ubi, run):
    s = run([ubi.query("q1", "a", 0, client="c1", total_hits=0),
             ubi.query("q2", "b", 0, client="c2", hits=[]),
             ubi.query("q3", "c", 0, client="c3", hits=None),
             ubi.query("q4", "d", 0, client="c4", hits=None, total_hits=12)])
    assert s["searches"] == 4
    assert s["zero_result_searches"] == 2
    assert s["zero_result_rate"] == 0.5
    assert s["searches_with_results"] == 2  # unknown result count counts as with results
    assert s["zero_result_exits"] == 2
    assert s["abandoned_searches"] == 2


@pytest.mark.parametrize(("before", "after", "kind"), [
    ("running shoes", "runing shoes", "spelling"),
    ("shoes", "running shoes", "specialization"),
    ("red running shoes", "running shoes", "generalization"),
    ("shoes", "laptop stand", "other"),
])
def test_reformulation_kinds(ubi, run, before, after, kind):
    s = run([ubi.query("q1", before, 0), ubi.query("q2", after, 30)])
    assert s["reformulated_searches"] == 1
    assert s["reformulations_by_kind"][kind] == 1
    assert s["reformulation_rate"] == 0.5
    assert s["abandoned_searches"] == 1  # the second search, not the reformulated one


def test_reformulation_needs_next_search_within_window_and_no_click_before_it(ubi, run):
    s = run([
        ubi.query("a1", "shoes", 0, client="a"), ubi.query("b1", "shoes", 0, client="b"),
        ubi.query("c1", "shoes", 0, client="c"), ubi.query("d1", "shoes", 0, client="d"),
        ubi.click("c1", 10, client="c"), ubi.query("c2", "boots", 20, client="c"),
        ubi.query("d2", "boots", 20, client="d"), ubi.click("d1", 25, client="d"),
        ubi.query("a2", "boots", 300, client="a"), ubi.query("b2", "boots", 300.001, client="b"),
    ])
    # a: exactly at the window → reformulated; b: just past it; c: clicked first; d: click after
    assert s["reformulated_searches"] == 2
    assert s["searches"] == 8


def test_same_normalized_query_and_pagination_are_engagement_not_reformulation(ubi, run):
    s = run([
        ubi.query("a1", "Running Shoes", 0, client="a"),
        ubi.query("a2", "  running shoes!", 20, client="a"),
        ubi.query("b1", "tent", 0, client="b"), ubi.query("b2", "tent", 15, client="b", page=2),
    ])
    assert s["searches"] == 3  # page 2 is not a search
    assert s["reformulated_searches"] == 0
    # a1 is followed by a2 (not abandoned); a2 and b1 are the last searches of their sessions,
    # but b1 was continued by pagination within the window.
    assert s["abandoned_searches"] == 1


def test_abandonment_decided_at_window_and_late_click_still_counts(ubi, run):
    s = run([ubi.query("q1", "lamp", 0), ubi.click("q1", 301, position=2)])
    assert s["abandoned_searches"] == 1
    assert s["clicked_searches"] == 1
    assert s["abandonment_rate"] == 1.0 and s["ctr"] == 1.0


def test_activity_in_the_session_prevents_abandonment_but_exposures_do_not(ubi, run):
    s = run([
        ubi.query("a1", "desk", 0, client="a"), ubi.query("b1", "sofa", 0, client="b"),
        ubi.query("c1", "rug", 0, client="c"),
        ubi.event("b1", "impression", 5, position=1, client="b"),
        ubi.event("b1", "view", 6, client="b"), ubi.event("b1", "page_exit", 7, client="b"),
        ubi.event("c1", "add_to_cart", 60, client="c"),
        ubi.query("a2", "chair", 100, client="a"), ubi.click("a2", 110, client="a"),
        ubi.click("a1", 150, client="a"),
    ])
    assert s["searches"] == 4
    assert s["reformulated_searches"] == 1  # a1 → a2 with no click before a2
    assert s["abandoned_searches"] == 1  # only b1: impressions and views are not engagement
    assert s["converted_searches"] == 1 and s["conversion_rate"] == 0.25
    assert s["clicked_searches"] == 2
    assert s["ignored_records"] == 1


def test_click_on_an_earlier_search_after_the_last_search_prevents_its_abandonment(ubi, run):
    s = run([
        ubi.query("q1", "desk", 0), ubi.click("q1", 5),
        ubi.query("q2", "desk lamp", 30), ubi.click("q1", 60, obj="d9"),
    ])
    assert s["abandoned_searches"] == 0
    assert s["clicks"] == 2 and s["clicked_searches"] == 1


def test_zero_result_exit_and_zero_result_reformulated(ubi, run):
    s = run([
        ubi.query("a1", "xyzzy", 0, client="a", total_hits=0),
        ubi.query("b1", "shoez", 0, client="b", hits=[]),
        ubi.query("b2", "shoes", 10, client="b"), ubi.click("b2", 15, client="b"),
    ])
    assert s["zero_result_exits"] == 1
    assert s["reformulations_by_kind"]["spelling"] == 1
    assert s["abandoned_searches"] == 0


def test_attribution_window_ends_clicks_and_later_events_are_orphans(ubi, run):
    s = run([ubi.query("q1", "tv", 0), ubi.click("nope", 10), ubi.click("q1", 1800),
             ubi.click("q1", 1800.5, obj="d2")])
    assert s["clicks"] == 1
    assert s["orphan_events"] == 2


def test_zero_based_rank_and_configurable_ordinal_base(ubi, run):
    rank = ubi.event("q1", "click", 5, event_attributes={"rank": 0, "object": {"object_id": "x"}})
    s = run([ubi.query("q1", "tv", 0), rank])
    assert s["mrr_first_click"] == 1.0
    zero_based = [ubi.query("q1", "tv", 0), ubi.click("q1", 5, position=0)]
    assert run(zero_based)["mrr_first_click"] is None  # below base 1: position unknown
    assert run(zero_based, **{"events.position_base": 0})["mrr_first_click"] == 1.0


def test_unknown_position_still_counts_the_click(ubi, run):
    s = run([ubi.query("q1", "tv", 0), ubi.event("q1", "click", 3,
                                                  event_attributes={"position": {}})])
    assert s["clicked_searches"] == 1 and s["mrr_first_click"] is None
    assert s["mean_time_to_first_click_s"] == 3.0


def test_click_on_page_two_has_absolute_position(ubi, run):
    hits = [f"d{i}" for i in range(10)]
    s = run([ubi.query("q1", "tent", 0, hits=hits), ubi.query("q1p2", "tent", 10, page=2),
             ubi.click("q1p2", 20, position=3)])
    assert s["searches"] == 1 and s["clicked_searches"] == 1
    assert s["mrr_first_click"] == pytest.approx(1 / 13)


def test_duplicates_are_counted_once(ubi, run):
    q, c = ubi.query("q1", "tv", 0), ubi.click("q1", 4, position=2)
    s = run([q, c, q, c, ubi.click("q1", 4, position=2, obj="other")])
    assert s["searches"] == 1 and s["clicks"] == 2 and s["clicked_searches"] == 1
    assert s["duplicates"] == 2
    assert s["records"] == 5


def test_out_of_order_within_lateness_is_reordered(ubi, run):
    ordered = [ubi.query("q1", "tv", 0), ubi.click("q1", 4), ubi.query("q2", "radio", 20)]
    s = run([ordered[2], ordered[1], ordered[0]])
    assert s == run(ordered)
    assert s["orphan_events"] == 0 and s["late_events"] == 0 and s["clicked_searches"] == 1


def background(ubi, until: float, every: float = 50.0) -> list[bytes]:
    """One search every ``every`` seconds from a new client each: a stream with a clock."""
    return [ubi.query(f"b{i}", f"item {i}", i * every, client=f"b{i}")
            for i in range(int(until / every) + 1)]


def test_late_records_applied_only_while_their_search_is_open(ubi, engine):
    stream = background(ubi, 2950, every=1.0)  # clock ≈ 2924 s: q2 is evicted, q3 is open
    e = engine([
        *stream[:101], ubi.query("q2", "lamp", 100, client="c2"), *stream[101:2001],
        ubi.query("q3", "desk", 2000, client="c3"), *stream[2001:],
        ubi.click("q3", 2050, client="c3", position=2),  # late, same clock as q3: applied
        ubi.query("q2b", "rug", 130, client="c2"),  # far behind the stream: c2's clock is
        ubi.click("q2", 120, client="c2"),          # judged behind and moved, nothing lost;
    ])                                              # its click then names a search long gone
    s = summary(e)
    assert (s["late_events"], s["late_queries"], s["orphan_events"]) == (1, 0, 1)
    assert s["searches"] == 2954 and s["clicked_searches"] == 1 and s["retimed_records"] == 2
    assert s["mean_time_to_first_click_s"] == 50.0 and s["mrr_first_click"] == 0.5
    assert e.dead_letters.reasons == ["orphan"]
    assert e.stats.clock_clients == {"behind_stream": 1}


def test_records_without_use_are_ignored_and_invalid_ones_rejected(ubi, run):
    s = run([
        ubi.event(None, "click", 0),
        ubi.event("q1", "page_exit", 0),
        b'{"user_query": "no id", "timestamp": 1767600000000}',
        b'{"query_id": "x", "user_query": "t", "timestamp": "tomorrow"}',
        b"not json",
        b'{"foo": 1}',
    ])
    assert s["ignored_records"] == 2
    assert s["invalid_records"] == 4
    assert s["records"] == 6
    assert s["searches"] == 0 and s["zero_result_rate"] is None and s["ctr"] is None


def test_event_stamped_before_its_search_is_applied_at_the_search(ubi, engine):
    e = engine([ubi.query("q1", "tv", 10), ubi.click("q1", 9)])
    s = summary(e)
    assert s["orphan_events"] == 0 and s["clicked_searches"] == 1
    assert s["mean_time_to_first_click_s"] == 0.0  # never negative
    assert e.stats.retimed["before_its_search"] == 1


def test_click_on_zero_result_search_is_data_quality_not_ctr(ubi, engine):
    e = engine([ubi.query("q1", "tv", 0, total_hits=0), ubi.click("q1", 5)])
    s = summary(e)
    assert s["clicked_searches"] == 0 and s["clicks"] == 0 and s["ctr"] is None
    assert s["zero_result_exits"] == 0  # the user did something
    assert e.stats.data_quality["click_on_zero_result_search"] == 1


def test_orphans_and_invalid_records_are_dead_lettered_with_reasons(ubi, engine):
    e = engine([ubi.click("nope", 0), b"{", ubi.query("q1", "tv", 0)])
    assert e.dead_letters.reasons == ["malformed_json", "orphan"]
    assert e.stats.dead_lettered == {"malformed_json": 1, "orphan": 1}
