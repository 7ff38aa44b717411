"""One assigned partition: its engine, its offsets, its replay state and its dead letters' sink."""

from __future__ import annotations

import time
from collections import deque

from collector.clock.stream_clock import SAMPLE_MASK, WINDOW
from collector.engine import Engine
from collector.exposition.view import View
from collector.ingest.events import OVERSIZED
from collector.sources.kafka.dead_letters import DeadLetterTopic
from collector.store.query_stats import QueryStats

Record = tuple[int, bytes | None, float | None]  # offset, value, arrival (Unix seconds)
_BUCKET_RECORDS = 5000  # offsets per safe-offset bucket: bounded memory, coarse safe offsets
# A replay from the safe offset must see enough records to rebuild the stream clock's window
# (WINDOW samples of about every (SAMPLE_MASK + 1)th record) before it reaches where this
# engine is: twice that many offsets.
_REPLAY_MARGIN = 2 * WINDOW * (SAMPLE_MASK + 1)


class PartitionEngine:
    """An engine for one partition, its offsets and its replay state: counters rebuilt before
    ``replay_until`` and per-query aggregates rebuilt before ``stats_until`` are already kept
    (in the checkpoint, in the store) and are dropped when the replay reaches them."""

    def __init__(self, engine: Engine, dead_letters: DeadLetterTopic, start: int,
                 replay_until: int | None, stats_until: int | None = None,
                 topic_id: str | None = None) -> None:
        self.engine = engine
        self.topic_id = topic_id  # the Kafka topic id of the topic it reads, where known
        self.dead_letters = dead_letters
        self.start = start
        self.next_offset = start
        self.replay_until = replay_until if replay_until and replay_until > start else None
        self.stats_until = stats_until if stats_until and stats_until > start else None
        dead_letters.muted = self.replay_until is not None
        self.buckets: deque[list[float]] = deque()  # [first offset, newest event time after]
        self.last_record = time.monotonic()
        self.checkpointed: View | None = None  # what this partition added at the last checkpoint

    @property
    def replaying(self) -> bool:
        return self.replay_until is not None or self.stats_until is not None

    @property
    def query_stats(self) -> QueryStats | None:
        return self.engine.query_stats

    def feed(self, records: list[Record], max_bytes: int) -> None:
        """Records as (offset, value, arrival): arrival in Unix seconds, None when its
        timestamp is not to be used (``kafka.record_timestamps``) or missing. A batch that
        a replay ends inside is fed in two (_split_at_replay_end); the engine gets the
        records it can decode (_values), then the offsets and the replay's end are noted."""
        if self._split_at_replay_end(records, max_bytes):
            return
        values, arrivals = self._values(records, max_bytes)
        self.engine.process_all(values, arrivals)
        self.last_record = time.monotonic()
        self._note_buffered(records[0][0])
        self._end_replays()

    def _split_at_replay_end(self, records: list[Record], max_bytes: int) -> bool:
        """A replay (of the counters, or of the store's aggregates) that ends inside this
        batch: the batch is fed in two, since what follows the end must be counted."""
        until = min((h for h in (self.replay_until, self.stats_until) if h is not None),
                    default=None)
        if until is None or not records[-1][0] >= until > records[0][0]:
            return False
        split = next(i for i, record in enumerate(records) if record[0] >= until)
        self.feed(records[:split], max_bytes)
        self.feed(records[split:], max_bytes)
        return True

    def _values(self, records: list[Record], max_bytes: int
                ) -> tuple[list[bytes], list[float] | None]:
        """The batch's values and their arrivals, for the engine: an empty or oversized
        value is rejected here (dead-lettered, counted); one record without an arrival
        makes the batch's records judged by their stamps alone (None)."""
        values = []
        arrivals: list[float] | None = []
        for offset, value, arrival in records:
            if value is None or len(value) > max_bytes:
                self._oversized(value)
            else:
                values.append(value)
                if arrivals is not None:
                    if arrival is None:
                        arrivals = None
                    else:
                        arrivals.append(arrival)
            self.next_offset = offset + 1
        return values, arrivals

    def _note_buffered(self, first: int) -> None:
        """Where the batch starting at offset ``first`` stands in event time: the newest time
        buffered, kept per bucket of offsets (safe_offset drops the buckets behind)."""
        newest = self.engine.buffered_until()
        if self.buckets and first - self.buckets[-1][0] < _BUCKET_RECORDS:
            self.buckets[-1][1] = newest
        else:
            self.buckets.append([first, newest])

    def _end_replays(self) -> None:
        """A replay past its end: the counters' effects are in the checkpointed counters
        (reset, dead letters no longer muted), the aggregates' in the store (drained)."""
        if self.replay_until is not None and self.next_offset >= self.replay_until:
            self.engine.reset_counts()  # those effects are in the checkpointed counters
            self.replay_until = None
            self.dead_letters.muted = False
        if self.stats_until is not None and self.next_offset >= self.stats_until:
            if self.query_stats is not None:
                self.query_stats.drain()  # those aggregates are in the store
            self.stats_until = None

    def _oversized(self, value: bytes | None) -> None:
        self.engine.reject(value or b"", OVERSIZED, f"{len(value or b'')} bytes")

    def safe_offset(self) -> int:
        """Every record before it is older than every window still open: its effects are
        final; and a replay from it rebuilds this engine's stream clock exactly (at least
        ``_REPLAY_MARGIN`` records back, or where this engine started). Buckets whose newest
        event time is behind that horizon are dropped."""
        horizon = self.engine.final_before()
        while len(self.buckets) > 1 and self.buckets[1][1] < horizon:
            self.buckets.popleft()
        if len(self.buckets) == 1 and self.buckets[0][1] < horizon:
            final = self.next_offset
        else:
            final = int(self.buckets[0][0]) if self.buckets else self.next_offset
        return min(final, max(self.start, self.next_offset - _REPLAY_MARGIN))
