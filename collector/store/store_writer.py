"""When per-query aggregates go to the store, on which thread, and what happens while the store
is away.

Rows are flushed every ``store.flush_interval_s``, or sooner once ``store.flush_rows`` rows are
pending (the engines' memory bound), and at the end of input. A flush drains the engines' rows
(Kafka: one engine per partition, each a *source*) and hands them, with the offsets or input
positions they cover, to one writer thread that writes them in one transaction: the database
work (sqlite3 and psycopg release the GIL while the database runs) overlaps the engine's. At
most one write is in flight; while the store answers, the next flush waits for it.

While the store is away (a write or a connection failed: PostgreSQL stopped, a SQLite file
locked by another process) nothing is dropped and nothing waits for it. Each flush's rows join
the rows waiting, per source; ``store.max_waiting_rows`` of them stay in memory, the rest are
spilled to local files (collector/store/spill.py). The store is opened anew and the write tried
again with backoff (``_FIRST_RETRY_S`` doubling to ``_LAST_RETRY_S``, at most a flush
interval), logged once when the outage begins and once when it ends. The write that lands holds
every waiting row, spilled ones included, and the newest positions, in one transaction: the
store's positions move only with the rows they cover. A source given up (a revoked partition)
has its waiting rows dropped with its positions: the store's own positions say where its next
owner starts. If the spill cannot be written either, the rows stay in memory and ``full`` tells
the reader to stop reading until the store or the spill takes them (docs/delivery.md).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from collector import definitions as d
from collector.errors import StoreError, StoreUnavailable
from collector.privacy.redaction import redact
from collector.store.query_stats import Key, QueryRow, QueryStats, merge_rows
from collector.store.query_store import (
    InputMark,
    Offsets,
    QueryStore,
    TopicIds,
    open_store,
)
from collector.store.spill import Segment

if TYPE_CHECKING:  # a type only: the stage below it imports nothing above
    from collector.config import Config

log = logging.getLogger(__name__)
_FIRST_RETRY_S = 1.0  # after the first failure, the store is tried again this soon …
_LAST_RETRY_S = 30.0  # … doubling up to this (or the flush interval, if shorter)
Rows = dict[Key, QueryRow]


@dataclass
class _Outage:
    since: float  # the clock at the first failure
    attempts: int = 1


class StoreWriter:
    def __init__(self, url: str, interval_s: float, max_rows: int, shown_depth: int = 10,
                 retention_days: int = 0, max_waiting_rows: int = 200_000,
                 spill_dir: str = "", clock: Callable[[], float] = time.monotonic,
                 opener: Callable[..., QueryStore] = open_store) -> None:
        """Opens the store at once; one that does not answer (StoreUnavailable) is an outage
        from the start, tried again like a failed write. A URL or driver that cannot work
        (StoreError) raises."""
        self.url = url
        self.interval_s = interval_s
        self.max_rows = max_rows
        self.shown_depth = shown_depth
        self.max_waiting_rows = max_waiting_rows
        self.spill_dir = spill_dir or None  # None: the system's temporary directory
        self.clock = clock
        self._open = lambda: opener(url, shown_depth, retention_days=retention_days)
        self.next_flush = clock() + interval_s
        self.flushes = self.failures = self.rows_written = self.spill_failures = 0
        self.store: QueryStore | None = None
        self.outage: _Outage | None = None
        self._reopen = False  # the connection failed: open the store anew before using it
        self._retry_at = 0.0
        self._delay = min(_FIRST_RETRY_S, interval_s)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        # run on the writer thread before each write: a replay's lock re-asserted
        # (replay_lock.ReplayLock.keep); StoreError stops the writes, StoreUnavailable waits
        self.guard: Callable[[], None] | None = None
        self._inflight: Future[int] | None = None
        self._ids = itertools.count()
        self._sources: dict[Hashable, int] = {}  # source → its id (a new one once given up)
        self._pending: dict[int, Rows] = {}  # per source id: rows no write holds yet
        self._batch: dict[int, Rows] = {}  # per source id: the rows of the write in flight
        self._segments: list[Segment] = []  # spills not in the store yet, oldest first
        self._batch_segments: list[Segment] = []  # those the write in flight holds
        self._offsets: Offsets = {}  # newest positions of every live Kafka source
        self._group = ""
        self._topic_ids: TopicIds = {}  # topic → its Kafka topic id, where known
        self._inputs: list[InputMark] = []  # newest positions of a replay's inputs
        self._dirty = False  # positions or rows no write holds yet
        self._memory = self._in_flight = self.spilled = 0  # rows, for /metrics
        self._spill_failing = False
        self._spilled_this_outage = False
        try:
            self.store = self._open()
        except StoreUnavailable as error:
            self._unavailable(error)

    @classmethod
    def from_config(cls, config: Config, url: str | None = None) -> StoreWriter | None:
        """The writer of ``url`` (default: ``store.url``), or None when no store is set."""
        url = url or config["store.url"]
        if not url:
            return None
        return cls(url, config["store.flush_interval_s"], config["store.flush_rows"],
                   config["store.shown_depth"], config["store.retention_days"],
                   config["store.max_waiting_rows"], config["store.spill_dir"])

    def new_stats(self) -> QueryStats:
        return QueryStats(self.shown_depth)

    def due(self, stats: Iterable[QueryStats]) -> bool:
        return (self.clock() >= self.next_flush
                or sum(len(s.rows) for s in stats) >= self.max_rows)

    # -- flushing ---------------------------------------------------------------------------
    def flush(self, stats: Mapping[Hashable, QueryStats], offsets: Offsets | None = None,
              group: str = "", wait: bool = False, inputs: list[InputMark] | None = None,
              topic_ids: TopicIds | None = None) -> bool:
        """Drain every source's rows (``stats`` by source: for Kafka the partition, the key
        of its ``offsets``) and write them, with every row still waiting and the newest
        offsets (with their topics' ids) or input positions, in one transaction on the writer
        thread — now, or once the store's backoff allows while it is away. ``wait``: until
        that write is done, whatever the backoff (one attempt). Returns False when the write
        collected (or, with ``wait``, this one) failed: its rows wait, and the next write
        covers them."""
        ok = self.settle(block=self.outage is None)
        for source, source_stats in stats.items():
            rows = source_stats.drain()
            if rows:
                sid = self._source_id(source)
                waiting = self._pending.get(sid)
                self._pending[sid] = rows if waiting is None else merge_rows(waiting, rows)
        if offsets:
            self._offsets.update(offsets)
            self._group = group
        if topic_ids:
            self._topic_ids.update(topic_ids)
        if inputs is not None:
            self._inputs = inputs
        self._dirty = True
        self._spill_if_over()
        now = self.clock()
        self.next_flush = now + self.interval_s
        if wait:
            return self.write_all() and ok
        if self._inflight is None and now >= self._retry_at:
            self._submit()
        elif self.outage is not None:
            self.next_flush = min(self.next_flush, self._retry_at)
        self._count()
        return ok

    def write_all(self, timeout_s: float = 0.0) -> bool:
        """Everything waiting written now (after the write in flight); while the store is
        away, tried again with its backoff for at most ``timeout_s``. True once it is all in
        the store."""
        deadline = self.clock() + timeout_s
        while True:
            ok = self.settle()
            if ok and not (self._dirty or self._pending or self._segments):
                return True
            self._submit()
            if self.settle():
                return True
            if self._retry_at > deadline:
                return False
            time.sleep(max(0.0, self._retry_at - self.clock()))

    def settle(self, block: bool = True) -> bool:
        """Collect the write in flight (waiting for it, unless ``block`` is False and it is
        still running); False if it failed."""
        inflight = self._inflight
        if inflight is None or not (block or inflight.done()):
            return True
        self._inflight = None
        batch, self._batch = self._batch, {}
        segments, self._batch_segments = self._batch_segments, []
        try:
            written = inflight.result()
        except StoreUnavailable as error:
            live = set(self._sources.values())
            for sid, rows in batch.items():  # back among the waiting rows (not if given up)
                if sid in live:
                    self._pending[sid] = merge_rows(rows, self._pending.get(sid, {}))
            self._dirty = True
            self._unavailable(error)
            self._spill_if_over()
            self._count()
            return False
        self.flushes += 1
        self.rows_written += written
        for segment in segments:
            segment.close()
        self._segments = [s for s in self._segments if s not in segments]
        if self.outage is not None:
            log.warning("store %s is back after %.1f s (%d failed attempts): the %d rows "
                        "waiting are written", self.url_shown, self.clock() - self.outage.since,
                        self.outage.attempts, written)
            self.outage = None
            self._spilled_this_outage = False
        self._delay = min(_FIRST_RETRY_S, self.interval_s)
        self._retry_at = 0.0
        self._count()
        return True

    def _submit(self) -> None:
        """Hand every waiting row (memory and spill) and the newest positions to the writer
        thread, as one transaction."""
        batch, self._pending = self._pending, {}
        self._batch = batch
        self._batch_segments = list(self._segments)
        live = frozenset(self._sources.values())
        self._inflight = self._thread.submit(
            self._write, [rows for sid, rows in batch.items() if sid in live],
            self._batch_segments, live, dict(self._offsets), self._group, list(self._inputs),
            dict(self._topic_ids))
        self._dirty = False
        self._count()

    def _write(self, batch: list[Rows], segments: list[Segment], live: frozenset[int],
               offsets: Offsets, group: str, inputs: list[InputMark],
               topic_ids: TopicIds) -> int:
        """On the writer thread: the store (opened anew after a failure), then one
        transaction; returns the rows written."""
        if self.store is None or self._reopen:
            self._reopen_store()
        if self.guard is not None:
            self.guard()
        merged = _merged(batch)
        if not segments:  # the normal path: no outage
            self.store.add(merged, offsets or None, group, inputs, topic_ids)
            return len(merged)
        spilled = sum(n for segment in segments for sid, n in segment.per_source.items()
                      if sid in live)

        def rows() -> Iterator[tuple[Key, QueryRow]]:
            try:
                for segment in segments:
                    yield from segment.read(live)
            except (OSError, msgspec.DecodeError) as error:
                raise StoreError(f"spilled rows cannot be read back ({error}): the store's "
                                 "positions did not move; a restart counts them again from "
                                 "there") from None
            yield from merged

        self.store.add(rows(), offsets or None, group, inputs, topic_ids)
        return spilled + len(merged)

    def _reopen_store(self) -> None:
        """A new connection (and the schema checked): what a stopped PostgreSQL, restarted,
        needs; a locked SQLite file gets a fresh one too."""
        if self.store is not None:
            store, self.store = self.store, None
            with contextlib.suppress(*store.errors):  # a broken connection is gone anyway
                store.close()
        self.store = self._open()
        self._reopen = False

    def _unavailable(self, error: StoreUnavailable) -> None:
        """The store failed a write, a read or a connection: note the outage (logged once),
        open it anew next time, try again after the backoff."""
        now = self.clock()
        self.failures += 1
        self._reopen = True
        if self.outage is None:
            self.outage = _Outage(now)
            log.warning("%s — the store is away: its rows wait (%d in memory at most, then "
                        "spilled to %s) and it is tried again with backoff", error,
                        self.max_waiting_rows, self.spill_dir or "the temporary directory")
        else:
            self.outage.attempts += 1
            log.debug("store still away: %s", error)
        self._retry_at = now + self._delay
        self._delay = min(self._delay * 2, _LAST_RETRY_S, max(self.interval_s, _FIRST_RETRY_S))
        self.next_flush = min(self.next_flush, self._retry_at)

    # -- rows waiting: in memory, then spilled -----------------------------------------------
    def _source_id(self, source: Hashable) -> int:
        sid = self._sources.get(source)
        if sid is None:
            sid = self._sources[source] = next(self._ids)
        return sid

    def forget(self, source: Hashable) -> None:
        """A source given up (a revoked partition): its waiting rows and its positions are
        dropped; the store's own say where its next owner starts (nothing counted twice)."""
        sid = self._sources.pop(source, None)
        if sid is not None:
            self._pending.pop(sid, None)
        self._offsets.pop(source, None)  # type: ignore[call-overload]
        self._count()

    def _spill_if_over(self) -> None:
        """Past ``max_waiting_rows`` in memory while the store is away: the rows no write
        holds go to a new spill segment. One that cannot be written is counted and logged
        (once per outage); its rows stay in memory (``full``)."""
        if (self.outage is None or not self._pending
                or self._memory_rows() <= self.max_waiting_rows):
            return
        pending = self._pending
        try:
            segment = Segment(self.spill_dir, ((sid, key, row) for sid, rows in pending.items()
                                               for key, row in rows.items()))
        except OSError as error:
            self.spill_failures += 1
            if not self._spill_failing:
                log.error("store.spill_dir %s: cannot spill %d waiting rows (%s): they stay "
                          "in memory, and reading stops at store.max_waiting_rows (%d) until "
                          "the store or the spill takes them",
                          self.spill_dir or "(the temporary directory)",
                          sum(len(rows) for rows in pending.values()), error,
                          self.max_waiting_rows)
            self._spill_failing = True
            return
        if self._spill_failing:
            log.warning("store.spill_dir: spilling works again")
        self._spill_failing = False
        self._segments.append(segment)
        self._pending = {}
        if not self._spilled_this_outage:
            self._spilled_this_outage = True
            log.warning("store away: waiting rows beyond store.max_waiting_rows (%d) are "
                        "spilled to %s", self.max_waiting_rows,
                        self.spill_dir or "the temporary directory")

    def _memory_rows(self) -> int:
        return (sum(len(rows) for rows in self._pending.values())
                + sum(len(rows) for rows in self._batch.values()))

    def _count(self) -> None:
        """The rows waiting, by where they are (read by /metrics from another thread)."""
        live = set(self._sources.values())
        self._memory = sum(len(rows) for sid, rows in self._pending.items() if sid in live)
        self._in_flight = sum(len(rows) for sid, rows in self._batch.items() if sid in live)
        self.spilled = sum(n for segment in self._segments
                           for sid, n in segment.per_source.items() if sid in live)

    @property
    def full(self) -> bool:
        """The store away, the spill failing and memory at its bound: stop reading."""
        return self._spill_failing and self._memory_rows() >= self.max_waiting_rows

    def _landed(self) -> bool:
        inflight = self._inflight
        return inflight is not None and inflight.done() and inflight.exception() is None

    @property
    def waiting(self) -> int:
        """Per-query rows not in the store yet: in the write in flight (until it lands), in
        memory, spilled."""
        return self._memory + (0 if self._landed() else self._in_flight) + self.spilled

    @property
    def away_s(self) -> float:
        """Seconds since the current outage began; 0 while the store takes writes."""
        outage = self.outage
        return 0.0 if outage is None or self._landed() else self.clock() - outage.since

    @property
    def url_shown(self) -> str:
        return redact(self.url)

    # -- reads ------------------------------------------------------------------------------
    def retry_due(self) -> bool:
        """Whether the store may be tried (again) now: always while it answers."""
        return self.outage is None or self.clock() >= self._retry_at

    def _ready(self) -> QueryStore:
        """The store, once the write in flight has landed, opened anew if it failed; raises
        StoreUnavailable (noted as an outage)."""
        self.settle()
        try:
            if self.store is None or self._reopen:
                self._reopen_store()
        except StoreUnavailable as error:
            self._unavailable(error)
            raise
        return self.store

    def _read(self, read: Callable[[QueryStore], object]) -> object:
        store = self._ready()
        try:
            return read(store)
        except StoreUnavailable as error:
            self._unavailable(error)
            raise

    def offsets(self, group: str) -> Offsets:
        """The stored offsets, once the write in flight (if any) has landed; raises
        StoreUnavailable while the store is away."""
        return self._read(lambda store: store.offsets(group))  # type: ignore[return-value]

    def topic_ids(self, group: str) -> dict[tuple[str, int], str]:
        """The topic ids of the stored offsets, once the write in flight has landed; raises
        StoreUnavailable while the store is away."""
        return self._read(lambda store: store.topic_ids(group))  # type: ignore[return-value]

    def inputs(self) -> dict[str, InputMark]:
        """How far replays got in the inputs the store holds (replay_progress.py)."""
        return self._read(lambda store: store.inputs())  # type: ignore[return-value]

    def record_start(self, group: str, source: tuple[str, int], start: int,
                     topic_ids: TopicIds | None = None) -> tuple[int, int]:
        """For a partition the store holds nothing of: it counts it from ``start`` on, and
        records (start, start) now, with its topic's id (nothing before is, or will be, in
        it); raises StoreUnavailable."""
        self._read(lambda store: store.add((), {source: (start, start)}, group,
                                           topic_ids=topic_ids))
        if source in self._offsets:  # rows of a topic gone (created again) still waiting:
            self._offsets[source] = (start, start)  # written with the new topic's start
        if topic_ids:
            self._topic_ids.update(topic_ids)
        return start, start

    def connect(self) -> None:
        """The store opened now, or StoreUnavailable (replay's start: nothing is read
        before it answers)."""
        self._ready()

    def close(self) -> None:
        self.settle()
        self._thread.shutdown()
        for segment in self._segments:
            segment.close()
        self._segments = []
        if self.store is not None:
            self.store.close()


def _merged(sources: list[Rows]) -> Collection[tuple[Key, QueryRow]]:
    """The rows of several sources, one per key: the same query of another partition is
    added into a copy (the sources' rows stay as they were, to wait again if the write
    fails)."""
    if len(sources) <= 1:
        return sources[0].items() if sources else ()
    merged: Rows = {}
    copied: set[Key] = set()
    for rows in sources:
        for key, row in rows.items():
            mine = merged.get(key)
            if mine is None:
                merged[key] = row
                continue
            if key not in copied:
                copied.add(key)
                mine = merged[key] = _copy(mine)
            mine.add(row)
    return merged.items()


def _copy(row: QueryRow) -> QueryRow:
    """A row whose counts and item dicts ``QueryRow.add`` may change without touching
    ``row``'s."""
    return msgspec.structs.replace(
        row, reformulations=dict(row.reformulations),
        clicked_documents=dict(row.clicked_documents), clients=dict(row.clients),
        shown=dict(row.shown), shown_at=dict(row.shown_at), clicked_at=dict(row.clicked_at))


class StoreHealthCollector(Collector):
    """The writer's health on /metrics: a store that stops accepting flushes must page
    someone before the topic's retention runs out (alert SearchpulseStoreFlushFailing)."""

    def __init__(self, writer: StoreWriter) -> None:
        self.writer = writer

    def collect(self) -> Iterable[Metric]:
        writer = self.writer
        for family, value in ((d.STORE_FLUSHES, writer.flushes),
                              (d.STORE_FLUSH_FAILURES, writer.failures),
                              (d.STORE_ROWS_WRITTEN, writer.rows_written),
                              (d.STORE_ROWS_WAITING, writer.waiting),
                              (d.STORE_ROWS_SPILLED, writer.spilled),
                              (d.STORE_SPILL_FAILURES, writer.spill_failures),
                              (d.STORE_AWAY_SECONDS, writer.away_s)):
            yield family.metric(value)
