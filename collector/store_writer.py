"""When per-query aggregates go to the store: every ``store.flush_interval_s``, or sooner once
``store.flush_rows`` rows are pending (the memory bound), and at the end of input.

A flush writes the rows of one or more engines (Kafka: one per partition) in one transaction and
only then starts them afresh, so a failed flush loses nothing: it is retried with more rows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from collector.config import Config
from collector.query_stats import QueryStats
from collector.query_store import Offsets, QueryStore, StoreError, open_store

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

    @classmethod
    def from_config(cls, config: Config, url: str | None = None) -> StoreWriter | None:
        """The writer of ``url`` (default: ``store.url``), or None when no store is set."""
        url = url or config["store.url"]
        if not url:
            return None
        return cls(open_store(url, config["store.shown_depth"]),
                   config["store.flush_interval_s"], config["store.flush_rows"])

    def new_stats(self) -> QueryStats:
        return QueryStats(self.store.items_per_flush["shown"])

    def due(self, stats: list[QueryStats]) -> bool:
        return (self.clock() >= self.next_flush
                or sum(len(s.rows) for s in stats) >= self.max_rows)

    def flush(self, stats: list[QueryStats], offsets: Offsets | None = None,
              group: str = "") -> bool:
        """Write every pending row (and the offsets they cover) in one transaction."""
        self.next_flush = self.clock() + self.interval_s
        rows = [item for s in stats for item in s.rows.items()]
        try:
            self.store.add(rows, offsets, group)
        except StoreError as error:
            self.failures += 1
            log.warning("flush of %d per-query rows failed, will retry: %s", len(rows), error)
            return False
        for s in stats:
            s.drain()
        self.flushes += 1
        self.rows_written += len(rows)
        return True

    def close(self) -> None:
        self.store.close()
