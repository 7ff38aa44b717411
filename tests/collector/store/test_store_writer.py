"""The store writer while its store is away (collector/store/store_writer.py): rows kept in
memory then spilled, never dropped, written once when the store is back with the newest
offsets, a partition given up taking its rows with it, the backoff, one log line per outage,
the gauges true at every moment. The store is a real SQLite file; its outage is a switch in
front of it (a stopped server's errors: every connection and statement fails) or a real lock
held by another connection."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.config import load_config
from collector.errors import StoreError, StoreUnavailable
from collector.replay import replay
from collector.store import query_store
from collector.store.query_stats import QueryStats
from collector.store.query_store import QueryStore, open_store
from collector.store.store_writer import StoreWriter
from searchpulse import main
from tests.collector.exposition.test_basic_auth import Clock

DAY = 20_000  # a day number: every row of these tests is on it
P0, P1 = ("ubi", 0), ("ubi", 1)


class Database:
    """A real SQLite store behind a switch: while ``down``, opening it and every write or
    read of an open connection fail as a stopped server's would."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.down = False
        self.opened = self.writes = self.landed = 0

    def open(self, url: str, shown_depth: int = 10, retention_days: int = 0) -> QueryStore:
        self.opened += 1
        if self.down:
            raise StoreUnavailable(f"store {url}: connection refused")
        store = open_store(url, shown_depth, retention_days=retention_days)
        add, offsets = store.add, store.offsets

        def failing_add(*args, **kwargs):
            self.writes += 1
            if self.down:
                raise StoreUnavailable(f"store {url}: server closed the connection")
            add(*args, **kwargs)
            self.landed += 1

        def failing_offsets(group):
            if self.down:
                raise StoreUnavailable(f"store {url}: server closed the connection")
            return offsets(group)

        store.add, store.offsets = failing_add, failing_offsets
        return store

    def searches(self) -> Counter[str]:
        store = open_store(self.url)
        try:
            return Counter({row["query"]: row["searches"] for row in store.rows()})
        finally:
            store.close()


@pytest.fixture
def database(tmp_path) -> Database:
    return Database(f"sqlite:///{tmp_path / 'aggregates.db'}")


def stats(*queries: str, searches: int = 1) -> QueryStats:
    rows = QueryStats()
    for query in queries:
        rows.row(DAY * 86400.0, "web", query).searches += searches
    return rows


def writer_of(database: Database, clock: Clock, **options) -> StoreWriter:
    return StoreWriter(database.url, 10.0, 10**6, clock=clock, opener=database.open, **options)


def test_an_outage_keeps_the_rows_and_the_write_that_lands_holds_them_with_its_offsets(
        database, caplog):
    clock = Clock()
    writer = writer_of(database, clock)
    assert writer.flush({P0: stats("tent", "lamp")}, {P0: (0, 5)}, "g")
    assert writer.settle()
    database.down = True  # the server stops
    writer.flush({P0: stats("tent")}, {P0: (5, 9)}, "g")
    assert writer.waiting == 1  # in the write in flight …
    assert not writer.settle()  # … which fails: kept
    assert (writer.waiting, writer.away_s, writer.failures) == (1, 0.0, 1)
    clock.now = 0.5
    writer.flush({P0: stats("tent", "stove")}, {P0: (9, 14)}, "g")  # before the retry (1 s)
    assert (database.writes, writer.waiting, writer.away_s) == (2, 2, 0.5)  # not tried
    assert writer.due([]) is False
    clock.now = 1.0
    assert writer.due([])  # the retry is due before the flush interval
    writer.flush({}, None, "g")
    assert not writer.settle()
    assert (database.opened, writer.failures) == (2, 2)  # opened anew: refused
    clock.now = 2.9  # the next retry waits 2 s
    writer.flush({}, None, "g")
    assert database.opened == 2
    database.down = False  # back
    clock.now = 3.0
    writer.flush({P0: stats("lamp")}, {P0: (14, 20)}, "g")
    assert writer.settle()
    assert database.searches() == {"tent": 3, "lamp": 2, "stove": 1}
    assert writer.offsets("g") == {P0: (14, 20)}
    assert (writer.waiting, writer.away_s, writer.flushes, writer.failures) == (0, 0.0, 2, 2)
    away = [r for r in caplog.records if "the store is away" in r.getMessage()]
    back = [r for r in caplog.records if "is back after 3.0 s" in r.getMessage()]
    assert (len(away), len(back)) == (1, 1)  # once per outage, not once per attempt
    writer.close()


