"""Automated clients (``SimulationSpec.bots``): crawlers, synthetic monitors and headless
load-test fleets. Each sends query records in its application's dialect and never an event (it
renders and clicks nothing); its client id looks like a person's (random), unless a monitor is
given one, so only behaviour tells it apart. Their searches are in no human truth: the oracle
counts them apart, by kind, as each is sent.

- **crawler**: one client at ~RATE with jitter (±50 %), walking the vocabulary — head, tail,
  queries that always fail, and a third made up (half of which find nothing) — never one that
  continues its previous query;
- **monitor**: one client, 1–3 fixed head queries in turn on a schedule (±2 %) — one faster
  than a search per keystroke gap (12 a minute) repeating one query is, by the written rule,
  a chain of keystrokes: the truth counts its records so, as the engine will;
- **fleet**: CLIENTS clients, each at RATE (±20 %), queries from the 12 most popular.

Every client draws from a random stream of its own: the sessions' stream is untouched, and
adding a bot changes no other bot's records.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from collector.outcomes import continues, normalize_query
from collector.sources.simulator.applications import APPS, App, draw_variant
from collector.sources.simulator.behaviour import UserBehaviour
from collector.sources.simulator.intents import MAX_EDIT
from collector.sources.simulator.plan import PlannedSearch
from collector.sources.simulator.records import Line
from collector.sources.simulator.spec import Bot
from collector.sources.simulator.vocabulary import MODIFIERS

_JITTER = {"crawler": 0.5, "monitor": 0.02, "fleet": 0.2}  # ± share of the interval
_POPULAR = 12  # a fleet's queries: the most popular of the vocabulary


@dataclass
class BotClient:
    """One automated client: who it is, and the search it sent last (for the truth)."""

    bot: Bot
    app: App
    client: str
    session: str
    variant: str | None
    rng: random.Random
    queries: list[str]
    turn: int = 0
    last: PlannedSearch | None = field(default=None, repr=False)


# (event time, delivery time, the client, its search, its query record)
BotRecord = tuple[float, float, BotClient, PlannedSearch, bytes]


class AutomatedClients(UserBehaviour):
    """The automated clients' records, merged into the sessions' by event time."""

    def _bot_clients(self) -> list[BotClient]:
        prefix = "u" if self.spec.users else "c"  # ids shaped like people's
        clients = []
        for b, bot in enumerate(self.spec.bots):
            app = next(a for a in APPS if a.name == bot.application)
            for n in range(bot.clients):
                rng = random.Random(f"bot-{self.spec.seed}-{b}-{n}")
                client = bot.client_id or f"{prefix}-{rng.getrandbits(48):012x}"
                session = f"s-{rng.getrandbits(48):012x}"
                variant = draw_variant(rng, app, self.spec.interleaving_preference is not None)
                clients.append(BotClient(bot, app, client, session, variant, rng,
                                         self._bot_queries(bot.kind, rng)))
        return clients

    def _bot_queries(self, kind: str, rng: random.Random) -> list[str]:
        """What a client of ``kind`` searches for: a crawler the whole vocabulary shuffled with
        a made-up query after every second, a monitor 1–3 head queries, a fleet the most
        popular queries."""
        queries = self.vocab.queries
        if kind == "monitor":
            return rng.sample(queries[:10], rng.randint(1, 3))
        if kind == "fleet":
            return list(queries[:_POPULAR])
        walk: list[str] = []
        for n, query in enumerate(rng.sample(queries, len(queries))):
            walk.append(query)
            if n % 2:
                walk.append(f"{rng.choice(MODIFIERS)} {query}")  # mostly unknown: the tail
        return walk

    def _bot_stream(self, clients: list[BotClient]) -> Iterator[BotRecord]:
        """Every automated client's records, by event time."""
        return heapq.merge(*(self._bot_records(client) for client in clients),
                           key=lambda record: record[0])

    def _bot_records(self, client: BotClient) -> Iterator[BotRecord]:
        """One client's records in event time, through its window (forever without one)."""
        bot, rng = client.bot, client.rng
        interval = 1 / bot.rate_per_s
        begin = self.spec.start + bot.start_s
        end = None if bot.duration_s is None else begin + bot.duration_s
        t = begin + rng.uniform(0, interval)  # clients of a fleet do not start in step
        previous: str | None = None
        while end is None or t < end:
            query = self._bot_query(client, previous)
            previous = normalize_query(query)
            out: list[Line] = []
            with self._drawing_from(rng):
                search = self._planned(client.app, client.variant, query, int(t * 1000))
                search.query_id = self._query_id()
                self._query(search, client.app, client.client, client.session,
                            search.query_id, 1, search.ts_ms, out, rendered=False)
            yield t, t + rng.random() * self.spec.jitter_s, client, search, out[0][1]
            t += interval * (1 + rng.uniform(-1, 1) * _JITTER[bot.kind])

    def _bot_query(self, client: BotClient, previous: str | None) -> str:
        """The client's next query: a monitor's next in turn; a crawler's next in its walk and
        a fleet client's drawn, either passed over (twice at most) while it would continue the
        previous one (a bot types nothing: its searches are no keystrokes by the rule)."""
        queries, kind = client.queries, client.bot.kind
        for _ in range(3):
            if kind == "fleet":
                query = client.rng.choice(queries)
            else:
                query = queries[client.turn % len(queries)]
                client.turn += 1
            if (kind == "monitor" or previous is None
                    or not continues(previous, normalize_query(query), MAX_EDIT)):
                break
        return query

    def _bot_sent(self, client: BotClient, search: PlannedSearch) -> None:
        """``search`` is in the output: the one its client sent before it is tallied."""
        if client.last is not None:
            self.truth.add_automated(client.bot.kind, client.last, search)
        client.last = search

    def _bots_done(self, clients: list[BotClient]) -> None:
        """The end of the output: every client's last search is tallied."""
        for client in clients:
            if client.last is not None:
                self.truth.add_automated(client.bot.kind, client.last, None)
                client.last = None
