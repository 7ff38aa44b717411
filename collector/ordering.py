"""Event-time ordering within an allowed lateness, and the watermark that closes windows.

``watermark = newest event time seen − lateness``. A record older than the watermark is late.
Buffered records are released in (event time, queries before events, query_id, raw bytes) order
once they are strictly older than the watermark: no on-time record can still arrive before them.
Ties are broken by content, not arrival, so the result never depends on delivery order.
"""

from __future__ import annotations

from itertools import count
from typing import Any

NEVER = float("-inf")


class EventTimeBuffer:
    """The heap and the watermark; the engine pushes and pops inline (its hot path)."""

    __slots__ = ("lateness", "heap", "newest", "watermark", "arrival")

    def __init__(self, lateness: float) -> None:
        self.lateness = lateness
        self.heap: list[tuple[float, int, str, bytes, int, Any]] = []
        self.newest = NEVER
        self.watermark = NEVER
        self.arrival = count()  # last tie-break: identical records keep arrival order

    def advance(self, watermark: float) -> bool:
        """Move the watermark without a record (idle sources, end of input)."""
        if watermark > self.watermark:
            self.watermark = watermark
            return True
        return False

    def __len__(self) -> int:
        return len(self.heap)
