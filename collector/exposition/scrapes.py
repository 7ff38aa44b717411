"""Scrapes through event time: what /metrics would have shown at every scrape of a replayed log.

A live collector is scraped every ``interval`` seconds of the wall clock; a replay has no wall
clock, only the stream's own time (the stream clock's edge: the newest query that stands as
stamped, which no bad device clock moves). The scrape due at ``t`` (a multiple of ``interval``
in Unix time, plus ``phase``: the backtest puts its scrapes where its rules are evaluated)
renders the exposition
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
                 scrape: Callable[[float, bytes], None], phase: float = 0.0) -> None:
        if not interval > 0:
            raise ValueError(f"a scrape interval must be > 0 s, got {interval!r}")
        self.engine = engine
        self.render = render
        self.interval = interval
        self.scrape = scrape
        self.phase = phase % interval
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
            self.next = ceil((edge - self.phase) / self.interval)
        if edge < self._time(self.next):
            return
        exposition = self.render()
        while self._time(self.next) <= edge:
            self.scrape(self._time(self.next), exposition)
            self.next += 1

    def _time(self, number: int) -> float:
        """The time of scrape ``number``: the interval's multiple, shifted by the phase (to
        the millisecond Prometheus keeps)."""
        return round(number * self.interval + self.phase, 3)

    def finish(self) -> None:
        """The closed engine's final counts at the next scrape time (none if the stream never
        had a time: no record stood as stamped)."""
        if self.next is not None:
            self.scrape(self._time(self.next), self.render())
