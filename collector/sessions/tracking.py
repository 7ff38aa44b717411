"""Whether an application's front end is sending its events: broken tracking, counted apart.

A front end that stops sending events (a deploy that drops the click beacon, a consent banner,
an ad blocker) looks like people who stopped clicking. Each application's **event coverage** —
the share of its searches with results that received any event by their decision — is watched
over its last ``WINDOW`` decided searches against its own usual coverage (an average over the
``BASELINE`` searches before those, learned while its tracking works: the searches being judged
never pull the usual down with them, so an outage is judged against the coverage before it).
When the recent coverage falls below ``tracking.untracked_below`` of the usual one, a search
decided without any event is **untracked** (docs/metrics.md, "Tracking health"): it is a search
(its query record came), but what it led to is unknown — in no event-based rate's denominator
(the reformulation rate's too: whether it was clicked before the next intent is unknown), store
row or experiment statistic. Tracking counts as restored once the recent coverage is back at
half the usual.

The hot path: one dict lookup and a few small-integer operations per decided search with
results.
"""

from __future__ import annotations

WINDOW = 128  # the recent searches
BASELINE = 512  # searches the usual coverage averages over
WARMUP = 256  # searches before the usual coverage is trusted
MIN_USUAL = 0.2  # a front end whose events cover less is not judged (it sends few anyway)
RESTORED = 0.5  # the share of the usual coverage at which tracking counts as back


class Coverage:
    """One application's event coverage: its usual share, its recent searches, broken or not."""

    __slots__ = ("seen", "usual", "recent", "next", "covered", "broken")

    def __init__(self) -> None:
        self.seen = 0
        self.usual = 0.0
        # the recent searches, a ring of 1 (it received an event) or 0, oldest at ``next``:
        # small integers only (a 128-bit integer shifted per search is three allocations)
        self.recent = bytearray(WINDOW)
        self.next = 0
        self.covered = 0  # the 1s in ``recent``
        self.broken = False


class TrackingHealth:
    """Event coverage per application (module docstring); ``untracked_below`` 0 turns it off."""

    def __init__(self, untracked_below: float = 0.1) -> None:
        self.untracked_below = untracked_below
        self.applications: dict[str, Coverage] = {}

    def observe(self, application: str, evented: bool) -> bool:
        """A search with results of ``application`` reached its deadline, ``evented`` or not
        (in the order of the searches' times): whether it is untracked (its application's
        coverage has collapsed, and it received nothing)."""
        coverage = self.applications.get(application)
        if coverage is None:
            coverage = self.applications[application] = Coverage()
        recent, at = coverage.recent, coverage.next
        left = recent[at]  # the search leaving the recent window (0 while it is not full)
        recent[at] = evented
        coverage.next = at + 1 if at < WINDOW - 1 else 0
        covered = coverage.covered = coverage.covered + evented - left
        seen = coverage.seen = coverage.seen + 1
        if coverage.broken:
            if covered >= RESTORED * coverage.usual * WINDOW:
                coverage.broken = False
            return not evented and coverage.broken
        if seen <= WINDOW:
            return False  # (WARMUP is past WINDOW: not judged yet)
        # the search leaving the recent window joins the usual coverage (a mean of the first
        # ones, then an EWMA)
        joined = seen - WINDOW
        usual = coverage.usual = coverage.usual + (left - coverage.usual) / (
            joined if joined < BASELINE else BASELINE)
        if (seen >= WARMUP and usual >= MIN_USUAL
                and covered < self.untracked_below * usual * WINDOW):
            coverage.broken = True
            return not evented
        return False
