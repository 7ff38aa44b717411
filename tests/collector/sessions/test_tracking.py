"""Tracking health (docs/metrics.md "Tracking health"): searches with results that received
any event, clicks beyond the results their page listed, events without a search per
application."""

from __future__ import annotations

from collector.ingest import accounting as acc


def total(engine, name: str) -> float:
    return sum(getattr(s, name) for s in engine.table.series)


def test_event_coverage_counts_searches_with_results_that_received_any_event(ubi, engine):
    e = engine([
        ubi.query("q1", "tent", 0, client="a"), ubi.event("q1", "impression", 1, client="a"),
        ubi.query("q2", "lamp", 10, client="b"), ubi.click("q2", 12, client="b"),
        ubi.query("q3", "desk", 20, client="c"),  # nothing: abandoned, no event
        ubi.query("q4", "sofa", 30, client="d", page=1),
        ubi.query("q4p", "sofa", 40, client="d", page=2),  # a next page is an event of q4
        ubi.query("q5", "xyzzy", 50, client="e", hits=()),  # zero results: not counted
        ubi.event("q5", "impression", 51, client="e"),
    ])
    assert (total(e, "with_events"), total(e, "searches") - total(e, "zero_result")) == (3, 4)


def test_clicks_beyond_the_results_their_page_listed(ubi, engine):
    e = engine([
        ubi.query("q1", "tent", 0, hits=["d1", "d2", "d3"]),
        ubi.click("q1", 1, position=3), ubi.click("q1", 2, position=5, obj="d5"),
        ubi.query("q1p", "tent", 10, page=2, hits=["d4", "d5", "d6"]),
        ubi.click("q1p", 11, position=2, obj="d5"), ubi.click("q1p", 12, position=4, obj="d9"),
    ])
    assert (total(e, "clicks"), total(e, "clicks_beyond_results")) == (4, 2)


def test_events_without_a_search_are_counted_by_their_application(ubi, engine):
    e = engine([ubi.query("q1", "tent", 0),
                ubi.event("lost", "click", 5, application="shop"),
                ubi.event("lost2", "impression", 6, application="shop"),
                ubi.event("lost3", "click", 7)])
    assert dict(e.stats.events_without_search) == {"shop": 2, "none": 1}


def test_a_tracking_outage_leaves_its_searches_untracked_not_abandoned(ubi, engine):
    """An application whose events stop for 600 searches: after the recent window's collapse
    its searches are untracked, in no CTR or abandonment denominator, and its CTR stays what
    people do; the other application is untouched."""
    records = []
    for n in range(3000):
        app, at = ("shop", "blog")[n % 2], 2.0 * n
        records.append(ubi.query(f"q{n}", f"query {n % 50}", at, client=f"c{n}", app=app))
        outage = app == "shop" and 1000 <= n < 2200
        if n % 4 < 2 and not outage:  # half of the searches clicked
            records.append(ubi.click(f"q{n}", at + 1, client=f"c{n}"))
    e = engine(records)
    by_app = {app: [s for s in e.table.series if s.application == app] for app in ("shop", "blog")}
    shop = {name: sum(getattr(s, name) for s in by_app["shop"])
            for name in ("searches", "clicked", "abandoned", "untracked")}
    assert sum(s.untracked for s in by_app["blog"]) == 0
    assert shop["searches"] == 1500 and 480 <= shop["untracked"] <= 600  # the outage's 600
    tracked = shop["searches"] - shop["untracked"]
    assert shop["clicked"] + shop["abandoned"] == tracked  # each tracked one clicked or not
    assert abs(shop["clicked"] / tracked - 0.5) < 0.08  # CTR ~ what people did, not 0.3


def test_a_late_event_without_a_search_is_counted_too(ubi, engine):
    """On time or behind the watermark, an event whose search is not tracked is one: a
    restarted collector that finds an orphan late counts it as a clean run does."""
    stream = [ubi.query(f"b{i}", f"item {i}", float(i), client=f"b{i}") for i in range(400)]
    e = engine([*stream, ubi.event("lost", "click", 5, application="shop", client=None)])
    assert e.stats.records[acc.EVENT][acc.LATE] == 1  # no client: no clock to move it by
    assert dict(e.stats.events_without_search) == {"shop": 1}


def test_an_untracked_search_is_not_read_as_reformulated(ubi, engine):
    """A search reformulated is one not clicked before the next intent: during an outage that
    is unknown, so an untracked search reformulates nothing and the reformulation rate divides
    by the tracked searches — shop's rate stays the people's 25 %, as blog's, not ~35 %."""
    records = []
    for n in range(3000):
        app, at, client = ("shop", "blog")[n % 2], 4.0 * n, f"c{n}"
        outage = app == "shop" and 1000 <= n < 2200
        records.append(ubi.query(f"q{n}", f"query {n % 50}", at, client=client, app=app))
        if n % 4 < 2 and not outage:  # half of the first searches clicked
            records.append(ubi.click(f"q{n}", at + 1, client=client))
        records.append(ubi.query(f"r{n}", f"other {n % 40}", at + 2, client=client, app=app))
    e = engine(records)
    rates = {}
    for app in ("shop", "blog"):
        series = [s for s in e.table.series if s.application == app]
        reformulated = sum(sum(s.reformulated.values()) for s in series)
        tracked = sum(s.searches - s.untracked for s in series)
        rates[app] = reformulated / tracked
    assert rates["blog"] == 0.25
    assert abs(rates["shop"] - 0.25) < 0.02, rates
