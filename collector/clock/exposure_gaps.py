"""How long after its search an exposure is stamped: a client's event clock, read from its own
events against its searches.

A device stamps its events with its own clock, the search server its queries. Against the
stream, an event clock off by less than ``ordering.clock_tolerance_s`` (or, in a sparse stream,
by less than its spread) cannot be told from a slow click — and an event clock that is off is
placed where the stream was when it arrived, seconds from its true time. An exposure (UBI's
``impression``: the results as shown) is different: it is written as its search's results are
rendered, so its stamp minus its search's is the same for every client — a fraction of a second
on the simulator — whatever the stream does. So the engine keeps the **typical gap** of the
exposures that stand as stamped (the median of the last ``SAMPLES``, one per search), and an
exposure further from it than ``max(tolerance / 2,
3 × the gaps' interquartile range)`` has its client's event clock judged by it: off by its gap −
the typical one, exactly (docs/architecture.md, "Time"). Front ends that write exposures lazily
(as they scroll into view) spread the gaps, and the margin with them.
"""

from __future__ import annotations

from collections import deque
from math import inf

SAMPLES = 64  # sampled exposure gaps (one per search) the typical gap is the median of
MIN_SAMPLES = 16  # before this many, no exposure is judged by its gap
_EVERY = 8  # the typical gap is read again every this many samples


class ExposureGaps:
    """The typical gap between a search and its exposures, and the band around it within
    which an exposure stands as stamped (``low``, ``high``: read on the hot path)."""

    __slots__ = ("tolerance", "low", "high", "typical", "last", "_gaps", "_seen")

    def __init__(self, tolerance: float) -> None:
        self.tolerance = tolerance
        self.low = -inf
        self.high = inf
        self.typical: float | None = None
        self._gaps: deque[float] = deque(maxlen=SAMPLES)
        self._seen = 0
        self.last: str | None = None  # the search of the last sample

    def sample(self, search: str, gap: float) -> None:
        """An exposure that stood as stamped, ``gap`` seconds after its search (the engine
        samples one per search: a search's exposures are stamped alike)."""
        self.last = search
        self._gaps.append(gap)
        self._seen += 1
        if self._seen >= MIN_SAMPLES and not self._seen % _EVERY:
            ordered = sorted(self._gaps)
            n = len(ordered)
            self.typical = ordered[n // 2]
            margin = max(self.tolerance / 2,
                         3 * (ordered[(n - 1) * 3 // 4] - ordered[(n - 1) // 4]))
            self.low, self.high = self.typical - margin, self.typical + margin

    def offset(self, gap: float) -> float | None:
        """How far off an exposure ``gap`` seconds after its search is (0.0: within the
        band), or None while the typical gap is not known."""
        if self.typical is None:
            return None
        return 0.0 if self.low <= gap <= self.high else gap - self.typical
