"""The simulator: sessions started in event time (Poisson arrivals, the diurnal profile, lulls),
typed into search-as-you-type boxes, automated clients beside them, tracking outages, delivered
with a bounded jitter (out of event-time order) or paced in real time, and the files that
describe its world (strata, judgments, examination curve)."""

from __future__ import annotations

import heapq
import json
import random
import time
import zlib
from bisect import bisect
from collections.abc import Iterator
from itertools import accumulate

import msgspec

from collector.series.quality import STRATA
from collector.sources.simulator.applications import APPS, draw_variant
from collector.sources.simulator.bots import AutomatedClients, BotRecord
from collector.sources.simulator.intents import IntentRule
from collector.sources.simulator.keystrokes import TypingUser
from collector.sources.simulator.oracle import DEFINED, GroundTruth
from collector.sources.simulator.outages import hidden_events
from collector.sources.simulator.plan import PlannedSearch
from collector.sources.simulator.rankings import PAGE_SIZE, ranked
from collector.sources.simulator.records import Line
from collector.sources.simulator.spec import SimulationSpec, traffic_share
from collector.sources.simulator.users import Users
from collector.sources.simulator.vocabulary import Vocabulary


class Simulator(TypingUser, AutomatedClients):
    """Simulated sessions and their records; the ground truth in ``truth`` as they are made,
    by ``rule`` (the keystroke rule with the settings' defaults; a test of other settings,
    ``intents.off_applications`` say, passes its own)."""

    def __init__(self, spec: SimulationSpec, rule: IntentRule = DEFINED) -> None:
        self.spec = spec
        self.rng = random.Random(spec.seed)
        self.typing_rng = random.Random(f"typing-{spec.seed}")
        self.vocab = Vocabulary(self.rng, spec.vocabulary, spec.zipf_exponent)
        self.truth = GroundTruth(rule, tuple(dict.fromkeys(b.kind for b in spec.bots)),
                                 tuple(spec.tracking_outages), spec.start)
        self._app_weights = list(accumulate(app.weight for app in APPS))
        self._encoder = msgspec.json.Encoder()
        self.users = Users(spec) if spec.users else None
        self.sessions_started = 0  # how far the records are (a progress bar reads it)

    # -- public ------------------------------------------------------------------------------
    def records(self) -> Iterator[bytes]:
        """All records as JSON lines, delivered in jittered event-time order."""
        for _, line in self.timed_records():
            yield line

    def timed_records(self) -> Iterator[tuple[float, bytes]]:
        """(delivery time, record): event time plus up to ``jitter_s`` of delivery delay."""
        pending: list[tuple[float, int, bytes]] = []
        ts = self.spec.start
        serial = 0
        lulls = sorted(self.spec.lulls)
        clients = self._bot_clients()
        bots = _Ahead(self._bot_stream(clients)) if clients else None
        for started in range(1, self.spec.sessions + 1):
            self.sessions_started = started
            ts = self._next_start(ts, lulls)
            for delivery, line in self._session(ts):
                serial += 1
                heapq.heappush(pending, (delivery, serial, line))
            if bots is not None:
                serial = self._push_bots(bots, ts, ts, pending, serial)
            while pending and pending[0][0] < ts - self.spec.jitter_s:
                self.truth.records += 1
                delivery, _, line = heapq.heappop(pending)
                yield delivery, line
        if bots is not None:  # bots with a window search to its end, the others stop here
            serial = self._push_bots(bots, self._bots_end(), ts, pending, serial)
        while pending:
            self.truth.records += 1
            delivery, _, line = heapq.heappop(pending)
            yield delivery, line
        self._bots_done(clients)

    def _push_bots(self, bots: _Ahead, until: float, horizon: float,
                   pending: list[tuple[float, int, bytes]], serial: int) -> int:
        """Into ``pending``: the automated clients' records made up to ``until`` (event time),
        but those of a bot without a window after ``horizon`` (the sessions' last start)."""
        while bots.next is not None and bots.next[0] <= until:
            ts, delivery, client, search, line = bots.pop()
            if ts <= horizon or client.bot.duration_s is not None:
                serial += 1
                heapq.heappush(pending, (delivery, serial, line))
                self._bot_sent(client, search)
        return serial

    def _bots_end(self) -> float:
        """The end of the last bot window (the start, when no bot has one)."""
        return max((self.spec.start + bot.start_s + bot.duration_s for bot in self.spec.bots
                    if bot.duration_s is not None), default=self.spec.start)

    def _next_start(self, ts: float, lulls: list[tuple[float, float]]) -> float:
        """The next session's start: a Poisson arrival, thinned by the diurnal profile,
        moved past every lull it reached (``lulls`` is consumed)."""
        rng, spec = self.rng, self.spec
        while True:
            ts += rng.expovariate(spec.sessions_per_second)
            while lulls and ts - spec.start >= lulls[0][0]:
                ts += lulls.pop(0)[1]
            if not spec.diurnal or rng.random() < traffic_share(ts):
                return ts

    def paced(self, speed: float, duration_s: float | None = None,
              tick_s: float | None = None) -> Iterator[bytes | None]:
        """Records in real time: event time runs `speed` times faster than the clock. With
        ``tick_s``, a None every ``tick_s`` of wall time spent waiting for the next record (a
        lull, a quiet night): the caller's chance to see its source idle."""
        started = time.monotonic()
        for ts, raw in self.timed_records():
            due = (ts - self.spec.start) / speed
            while True:
                elapsed = time.monotonic() - started
                if duration_s is not None and elapsed >= duration_s:
                    return
                wait = due - elapsed
                if wait <= 0:
                    break
                time.sleep(min(wait, tick_s or 0.5))
                if tick_s is not None and wait >= tick_s:
                    yield None
            yield raw

    def judgments_csv(self, depth: int = 20, share: float = 0.8) -> str:
        """A judgment set of the vocabulary (``judgments.csv``): ``share`` of the queries
        judged, their first ``depth`` ranked documents graded 3, 2, 1, 0 by rank (first 2, next
        3, next 5, rest); the queries users click rarely are graded the other way round (their
        best documents rank last), so judged NDCG agrees with the users."""
        rows = ["application,query,doc_id,rater,grade"]
        for query in self.vocab.queries:
            if zlib.crc32(query.encode()) % 1000 >= share * 1000:
                continue
            for index in range(depth):
                grade = 3 if index < 2 else 2 if index < 5 else 1 if index < 10 else 0
                if query in self.vocab.poor:
                    grade = 3 - grade
                rows.append(f",{query},{ranked(query, index)},simulator,{grade}")
        return "\n".join(rows) + "\n"

    @staticmethod
    def examination_json() -> str:
        """The simulated users' examination curve (clicks fall on position r with weight 1/r,
        whatever the document) as `searchpulse clicks` writes it: every application's,
        identified (the simulator knows it; its rankings barely move, so a fit would not)."""
        curve = [round(1.0 / r, 6) for r in range(1, PAGE_SIZE + 1)]
        return json.dumps({"model": "position-based", "source": "simulator", "applications": {
            app.name: {"examination": curve, "identified": True, "impressions": 0}
            for app in APPS}}, indent=2) + "\n"

    def strata_csv(self) -> str:
        rows = ["query,stratum"] + [f"{q},{STRATA[s]}" for q, s in self.vocab.strata.items()]
        return "\n".join(rows) + "\n"

    # -- one session ------------------------------------------------------------------------
    def _session(self, start: float) -> list[tuple[float, bytes]]:
        rng = self.rng
        shift = 0.0
        if self.users is not None:  # a returning user: its application, variant, propensity
            user = self.users.draw(rng)
            app, client, variant, shift = user.app, user.client, user.variant, user.click_shift
            session = f"s-{rng.getrandbits(48):012x}"
        else:
            app = APPS[bisect(self._app_weights, rng.random() * self._app_weights[-1])]
            client = f"c-{rng.getrandbits(48):012x}"
            session = f"s-{rng.getrandbits(48):012x}"
            variant = draw_variant(rng, app, self.spec.interleaving_preference is not None)
        plan: list[PlannedSearch] = []
        out: list[Line] = []
        typed: list[Line] = []  # typing's records, drawn from and jittered by its own stream
        t = int(start * 1000)
        query = self._first_query()
        while True:
            chain: list[PlannedSearch] = []
            if app.name in self.spec.type_ahead:
                t, chain = self._typed(plan, app, client, session, variant, query, t, typed)
            search = self._planned(app, variant, query, t)
            plan.append(search)
            search.typed = chain
            search.click_shift = shift
            search.query_id = self._query_id()
            self._query(search, app, client, session, search.query_id, 1, search.ts_ms, out)
            t, query = self._behave(search, app, client, session, out)
            if query is None:
                break
        self.truth.add_session(plan, client if self.spec.keep_sessions else None)
        self._noise(out, client, session, t)
        jitter = self.spec.jitter_s
        sent = [(ts + rng.random() * jitter, line) for ts, line, _ in out]
        sent += [(ts + self.typing_rng.random() * jitter, line) for ts, line, _ in typed]
        if self.spec.tracking_outages:  # drawn as without them, then not sent
            hidden = hidden_events(out + typed, app.name, self.truth, self.spec.start)
            sent = [entry for n, entry in enumerate(sent) if n not in hidden]
        return sent


class _Ahead:
    """An iterator of bot records that shows its next one before it is taken."""

    def __init__(self, records: Iterator[BotRecord]) -> None:
        self._records = records
        self.next: BotRecord | None = next(records, None)

    def pop(self) -> BotRecord:
        record = self.next
        assert record is not None
        self.next = next(self._records, None)
        return record
