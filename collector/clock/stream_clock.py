"""The stream's own clock, and each client's clock offset against it.

Device clocks are off by minutes to days as a matter of course, so neither the newest timestamp
nor the wall clock can say what time it is in the stream (a replay of last year's log is as valid
as live traffic). Two rules keep a minority of wrong clocks from hurting anyone else.

**The stream clock** ``now`` is the 90th percentile of the last ``WINDOW`` sampled times of
records that stand as stamped (a corrected record says nothing of the stream's time), and never
goes back. A record is sampled when its time in milliseconds is a multiple of 8 — by content, not
by position, so a partition replayed from a checkpoint rebuilds the same window whatever its
batches. Records making up less than 10 % of the window (poison records, 5 % of clients with any
offset) can neither advance nor stall it, so they make no other client's record late. The
watermark is ``now − lateness`` rounded down to a ``1 / TICKS`` s step (the engine buffers
records in buckets of that span and releases whole buckets). Where a record arriving now belongs
is read from the last ``RECENT`` queries (stamped by search servers, not devices): their median
(robust) is the **front**, what a record is moved to; the newest of the last one or two blocks of
``RECENT`` queries is the **edge**, what a record may reach before it is called ahead (a sparse
stream is not judged ahead of itself; an outlier there only spares a few records a correction).

**Client offsets.** At the first record of each (client, kind) — queries are stamped by the search
server, events by the device, so the two are judged apart — an offset is decided, then applied to
every later record of that client and kind:

- a record that fits with the client's other clock takes its offset (one device, one clock);
- an event naming a search already seen keeps its query clock when that puts it inside the
  search's attribution window and no further ahead of the edge than the client's queries run
  (its *lead*) — or anywhere in that window while no query newer than its search has arrived
  (a sparse stream cannot tell a late click from a fast clock); otherwise — stamped before its
  search, or ahead — it is moved to the front, never before its search nor past its window;
- any other record more than ``tolerance`` behind the clock, or more than ``max_ahead`` ahead of
  the edge, is moved to the front; any other keeps its time (offset 0).

Moving a whole client costs its own counts nothing: its windows are measured between its own
records. Only offsets found non-zero are kept (for clients seen within the last two
``generation`` spans of stream time); a record that fits the stream as stamped is taken as it
is without a lookup, and a later record that its client's offset does not explain while its
stamp does reverts the client to 0 (the offset came from a poison first record).

Until the window is full there is no clock: the engine holds those records (about 8 × ``WINDOW``)
and judges them once it exists, each against the median of the samples before it
(``at_arrival``) or, for the very first ones, against the fences of the whole window
(``start_of_stream``); none of them is late.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque
from collections.abc import Callable
from math import floor, inf
from typing import NamedTuple

from collector.clock.window_bulk import (
    PROVISIONAL,
    below,
    bulk_percentile,
    continued,
    dated_ahead,
)
from collector.ingest.accounting import PipelineStats

WINDOW = 128  # sampled record times the clock is the 90th percentile of
RECENT = 16  # the last queries (sampled or not) the front and the edge are read from
EARLY = 8  # records before one in the warm-up's first ones, to say it is behind them
TICKS = 4  # the watermark moves in steps of 1 / TICKS s: the engine's buffer buckets
SAMPLE_MASK = 7  # sampled: time in ms ≡ 0 (mod 8)
_READ_MASK = 127  # the clock is read at a sixteenth of the samples
_LEAD = 2  # the slot of client leads in the offset tables
# Why a client's offset is not 0 (label values of searchpulse_clock_corrected_clients_total).
BEHIND = "behind_stream"
AHEAD = "ahead_of_stream"
EVENT_VS_SEARCH = "event_vs_search"
REVISED = "revised_to_zero"  # an offset its client's next record contradicted (a poison first)
# Not a label: an event stamped later than the stream has reached (inside or past its search's
# window, or with its search not seen yet), held on probation (it may be the stream that is
# later: a sparse one), then counted as EVENT_VS_SEARCH or AHEAD if its client's clock does run
# ahead.
EVENT_AHEAD = "event_ahead"


class Reference(NamedTuple):
    """What a record is judged against: the clock, how far a record may go, and where it is
    moved to (None: read from the recent queries when needed, which is rarely)."""

    now: float
    edge: float
    front: float | None = None
    reach: float = inf  # how far a query may be stamped and still say where the stream is


NO_CLOCK = Reference(-inf, -inf, -inf)


class StreamClock:
    __slots__ = ("lateness", "tolerance", "max_ahead", "generation", "wall_clock", "now",
                 "watermark", "low", "high", "spread", "_slack", "skewed", "_recent", "_block",
                 "_block_max", "_edge", "_window", "_voices", "_ordered", "_offsets", "_older",
                 "_generation_end", "stats")

    def __init__(self, lateness: float, tolerance: float, max_ahead: float,
                 generation: float, stats: PipelineStats,
                 wall_clock: Callable[[], float] = lambda: inf) -> None:
        self.lateness = lateness
        self.tolerance = tolerance
        self.max_ahead = max_ahead
        self.generation = generation
        self.wall_clock = wall_clock  # now (Unix seconds): the ceiling no bulk of it passes
        self.skewed: set[str] = set()  # clients with an offset kept (any kind, either generation)
        self._recent: deque[float] = deque(maxlen=RECENT)
        self._window: deque[float] = deque()
        self._voices: deque[str | None] = deque()  # the client of each sample in the window
        self._ordered: list[float] = []
        self.restart()
        # Per kind (query, event) each client's offset; [_LEAD]: how far ahead of the stream a
        # client's query clock runs while within max_ahead (its events may run as far).
        self._offsets: tuple[dict[str, float], ...] = ({}, {}, {})
        self._older: tuple[dict[str, float], ...] = ({}, {}, {})
        self._generation_end = -inf
        self.stats = stats  # clock_clients (offsets ≠ 0 by reason), clock_offsets (histogram)

    def restart(self) -> None:
        """No clock, no window, no edge: the warm-up's records are sampled again (realigned by
        their applications' clocks, collector/clock/application_clock.py)."""
        self.now = -inf
        self.watermark = -inf
        # A record stamped within [low, high] fits the stream as it is: offset 0, no judging.
        self.low = inf
        self.high = -inf
        # How far apart the last RECENT standing queries are: in a sparse stream the next
        # record is simply that much later, not ahead (0 until a block is seen: dense).
        self.spread = 0.0
        self._slack = self.tolerance  # how far past the edge a record is taken as stamped
        self._recent.clear()
        # The edge: the newest query of the last one or two blocks of RECENT queries (O(1)).
        self._block = 0
        self._block_max = -inf
        self._edge = -inf
        self._window.clear()
        self._voices.clear()
        self._ordered.clear()

    def read(self) -> None:
        """Read the clock from a window that is not full (a realigned warm-up whose samples
        moved by a few milliseconds), when it has not been read yet."""
        if self.now == -inf and self.provisional:
            self.advance(bulk_percentile(self._ordered, self._ceiling(), self.max_ahead))

    def _ceiling(self) -> float:
        """Past the wall clock by more than ``max_ahead``: no record of a stream is stamped
        there while most of the window is not (a burst of records from the future, all
        sampled when stamped in whole seconds, is a third of a warm-up's window)."""
        return self.wall_clock() + self.max_ahead

    # -- the clock -------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return len(self._window) >= WINDOW

    @property
    def provisional(self) -> bool:
        """Enough samples to judge the records held in the warm-up against (``at_arrival``),
        should the input end or go idle before the window fills."""
        return len(self._window) >= PROVISIONAL // 4

    def note_query(self, ts: float) -> None:
        """A query's time (stamped by a search server) for the front, the edge and the
        spread (read once a block: O(1) per query)."""
        self._recent.append(ts)
        if ts > self._block_max:
            self._block_max = ts
            if ts > self._edge:
                self._edge = ts
                self.high = max(self.now, ts) + self._slack
        self._block += 1
        if self._block == RECENT:  # the older block's outliers are forgotten
            self._edge, self._block_max, self._block = self._block_max, -inf, 0
            recent = self._recent
            self.spread = max(recent) - min(recent)
            self._slack = max(self.tolerance, self.spread)
            self.high = max(self.now, self._edge) + self._slack

    def sample(self, ts: float, client: str | None) -> None:
        """A record's raw stamp whose milliseconds are ≡ 0 (mod 8), and its client: into the
        window. The clock is read when the window first fills and then when they are ≡ 0
        (mod 128), a sixteenth of the samples (by content, so a replay reads it at the same
        records)."""
        ordered = self._ordered
        insort(ordered, ts)
        window = self._window
        window.append(ts)
        self._voices.append(client)
        if len(window) > WINDOW:
            del ordered[bisect_left(ordered, window.popleft())]
            self._voices.popleft()
        if len(window) == WINDOW and (not int(ts * 1000.0) & _READ_MASK or self.now == -inf):
            self.advance(bulk_percentile(ordered, self._ceiling(), self.max_ahead))

    def advance(self, now: float) -> bool:
        """Move the clock (never back): from the window, or without records (an idle source,
        end of input)."""
        if now <= self.now:
            return False
        self.now = now
        watermark = now - self.lateness
        self.watermark = floor(watermark * TICKS) / TICKS if watermark < inf else inf
        self.low = now - min(self.tolerance, self.lateness)
        self.high = max(now, self._edge) + self._slack
        if now > self._generation_end:
            self._rotate()
        return True

    def active_clients(self, since: float) -> int:
        """Distinct clients of the samples stamped from ``since`` on: who is active where the
        stream is (at most ``WINDOW``; a sparse stream has few)."""
        return len({client for ts, client in zip(self._window, self._voices, strict=True)
                    if ts >= since and client is not None})

    def median(self) -> float:
        """The window's median: whether most of the stream is past the wall clock (a log
        dated ahead) or not (a burst from the future is not); -inf before there are
        ``PROVISIONAL`` samples past the wall clock (a few dozen records from the future among
        a stream's first ones are not a stream dated ahead)."""
        ordered = self._ordered
        return ordered[len(ordered) // 2] if ordered and dated_ahead(ordered, self._ceiling()) \
            else -inf

    @property
    def edge(self) -> float:
        """Where the stream has got to: the newest standing query of the last block or two."""
        return max(self.now, self._edge)

    def reference(self) -> Reference:
        now = self.now
        return Reference(now, max(now, self._edge))

    def reach(self) -> float:
        """How far ahead a record may be stamped before it is judged ahead of the stream."""
        return max(self.now, self._edge) + max(self.max_ahead, self.spread)

    def event_reach(self) -> float:
        """How far ahead an event may be stamped before it is judged ahead of the stream (of
        its search's time, which is where the stream is or behind it)."""
        return max(self.now, self._edge) + max(self.tolerance, self.spread)

    def current(self, ts: float, at: Reference | None = None) -> bool:
        """A record stamped where the stream has got to (within the tolerance of its edge):
        a vote on the held records. A late or redelivered one says nothing of where the
        stream is now."""
        return ts >= (at.edge if at is not None else max(self.now, self._edge)) - self.tolerance

    def _front(self, now: float) -> float:
        """Where a record arriving now belongs: the upper quartile of the recent queries
        (arriving now, a record is as recent as the newest of them, not as their middle;
        robust to a quarter of them stamped ahead)."""
        recent = sorted(self._recent)
        return max(now, recent[len(recent) * 3 // 4]) if recent else now

    def at_arrival(self) -> Reference | None:
        """For a record held in the warm-up: the median of the last (at most ``PROVISIONAL``)
        samples; None before ``PROVISIONAL // 4`` samples, when one client's burst could still
        be their majority."""
        window = self._window
        n = len(window)
        if n < PROVISIONAL // 4:
            return None
        recent = sorted(window[i] for i in range(max(0, n - PROVISIONAL), n))
        now, last = recent[len(recent) // 2], len(recent) - 1
        edge = max(now, self._edge)
        # how far apart the recent samples are, robustly (their quartiles' distance: a sixth
        # of them an hour ahead do not make a dense stream sparse)
        spread = recent[last * 3 // 4] - recent[last // 4]
        return Reference(now, edge, self._front(now), edge + max(self.max_ahead, spread))

    def start_of_stream(self) -> Reference:
        """For the first held records, before ``at_arrival`` had enough samples: Tukey's
        upper fence of the whole window (third quartile + 1.5 × the quartiles' distance,
        robust to a quarter of outliers, wide in a sparse stream), moving a record to the
        first quartile; or, when the window goes on past that fence in steps of at most the
        tolerance (_continued), its edge is the last sample so reached. Nothing is behind the
        start of a stream: what came first may be followed by a lull of any length."""
        ordered = below(self._ordered, self._ceiling())
        if not ordered:
            return NO_CLOCK
        last = len(ordered) - 1
        low, high = ordered[last // 4], ordered[last * 3 // 4]
        fence = high + 1.5 * (high - low)
        return Reference(-inf, max(fence - self.max_ahead,
                                   continued(ordered, fence, self.tolerance)), low)

    def after_start(self, start: Reference, before: list[float]) -> Reference:
        """``start_of_stream`` for a record that arrived after others (``before``: their
        stamps, in order): once there are ``EARLY`` of them, it is behind when stamped more
        than the tolerance before their median, and is moved to their 90th percentile (where
        they have got to) — a lull after the first records is a lull after all of them, while
        a record stamped hours before the records that arrived before it is its client's
        clock."""
        n = len(before)
        fence = start.edge + self.max_ahead  # the whole window's: past it is not the stream
        if n < EARLY or before[n // 2] > fence:  # (a burst ahead made most of them)
            return start
        return Reference(before[n // 2], start.edge, min(before[(n - 1) * 9 // 10], fence))

    # -- client offsets --------------------------------------------------------------------
    # Only clocks found off are kept: a record that fits the stream as stamped ([low, high])
    # needs no lookup, and a client whose offset a record contradicts is reverted (``revise``).
    def offset(self, kind: int, client: str) -> float | None:
        """The offset kept for ``client``'s records of ``kind`` (for two generations), else
        None: not judged, or judged 0 and not worth keeping."""
        found = self._offsets[kind].get(client)
        if found is None:
            found = self._older[kind].pop(client, None)
            if found is not None:
                self._offsets[kind][client] = found
        return found

    def judge(self, kind: int, client: str, ts: float,
              search: tuple[float, float] | None = None, at: Reference | None = None
              ) -> tuple[float, str]:
        """The offset of a record whose client has none yet and which does not fit the
        stream as stamped, and why (``search``: the (time, attribution end) of the search an
        event names, if seen; ``at``: what to judge against, by default the stream now).
        ``AHEAD`` may be the stream that moved, not the client: the engine holds such a
        record on probation (collector/clock/probation.py) before it ``keep``s the offset."""
        return self._judge(kind, client, ts, search, at or self.reference())

    def keep(self, kind: int, client: str, offset: float, reason: str) -> float:
        """Apply a judged offset to the client's later records of ``kind``."""
        if reason:
            self.stats.clock_clients[reason] += 1
            self.stats.clock_offsets.observe(abs(offset))
        if offset or client in self._offsets[_LEAD]:  # a lead: its 0 is a decision too
            self._offsets[kind][client] = offset
            self.skewed.add(client)
        return offset

    def rejudge(self, kind: int, client: str, ts: float) -> float:
        """A client's offset that would put its record behind the watermark was decided where
        the stream front lagged (a sparse stream's median query is minutes back): moved again
        to where the stream is now, so that none of its records is lost for it."""
        offset = ts - self._front(self.now)
        self._offsets[kind][client] = offset
        self.stats.clock_clients[BEHIND] += 1
        self.stats.clock_offsets.observe(abs(offset))
        return offset

    def revise(self, kind: int, client: str, ts: float, offset: float,
               search: tuple[float, float] | None, at: Reference | None = None) -> float:
        """A non-zero offset that does not explain this record while its stamp does came from
        a poison first record: the client's clock is right after all (judged against ``at``,
        the warm-up's clock at its arrival, or the stream now)."""
        ref = at or self.reference()
        if self._fits(ts - offset, search, ref, client) or not self._fits(ts, search, ref,
                                                                           client):
            return offset
        del self._offsets[kind][client]
        self._older[1 - kind].pop(client, None)
        if client not in self._offsets[1 - kind]:
            self.skewed.discard(client)
        self.stats.clock_clients[REVISED] += 1
        return 0.0

    def _judge(self, kind: int, client: str, ts: float, search: tuple[float, float] | None,
               ref: Reference) -> tuple[float, str]:
        """(offset, reason) of a client's first record of a kind, judged against ``ref``, in
        this order: its other clock's offset when that explains it and its stamp does not;
        an event by its search's window (_judge_by_search); any other record behind the
        stream, ahead of its edge, or (an event of a search not seen yet) ahead of its
        client's queries; else on time (a query may then set how far its client's events
        may lead, _note_lead)."""
        if ref.edge == -inf:  # no clock at all: nothing to judge against
            return 0.0, ""
        other = self.offset(1 - kind, client)
        if (other is not None and self._fits(ts - other, search, ref, client)
                and not self._fits(ts, search, ref, client)):  # its other clock explains it
            return other, ""
        if search is not None:
            return self._judge_by_search(client, ts, search, ref)
        if ts < ref.now - self.tolerance:
            return ts - self._moved_to(ref), BEHIND
        spread = self.spread
        if ts > ref.edge + max(self.max_ahead, spread):
            return ts - self._moved_to(ref), AHEAD
        if kind and ts > (ref.edge + self._offsets[_LEAD].get(client, 0.0)
                          + max(self.tolerance, spread)):
            return ts - self._moved_to(ref), EVENT_AHEAD  # its search not seen yet
        if not kind:
            self._note_lead(client, ts, ref)
        return 0.0, ""

    def _judge_by_search(self, client: str, ts: float, search: tuple[float, float],
                         ref: Reference) -> tuple[float, str]:
        """An event whose search was seen is judged against that search's window: its
        client's query offset if that explains it, else the offset that puts it where the
        stream has reached inside the window — ahead (the stream may be there too, a sparse
        one) when it is later than that and its client's queries are on time."""
        query_offset = self.offset(0, client) or 0.0
        if self._fits(ts - query_offset, search, ref, client):
            return query_offset, EVENT_VS_SEARCH if query_offset else ""
        start, end = search
        offset = ts - min(max(self._moved_to(ref), start), end)
        if ts >= start and not query_offset:
            return offset, EVENT_AHEAD
        return offset, EVENT_VS_SEARCH

    def _note_lead(self, client: str, ts: float, ref: Reference) -> None:
        """A query ahead of the typical recent query, within bounds, while the recent queries
        are closer together than that (in a sparse stream the next query is simply later):
        its client's events may run as far ahead."""
        lead = ts - self._moved_to(ref)
        if lead > self.tolerance and lead > self.spread:
            self._offsets[_LEAD][client] = lead

    def fits(self, ts: float, at: Reference) -> bool:
        """A query stamped where the stream is by ``at`` (the warm-up's clock at its arrival):
        from the tolerance before it to its reach. Only those say where the edge is and how
        far apart queries are: a sixth of the queries an hour ahead must not."""
        return at.now - self.tolerance <= ts <= at.reach

    def _moved_to(self, ref: Reference) -> float:
        return ref.front if ref.front is not None else self._front(ref.now)

    def _fits(self, ts: float, search: tuple[float, float] | None, ref: Reference,
              client: str) -> bool:
        """An event inside its search's window and no further ahead than its client's queries
        run; any other record between the clock and ``max_ahead`` past the edge."""
        if search is not None:
            start, end = search
            if not start <= ts <= end:
                return False
            edge = ref.edge + self._offsets[_LEAD].get(client, 0.0)
            # its own search the newest query: nothing later says where the stream is, and a
            # click a minute after its search is a slow one (twice the tolerance)
            slack = 2 * self.tolerance if start >= ref.edge else self.tolerance
            return ts <= max(edge, start) + max(slack, self.spread)
        return ref.now - self.tolerance <= ts <= ref.edge + max(self.max_ahead, self.spread)

    def _rotate(self) -> None:
        """Forget the offsets of clients not seen for two generations (bounded memory). The
        current dicts keep their identity: the engine holds them."""
        for current, older in zip(self._offsets, self._older, strict=True):
            older.clear()
            older.update(current)
            current.clear()
        self.skewed.clear()
        for older in self._older:
            self.skewed.update(older)
        self._generation_end = self.now + self.generation
