"""Records that look ahead of the stream, held until other clients say whether the stream is
there too.

A record stamped further than ``ordering.max_ahead_s`` past the newest queries is either from a
client whose clock runs ahead, or the first of the stream after a quiet spell (a night, an
outage, the next search of a sparse application): one record cannot tell. The records that
arrive after it can. Each later record of another client, stamped where the stream has got to
(a late or redelivered one says nothing of where it is now), is a vote: *for* when it is stamped no
more than ``max_ahead`` before the held one (the stream is there too), *against* when it is
stamped further back (the stream is where it was). ``VOTES`` votes of distinct clients decide:
for — the record stands as stamped (and moves the stream's edge); against — its client's clock
is corrected. A minority of skewed clients cannot outvote the bulk, and a stream that jumped
forward vouches for itself within a few records, so after a lull of any length no client whose
clock is right is retimed.

A client's later records wait behind its held one (one device, one clock: they are decided in
arrival order, with what was decided for it). Where no vote can come (an idle source, the end of
input) the held records are decided on the votes so far, standing as stamped unless more voted
against them than for (the thin tail of a log, where one session may outlast all others); one
no record voted on stands only within ``UNVOUCHED_S`` (a week) of the stream's edge.
Memory is bounded: past ``CAP`` held records the oldest is decided the same way.
"""

from __future__ import annotations

from collector.clock.stream_clock import Reference
from collector.ingest.events import WireRecord

VOTES = 3  # distinct other clients whose records decide a held record, at least
# … and for it to stand, this share of the clients active where the stream is (a dense
# stream: dozens; a sparse one: VOTES): a burst of clocks ahead cannot vouch for itself
QUORUM = 0.5
CAP = 4096  # held records at most; past it the oldest is decided on its votes so far
UNVOUCHED_S = 7 * 86400.0  # how far past the edge a record no vote came for may stand
# Verdicts: the record stands as stamped, or its client's clock is ahead; or, undecided, it no
# longer looks ahead (the stream's edge has moved): it is judged again like a new record.
STANDS = 1
AHEAD = 2
FITS = 3


class HeldRecord:
    """One record on probation, with the votes of the records that arrived after it."""

    __slots__ = ("ts", "kind", "raw", "rec", "client", "at", "slack", "need", "votes_for",
                 "votes_against", "voters", "verdict")

    def __init__(self, ts: float, kind: int, raw: bytes, rec: WireRecord, client: str,
                 at: Reference | None, slack: float, need: int = VOTES) -> None:
        self.ts = ts
        self.slack = slack  # a vote is for when stamped at most this much before it
        self.need = need  # votes for it before it stands (QUORUM of the active clients)
        self.kind = kind
        self.raw = raw
        self.rec = rec
        self.client = client
        self.at = at  # the clock it is judged against: its arrival's, in the warm-up
        self.votes_for = 0
        self.votes_against = 0
        self.voters: set[str] = set()
        self.verdict = 0

    def decided(self) -> bool:
        """It stands once ``need`` clients voted for it, more than against; its client's
        clock is ahead once ``VOTES`` voted against it, more than for. A burst of records
        ahead vouches for its own first records, but the stream after it outvotes them
        before they reach ``need``."""
        votes_for, votes_against = self.votes_for, self.votes_against
        if votes_for >= self.need and votes_for > votes_against:
            self.verdict = STANDS
        elif votes_against >= VOTES and votes_against > votes_for:
            self.verdict = AHEAD
        return self.verdict != 0

    def on_the_votes_so_far(self, unvouched: float = float("inf")) -> HeldRecord:
        """Where no more votes can come: it stands as stamped unless more voted against it
        than for (the same record decides the same however the stream is partitioned) — or,
        with no vote at all, unless it is stamped past ``unvouched`` (no quiet spell runs that
        long: one record of the year 2199 at the end of a log is a clock, not the stream)."""
        self.verdict = AHEAD if self.votes_against > self.votes_for or (
            not (self.votes_for or self.votes_against) and self.ts > unvouched) else STANDS
        return self


class Probation:
    """The held records in arrival order, and how many each client has held."""

    __slots__ = ("held", "clients")

    def __init__(self) -> None:
        self.held: list[HeldRecord] = []
        self.clients: dict[str, int] = {}

    def hold(self, record: HeldRecord) -> list[HeldRecord]:
        """Hold one record; returns the oldest, decided, when the cap is passed."""
        self.held.append(record)
        self.clients[record.client] = self.clients.get(record.client, 0) + 1
        if len(self.held) <= CAP:
            return []
        return self._release([self.held[0].on_the_votes_so_far()])

    def vote(self, ts: float, client: str | None, reach: float,
             event_reach: float | None = None) -> list[HeldRecord]:
        """One arriving record's vote (raw stamp ``ts``) on every held record of another
        client; returns what is ready now (``ready``)."""
        decided = False
        for record in self.held:
            if client == record.client or client in record.voters:
                continue
            if client is not None:
                record.voters.add(client)
            if record.ts <= ts + record.slack:
                record.votes_for += 1
            else:
                record.votes_against += 1
            decided = record.decided() or decided
        return self.ready(reach, event_reach) if decided else []

    def ready(self, reach: float, event_reach: float | None = None) -> list[HeldRecord]:
        """The records that can go now, in arrival order: of each client, its oldest held
        record while it is decided or no longer ahead of ``reach`` (the stream's edge moved:
        ``FITS``; an event: of ``event_reach``, when given — an event may lead the stream by
        less than a query), then its next."""
        if event_reach is None:
            event_reach = reach
        blocked: set[str] = set()
        out = []
        for record in self.held:
            if record.client in blocked:
                continue
            if not record.verdict:
                if record.ts > (event_reach if record.kind else reach):
                    blocked.add(record.client)
                    continue
                record.verdict = FITS
            out.append(record)
        return self._release(out)

    def drain(self, unvouched: float) -> list[HeldRecord]:
        """Every held record, decided on its votes so far (end of input); one no vote came
        for stands only up to ``unvouched``."""
        return self._release([r if r.verdict else r.on_the_votes_so_far(unvouched)
                              for r in self.held])

    def release(self, records: list[HeldRecord]) -> None:
        """Let these go undecided (judged again elsewhere: their application's clock moved)."""
        self._release(records)

    def newest(self) -> float:
        return max((r.ts for r in self.held), default=float("-inf"))

    def _release(self, records: list[HeldRecord]) -> list[HeldRecord]:
        if not records:
            return records
        gone = set(map(id, records))
        self.held[:] = [r for r in self.held if id(r) not in gone]  # the engine holds the list
        clients = self.clients
        for record in records:
            left = clients[record.client] - 1
            if left:
                clients[record.client] = left
            else:
                del clients[record.client]
        return records
