"""Scrapes through event time: what /metrics would have shown at every scrape of a replayed log.

A live collector is scraped every ``interval`` seconds of the wall clock; a replay has no wall
clock, only the stream's own time (the stream clock's edge: the newest query that stands as
stamped, which no bad device clock moves). The scrape due at ``t`` (a multiple of ``interval``
in Unix time, as Prometheus aligns a target's scrapes to its interval) renders the exposition
as it stands after the first records that take the stream's edge past ``t``. Records are fed in
chunks of ``CHUNK`` (so a scrape sees at most that many records past its time); feeding a batch
in chunks applies the same records in the same order and changes no count (the engine releases
what the watermark allows after every call, as it does every 64 records). A lull spans several
scrapes showing the same counts, as the collector's own /metrics would until its next record.
After the end of input (the engine closed, every search decided), one last scrape at the next
multiple of ``interval`` shows the final counts (those of ``--metrics-out``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from math import ceil, inf
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: exposition reads the engine, never imports it
    from collector.engine import Engine

CHUNK = 64
# alerts/prometheus.yml scrapes and evaluates every 15 s (the generated groups set no interval)
SCRAPE_INTERVAL_S = 15.0


class EventTimeScrapes:
    """``process(batches)`` feeds the engine (replay.feed's ``process``) and calls
    ``scrape(t, exposition)`` at every scrape due; ``finish()`` after the engine is closed."""

    def __init__(self, engine: Engine, render: Callable[[], bytes], interval: float,
                 scrape: Callable[[float, bytes], None]) -> None:
        if not interval > 0:
            raise ValueError(f"a scrape interval must be > 0 s, got {interval!r}")
        self.engine = engine
        self.render = render
        self.interval = interval
        self.scrape = scrape
        self.next: int | None = None  # the next scrape's number (its time ÷ interval)

    def process(self, batches: Iterator[list[bytes]]) -> None:
        process_all, due = self.engine.process_all, self._due
        for batch in batches:
            for start in range(0, len(batch), CHUNK):
                process_all(batch[start:start + CHUNK])
                due()

    def _due(self) -> None:
        edge = self.engine.clock.edge
        if edge == -inf:  # the stream clock warms up: no time yet
            return
        if self.next is None:  # the first scrape: where the stream's time begins
            self.next = ceil(edge / self.interval)
        if edge < self.next * self.interval:
            return
        exposition = self.render()
        while self.next * self.interval <= edge:
            self.scrape(self.next * self.interval, exposition)
            self.next += 1

    def finish(self) -> None:
        """The closed engine's final counts at the next scrape time (none if the stream never
        had a time: no record stood as stamped)."""
        if self.next is not None:
            self.scrape(self.next * self.interval, self.render())
