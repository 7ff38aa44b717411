"""Which clients are automated: crawlers, synthetic monitors, headless load tests.

A client (its ``client_id``, else its session) is judged at the decision of each of its
searches (``windows.abandonment_s`` after it) on its intents in the last ``window_s`` of event
time up to then — so a client is judged on what it did after a search too, and a crawler is
found from its first search (docs/metrics.md, "Automated traffic"):

  * ``declared``: its client id matches one of ``automated.client_patterns``;
  * ``rate``: at least ``max_searches`` intents in the window, fewer than one in ten of them
    with an interaction (click, conversion, next page): people who search that fast click;
  * ``repetitive``: at least ``max_repeats`` intents that repeat one of its previous
    ``RECENT`` queries, making at least half of its intents, at regular intervals (a
    schedule's: ``REGULAR_CV``), and it never interacted (click, conversion, next page) while
    it has been remembered;
  * ``silent``: at least ``max_silent`` intents with results, and it never interacted.

A client matching ``automated.human_client_patterns`` is never automated. Once automated, a
client stays so while it keeps searching: its state is forgotten ``window_s`` after its last
search (and the oldest beyond ``max_clients``: a memory bound).

The hot path is ``searched`` (one per query record): a dict lookup and a list append.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Sequence

import msgspec
import re2

from collector.outcomes import DECLARED, RATE, REPETITIVE, SILENT

RECENT = 4  # a repeat is a query equal to one of the client's last four
# Intervals whose coefficient of variation is at most this are a schedule's (a monitor's runs
# jittered by a few seconds: ~0.03); people's are irregular (~1).
REGULAR_CV = 0.25


Times = tuple[float, ...]  # event times, oldest first, at most ``keep`` of them


class ClientBehaviour(msgspec.Struct, gc=False):
    """One client's recent intents. gc=False, as ``sessions.Search``, and no container the
    cyclic GC keeps tracking: tuples of numbers, replaced when they grow (at most ``keep``
    items), which the GC untracks once it has seen them; a million clients cost it nothing.
    Most clients search once or twice: what only a few need is created on first use."""

    key: str
    last: float  # its newest intent's time
    queued: float  # when its expiry is next checked
    times: Times  # its intents' times
    recent: tuple[int, ...]  # hashes of its last RECENT normalized queries
    zero: Times = ()  # times of its zero-result intents
    repeats: Times = ()  # times of intents that repeated a recent query
    interactions: Times = ()  # times of its clicks, conversions, next pages
    reason: str | None = None  # why it is automated, once it is
    human: bool = False  # declared human: never automated


class AutomatedClients:
    """Tracks each client's intents and judges it (module docstring)."""

    def __init__(self, window_s: float = 600.0, max_searches: int = 30, max_repeats: int = 4,
                 max_silent: int = 15, client_patterns: Sequence[str] = (),
                 human_client_patterns: Sequence[str] = (), max_clients: int = 1_000_000
                 ) -> None:
        self.window_s = window_s
        self.max_searches = max_searches
        self.max_repeats = max_repeats
        self.max_silent = max_silent
        self.max_clients = max_clients
        self.keep = max(max_searches, max_silent)  # no rule needs more intents than this
        self.fewest = min(max_searches, max_repeats, max_silent)  # fewer: no rule can hold
        self.declared = _patterns(client_patterns)
        self.humans = _patterns(human_client_patterns)
        self.clients: dict[str, ClientBehaviour] = {}
        self.queue: deque[ClientBehaviour] = deque()

    def searched(self, key: str, normalized: str, ts: float, with_results: bool
                 ) -> ClientBehaviour:
        """A query record of client ``key`` at ``ts``: an intent until ``retract`` says it was
        a keystroke. Returns the client's state, which its search keeps for its verdict. The
        hot path: a dict lookup and a few tuples of at most ``keep`` numbers."""
        client = self.clients.get(key)
        query = hash(normalized)
        if client is None:
            return self._admit(key, query, ts, with_results)
        keep = 1 - self.keep
        client.times = (*client.times[keep:], ts)
        client.last = ts
        if query in client.recent:
            client.repeats = (*client.repeats[keep:], ts)
        else:
            client.recent = (*client.recent[1 - RECENT:], query)
        if not with_results:
            client.zero = (*client.zero[keep:], ts)
        return client

    @staticmethod
    def retract(client: ClientBehaviour, normalized: str, ts: float) -> None:
        """The record at ``ts`` was a keystroke of the next one, not an intent: it is taken out
        of the rules' counts and of the recent queries (the newest entries: the next record
        has not been added yet)."""
        if client.times and client.times[-1] == ts:
            client.times = client.times[:-1]
        if client.zero and client.zero[-1] == ts:
            client.zero = client.zero[:-1]
        if client.repeats and client.repeats[-1] == ts:
            client.repeats = client.repeats[:-1]
        elif client.recent and client.recent[-1] == hash(normalized):
            client.recent = client.recent[:-1]

    def interaction(self, client: ClientBehaviour, ts: float) -> None:
        """A click, conversion or next page of one of the client's searches at ``ts``."""
        client.interactions = (*client.interactions[1 - self.keep:], ts)

    def verdict(self, client: ClientBehaviour | None, at: float) -> str | None:
        """Why ``client`` is automated at ``at`` (a search's decision), or None: the first
        rule that holds over its intents in ``(at − window_s, at]``; once automated, it stays."""
        if client is None or client.human:
            return None
        if client.reason is not None or len(client.times) < self.fewest:
            return client.reason
        since = at - self.window_s
        times = client.times
        first, last = bisect_right(times, since), bisect_right(times, at)
        intents = last - first
        interactions = client.interactions
        reason = None
        if (intents >= self.max_searches
                and 10 * _count(interactions, since, at) < intents):
            reason = RATE
        elif not interactions:  # never interacted while it has been remembered
            repeats = _count(client.repeats, since, at)
            if (repeats >= self.max_repeats and 2 * repeats >= intents
                    and _regular(times[first:last])):
                reason = REPETITIVE
            elif intents - _count(client.zero, since, at) >= self.max_silent:
                reason = SILENT
        client.reason = reason
        return reason

    def expire_before(self, t: float) -> None:
        """Forget the clients whose newest intent is older than ``t − window_s``."""
        horizon = t - self.window_s
        queue = self.queue
        while queue and queue[0].queued < horizon:
            client = queue.popleft()
            if client.last < horizon:
                if self.clients.get(client.key) is client:
                    del self.clients[client.key]
            else:  # active since it was queued: check again one window after its newest
                client.queued = client.last
                queue.append(client)

    def _admit(self, key: str, query: int, ts: float, with_results: bool) -> ClientBehaviour:
        """A client new to the window (declared automated or human by its id, when patterns
        are set); the oldest one is forgotten first beyond ``max_clients``."""
        client = self.clients[key] = ClientBehaviour(key, ts, ts, (ts,), (query,),
                                                      () if with_results else (ts,))
        self.queue.append(client)
        if self.humans is not None or self.declared is not None:
            self._declare(client)
        if len(self.clients) > self.max_clients:
            oldest = self.queue.popleft()
            if self.clients.get(oldest.key) is oldest:
                del self.clients[oldest.key]
        return client

    def _declare(self, client: ClientBehaviour) -> None:
        if self.humans is not None and self.humans.fullmatch(client.key):
            client.human = True
        elif self.declared is not None and self.declared.fullmatch(client.key):
            client.reason = DECLARED


def _patterns(patterns: Sequence[str]) -> re2._Regexp | None:
    """One RE2 alternation of ``patterns`` (linear time on any client id), None when empty."""
    return re2.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None


def _count(times: Times, since: float, at: float) -> int:
    """How many of sorted ``times`` are in ``(since, at]``."""
    return bisect_right(times, at) - bisect_right(times, since) if times else 0


def _regular(times: Times) -> bool:
    """Whether the intervals between ``times`` are a schedule's: their coefficient of
    variation is at most ``REGULAR_CV``."""
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    if len(gaps) < 2:
        return False
    mean = sum(gaps) / len(gaps)
    variance = sum((gap - mean) ** 2 for gap in gaps) / len(gaps)
    return mean > 0 and variance <= (REGULAR_CV * mean) ** 2
