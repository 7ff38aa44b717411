"""Generated worlds for the time tests: the simulator's log with clocks made wrong in the ways
real traffic makes them wrong — a minority of clients (or only their events) off by seconds to
days, a whole application's front end off by hours, a burst of records from the future — and
the simulator's own session plans (an oracle that knows no clock) to check them against."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from datetime import datetime

from collector.config import load_config
from collector.engine import Engine
from collector.sessions.event_outcomes import ACTIONS
from collector.sources.simulator import SimulationSpec, Simulator
from collector.store.query_stats import QueryStats

HOUR = 3600.0
DAY = 24 * HOUR
SKEWED = "skewed"  # the application the skewed clients are moved to
EXACT = ("searches", "zero_result_searches", "clicked_searches", "clicks",
         "converted_searches")
OUTCOMES = ("abandoned_searches", "reformulated_searches", "zero_result_exits")
Timed = list[tuple[float, dict]]  # (delivery time, record)
Log = list[tuple[float, bytes]]


def stamp_of(record: dict) -> float:
    stamp = record["timestamp"]
    if isinstance(stamp, str):
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return stamp / 1000


def restamped(record: dict, ts: float) -> dict:
    return dict(record, timestamp=round(ts * 1000))


def counted(record: dict) -> bool:
    """A record the engine buffers (a query, or an event it would apply or call orphan)."""
    return "user_query" in record or (bool(record.get("query_id"))
                                      and record.get("action_name") in ACTIONS)


def simulated(seed: int, sessions: int = 400, rate: float = 5.0,
              lulls: Iterable[tuple[float, float]] = (), duplicates: float = 0.0
              ) -> tuple[Simulator, Timed]:
    """The simulator (its truth keeps every session's plan) and its log, as dicts."""
    simulator = Simulator(SimulationSpec(seed=seed, sessions=sessions, sessions_per_second=rate,
                                         lulls=list(lulls), duplicate_rate=duplicates,
                                         keep_sessions=True))
    return simulator, [(delivery, json.loads(raw)) for delivery, raw in simulator.timed_records()]


def clients_of(timed: Timed) -> list[str]:
    return sorted({r["client_id"] for _, r in timed if r.get("client_id")})


def skew_clients(timed: Timed, offsets: dict[str, float], events_only: bool) -> Log:
    """The chosen clients moved to their own application and their clocks (or only their
    events' clocks, as browsers stamp them) off by their offsets."""
    log = []
    for delivery, record in timed:
        offset = offsets.get(record.get("client_id"))
        if offset is not None:
            record = dict(record, application=SKEWED)
            if not (events_only and "action_name" not in record):
                record = restamped(record, stamp_of(record) + offset)
        log.append((delivery, json.dumps(record).encode()))
    return log


def random_offsets(clients: list[str], share: float, bound: float, seed: int,
                   same: bool = False) -> dict[str, float]:
    """``share`` of the clients, each off by up to ±``bound`` (``same``: all by ``bound``)."""
    rng = random.Random(seed)
    chosen = sorted(rng.sample(clients, int(share * len(clients))))
    return {client: bound if same else rng.uniform(-bound, bound) for client in chosen}


def skew_application(timed: Timed, application: str, offset: float,
                     events_only: bool = False) -> Log:
    """One application's front end off by ``offset`` (its queries too, unless
    ``events_only``): a front end writing local time without a zone."""
    log = []
    for delivery, record in timed:
        if (record.get("application") == application
                and not (events_only and "action_name" not in record)):
            record = restamped(record, stamp_of(record) + offset)
        log.append((delivery, json.dumps(record).encode()))
    return log


def with_burst(log: Log, count: int, stamp: float, at: float,
               application: str = "web") -> Log:
    """``count`` consecutive searches of distinct new clients stamped ``stamp`` (a second
    apart), inserted at the fraction ``at`` of the log."""
    where = int(at * len(log))
    delivery = log[where][0] if where < len(log) else log[-1][0]
    burst = [(delivery, json.dumps({
        "query_id": f"future-{i}", "client_id": f"future-client-{i}", "user_query": "lamp",
        "timestamp": round((stamp + i) * 1000), "application": application,
        "query_attributes": {"total_hits": 3}}).encode()) for i in range(count)]
    return log[:where] + burst + log[where:]


def plain(timed: Timed) -> Log:
    return [(delivery, json.dumps(record).encode()) for delivery, record in timed]


class Stranded:
    """Dead letters kept in memory: the events of the given clients that ended as orphans."""

    def __init__(self, clients: set[str]) -> None:
        self.clients = clients
        self.events = 0

    def write(self, raw: bytes, reason: str, detail: str) -> None:
        record = json.loads(raw)
        if (record.get("client_id") in self.clients
                and record.get("action_name") in ("click", "add_to_cart", "purchase")
                and not record.get("query_id", "").startswith("lost-")):  # not a planned one
            self.events += 1

    def close(self) -> None:
        return None


def replay(log: Log, live: bool = False, stranded: Stranded | None = None,
           wall_clock: float | None = None) -> Engine:
    """Feed the log; ``live``: as a Kafka partition would — each record with its arrival
    (the broker's clock), and the source idle whenever nothing arrives for ordering.idle_s.
    ``wall_clock``: the wall clock's time (fixed), by default the machine's."""
    engine = Engine(load_config(environ={}), dead_letters=stranded, query_stats=QueryStats(),
                    **({} if wall_clock is None else {"wall_clock": lambda: wall_clock}))
    if not live:
        engine.process_all([raw for _, raw in log])
    else:
        previous = log[0][0]
        for delivery, raw in log:
            engine.idle(delivery - previous)  # nothing arrived since the previous record
            engine.process_all([raw], [delivery])
            previous = delivery
    engine.close()
    return engine


def stored_days(engine: Engine, without: Iterable[str] = (SKEWED,)) -> dict[tuple[int, str], int]:
    """(day, application) → searches in the engine's per-query rows."""
    skip = set(without)
    stored: dict[tuple[int, str], int] = {}
    for (day, application, _), row in engine.query_stats.rows.items():
        if application not in skip:
            stored[(day, application)] = stored.get((day, application), 0) + row.searches
    return stored


def rounded(summary: dict) -> dict:
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in summary.items()}


def merged(summaries: Iterable[dict]) -> dict:
    summaries = list(summaries)
    return {key: sum(s[key] for s in summaries) for key in (*EXACT, *OUTCOMES)}


def planned_clients(simulator: Simulator) -> set[str]:
    return {client for client, _ in simulator.truth.sessions}
