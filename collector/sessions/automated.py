"""Which clients are automated: crawlers, synthetic monitors, headless load tests.

A client (its ``client_id``, else its session) is judged at the decision of each of its
searches (``windows.abandonment_s`` after it) on its intents in the last ``window_s`` of event
time up to then — so a client is judged on what it did after a search too, and a crawler is
found from its first search (docs/metrics.md, "Automated traffic"):

  * ``declared``: its client id matches one of ``automated.client_patterns``;

and, for a client that never acted on one of its searches (a click, a conversion, a next page:
crawlers, monitors and headless fleets never interact, people do):

  * ``rate``: at least ``max_searches`` intents in the window;
  * ``repetitive``: at least ``max_repeats`` intents that repeat one of the ``RECENT`` queries
    before them, making at least half of its intents, at regular intervals (a schedule's:
    ``REGULAR_CV``);
  * ``silent``: at least ``max_silent`` intents with results.

So a search acted on is a person's (unless its client is declared, or was found automated
before): the sessionizer counts it at once, without holding what it receives.

A client matching ``automated.human_client_patterns`` is never automated. Once automated, a
client stays so while it keeps searching: its state is forgotten ``window_s`` after its last
search (and the oldest beyond ``max_clients``: a memory bound of tracked clients; one seen once
is a dict entry for a search the sessionizer tracks anyway).

A client's state is its newest query records themselves (at most ``keep``, keystrokes taken
out as they are found): what the rules read — a record's time, query, whether it had results,
whether the user acted on it — is on the record (sessions/search.py). Most clients search once
or twice, and no rule reads one record: a client seen once is only its record in ``clients``,
tracked from its second. The hot path is ``searched`` (one per query record): one dict
operation for a new client, a tuple of at most ``keep`` records for a tracked one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from math import inf

import msgspec
import re2

from collector.outcomes import DECLARED, RATE, REPETITIVE, SILENT
from collector.sessions.search import ACTED, KEYSTROKE, ZERO_RESULT, Search, Watch

RECENT = 4  # a repeat is a query equal to one of the client's four intents before it
# Intervals whose coefficient of variation is at most this are a schedule's (a monitor's runs
# jittered by a few seconds: ~0.03); people's are irregular (~1).
REGULAR_CV = 0.25


class ClientBehaviour(msgspec.Struct, gc=False):
    """One client's newest query records. gc=False, as ``Search``: no cycle (a search does
    not point back at its client), and its tuple of searches is untracked by the cyclic GC
    once it has seen it."""

    key: str
    last: float  # its newest record's time
    queued: float  # when its expiry is next checked
    searches: tuple[Search, ...]  # its newest records, oldest first, at most ``keep``
    watch: Watch  # on once it has ``fewest`` records or a reason: its verdicts are read
    reason: str | None = None  # why it is automated, once it is
    human: bool = False  # declared human: never automated


class AutomatedClients:
    """Tracks each client's newest records and judges it (module docstring)."""

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
        # fewer records than this: no rule can hold (a repeat needs a query before it)
        self.fewest = min(max_searches, max_repeats + 1, max_silent)
        self.declared = _patterns(client_patterns)
        self.humans = _patterns(human_client_patterns)
        # a client seen once in the window: its record; from its second, its state
        self.clients: dict[str, ClientBehaviour | Search] = {}
        self.queue: deque[ClientBehaviour] = deque()  # tracked clients, to expire
        self.next_expiry = inf  # the earliest time a tracked client may be forgotten
        self.next_sweep = -inf  # the next sweep of the clients seen once
        self.patterned = self.declared is not None or self.humans is not None

    def searched(self, key: str, search: Search) -> None:
        """A query record of client ``key``: one of its intents, until ``retract`` says it was
        a keystroke. A tracked client's searches keep its watch, for their decisions."""
        found = self.clients.setdefault(key, search)
        if found is search:  # its first record: remembered, unless its id is to be checked
            if self.patterned:  # (a record kept is one the sessionizer holds anyway: no bound)
                self._track(key, search, None)
        elif found.__class__ is ClientBehaviour:
            searches = found.searches
            searches = found.searches = (searches + (search,) if len(searches) < self.keep
                                         else (*searches[1 - self.keep:], search))
            found.last = search.ts
            search.watch = watch = found.watch
            if len(searches) >= self.fewest:
                watch.on = True
        else:  # its second record
            self._track(key, search, found)

    def _track(self, key: str, search: Search, first: Search | None) -> None:
        """A client's state from its second record in the window (or its first, with ids to
        check against the patterns); the oldest tracked client forgotten beyond
        ``max_clients``."""
        searches = (search,) if first is None or first.ts < search.ts - self.window_s else (
            first, search)
        watch = Watch(len(searches) >= self.fewest,
                      first is not None and bool(first.flags & ACTED))
        for each in searches:
            each.watch = watch
        client = self.clients[key] = ClientBehaviour(key, search.ts, search.ts, searches,
                                                      watch)
        if not self.queue:
            self.next_expiry = search.ts + self.window_s
        self.queue.append(client)
        if self.patterned:
            self._declare(client)
        if len(self.clients) > self.max_clients:
            self._forget_oldest()

    def retract(self, key: str, search: Search) -> None:
        """``search`` was a keystroke of the next record, not an intent: it makes room (among
        the newest: a client's other sessions may have added theirs since)."""
        found = self.clients.get(key)
        if found is search:
            del self.clients[key]
        elif found.__class__ is ClientBehaviour:
            searches = found.searches
            for i in range(len(searches) - 1, -1, -1):
                if searches[i] is search:
                    found.searches = searches[:i] + searches[i + 1:]
                    return

    def verdict(self, key: str, at: float) -> str | None:
        """Why client ``key`` is automated at ``at`` (a search's decision), or None: the first
        rule that holds over its intents in ``(at − window_s, at]``; once automated, it stays.
        Called for clients whose watch is on (records enough, never acted on one)."""
        client = self.clients.get(key)
        if client.__class__ is not ClientBehaviour or client.human:
            return None
        if client.reason is not None or client.watch.acted:
            return client.reason
        since = at - self.window_s
        intents = [s for s in client.searches
                   if since < s.ts <= at and not s.flags & KEYSTROKE]
        reason = None
        if len(intents) >= self.max_searches:
            reason = RATE
        elif _repetitive(intents, self.max_repeats):
            reason = REPETITIVE
        elif sum(1 for s in intents if not s.flags & ZERO_RESULT) >= self.max_silent:
            reason = SILENT
        client.reason = reason
        return reason

    def expire_before(self, t: float) -> None:
        """Forget the clients whose newest record is older than ``t − window_s``: the tracked
        ones when due (``next_expiry``: callers skip the call before), those seen once in one
        pass a window (so within two: no rule reads a record older than one)."""
        horizon = t - self.window_s
        queue = self.queue
        while queue and queue[0].queued < horizon:
            client = queue.popleft()
            if client.last < horizon:
                self._forget(client)
            else:  # active since it was queued: check again one window after its newest
                client.queued = client.last
                queue.append(client)
        self.next_expiry = queue[0].queued + self.window_s if queue else inf
        if t >= self.next_sweep:
            self._sweep(horizon)
            self.next_sweep = t + self.window_s

    def _sweep(self, horizon: float) -> None:
        """The clients seen once before ``horizon`` are forgotten (one pass over all)."""
        self.clients = {key: found for key, found in self.clients.items()
                        if found.__class__ is ClientBehaviour or found.ts >= horizon}

    def _forget(self, client: ClientBehaviour) -> None:
        if self.clients.get(client.key) is client:
            del self.clients[client.key]

    def _forget_oldest(self) -> None:
        """Beyond ``max_clients``: every client seen once is forgotten (one pass, then room
        for as many new ones), then the oldest tracked ones."""
        self.clients = {key: found for key, found in self.clients.items()
                        if found.__class__ is ClientBehaviour}
        while len(self.clients) > self.max_clients and self.queue:
            self._forget(self.queue.popleft())

    def _declare(self, client: ClientBehaviour) -> None:
        """A new client whose id says what it is (automated.human_client_patterns first)."""
        if self.humans is not None and self.humans.fullmatch(client.key):
            client.human = True
        elif self.declared is not None and self.declared.fullmatch(client.key):
            client.reason = DECLARED
            client.watch.on = True  # judged whatever it does


def _patterns(patterns: Sequence[str]) -> re2._Regexp | None:
    """One RE2 alternation of ``patterns`` (linear time on any client id), None when empty."""
    return re2.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None


def _repetitive(intents: list[Search], max_repeats: int) -> bool:
    """At least ``max_repeats`` intents repeat one of the RECENT queries before them, they make
    at least half of the intents, and the intents come at regular intervals."""
    repeats = sum(1 for i, s in enumerate(intents)
                  if any(s.normalized == o.normalized for o in intents[max(0, i - RECENT):i]))
    return repeats >= max_repeats and 2 * repeats >= len(intents) and _regular(
        [s.ts for s in intents])


def _regular(times: list[float]) -> bool:
    """Whether the intervals between ``times`` are a schedule's: their coefficient of
    variation is at most ``REGULAR_CV``."""
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    if len(gaps) < 2:
        return False
    mean = sum(gaps) / len(gaps)
    variance = sum((gap - mean) ** 2 for gap in gaps) / len(gaps)
    return mean > 0 and variance <= (REGULAR_CV * mean) ** 2
