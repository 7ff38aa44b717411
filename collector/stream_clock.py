"""The stream's own clock, and each client's clock offset against it.

Device clocks are off by minutes to days as a matter of course, so neither the newest timestamp
nor the wall clock can say what time it is in the stream (a replay of last year's log is as valid
as live traffic). Two rules keep a minority of wrong clocks from hurting anyone else:

* **The stream clock** ``now`` is the 90th percentile of the last ``WINDOW`` sampled times of
  records that stand as stamped (a corrected record says nothing of the stream's time), and
  never goes back. A record is sampled when its time in milliseconds
  is a multiple of 4: by content, not by position, so a partition replayed from a checkpoint
  rebuilds the same window, whatever its batches. Records making up less than 10 % of that window —
  a few poison records, 5 % of clients with any offset — can neither advance it nor stall it,
  so they make no other client's record late. The watermark is ``now − lateness``. The
  stream's **front** (the newest time of the window and of the last ``RECENT`` records) is
  where a record arriving now belongs; it only judges new clients, so an outlier there loosens
  those judgments for as long as it stays in the window and harms no one.
* **Client offsets.** At the first record of each (client, kind) — queries are stamped by the
  search server, events by the device, so the two are judged apart — an offset is decided and
  then applied to every later record of that client and kind, which keeps the client's own
  windows (reformulation, abandonment, attribution) exact:

  - an event naming a search already seen keeps its client's query offset (the same clock)
    when that puts it inside the search's attribution window and no more than ``tolerance``
    ahead of both the stream clock and the search; otherwise (stamped before its search, or
    ahead of the stream) it is moved to where the stream clock says it arrived, but never
    before its search nor past its attribution window;
  - any other record: more than ``tolerance`` behind the clock, or more than ``max_ahead``
    ahead of the front, has its distance from the front as offset (it is moved to the time it
    arrived); any other, 0. Moving a whole client costs its own counts nothing: its windows
    are measured between its own records.

  A client within those bounds is left alone: it is applied in event-time order like any other.

Offsets are kept for clients seen within the last two ``generation`` spans of stream time.
Until the window is full there is no clock to judge against: the engine holds those records
(about 4 × ``WINDOW``) and judges them together once the clock exists; none of them is late.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque
from math import inf

from collector.accounting import PipelineStats

WINDOW = 256  # sampled record times the clock is the 90th percentile of
RECENT = 16  # the last records, sampled or not, that the front also covers
_SAMPLE_MASK = 3  # sampled: time in ms ≡ 0 (mod 4)
# Why a client's offset is not 0 (label values of searchpulse_clock_corrected_clients_total).
BEHIND = "behind_stream"
AHEAD = "ahead_of_stream"
EVENT_VS_SEARCH = "event_vs_search"


class StreamClock:
    __slots__ = ("lateness", "tolerance", "max_ahead", "generation", "now", "watermark",
                 "backlog", "_recent", "_window", "_ordered", "_offsets", "_older", "_generation_end", "stats")

    def __init__(self, lateness: float, tolerance: float, max_ahead: float,
                 generation: float, stats: PipelineStats) -> None:
        self.lateness = lateness
        self.tolerance = tolerance
        self.max_ahead = max_ahead
        self.generation = generation
        self.now = -inf
        self.watermark = -inf
        self._recent: deque[float] = deque(maxlen=RECENT)
        self.backlog = False  # judging records that arrived before the clock existed
        self._window: deque[float] = deque()
        self._ordered: list[float] = []
        self._offsets: tuple[dict[str, float], ...] = ({}, {})  # per kind: query, event
        self._older: tuple[dict[str, float], ...] = ({}, {})
        self._generation_end = -inf
        self.stats = stats  # clock_clients (offsets ≠ 0 by reason), clock_offsets (histogram)

    @property
    def ready(self) -> bool:
        return len(self._window) >= WINDOW

    def offsets_of(self, kind: int) -> dict[str, float]:
        """The current generation's offsets of one kind: the engine's per-record lookup."""
        return self._offsets[kind]

    def sample(self, ts: float) -> None:
        """Add one record time to the window if it is sampled; move the clock (never back)."""
        self._recent.append(ts)
        if int(ts * 1000.0) & _SAMPLE_MASK:
            return
        ordered = self._ordered
        insort(ordered, ts)
        window = self._window
        window.append(ts)
        if len(window) > WINDOW:
            del ordered[bisect_left(ordered, window.popleft())]
        if len(window) < WINDOW:
            return
        now = ordered[(len(ordered) - 1) * 9 // 10]
        if now > self.now:
            self.now = now
            self.watermark = now - self.lateness
            if now > self._generation_end:
                self._rotate()

    def advance(self, now: float) -> bool:
        """Move the clock without records (an idle source, end of input)."""
        if now > self.now:
            self.now = now
            self.watermark = now - self.lateness
            return True
        return False

    def decide(self, kind: int, client: str, ts: float,
               search: tuple[float, float] | None = None) -> float:
        """The offset of ``client``'s clock for records of ``kind``, decided at its first one
        (``search``: the (time, attribution end) of the search an event names, if seen)."""
        offset = self._older[kind].pop(client, None)
        if offset is None:
            if search is None:
                offset, reason = self._judge(ts)
            else:
                offset, reason = self._judge_event(ts, search, self.offset(0, client))
            self.stats.clock_offsets.observe(abs(offset))
            if reason:
                self.stats.clock_clients[reason] += 1
        self._offsets[kind][client] = offset
        return offset

    @property
    def front(self) -> float:
        """Where a record arriving now belongs (only new clients are judged against it)."""
        newest = self._ordered[-1] if self._ordered else -inf
        return max(newest, max(self._recent, default=-inf))

    def offset(self, kind: int, client: str) -> float:
        """The offset already decided for ``client`` and ``kind``, else 0."""
        found = self._offsets[kind].get(client)
        return found if found is not None else self._older[kind].get(client, 0.0)

    def _judge_event(self, ts: float, search: tuple[float, float],
                     query_offset: float) -> tuple[float, str]:
        start, end = search
        front = self.front
        same_clock = ts - query_offset
        if start <= same_clock <= end and same_clock <= max(front, start) + self.tolerance:
            return query_offset, EVENT_VS_SEARCH if query_offset else ""
        return ts - min(max(front, start), end), EVENT_VS_SEARCH

    def _judge(self, ts: float) -> tuple[float, str]:
        if self.now == -inf:  # no clock yet (a stream shorter than the warm-up): nothing to judge
            return 0.0, ""
        front = self.front
        if ts < self.now - self.tolerance and not self.backlog:
            return ts - front, BEHIND
        if ts > front + self.max_ahead:
            return ts - front, AHEAD
        return 0.0, ""

    def _rotate(self) -> None:
        """Forget the offsets of clients not seen for two generations (bounded memory). The
        current dicts keep their identity: the engine holds them."""
        for current, older in zip(self._offsets, self._older, strict=True):
            older.clear()
            older.update(current)
            current.clear()
        self._generation_end = self.now + self.generation
