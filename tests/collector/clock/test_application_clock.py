"""collector/clock/application_clock.py: an application whose every client is off by the same
amount is moved by that one offset (queries and events apart), one back within the tolerance
is moved no more, and neither a records' tolerance or two, clients each off by their own amount,
nor an application alone in the stream is taken for an application's clock, since a wrong
offset would move every record of a healthy front end."""

from __future__ import annotations

import pytest

from collector.clock.application_clock import (
    POSITION,
    ApplicationClocks,
    ArrivalPosition,
    _densest,
)

TOLERANCE = 5.0
QUERY, EVENT = 0, 1


def _stream(clocks: ApplicationClocks, shop_lead: float, *, records: int = 400,
            spread: float = 0.0, kind: int = QUERY) -> list[int]:
    """Three records of "web" (on the stream's clock) to one of "shop" (``shop_lead`` seconds
    ahead, its ten clients each ``spread`` more than the one before); the records at which an
    offset changed."""
    changed = []
    for i in range(records):
        client = (i // 4) % 10
        if i % 4 == 3:
            moved = clocks.sample("shop", kind, shop_lead + spread * client, f"shop-{client}")
        else:
            moved = clocks.sample("web", QUERY, 0.0, f"web-{client}")
        if moved:
            changed.append(i)
    return changed


def test_an_application_an_hour_ahead_is_moved_by_the_hour() -> None:
    clocks = ApplicationClocks(TOLERANCE)
    assert len(_stream(clocks, 3600.0)) == 1
    assert clocks.offsets == {"shop": [3600.0, 0.0]}
    assert clocks.offset("shop", QUERY) == 3600.0 and clocks.offset("shop", EVENT) == 0.0
    assert clocks.offset("web", QUERY) == 0.0  # the stream's own clock


def test_events_have_their_own_offset() -> None:
    clocks = ApplicationClocks(TOLERANCE)
    _stream(clocks, -7200.0, kind=EVENT)
    assert clocks.offsets == {"shop": [0.0, -7200.0]}


def test_an_application_back_on_time_is_no_longer_moved() -> None:
    clocks = ApplicationClocks(TOLERANCE)
    _stream(clocks, 3600.0)
    assert len(_stream(clocks, 0.0)) == 1
    assert clocks.offsets == {}


@pytest.mark.parametrize(("lead", "offsets"), [
    (8.0, {}),  # within twice the tolerance: the records' own rules judge it
    (11.0, {"shop": [11.0, 0.0]}),  # beyond it: moved
])
def test_only_an_offset_beyond_twice_the_tolerance_moves(lead: float,
                                                         offsets: dict[str, list[float]]) -> None:
    clocks = ApplicationClocks(TOLERANCE)
    _stream(clocks, lead)
    assert clocks.offsets == offsets


def test_clients_each_off_by_their_own_amount_are_not_one_clock() -> None:
    clocks = ApplicationClocks(TOLERANCE)
    assert _stream(clocks, 3600.0, spread=100.0) == []
    assert clocks.offsets == {}


def test_an_application_alone_in_the_stream_is_not_judged_against_it() -> None:
    """The others silent (a log's tail of one application's searches later): the stream moved
    with it."""
    clocks = ApplicationClocks(TOLERANCE)
    for i in range(64):
        clocks.sample("web", QUERY, 0.0, f"web-{i % 10}")
    for i in range(200):
        assert not clocks.sample("shop", EVENT, 3600.0, f"shop-{i % 10}")
    assert clocks.offsets == {}


def test_restart_forgets_the_leads_and_keeps_the_offsets() -> None:
    kept, restarted = ApplicationClocks(TOLERANCE), ApplicationClocks(TOLERANCE)
    _stream(kept, 3600.0)
    _stream(restarted, 3600.0)
    restarted.restart()
    assert restarted.offsets == {"shop": [3600.0, 0.0]}
    # back on time: the leads kept say so at once, a restart needs its samples again
    assert _stream(kept, 0.0, records=80) == [43] and kept.offsets == {}
    assert _stream(restarted, 0.0, records=80) == []
    assert restarted.offsets == {"shop": [3600.0, 0.0]}


def test_the_typical_lead_is_the_densest_group_not_the_median() -> None:
    assert _densest([0, 1, 2, 50, 51, 52, 53, 200], 5) == 51
    assert _densest([-86400, 0.5, 1, 1.5, 86400], 2) == 1


def test_the_arrival_position_is_the_median_of_the_last_queries() -> None:
    position = ArrivalPosition()
    noted = [position.note(float(ts), True) for ts in range(20)]
    assert noted[:POSITION // 4] == [None] * (POSITION // 4)  # too few queries yet
    assert noted[16:] == [8.0, 8.0, 9.0, 9.0]  # each before its own query is noted
    assert position.note(1000.0, False) == position.note(5.0, False) == 10.0  # events: no vote
    for ts in range(1000, 1000 + POSITION):
        position.note(float(ts), True)
    assert position.note(0.0, False) == 1000.0 + POSITION / 2  # only the last POSITION count
