"""Each application's clock against the stream's: a front end off by the same amount for all of
its records is that application's own stream, moved onto the others' by one offset.

A front end writing local time without a zone, a search server whose clock is an hour out: every
record of one application off by the same amount, whatever its share of the traffic. Judged
record by record against the bulk of every application, each of its clients would be corrected
on its own (a few seconds' error each, its first records held for votes), and an application
making a quarter of the records or more would be the bulk — every other application's records
judged off. Judged against its own bulk it is consistent with itself; what is off is where its
stream stands against everyone else's.

So each (application, kind) keeps the **lead** of its sampled records: a record's raw stamp −
where the stream was when it arrived (in the warm-up the median of the last samples at its
arrival, then the stream's edge: the newest standing query). The stream's **typical lead** is
the median of the densest tolerance-wide group of every application's sampled *query* leads
(not their median: clients off by days, or queries sampled while a client ahead within
max_ahead made the edge, pull a median off the stream's own): the applications making most of
the searches are the stream's clock (the search servers stamp queries; one front end may make
most of the events — its impressions — without being most of the traffic). An application
whose clients' median lead (each client's latest: one voice each) is more than twice
``ordering.clock_tolerance_s`` from the typical one, while they are steady (their quartiles
within the tolerance: a sparse application's, devices each off by its own amount are not; of
at least ``MIN_CLIENTS`` clients: not one search's impressions, stamped alike), is off by the
difference: its records are moved by it before anything else judges them
(``retimed_records_total{reason="application_clock"}``), so they fit the stream; its
sessions, windows and clicks are exact (one offset for all of its records), and a client of it
whose own device is off too is judged on top, against the aligned stream. One back within the
tolerance is no longer moved. The leads kept are the raw ones: a moved application keeps its
offset while it stays off.

Bounds: the applications making most of the searches are the stream's clock (two halves an
hour apart: the one with more); an application is judged only while the others made a quarter
of the samples since the middle one of its leads kept (the others silent — a log's tail of one
application's searches days later — the stream has moved, with it); queries and events apart
(the search server stamps queries, the front end events); at most ``CAP`` applications are
followed.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque

SAMPLES = 32  # sampled leads per (application, kind) its offset is the median of
MIN_SAMPLES = 16  # before this many, an application is not moved
MIN_CLIENTS = 8  # … nor before its samples are of this many clients (not one search's records)
BULK = 128  # sampled query leads of every application: the typical lead
CAP = 64  # applications followed at most: the others are never moved
_EVERY = 8  # an application's offset is estimated again every this many of its samples
POSITION = 64  # queries whose median says where the warm-up's stream was at an arrival


class _Leads:
    """The recent sampled leads of one (application, kind)."""

    __slots__ = ("leads", "clients", "since", "seen")

    def __init__(self) -> None:
        self.leads: deque[float] = deque(maxlen=SAMPLES)
        self.clients: deque[str | None] = deque(maxlen=SAMPLES)
        # (samples of all, samples of its application) before each lead was taken
        self.since: deque[tuple[int, int]] = deque(maxlen=SAMPLES)
        self.seen = 0


class ApplicationClocks:
    """Per application, its offset against the stream (queries and events apart), while it is
    found off; ``offsets`` is what the engine reads on its hot path (usually empty)."""

    __slots__ = ("tolerance", "offsets", "_leads", "_bulk", "_typical", "_bulk_seen", "_seen",
                 "_app_seen")

    def __init__(self, tolerance: float) -> None:
        self.tolerance = tolerance
        # application → [query offset, event offset], only of applications found off
        self.offsets: dict[str | None, list[float]] = {}
        self._leads: dict[tuple[str | None, int], _Leads] = {}
        self._bulk: deque[float] = deque(maxlen=BULK)
        self._seen = 0  # samples of every application and kind
        self._app_seen: dict[str | None, int] = {}  # … of each application (both kinds)
        self._typical: float | None = None
        self._bulk_seen = 0

    def offset(self, application: str | None, kind: int) -> float:
        found = self.offsets.get(application)
        return found[kind] if found is not None else 0.0

    def sample(self, application: str | None, kind: int, lead: float,
               client: str | None) -> bool:
        """One sampled record's lead (its raw stamp − where the stream was at its arrival)
        and its client; True when its application's offset changed."""
        if not kind:  # the search servers' stamps: the stream's typical lead
            bulk = self._bulk
            bulk.append(lead)
            self._bulk_seen += 1
            if len(bulk) >= BULK // 4 and (self._typical is None or not self._bulk_seen % _EVERY):
                self._typical = _densest(sorted(bulk), self.tolerance)
        mine = self._app_seen.get(application, 0)
        since = (self._seen, mine)
        self._seen += 1
        if mine or len(self._app_seen) < 2 * CAP:
            self._app_seen[application] = mine + 1
        if self._typical is None:  # too few queries yet to say what is typical
            return False
        key = (application, kind)
        leads = self._leads.get(key)
        if leads is None:
            if len(self._leads) >= 2 * CAP:
                return False
            leads = self._leads[key] = _Leads()
        leads.leads.append(lead)
        leads.clients.append(client)
        leads.since.append(since)
        leads.seen += 1
        if leads.seen < MIN_SAMPLES or leads.seen % _EVERY:
            return False
        return self._estimate(application, kind, leads)

    def _estimate(self, application: str | None, kind: int, leads: _Leads) -> bool:
        """Its offset from its clients' leads (each client's latest: one busy client's
        session is one voice), when they are steady across at least ``MIN_CLIENTS`` clients:
        their quartiles within the tolerance (devices each off by its own amount, a sparse
        application's, a drifting clock's are not)."""
        by_client = dict(zip(leads.clients, leads.leads, strict=True))
        if len(by_client) < MIN_CLIENTS:
            return False
        # the others silent since its middle lead: the stream moved (with it)
        seen, mine = leads.since[len(leads.since) // 2]
        total = self._seen - seen
        if 4 * (total - (self._app_seen.get(application, 0) - mine)) < total:
            return False
        ordered = sorted(by_client.values())
        n = len(ordered)
        if ordered[(n - 1) * 3 // 4] - ordered[(n - 1) // 4] > self.tolerance:
            return False  # not steady (a sparse application, a drifting clock): as it was
        off = ordered[n // 2] - self._typical  # type: ignore[operator]
        current = self.offset(application, kind)
        if abs(off - current) <= self.tolerance / 2:
            return False
        if abs(off) <= self.tolerance:
            off = 0.0  # back within the tolerance: no longer moved
        elif abs(off) <= 2 * self.tolerance:
            return False  # a records' tolerance or two: as it was (the records' own rules)
        found = self.offsets.setdefault(application, [0.0, 0.0])
        found[kind] = round(off, 3)
        if not any(found):
            del self.offsets[application]
        return True

    def restart(self) -> None:
        """Forget the leads (not the offsets): the warm-up measured them against another
        reference than what follows."""
        self._leads.clear()
        self._bulk.clear()
        self._typical = None
        self._bulk_seen = 0


def _densest(ordered: list[float], width: float) -> float:
    """The median of the most samples within ``width`` of each other: the stream's own
    lead, not the middle of the leads of clients off by days (each by its own amount) or of
    queries sampled while a client ahead within max_ahead made the edge."""
    best, start, end = (0, 0), 0, 0
    for end, lead in enumerate(ordered):
        while lead - ordered[start] > width:
            start += 1
        if end - start > best[1] - best[0]:
            best = (start, end)
    return ordered[(best[0] + best[1]) // 2]


class ArrivalPosition:
    """Where the stream was when a record arrived, before there is a clock (the warm-up): the
    median of the last ``POSITION`` queries' stamps — queries, not samples (a search's
    impressions, stamped alike, would make most of them), robust to the records of any
    application making less than half of them."""

    __slots__ = ("_queries", "_ordered")

    def __init__(self) -> None:
        self._queries: deque[float] = deque()
        self._ordered: list[float] = []

    def note(self, ts: float, query: bool) -> float | None:
        """The position at this record's arrival (None before ``POSITION // 4`` queries);
        a query is noted after it is read."""
        ordered = self._ordered
        position = ordered[len(ordered) // 2] if len(ordered) >= POSITION // 4 else None
        if query:
            insort(ordered, ts)
            self._queries.append(ts)
            if len(self._queries) > POSITION:
                del ordered[bisect_left(ordered, self._queries.popleft())]
        return position
