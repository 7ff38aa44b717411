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

The hot path: one dict lookup and a few integer operations per decided search with results.
"""

from __future__ import annotations

WINDOW = 128  # the recent searches, as the bits of one integer
_MASK = (1 << WINDOW) - 1
BASELINE = 512  # searches the usual coverage averages over
WARMUP = 256  # searches before the usual coverage is trusted
MIN_USUAL = 0.2  # a front end whose events cover less is not judged (it sends few anyway)
RESTORED = 0.5  # the share of the usual coverage at which tracking counts as back


class Coverage:
    """One application's event coverage: its usual share, its recent searches, broken or not."""

    __slots__ = ("seen", "usual", "recent", "broken")

    def __init__(self) -> None:
        self.seen = 0
        self.usual = 0.0
        self.recent = 0  # a bit per recent search: 1 when it received an event
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
        before = coverage.recent
        recent = coverage.recent = (before << 1 | evented) & _MASK
        seen = coverage.seen = coverage.seen + 1
        share = recent.bit_count() / WINDOW
        if coverage.broken:
            if share >= RESTORED * coverage.usual:
                coverage.broken = False
            return not evented and coverage.broken
        if seen > WINDOW:  # the search leaving the recent window joins the usual coverage
            left = before >> (WINDOW - 1) & 1  # (a mean of the first ones, then an EWMA)
            coverage.usual += (left - coverage.usual) / min(seen - WINDOW, BASELINE)
        if (seen >= WARMUP and coverage.usual >= MIN_USUAL
                and share < self.untracked_below * coverage.usual):
            coverage.broken = True
            return not evented
        return False
