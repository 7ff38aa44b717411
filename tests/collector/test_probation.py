"""Probation (collector/probation.py) and the arrival clock (collector/arrival_clock.py): the
pure rules by which a record that looks ahead of the stream, or off by its own arrival, is
decided."""

from __future__ import annotations

import pytest

from collector.arrival_clock import MIN_SAMPLES, ArrivalClock
from collector.probation import AHEAD, CAP, FITS, STANDS, HeldRecord, Probation

T = 1_767_600_000.0
SLACK = 600.0


def held(ts: float, client: str = "skewed") -> HeldRecord:
    return HeldRecord(ts, 0, b"", None, client, None, SLACK)  # type: ignore[arg-type]


def test_three_other_clients_at_its_time_say_the_stream_is_there():
    probation = Probation()
    record = held(T + 900)  # 15 minutes past the edge: a lull's end, or a fast clock
    probation.hold(record)
    assert probation.vote(T + 901, "a", reach=T) == []
    assert probation.vote(T + 902, "skewed", reach=T) == []  # its own client cannot vouch
    assert probation.vote(T + 903, "a", reach=T) == []  # nor one client twice
    assert probation.vote(T + 904, "b", reach=T) == []
    assert probation.vote(T + 905, "c", reach=T) == [record]
    assert record.verdict == STANDS and (record.votes_for, record.votes_against) == (3, 0)
    assert probation.held == [] and probation.clients == {}


def test_three_other_clients_where_the_stream_was_say_its_clock_runs_ahead():
    probation = Probation()
    record = held(T + 900)
    probation.hold(record)
    for client in "abc":
        decided = probation.vote(T + 299, client, reach=T)  # more than SLACK before it
    assert decided == [record] and record.verdict == AHEAD


def test_a_vote_within_the_slack_before_it_is_for_it():
    probation = Probation()
    record = held(T + 900)
    probation.hold(record)
    for client in "abc":
        decided = probation.vote(T + 900 - SLACK, client, reach=T)
    assert decided == [record] and record.verdict == STANDS


def test_a_clients_later_records_wait_behind_its_first_and_go_in_order():
    probation = Probation()
    first, second = held(T + 900), held(T + 905)
    probation.hold(first)
    probation.hold(second)
    assert probation.clients == {"skewed": 2}
    second.votes_for = 3  # decided by votes first, but its client's earlier record is not
    second.decided()
    assert probation.ready(reach=T) == []
    for client in "abc":
        decided = probation.vote(T + 901, client, reach=T)
    assert decided == [first, second]


def test_the_stream_reaching_a_held_record_releases_it_to_be_judged_again():
    probation = Probation()
    record = held(T + 900)
    probation.hold(record)
    assert probation.ready(reach=T + 899) == []
    assert probation.ready(reach=T + 900) == [record] and record.verdict == FITS


def test_where_no_vote_can_come_the_votes_so_far_decide_and_a_tie_stands():
    probation = Probation()
    leaning_for, leaning_against, even = held(T + 900, "x"), held(T + 900, "y"), held(T, "z")
    for record in (leaning_for, leaning_against, even):
        probation.hold(record)
    leaning_for.votes_for, leaning_against.votes_against = 1, 2
    assert probation.drain() == [leaning_for, leaning_against, even]
    assert [r.verdict for r in (leaning_for, leaning_against, even)] == [STANDS, AHEAD, STANDS]


def test_memory_is_bounded_the_oldest_goes_on_its_votes():
    probation = Probation()
    for n in range(CAP):
        assert probation.hold(held(T + n, f"c{n}")) == []
    released = probation.hold(held(T + CAP, "last"))
    assert [r.client for r in released] == ["c0"] and len(probation.held) == CAP


def sampled(i: int) -> float:
    """The i-th stamp the clocks sample (milliseconds ≡ 0 mod 8); ``unsampled`` is not."""
    return (T * 1000 + 8 * i + 0.4) / 1000


def unsampled(seconds: float) -> float:
    return T + seconds + 0.0035


def steady(clock: ArrivalClock, kind: int, lead: float, n: int) -> None:
    for i in range(n):
        clock.offset(kind, sampled(i), sampled(i) - lead)


def test_the_arrival_clock_says_nothing_until_it_has_a_steady_lead():
    clock = ArrivalClock(tolerance=30.0)
    steady(clock, 0, -2.0, MIN_SAMPLES - 1)
    assert clock.offset(0, unsampled(1), unsampled(3)) is None
    steady(clock, 0, -2.0, 2)
    assert clock.offset(0, unsampled(1), unsampled(3)) == 0.0


def test_a_record_off_by_its_arrival_is_offset_by_its_own_skew():
    clock = ArrivalClock(tolerance=30.0)
    steady(clock, 1, -2.0, 64)
    assert clock.offset(1, unsampled(602), unsampled(2)) == pytest.approx(602.0)
    assert clock.offset(1, unsampled(-598), unsampled(2)) == pytest.approx(-598.0)
    assert clock.offset(1, unsampled(20), unsampled(2)) == 0.0  # within the tolerance
    assert clock.offset(0, unsampled(0), unsampled(2)) is None  # queries: a lead of their own


def test_a_skewed_fifth_moves_neither_the_typical_lead_nor_its_steadiness():
    clock = ArrivalClock(tolerance=30.0)
    for i in range(64):
        lead = 3600.0 if i % 5 == 0 else -2.0  # a fifth of the samples an hour ahead
        clock.offset(0, sampled(i), sampled(i) - lead)
    assert clock.typical[0] == pytest.approx(-2.0)


def test_a_drifting_lead_is_no_clock():
    clock = ArrivalClock(tolerance=30.0)
    for i in range(64):  # a backfill: the log's time runs 100 times faster than arrivals
        clock.offset(0, sampled(100 * i), sampled(i))
    assert clock.typical[0] is None
