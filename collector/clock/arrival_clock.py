"""A record's own arrival time as the clock no device can skew: device skew per record.

A Kafka record carries a timestamp of its own: CreateTime, set by the producer when it sends
(a search server, a collector endpoint in front of the browsers), or LogAppendTime, set by the
broker. Either is a server's clock, stamped within moments of the event, whatever the device
said. So, as Snowplow derives ``derived_tstamp`` from its collector's clock, each record's
**lead** (its stamp − its arrival) is compared with the typical lead of its kind (queries are
stamped by search servers, events by devices, and reach Kafka by different paths): within
``ordering.clock_tolerance_s`` of it, the record stands as stamped; further, its time is taken
as its arrival + the typical lead — for that record, from its own arrival, with no guess about
its client and no state kept per client. Quiet spells and sparse applications change nothing
here: both clocks move together.

The typical lead of a kind is the median of the last ``SAMPLES`` sampled leads (sampled, like
the stream clock's window, by the stamp's milliseconds: a replay from a checkpoint rebuilds
the same window). It is trusted only while their interquartile range is within the tolerance
and the newer half's median is within a quarter of the tolerance of the older half's (a lead
that drifts is no clock). A backfill (last month's log produced today, faster than it
happened) or a producer that copies the device's clock into CreateTime has no steady lead:
the stream clock's rules (collector/clock/stream_clock.py) judge its records instead. Skewed
records (a client brings all of its records along: under a quarter of the samples) move
neither the median nor the quartiles; a client ahead making most of them leaves a typical lead
ahead of the arrivals, which no set of right clocks has, and that is not trusted either.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque

from collector.clock.stream_clock import SAMPLE_MASK

SAMPLES = 64  # sampled leads per kind the typical lead is the median of
MIN_SAMPLES = 16  # before this many, the arrival clock corrects no record
FEW = 3  # … but says where an idle stream was, from this many


class ArrivalClock:
    """The typical lead of queries and of events, while it is steady."""

    __slots__ = ("tolerance", "typical", "_windows", "_ordered")

    def __init__(self, tolerance: float) -> None:
        self.tolerance = tolerance
        # Per kind (query, event): the typical lead while the window is steady, else None.
        self.typical: list[float | None] = [None, None]
        self._windows: tuple[deque[float], ...] = (deque(), deque())
        self._ordered: tuple[list[float], ...] = ([], [])

    def offset(self, kind: int, ts: float, arrived: float) -> float | None:
        """How far ``ts`` is off by its arrival (0.0: it stands as stamped), or None while the
        arrival clock cannot tell (too few samples, no steady lead)."""
        lead = ts - arrived
        if not int(ts * 1000.0) & SAMPLE_MASK:
            self._sample(kind, lead)
        return self.judge(kind, ts, arrived)

    def judge(self, kind: int, ts: float, arrived: float) -> float | None:
        """``offset`` without noting the record (one that arrived earlier: held in the warm-up
        before the lead was steady)."""
        typical = self.typical[kind]
        if typical is None:
            return None
        skew = ts - arrived - typical
        return 0.0 if -self.tolerance <= skew <= self.tolerance else skew

    def lead(self) -> float | None:
        """The stream's lead over its arrivals now: the typical one (queries' first) while
        steady; before there are ``MIN_SAMPLES``, the median of as few as ``FEW`` while they
        are steady too (where an idle spell's time starts from); None without arrivals or
        while unsteady (a backfill: its records arrived together, whatever their times)."""
        for kind in (0, 1):
            if self.typical[kind] is not None:
                return self.typical[kind]
        for ordered in self._ordered:
            n = len(ordered)
            if (FEW <= n < MIN_SAMPLES and ordered[n * 3 // 4] - ordered[n // 4] <= self.tolerance
                    and ordered[n // 2] <= self.tolerance):
                return ordered[n // 2]
        return None

    def _sample(self, kind: int, lead: float) -> None:
        window, ordered = self._windows[kind], self._ordered[kind]
        insort(ordered, lead)
        window.append(lead)
        if len(window) > SAMPLES:
            del ordered[bisect_left(ordered, window.popleft())]
        n = len(ordered)
        steady = n >= MIN_SAMPLES and ordered[n * 3 // 4] - ordered[n // 4] <= self.tolerance
        if steady:  # and not drifting: the newer half's median near the older half's
            half = n // 2
            older = sorted(window[i] for i in range(half))
            newer = sorted(window[i] for i in range(half, n))
            steady = abs(newer[len(newer) // 2] - older[half // 2]) <= self.tolerance / 4
        # A typical lead ahead of the arrivals is no clock either: right clocks stamp a record
        # before it arrives, so that is one chatty client running ahead making most records.
        median = ordered[n // 2]
        self.typical[kind] = median if steady and median <= self.tolerance else None