def test_rows_beyond_the_memory_bound_are_spilled_and_written_once(database, tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    clock = Clock()
    writer = writer_of(database, clock, max_waiting_rows=3, spill_dir=str(spill))
    database.down = True
    writer.flush({P0: stats("a", "b")}, {P0: (0, 2)}, "g")
    assert not writer.settle()
    for n, queries in enumerate((("a", "c"), ("d", "e"), ("a", "f"))):
        clock.now += 0.1
        writer.flush({P0: stats(*queries), P1: stats("a")}, {P0: (0, 3 + n), P1: (0, n)}, "g")
    assert writer.spilled > 0 and writer.waiting >= writer.spilled
    assert list(spill.iterdir()) == []  # unlinked files: a SIGKILL leaves nothing behind
    database.down = False
    assert writer.write_all()
    assert database.searches() == {"a": 2 + 1 + 3, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1}
    assert writer.offsets("g") == {P0: (0, 5), P1: (0, 2)}
    assert (writer.spilled, writer.waiting) == (0, 0)
    writer.close()


def test_a_spill_that_cannot_be_written_is_counted_and_keeps_every_row(database, tmp_path,
                                                                       caplog):
    clock = Clock()
    gone = tmp_path / "gone"  # removed after the configuration was checked
    writer = writer_of(database, clock, max_waiting_rows=2, spill_dir=str(gone))
    database.down = True
    writer.flush({P0: stats("a", "b", "c")}, {P0: (0, 3)}, "g")
    writer.settle()
    writer.flush({P0: stats("d")}, {P0: (0, 4)}, "g")
    assert writer.spill_failures == 2 and writer.full
    assert writer.waiting == 4
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "store.spill_dir" in errors[0].getMessage()
    database.down = False
    assert writer.write_all()
    assert not writer.full
    assert database.searches() == {"a": 1, "b": 1, "c": 1, "d": 1}
    writer.close()


def test_a_partition_given_up_during_an_outage_leaves_its_rows_to_its_next_owner(database):
    """Its waiting rows (in memory and spilled) and its positions are dropped: the next
    owner counts them from the offsets the store holds."""
    clock = Clock()
    writer = writer_of(database, clock, max_waiting_rows=2)
    assert writer.flush({P0: stats("p0"), P1: stats("p1")}, {P0: (0, 1), P1: (0, 1)}, "g",
                        wait=True)
    database.down = True
    writer.flush({P0: stats("p0", "x"), P1: stats("p1", "x")}, {P0: (0, 3), P1: (0, 3)}, "g")
    writer.settle()
    writer.flush({P0: stats("p0")}, {P0: (0, 4)}, "g")
    assert writer.spilled  # some of P0's rows are in the spill, some in memory
    writer.forget(P0)  # revoked
    database.down = False
    assert writer.write_all()
    assert database.searches() == {"p0": 1, "p1": 2, "x": 1}
    assert writer.offsets("g") == {P0: (0, 1), P1: (0, 3)}
    writer.flush({P0: stats("p0")}, {P0: (1, 2)}, "g", wait=True)  # assigned again later
    assert database.searches()["p0"] == 2
    writer.close()


def test_the_same_query_of_two_partitions_is_added_once_whether_or_not_the_write_fails(
        database):
    clock = Clock()
    writer = writer_of(database, clock)
    database.down = True
    writer.flush({P0: stats("tent", searches=2), P1: stats("tent", searches=3)},
                 {P0: (0, 1), P1: (0, 1)}, "g")
    assert not writer.settle()  # the merged row was a copy: each partition's row is intact
    writer.flush({P0: stats("tent", searches=5)}, {P0: (0, 2)}, "g")
    database.down = False
    assert writer.write_all()
    assert database.searches() == {"tent": 2 + 3 + 5}
    writer.close()


def test_a_store_away_at_the_start_is_an_outage_a_wrong_url_an_error(database):
    database.down = True
    clock = Clock()
    writer = writer_of(database, clock)
    assert writer.away_s == 0.0 and writer.outage is not None
    with pytest.raises(StoreUnavailable):
        writer.record_start("g", P0, 0)
    database.down = False
    clock.now = 10.0
    assert writer.record_start("g", P0, 7) == (7, 7)
    assert writer.offsets("g") == {P0: (7, 7)}
    writer.close()
    with pytest.raises(StoreError, match="expected sqlite:///PATH"):
        StoreWriter("mysql://db/x", 10.0, 100)


def test_a_sqlite_file_locked_by_another_process_is_written_once_the_lock_is_gone(
        tmp_path, monkeypatch):
    """A real lock (another connection's write transaction): the write fails after the busy
    timeout, the rows wait, and the retry after the lock is released lands them."""
    monkeypatch.setattr(query_store, "BUSY_TIMEOUT_S", 0.05)
    url = f"sqlite:///{tmp_path / 'aggregates.db'}"
    clock = Clock()
    writer = StoreWriter(url, 10.0, 10**6, clock=clock)
    assert writer.flush({P0: stats("tent")}, {P0: (0, 1)}, "g", wait=True)
    lock = sqlite3.connect(tmp_path / "aggregates.db", isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    assert not writer.flush({P0: stats("tent")}, {P0: (1, 2)}, "g", wait=True)
    assert writer.outage is not None and writer.waiting == 1
    lock.execute("ROLLBACK")
    lock.close()
    clock.now = 1.0
    writer.flush({P0: stats("lamp")}, {P0: (2, 3)}, "g")
    assert writer.settle()
    assert {row["query"]: row["searches"] for row in writer.store.rows()} == {
        "tent": 2, "lamp": 1}
    assert writer.offsets("g") == {P0: (2, 3)}
    writer.close()


_SOURCES = st.sampled_from([P0, P1, ("other", 0)])
_OPS = st.lists(st.one_of(
    st.tuples(st.just("rows"), _SOURCES, st.lists(st.sampled_from("abcdefg"), min_size=1,
                                                   max_size=4)),
    st.tuples(st.just("down")), st.tuples(st.just("up")),
    st.tuples(st.just("forget"), _SOURCES),
    st.tuples(st.just("tick"), st.floats(0.0, 40.0))), max_size=40)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_whatever_fails_every_row_is_written_once_unless_its_partition_was_given_up(
        tmp_path_factory, ops):
    """Any sequence of flushes, outages, backoff, spills (at most 3 rows in memory) and
    partitions given up: the store ends with every row of every flush exactly once, but for
    the rows a partition had waiting when it was given up; and its offsets are those of the
    last write that landed."""
    database = Database(f"sqlite:///{tmp_path_factory.mktemp('store') / 'a.db'}")
    clock = Clock()
    writer = writer_of(database, clock, max_waiting_rows=3)
    pending: dict[tuple, Counter[str]] = {}  # per partition: flushed, not landed
    offsets: dict[tuple, tuple[int, int]] = {}  # per partition: of its last flush
    stored: Counter[str] = Counter()
    stored_offsets: dict[tuple, tuple[int, int]] = {}
    for n, op in enumerate(ops):
        landed = database.landed
        if op[0] == "rows":
            _, source, queries = op
            pending.setdefault(source, Counter()).update(queries)
            offsets[source] = (0, n)
            writer.flush({source: stats(*queries)}, {source: (0, n)}, "g")
        elif op[0] == "down":
            database.down = True
        elif op[0] == "up":
            database.down = False
        elif op[0] == "forget":
            writer.forget(op[1])
            pending.pop(op[1], None)
            offsets.pop(op[1], None)
        else:
            clock.now += op[1]
            if writer.due([]):
                writer.flush({}, None, "g")
        writer.settle()
        if database.landed > landed:  # a write landed: it held every row waiting
            for counts in pending.values():
                stored.update(counts)
            stored_offsets.update(offsets)
            pending = {}
        assert (writer.waiting > 0) == any(pending.values())
    database.down = False
    assert writer.write_all()
    for counts in pending.values():
        stored.update(counts)
    stored_offsets.update(offsets)
    assert database.searches() == stored
    assert writer.offsets("g") == stored_offsets
    assert (writer.waiting, writer.spilled, writer.away_s) == (0, 0, 0.0)
    writer.close()


def test_spill_files_are_scratch(tmp_path):
    """A segment reads back what it was given, by live source; closing frees it."""
    from collector.store.spill import Segment

    rows = stats("a", "b").drain()
    segment = Segment(str(tmp_path), [(1, key, row) for key, row in rows.items()]
                      + [(2, (DAY, "web", "c"), rows[(DAY, "web", "a")])])
    assert segment.per_source == {1: 2, 2: 1}
    assert [key for key, _ in segment.read(frozenset({1}))] == [(DAY, "web", "a"),
                                                                (DAY, "web", "b")]
    assert [key for key, _ in segment.read(frozenset({2}))] == [(DAY, "web", "c")]
    assert list(Path(tmp_path).iterdir()) == []
    segment.close()


def _locked_replay(tmp_path, monkeypatch, wait_s: float, release_after_s: float | None,
                   command: bool = False):
    """A replay into a SQLite file whose write lock another connection holds (from before
    its first flush), released after ``release_after_s`` (None: never); ``command``: through
    `searchpulse replay`, returning its exit code."""
    monkeypatch.setattr(query_store, "BUSY_TIMEOUT_S", 0.05)
    log = tmp_path / "ubi.jsonl"
    log.write_text("".join(
        f'{{"query_id": "q{i}", "user_query": "tent", "client_id": "c{i}", '
        f'"timestamp": {1767600000000 + 1000 * i}}}\n' for i in range(50)))
    path = tmp_path / "aggregates.db"
    store = open_store(f"sqlite:///{path}")  # a store holding a day already: opening it
    store.add(stats("earlier").drain().items())  # needs no write (an empty one does)
    store.close()
    lock = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN IMMEDIATE")
    if release_after_s is not None:
        threading.Timer(release_after_s, lambda: lock.execute("ROLLBACK")).start()
    config = load_config(environ={}, overrides={"store.wait_s": wait_s})
    try:
        if command:
            return main(["replay", str(log), "--store", f"sqlite:///{path}", "--set",
                         f"store.wait_s={wait_s}", "--no-progress"]), path
        return replay([str(log)], config, store=f"sqlite:///{path}"), path
    finally:
        if release_after_s is None:
            lock.execute("ROLLBACK")


def test_replay_waits_store_wait_s_at_its_end_for_a_store_gone_away(tmp_path, monkeypatch):
    summary, path = _locked_replay(tmp_path, monkeypatch, wait_s=30, release_after_s=1.5)
    assert summary["searches"] == 50
    store = open_store(f"sqlite:///{path}")
    assert {row["query"]: row["searches"] for row in store.rows()}["tent"] == 50
    store.close()


def test_replay_names_a_store_still_away_after_store_wait_s(tmp_path, monkeypatch):
    with pytest.raises(StoreError, match=r"rows not written \(store.wait_s = 0\)"):
        _locked_replay(tmp_path, monkeypatch, wait_s=0, release_after_s=None)


def test_a_replay_the_store_did_not_take_is_a_failure_not_a_usage_error(tmp_path, monkeypatch,
                                                                          caplog):
    code, _ = _locked_replay(tmp_path, monkeypatch, wait_s=0, release_after_s=None,
                             command=True)
    assert code == 1  # it could not finish; the same command does (exit 2 is a bad argument)
    assert "rows not written (store.wait_s = 0)" in caplog.text


def test_replay_into_a_store_that_does_not_answer_at_its_start_fails_at_once(tmp_path):
    log = tmp_path / "ubi.jsonl"
    log.write_text('{"query_id": "q1", "user_query": "tent", "timestamp": 1767600000000}\n')
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="unable to open"):
        replay([str(log)], load_config(environ={}),
               store=f"sqlite:///{tmp_path / 'no' / 'such' / 'x.db'}")
    assert time.monotonic() - started < 5
