"""When per-query aggregates go to the store, and on which thread.

Rows are flushed every ``store.flush_interval_s``, or sooner once ``store.flush_rows`` rows are
pending (the memory bound), and at the end of input. A flush drains the engines' rows (Kafka:
one engine per partition) and hands them, with the offsets they cover, to one writer thread that
writes them in one transaction: the database work (sqlite3 and psycopg release the GIL while the
database runs) overlaps the engine's. At most one flush is in flight; the next one waits for it.
A failed write loses nothing: its rows are merged into the next flush and written again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from collector import definitions as d
from collector.errors import StoreError
from collector.store.query_stats import Key, QueryRow, QueryStats, merge_rows
from collector.store.query_store import (
    InputMark,
    Offsets,
    QueryStore,
    TopicIds,
    open_store,
)

if TYPE_CHECKING:  # a type only: the stage below it imports nothing above
    from collector.config import Config

log = logging.getLogger(__name__)


class StoreWriter:
    def __init__(self, store: QueryStore, interval_s: float, max_rows: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.interval_s = interval_s
        self.max_rows = max_rows
        self.clock = clock
        self.next_flush = clock() + interval_s
        self.flushes = self.failures = self.rows_written = 0
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        self._inflight: Future[None] | None = None
        self._batch: dict[Key, QueryRow] = {}  # rows of the write in flight
        self._retry: dict[Key, QueryRow] = {}  # rows of a failed write, for the next one

    @classmethod
    def from_config(cls, config: Config, url: str | None = None) -> StoreWriter | None:
        """The writer of ``url`` (default: ``store.url``), or None when no store is set."""
        url = url or config["store.url"]
        if not url:
            return None
        return cls(open_store(url, config["store.shown_depth"],
                              retention_days=config["store.retention_days"]),
                   config["store.flush_interval_s"], config["store.flush_rows"])

    def new_stats(self) -> QueryStats:
        return QueryStats(self.store.items_per_flush["shown"])

    def due(self, stats: list[QueryStats]) -> bool:
        return (self.clock() >= self.next_flush
                or sum(len(s.rows) for s in stats) >= self.max_rows)

    def flush(self, stats: list[QueryStats], offsets: Offsets | None = None, group: str = "",
              wait: bool = False, inputs: list[InputMark] | None = None,
              topic_ids: TopicIds | None = None) -> bool:
        """Drain every pending row and write it (with the offsets or input positions it
        covers, the offsets with their topics' ids) in one transaction on the writer thread.
        Returns False when the previous write, or this one with ``wait``, failed (its rows
        wait for the next flush; the next flush's positions cover them)."""
        ok = self.settle()
        self.next_flush = self.clock() + self.interval_s
        batch = self._retry
        self._retry = {}
        for s in stats:
            merge_rows(batch, s.drain())
        self._batch = batch
        self._inflight = self._thread.submit(self.store.add, batch.items(), offsets, group,
                                             inputs or (), topic_ids)
        return self.settle() and ok if wait else ok

    def settle(self) -> bool:
        """Wait for the write in flight; False if it failed."""
        if self._inflight is None:
            return True
        inflight, self._inflight = self._inflight, None
        batch, self._batch = self._batch, {}
        try:
            inflight.result()
        except StoreError as error:
            self.failures += 1
            log.warning("flush of %d per-query rows failed, will retry: %s", len(batch), error)
            self._retry = merge_rows(batch, self._retry)
            return False
        self.flushes += 1
        self.rows_written += len(batch)
        return True

    @property
    def waiting(self) -> dict[Key, QueryRow]:
        """Rows of a failed write, waiting for the next flush."""
        return self._retry

    def offsets(self, group: str) -> Offsets:
        """The stored offsets, once the write in flight (if any) has landed."""
        self.settle()
        return self.store.offsets(group)

    def topic_ids(self, group: str) -> dict[tuple[str, int], str]:
        """The topic ids of the stored offsets, once the write in flight has landed."""
        self.settle()
        return self.store.topic_ids(group)

    def close(self) -> None:
        self.settle()
        self._thread.shutdown()
        self.store.close()


class StoreHealthCollector(Collector):
    """The writer's health on /metrics: a store that stops accepting flushes must page
    someone before the topic's retention runs out (alert SearchpulseStoreFlushFailing)."""

    def __init__(self, writer: StoreWriter) -> None:
        self.writer = writer

    def collect(self) -> Iterable[Metric]:
        writer = self.writer
        for family, value in ((d.STORE_FLUSHES, writer.flushes),
                              (d.STORE_FLUSH_FAILURES, writer.failures),
                              (d.STORE_ROWS_WRITTEN, writer.rows_written)):
            yield family.metric(value)
        yield d.STORE_ROWS_WAITING.metric(len(writer.waiting))
