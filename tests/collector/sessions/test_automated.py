"""Automated clients (docs/metrics.md "Automated traffic", collector/sessions/automated.py):
crawlers, monitors and headless fleets counted apart from their first search, people never."""

from __future__ import annotations

import hashlib

import pytest

from collector.outcomes import DECLARED, RATE, REPETITIVE, SILENT
from collector.series.strata import QueryText
from collector.sessions.automated import AutomatedClients
from collector.sessions.search import CLICKED, Search
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


def _search(n: int, ts: float, query: str, flags: int = 0) -> Search:
    return Search(f"q{n}", "s", query, ts, flags, QueryText(query, -1))


@pytest.mark.parametrize(("times", "clicked", "expected"), [
    ([3.0 * i for i in range(40)], set(), RATE),  # 40 in two minutes
    ([3.0 * i for i in range(40)], {33}, None),  # … one click: people click
    ([60.0 * i for i in range(6)], set(), REPETITIVE),  # one query a minute
    ([0.0, 10.0, 90.0, 100.0, 250.0, 290.0], set(), None),  # … at irregular times: a person
    ([20.0 * i for i in range(15)], set(), SILENT),  # 15 with results, never a click
    ([20.0 * i for i in range(15)], {0}, None),  # … one click
])
def test_each_rule_at_its_threshold(times, clicked, expected):
    clients = AutomatedClients()
    repeating = len(times) == 6
    for n, ts in enumerate(times):
        search = _search(n, ts, "tent" if repeating else f"q{n}")
        clients.searched("c", search)
        if n in clicked:  # as the sessionizer marks a search acted on
            search.flags |= CLICKED
            if search.watch is not None:
                search.watch.acted = True
    assert clients.verdict("c", times[0] + 300.0) == expected


def test_a_client_is_forgotten_a_quiet_window_after_its_last_intent():
    clients = AutomatedClients(window_s=600.0)
    first = _search(0, 0.0, "tent")
    clients.searched("c", first)
    assert clients.clients == {"c": first}  # one record: remembered, not tracked
    clients.searched("c", _search(1, 100.0, "lamp"))
    assert [c.key for c in clients.clients.values()] == ["c"]  # two: tracked
    clients.expire_before(650.0)
    assert list(clients.clients) == ["c"]
    clients.expire_before(701.0)
    assert clients.clients == {}
    clients.searched("d", _search(2, 800.0, "tent"))
    clients.expire_before(1300.0)
    assert list(clients.clients) == ["d"]
    clients.expire_before(1401.0)  # a record seen once: in one to two windows (one pass each)
    assert list(clients.clients) == ["d"]
    clients.expire_before(1901.0)
    assert clients.clients == {}


def test_the_clients_kept_are_bounded():
    clients = AutomatedClients(max_clients=100)
    for n in range(1000):
        clients.searched(f"c{n}", _search(n, float(n), "tent"))
        clients.searched(f"c{n}", _search(n, n + 0.5, "lamp")) if n % 2 else None
    assert len(clients.clients) <= 100


def test_a_keystroke_of_one_session_is_retracted_after_another_sessions_intent(ubi, engine):
    """A returning user with two sessions open: the keystrokes of one are no intents however
    the other session's records interleave."""
    records = []
    for n in range(8):
        at = 40.0 * n
        records += [ubi.query(f"a{n}-0", "ru"[:1], at, client="u", session_id="s1"),
                    ubi.query(f"b{n}", f"other {n}", at + 0.1, client="u", session_id="s2"),
                    ubi.query(f"a{n}-1", "run", at + 0.2, client="u", session_id="s1")]
    e = engine(records)
    assert sum(s.keystrokes for s in e.table.series) == 8
    client = e.sessions.automated.clients["u"]
    assert len(client.searches) == 16  # two intents a round: the keystrokes retracted
