"""Where the bulk of a window of sampled record times lies: the stream clock's percentile of
it, read past the records that are not the stream (a burst from the future, an application an
hour ahead, clients off by days each by their own amount) — the window's arithmetic, apart from
the clock that keeps the window (stream_clock.py)."""

from __future__ import annotations

from bisect import bisect_right
from itertools import pairwise
from math import inf

PROVISIONAL = 64  # samples a record held in the warm-up is judged against


def continued(ordered: list[float], fence: float, step: float) -> float:
    """The last sample reached from those up to ``fence`` through samples at most ``step``
    apart: a stream that thins out after a busy start (a crowd, then one bot every few
    seconds) goes on past the quartiles' fence, while a burst ahead (a clock minutes to years
    off) is a jump that a few clients' scattered stamps do not bridge."""
    i = bisect_right(ordered, fence)
    while 0 < i < len(ordered) and ordered[i] - ordered[i - 1] <= step:
        i += 1
    return ordered[i - 1] if i else fence


def below(ordered: list[float], ceiling: float) -> list[float]:
    """The samples up to ``ceiling`` (the wall clock's), unless the stream is dated past it
    (``_dated_ahead``: a synthetic log, its own stream); none, when all of a few are past it
    (a burst from the future before any other record was sampled)."""
    if not ordered or ordered[-1] <= ceiling or dated_ahead(ordered, ceiling):
        return ordered
    return ordered[:bisect_right(ordered, ceiling)]


def dated_ahead(ordered: list[float], ceiling: float) -> bool:
    """Most of the samples past ``ceiling``, and ``PROVISIONAL`` of them at least: a stream
    dated ahead, not a burst from the future among a stream's first records (a burst stamped
    in whole seconds is all sampled: dozens at most)."""
    n = len(ordered)
    return ordered[n // 2] > ceiling and n - bisect_right(ordered, ceiling) >= PROVISIONAL


def bulk_percentile(ordered: list[float], ceiling: float, gap: float) -> float:
    """The 90th percentile of the window's bulk: of the samples within Tukey's upper fence
    (third quartile + 1.5 × the quartiles' distance) and the wall clock's ceiling. Samples
    further ahead — an application an hour ahead making a sixth of the records, in the warm-up
    where every stamp is sampled — are not the stream, whatever their share up to a quarter
    (past the wall clock: up to a half); a stream that did move (a lull's end) is a quarter of
    the window a few dozen samples later."""
    ordered = below(ordered, ceiling)
    if not ordered:
        return -inf  # only a burst from the future so far: no clock yet
    last = len(ordered) - 1
    if ordered[last] - ordered[0] > gap:  # more than one cluster, maybe: the latest bulk
        ordered = latest_bulk(ordered, gap)
        last = len(ordered) - 1
    low, high = ordered[last // 4], ordered[last * 3 // 4]
    fence = high + 1.5 * (high - low)
    if ordered[last] <= fence:  # the common case: no sample past the fence
        return ordered[last * 9 // 10]
    return ordered[(bisect_right(ordered, fence) - 1) * 9 // 10]


def latest_bulk(ordered: list[float], gap: float) -> list[float]:
    """The latest run of samples no two neighbours of which are further apart than ``gap``
    (or ten times the window's lower-quartile gap, in a sparse stream) that holds a quarter
    of them: a stream's own records are close together, clients off by days each by their
    own amount are not — a majority of them leaves the bulk of right clocks a run of its
    own. None holds a quarter (a sparse stream's sessions): the whole window."""
    gaps = [b - a for a, b in pairwise(ordered)]
    split = max(gap, 10 * sorted(gaps)[len(gaps) // 4])
    quarter = len(ordered) // 4
    end = len(ordered)
    for i in range(len(gaps) - 1, -2, -1):
        if i < 0 or gaps[i] > split:
            if end - (i + 1) >= quarter:
                return ordered[i + 1:end]
            end = i + 1
    return ordered
