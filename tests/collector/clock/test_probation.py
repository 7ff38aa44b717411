"""Probation (collector/clock/probation.py) and the arrival clock
(collector/clock/arrival_clock.py): the pure rules by which a record that looks ahead of the stream,
or off by its own arrival, is decided."""

from __future__ import annotations

import pytest

from collector.clock.arrival_clock import MIN_SAMPLES, ArrivalClock
from collector.clock.probation import AHEAD, CAP, FITS, STANDS, HeldRecord, Probation
from collector.exposition.summary import replay_summary
from tests.conftest import T0

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
    assert probation.drain(unvouched=T + 1000) == [leaning_for, leaning_against, even]
    assert [r.verdict for r in (leaning_for, leaning_against, even)] == [STANDS, AHEAD, STANDS]


def test_with_no_vote_at_all_a_record_stands_only_up_to_the_unvouched_bound():
    """The end of a log after a week-long silence is a guess either way; a record of the year
    2199 standing would make it the stream's newest day (and a store's retention would prune
    every real day before it)."""
    probation = Probation()
    within, past, outvoted = held(T + 900, "x"), held(T + 1001, "y"), held(T + 5000, "z")
    for record in (within, past, outvoted):
        probation.hold(record)
    outvoted.votes_for = outvoted.votes_against = 1  # a tie stands, wherever it is
    probation.drain(unvouched=T + 1000)
    assert [r.verdict for r in (within, past, outvoted)] == [STANDS, AHEAD, STANDS]


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


def test_a_typical_lead_ahead_of_the_arrivals_is_one_chatty_client_not_a_clock():
    """Right clocks stamp a record before it arrives: a client 2 days ahead that makes most of
    the records (a batch upload) must not become the clock every other record is moved by."""
    clock = ArrivalClock(tolerance=30.0)
    steady(clock, 1, 2 * 86400.0, 64)
    assert clock.typical[1] is None and clock.lead() is None
    assert clock.offset(1, unsampled(0), unsampled(2)) is None  # the stamps' rules decide


def test_one_chatty_client_ahead_moves_no_one_else(ubi, engine):
    """300 clients a search a second each for an hour; one client adds 50 searches and their
    clicks in 500 s, stamped 2 days ahead, whole seconds (every one sampled, the others an
    eighth): most of the clock's window for minutes. Only its records are retimed; every
    count is exact."""
    records, searches = [], 0
    for s in range(3600):
        client, at = f"c{s % 300}", s + (s * 37 % 1000) / 1000  # an eighth of them sampled
        records += [ubi.query(f"q{s}", "tent", at, client=client),
                    ubi.click(f"q{s}", at + 2, client=client)]
        searches += 1
        if 1800 <= s < 2300 and s % 10 == 0:
            at = s + 2 * 86400
            records += [ubi.query(f"b{s}", "lamp", at, client="chatty"),
                        ubi.click(f"b{s}", at + 2, client="chatty")]
            searches += 1
    summary = replay_summary(engine(records))
    assert summary["retimed_records"] == 100  # the chatty client's, no one else's
    assert (summary["late_events"], summary["late_queries"], summary["orphan_events"]) == (0, 0, 0)
    assert (summary["searches"], summary["clicks"]) == (searches, searches)


def test_a_last_record_of_the_year_2199_is_a_clock_not_the_streams_newest_time(ubi, engine):
    """No vote can come after the last record: within a week it would stand (a lull's end),
    this far it is its client's clock — else it would be the stream's newest day, and a
    store's retention would prune every real day before it."""
    records = []
    for s in range(2000):
        at = s + (s * 37 % 1000) / 1000
        records.append(ubi.query(f"q{s}", "tent", at, client=f"c{s % 50}"))
    records.append(ubi.query("poison", "lamp", 7_258_118_400 - T0, client="c7"))  # 2199-12-31
    e = engine(records)
    assert e.view().gauges["last_event_timestamp_seconds"] == pytest.approx(
        T0 + 1999 + 1999 * 37 % 1000 / 1000)
    assert replay_summary(e)["retimed_records"] == 1
