"""Automated clients (docs/metrics.md "Automated traffic", collector/sessions/automated.py):
crawlers, monitors and headless fleets counted apart from their first search, people never."""

from __future__ import annotations

import hashlib

import pytest

from collector.outcomes import DECLARED, RATE, REPETITIVE, SILENT
from collector.sessions.automated import AutomatedClients
from collector.store.query_stats import QueryStats


def word(n: int) -> str:
    """A query unlike every other (no keystroke of the next: docs/metrics.md)."""
    return hashlib.sha256(str(n).encode()).hexdigest()[:12]


def automated(engine) -> dict[str, int]:
    reasons: dict[str, int] = {}
    for s in engine.table.series:
        for reason, n in s.automated.items():
            if n:
                reasons[reason] = reasons.get(reason, 0) + n
    return reasons


def searches(engine) -> int:
    return sum(s.searches for s in engine.table.series)


def test_a_crawler_is_counted_apart_from_its_first_search(ubi, engine):
    e = engine([ubi.query(f"q{i}", word(i), 3.0 * i, client="crawler") for i in range(200)])
    assert (automated(e), searches(e)) == ({RATE: 200}, 0)


def test_a_monitor_repeating_its_query_on_a_schedule_is_counted_apart(ubi, engine):
    e = engine([ubi.query(f"q{i}", "tent", 60.0 * i + (i * 7 % 3) * 0.5, client="monitor")
                for i in range(60)])
    assert (automated(e), searches(e)) == ({REPETITIVE: 60}, 0)


def test_a_headless_client_that_never_interacts_is_counted_apart(ubi, engine):
    e = engine([ubi.query(f"q{i}", word(i % 7), 13.0 * i + (i * 5 % 11), client="fleet-1")
                for i in range(80)])
    assert (automated(e), searches(e)) == ({SILENT: 80}, 0)


def test_a_busy_person_who_clicks_is_never_automated(ubi, engine):
    """60 searches an hour, some of the same query, clicking one in three."""
    records = []
    for i in range(60):
        at = 60.0 * i + (i * 37 % 50)
        records.append(ubi.query(f"q{i}", word(i % 9), at, client="busy"))
        if i % 3 == 0:
            records.append(ubi.click(f"q{i}", at + 4, client="busy"))
    e = engine(records)
    assert (automated(e), searches(e)) == ({}, 60)


def test_keystrokes_are_no_intents_for_the_rules(ubi, engine):
    """A person typing ten queries in ten minutes (90 keystroke records), never clicking."""
    records = [ubi.query(f"q{n}-{i}", f"query{n:02d}"[:i + 1] if i < 6 else f"query{n:02d}",
                         60.0 * n + 0.3 * i, client="typist")
               for n in range(10) for i in range(10)]
    e = engine(records)
    assert (automated(e), searches(e)) == ({}, 10)
    assert sum(s.keystrokes for s in e.table.series) == 90


def test_declared_clients_and_exceptions_by_their_ids(ubi, engine):
    records = [ubi.query("m1", "tent", 0, client="synthetic-eu-1"),
               *(ubi.query(f"p{i}", word(i), 2.0 * i, client="backend-proxy")
                 for i in range(100))]
    e = engine(records, **{"automated.client_patterns": ["synthetic-.*"],
                           "automated.human_client_patterns": ["backend-.*"]})
    assert (automated(e), searches(e)) == ({DECLARED: 1}, 100)


def test_an_automated_search_is_in_no_store_row_top_query_or_experiment(ubi):
    from collector.config import load_config
    from collector.engine import Engine

    stats = QueryStats()
    e = Engine(load_config(environ={}, overrides={"privacy.min_distinct_clients": 1}),
               query_stats=stats)
    e.process_all([ubi.query(f"q{i}", word(i), 3.0 * i, client="crawler", hits=(),
                             variant="B") for i in range(100)])
    e.close()
    assert automated(e) == {RATE: 100}
    assert not stats.rows and e.view().released.shown == {}
    (experiment,) = e.table.experiments
    assert experiment.filled() == [] and experiment.units == 0


@pytest.mark.parametrize(("times", "clicks", "expected"), [
    ([3.0 * i for i in range(40)], [], RATE),  # 40 in two minutes
    ([3.0 * i for i in range(40)], [30.0, 60.0, 90.0, 100.0], None),  # … clicking a tenth
    ([60.0 * i for i in range(6)], [], REPETITIVE),  # one query a minute
    ([0.0, 10.0, 90.0, 100.0, 250.0, 290.0], [], None),  # … at irregular times: a person
    ([20.0 * i for i in range(15)], [], SILENT),  # 15 with results, never a click
    ([20.0 * i for i in range(15)], [1.0], None),  # … one click, ever
])
def test_each_rule_at_its_threshold(times, clicks, expected):
    clients = AutomatedClients()
    repeating = expected == REPETITIVE or (expected is None and len(times) == 6)
    client = None
    for n, ts in enumerate(times):
        client = clients.searched("c", "tent" if repeating else f"q{n}", ts, True)
    for ts in clicks:
        clients.interaction(client, ts)
    assert clients.verdict(client, times[0] + 300.0) == expected


def test_a_client_is_forgotten_a_quiet_window_after_its_last_intent():
    clients = AutomatedClients(window_s=600.0)
    client = clients.searched("c", "tent", 0.0, True)
    clients.expire_before(500.0)
    assert clients.clients == {"c": client}
    clients.expire_before(601.0)
    assert clients.clients == {}
