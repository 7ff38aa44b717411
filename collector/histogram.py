"""A histogram's counts as plain numbers: what the quality series (time to first click, click
position, latency) and the pipeline's own accounting (clock offsets) observe on the hot path,
written as exposition text at scrape. Below every stage: ingest and series both keep one."""

from __future__ import annotations

from bisect import bisect_left


class Buckets:
    """A histogram's per-bucket counts (not cumulative) and sum; the last bucket is +Inf."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    @property
    def count(self) -> int:
        return sum(self.counts)
