"""The collector engine: raw record → decode → event-time order → sessions → quality counts.

Every source (file replay, simulator, Kafka) feeds ``Engine.process`` one record at a time and
calls ``close`` at the end of input. The engine owns no I/O beyond the dead-letter sink.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from heapq import heappop, heappush
from math import inf

from collector import accounting as acc
from collector.config import Config
from collector.deadletter import DeadLetterSink, DiscardWithCount
from collector.events import MISSING_QUERY_ID, NOT_QUERY_OR_EVENT, Rejected, decode, event_time
from collector.ordering import EventTimeBuffer
from collector.pii import PiiScrubber
from collector.quality import SeriesTable, reset_series
from collector.query_stats import QueryStats
from collector.sessions import ACTIONS, Sessionizer
from collector.strata import StrataClassifier
from collector.view import View
from collector.zero_result_queries import TopZeroResultQueries

_RELEASE_EVERY = 63  # release ready records every 64 arrivals (and at the end of each call):
# the order of application is the same, one call of _release serves many records
LATE = "late"
ORPHAN = "orphan"
MAX_FUTURE_S = 3600.0  # a record stamped further ahead of the wall clock is rejected


class Engine:
    """Turns UBI records into search-quality counts. Not thread-safe: one feeding thread."""

    def __init__(
        self,
        config: Config,
        dead_letters: DeadLetterSink | None = None,
        clock: Callable[[], float] = time.time,
        max_future_s: float = MAX_FUTURE_S,
        query_stats: QueryStats | None = None,
    ) -> None:
        self.config = config
        self.dead_letters = dead_letters or DiscardWithCount()
        self.clock = clock
        self.max_future_s = max_future_s
        self.stats = acc.PipelineStats()
        self.table = SeriesTable(config["labels.application_cap"], config["labels.variant_cap"],
                                 config["metrics.latency_guardrail_s"])
        self.strata = StrataClassifier.from_config(config)
        self.sessions = Sessionizer(
            self.table, self.strata, self.stats,
            reformulation_s=config["windows.reformulation_s"],
            abandonment_s=config["windows.abandonment_s"],
            attribution_s=config["windows.attribution_s"],
            position_base=config["events.position_base"],
            zero_result_queries=TopZeroResultQueries(
                k=config["top_queries.size"], window_s=config["top_queries.window_s"],
                scrubber=PiiScrubber(config["pii.patterns"])),
            query_stats=query_stats,
        )
        self.buffer = EventTimeBuffer(config["ordering.lateness_s"])
        self.closed = False

    def process(self, raw: bytes) -> None:
        """Apply one raw record. Never raises for bad input: it is counted and dead-lettered."""
        self.process_all((raw,))

    def process_all(self, raws: Iterable[bytes]) -> None:
        """Apply records in arrival order. The hot path: names used per record are locals."""
        stats = self.stats
        records = stats.records
        buffer = self.buffer
        heap = buffer.heap
        arrival = buffer.arrival
        lateness = buffer.lateness
        actions = ACTIONS
        latest = self.clock() + self.max_future_s
        for n, raw in enumerate(raws):
            kind = acc.UNKNOWN
            try:
                rec = decode(raw)
                if rec.action_name is not None:
                    kind = acc.EVENT
                    if rec.query_id is None or rec.action_name not in actions:
                        stats.ignored[acc.NO_QUERY_ID if rec.query_id is None
                                      else acc.UNUSED_ACTION] += 1
                        records[kind][acc.IGNORED] += 1
                        continue
                elif rec.user_query is not None:
                    kind = acc.QUERY
                    if rec.query_id is None:
                        raise Rejected(MISSING_QUERY_ID, "a query record needs query_id")
                else:
                    raise Rejected(NOT_QUERY_OR_EVENT, "neither action_name nor user_query")
                if not n & 0xFFFF:
                    latest = self.clock() + self.max_future_s
                ts = event_time(rec, latest)
            except Rejected as rejected:
                records[kind][acc.INVALID] += 1
                stats.invalid[rejected.reason] += 1
                self._dead_letter(raw, rejected.reason, rejected.detail)
                continue
            if ts < buffer.watermark:
                self._apply_late(kind, rec, ts, raw)
                continue
            heappush(heap, (ts, kind, rec.query_id, raw, next(arrival), rec))
            if ts > buffer.newest:
                buffer.newest = ts
                buffer.watermark = ts - lateness
            if not n & _RELEASE_EVERY:
                self._release()
        self._release()

    def advance_watermark(self, watermark: float) -> None:
        """Let time pass without records (an idle source): decide what is due before it."""
        if self.buffer.advance(watermark):
            self._release()

    def close(self) -> None:
        """End of input: apply every buffered record and decide every pending outcome."""
        self.advance_watermark(inf)
        self.closed = True

    def reset_counts(self) -> None:
        """Forget what was counted, keep every open session: after a replay that rebuilt state
        from records already counted elsewhere (see docs/delivery.md)."""
        for series in self.table.series:
            reset_series(series)
        self.stats.reset()
        self.table.application.folded = self.table.variant.folded = 0

    def view(self) -> View:
        """The live counts and state gauges, for exposition (no copy)."""
        buffer, sessions = self.buffer, self.sessions
        newest = max(buffer.newest, 0.0)
        return View(
            series=list(self.table.series),
            stats=self.stats,
            folded={c.name: c.folded for c in (self.table.application, self.table.variant)},
            gauges={
                "last_event_timestamp_seconds": newest,
                "watermark_timestamp_seconds": newest if self.closed
                else max(buffer.watermark, 0.0),
                "open_sessions": len(sessions.sessions),
                "pending_searches": sessions.pending,
                "tracked_searches": len(sessions.searches),
                "buffered_records": len(buffer),
            },
            top_queries=sessions.zero_result_queries.top(newest),
        )

    def _release(self) -> None:
        """Apply, in order, every buffered record older than the watermark."""
        buffer = self.buffer
        heap = buffer.heap
        watermark = buffer.watermark
        sessions = self.sessions
        on_query, on_event = sessions.on_query, sessions.on_event
        records = self.stats.records
        query, orphan = acc.QUERY, acc.ORPHAN
        while heap and heap[0][0] < watermark:
            ts, kind, _, raw, _, rec = heappop(heap)
            if ts > sessions.next_deadline:
                sessions.expire_before(ts)
            if kind == query:
                outcome = on_query(rec, ts)
            else:
                outcome = on_event(rec, ts)
                if outcome == orphan:
                    self._dead_letter(raw, ORPHAN, f"no tracked search {rec.query_id!r}")
            records[kind][outcome] += 1
        if watermark > sessions.next_deadline:
            sessions.expire_before(watermark)

    def _apply_late(self, kind: int, rec, ts: float, raw: bytes) -> None:
        """Late records are applied only while their search is still attributable."""
        self._release()  # its search may still be waiting in the buffer
        outcome = self.sessions.on_event(rec, ts) if kind == acc.EVENT else acc.ORPHAN
        if outcome == acc.DUPLICATE:
            self.stats.records[kind][acc.DUPLICATE] += 1
            return
        self.stats.records[kind][acc.LATE] += 1
        if outcome == acc.ORPHAN:
            self.stats.data_quality[acc.LATE_NOT_APPLIED] += 1
            self._dead_letter(raw, LATE, f"{self.buffer.watermark - ts:.3f}s behind the watermark")

    def _dead_letter(self, raw: bytes, reason: str, detail: str) -> None:
        self.stats.dead_lettered[reason] += 1
        self.dead_letters.write(raw, reason, detail)
