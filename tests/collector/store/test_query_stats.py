"""Per-query aggregates and their store (SQLite and a real PostgreSQL): the sums equal what
replay computes for the same log, flushes split rows without losing counts, a crash in the
middle of a flush leaves no duplicate and no gap, offsets commit with the rows."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections import Counter
from datetime import date

import pytest
from prometheus_client import CollectorRegistry

from collector.config import load_config
from collector.engine import Engine
from collector.replay import replay
from collector.sources.simulator import SimulationSpec, Simulator
from collector.store.query_stats import QueryRow, QueryStats
from collector.store.query_store import StoreError, open_store
from collector.store.store_writer import StoreHealthCollector, StoreWriter

SUMS = {"searches": "searches", "zero_result_searches": "zero_result",
        "clicked_searches": "clicked", "clicks": "clicks", "converted_searches": "converted",
        "reformulated_searches": "reformulated", "abandoned_searches": "abandoned"}


def _totals_by_application(url: str) -> dict[str, Counter]:
    store = open_store(url)
    rows = list(store.rows())
    store.close()
    totals: dict[str, Counter] = {}
    for row in rows:
        totals.setdefault(row["application"], Counter()).update(
            {key: row[field] for key, field in SUMS.items()})
    return totals


@pytest.fixture(scope="module")
def simulated_log(tmp_path_factory):
    log = tmp_path_factory.mktemp("log") / "ubi.jsonl"
    log.write_bytes(b"".join(Simulator(SimulationSpec(seed=4, sessions=1500)).records()))
    return log


def test_aggregates_add_up_to_the_replay_summary(simulated_log, store_url):
    summary = replay([str(simulated_log)], load_config(environ={}), store=store_url)
    totals = _totals_by_application(store_url)
    assert set(totals) == set(summary["by_application"])
    for application, expected in summary["by_application"].items():
        assert {key: expected[key] for key in SUMS} == dict(totals[application]), application
    store = open_store(store_url)
    rows = list(store.rows())
    store.close()
    assert len({row["day"] for row in rows}) == 1
    assert any(row["shown"] for row in rows) and any(row["clicked_documents"] for row in rows)
    assert any(row["reformulations"] for row in rows)
    assert all(len(row["shown"]) <= 10 for row in rows)  # store.shown_depth


def test_many_small_flushes_store_the_same_totals(simulated_log, tmp_path):
    once = f"sqlite:///{tmp_path / 'once.db'}"
    often = f"sqlite:///{tmp_path / 'often.db'}"
    replay([str(simulated_log)], load_config(environ={}), store=once)
    # store.flush_rows=1: a flush at every check (every 65,536 records and at the end)
    replay([str(simulated_log)], load_config(environ={}, overrides={"store.flush_rows": 1}),
           store=often)
    assert _totals_by_application(once) == _totals_by_application(often)


def test_a_flush_in_the_middle_splits_rows_without_losing_counts(ubi, store_url):
    stats = QueryStats()
    e = Engine(load_config(environ={}), query_stats=stats)
    e.process_all([ubi.query("q1", "Tent", 0, hits=["d1", "d2"]), ubi.click("q1", 5, obj="d2"),
                   ubi.query("q2", "tent", 100, client="c2", hits=["d1"]),
                   ubi.query("q3", "lamp", 200, client="c3")])
    writer = StoreWriter(store_url, 60.0, 1000)
    writer.flush({0: stats})  # the first flush: q1 and its click are applied, q2 is pending …
    e.process_all([ubi.click("q2", 150, client="c2", obj="d1", position=2)])
    e.close()
    assert writer.flush({0: stats}, wait=True)  # … the rest, added to the stored rows
    rows = {row["query"]: row for row in writer.store.rows()}
    writer.close()
    tent = rows["tent"]
    assert (tent["searches"], tent["clicked"], tent["ranked_clicked"], tent["clicks"]) == (
        2, 2, 2, 2)
    assert tent["shown"] == {"d1": 2, "d2": 1}
    assert tent["clicked_documents"] == {"d1": 1, "d2": 1}
    assert tent["reciprocal_rank_sum"] == 1.5
    assert (rows["lamp"]["searches"], rows["lamp"]["abandoned"]) == (1, 1)


def test_offsets_commit_with_the_rows_and_a_rejected_flush_moves_nothing(store_url):
    """A flush the database rejects half-way (a value no column takes) writes none of its
    rows and leaves the offsets where they were; the partition given up, the next flush of
    its new assignment writes its own rows and offsets."""
    writer = StoreWriter(store_url, 60.0, 1000)
    stats = QueryStats()
    stats.row(2e9, "web", "tent").searches = 3
    part = ("ubi", 0)
    assert writer.flush({part: stats, ("ubi", 1): QueryStats()},
                        {part: (10, 25), ("ubi", 1): (0, 7)}, "group-a")
    assert writer.offsets("group-a") == {part: (10, 25), ("ubi", 1): (0, 7)}
    assert writer.offsets("group-b") == {}
    assert not stats.rows
    stats.row(2e9, "web", "lamp").searches = 1  # written first in the batch …
    tent = stats.row(2e9, "web", "tent")
    tent.searches, tent.abandoned = 2, float("nan")  # … then a value no database accepts:
    assert not writer.flush({part: stats}, {part: (20, 40)}, "group-a", wait=True)
    assert writer.offsets("group-a")[part] == (10, 25)  # the flush failed as a whole
    assert [row["query"] for row in writer.store.rows()] == ["tent"]
    assert writer.waiting == 2  # its rows wait for the next flush
    writer.forget(part)  # the partition revoked: its waiting rows go with it
    assert writer.waiting == 0
    stats = QueryStats()
    stats.row(2e9, "web", "tent").searches = 4
    assert writer.flush({part: stats}, {part: (20, 40)}, "group-a", wait=True)
    assert {row["query"]: row["searches"] for row in writer.store.rows()} == {"tent": 3 + 4}
    assert writer.offsets("group-a") == {part: (20, 40), ("ubi", 1): (0, 7)}
    registry = CollectorRegistry()
    registry.register(StoreHealthCollector(writer))
    assert {name: registry.get_sample_value(name) for name in (
        "searchpulse_store_flushes_total", "searchpulse_store_flush_failures_total",
        "searchpulse_store_rows_written_total", "searchpulse_store_rows_waiting",
        "searchpulse_store_away_seconds")} == {
        "searchpulse_store_flushes_total": 2.0, "searchpulse_store_flush_failures_total": 1.0,
        "searchpulse_store_rows_written_total": 2.0, "searchpulse_store_rows_waiting": 0.0,
        "searchpulse_store_away_seconds": 0.0}
    writer.close()


_FLUSHER = textwrap.dedent("""
    import sys
    from collector.store.query_stats import QueryStats
    from collector.store.store_writer import StoreHealthCollector, StoreWriter

    writer = StoreWriter(sys.argv[1], 60.0, 10**9)
    def batch(n, offset):
        stats = QueryStats()
        for i in range(n):
            row = stats.row(2e9, "web", f"query {i}")
            row.searches = 1
            row.shown = {f"d{j}": 1 for j in range(10)}
        return stats, {("ubi", 0): (offset, offset)}
    stats, offsets = batch(1000, 1)
    writer.flush({("ubi", 0): stats}, offsets, "g", wait=True)
    print("first flush done", flush=True)
    stats, offsets = batch(400_000, 2)
    print("second flush starting", flush=True)
    writer.flush({("ubi", 0): stats}, offsets, "g", wait=True)
    print("second flush done", flush=True)
""")


def _transaction_writing(store_url: str, wal_size: int) -> bool:
    """Has the child's open transaction written to the database yet?"""
    if store_url.startswith("sqlite:///"):  # its pages spill into the write-ahead log
        wal = store_url.removeprefix("sqlite:///") + "-wal"
        return os.path.exists(wal) and os.path.getsize(wal) > wal_size + (4 << 20)
    import psycopg

    with psycopg.connect(store_url, autocommit=True) as db:  # it holds a transaction id
        return db.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_xid IS NOT NULL"
                          ).fetchone()[0] > 0


@pytest.mark.slow  # ~4 s: a killed writer process
def test_a_crash_in_the_middle_of_a_flush_leaves_the_store_as_it_was(store_url):
    """SIGKILL while a 400,000-row flush is being written: the first flush is all there, the
    second not at all, and the offsets say so."""
    child = subprocess.Popen([sys.executable, "-c", _FLUSHER, store_url],
                             stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert child.stdout.readline().strip() == "first flush done"
    assert child.stdout.readline().strip() == "second flush starting"
    wal = store_url.removeprefix("sqlite:///") + "-wal"
    wal_size = os.path.getsize(wal) if os.path.exists(wal) else 0
    deadline = time.monotonic() + 60
    while not _transaction_writing(store_url, wal_size) and time.monotonic() < deadline:
        assert child.poll() is None, "the flush finished before it could be interrupted"
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.stdout.read() == ""  # killed before the second flush finished
    store = open_store(store_url)
    totals = store.totals("1970-01-01")
    assert (len(totals), totals["searches"].sum()) == (1000, 1000)
    assert store.offsets("g") == {("ubi", 0): (1, 1)}
    store.close()


def test_stored_offsets_name_their_topic_id_and_an_old_store_gets_the_column(store_url,
                                                                            tmp_path):
    """A topic created again under its name (docker compose down && up without a volume) is
    another topic: the store keeps which one its offsets are of."""
    if store_url.startswith("sqlite"):  # a store written before topic ids were kept
        import sqlite3
        old = sqlite3.connect(store_url.removeprefix("sqlite:///"))
        old.execute("CREATE TABLE store_offsets (consumer_group TEXT NOT NULL, topic TEXT "
                    "NOT NULL, kafka_partition INTEGER NOT NULL, safe_offset INTEGER NOT NULL, "
                    "high_offset INTEGER NOT NULL, PRIMARY KEY (consumer_group, topic, "
                    "kafka_partition)) WITHOUT ROWID")
        old.execute("INSERT INTO store_offsets VALUES ('g', 'ubi', 1, 3, 4)")
        old.commit()
        old.close()
    writer = StoreWriter(store_url, 60.0, 1000)
    stats = QueryStats()
    stats.row(2e9, "web", "tent").searches = 1
    assert writer.flush({("ubi", 0): stats}, {("ubi", 0): (10, 25), ("clicks", 0): (1, 2)},
                        "g", wait=True, topic_ids={"ubi": "id-of-ubi"})
    expected = {("ubi", 0): "id-of-ubi", ("clicks", 0): ""}
    if store_url.startswith("sqlite"):
        expected[("ubi", 1)] = ""  # written before: of no known id
    assert writer.topic_ids("g") == expected
    assert writer.offsets("g")[("ubi", 0)] == (10, 25)
    assert writer.flush({("ubi", 0): stats}, {("ubi", 0): (0, 5)}, "g", wait=True,
                        topic_ids={"ubi": "id-of-the-new-ubi"})  # the new topic's offsets
    assert (writer.offsets("g")[("ubi", 0)], writer.topic_ids("g")[("ubi", 0)]) == (
        (0, 5), "id-of-the-new-ubi")
    writer.close()


def test_an_unusable_store_is_a_clear_error(tmp_path):
    not_a_database = tmp_path / "notes.txt"
    not_a_database.write_text("hello, this is not SQLite\n" * 100)
    with pytest.raises(StoreError, match="notes.txt"):
        open_store(f"sqlite:///{not_a_database}")
    with pytest.raises(StoreError, match="expected sqlite:///PATH or postgresql://"):
        open_store("mysql://db/x")
    with pytest.raises(StoreError, match=r"postgresql://reader:\*\*\*@127.0.0.1:1/x"):
        open_store("postgresql://reader:s3cret@127.0.0.1:1/x")


def test_client_marks_of_a_day_are_the_union_of_its_flushes(store_url):
    """Two flushes of one row, clients {a, b} then {b, c}: three distinct marks, in the
    JSON object and in the column the feedback job reads; other days stay apart."""
    store = open_store(store_url)
    try:
        for clients, ts in ((("a", "b"), 2e9), (("b", "c"), 2e9), (("d",), 2e9 + 86400)):
            stats = QueryStats()
            row = stats.row(ts, "web", "tent")
            row.searches = len(clients)
            for client in clients:
                stats.mark(row, client)
            store.add(stats.drain().items())
        rows = list(store.rows())
        assert [(r["day"], r["client_marks"], len(r["clients"])) for r in rows] == [
            ("2033-05-18", 3, 3), ("2033-05-19", 1, 1)]
        assert len(store.client_marks("web", "tent", "2033-05-18")) == 4
        totals = store.totals("2033-05-18")
        assert totals["client_marks"].tolist() == [3]  # the largest day: a lower bound
    finally:
        store.close()


def test_a_store_of_an_older_version_is_read_as_it_is_and_upgraded_by_a_writer(tmp_path):
    """The first store had no item, judged, client-mark, position or without-client-id
    columns and no table of replay positions: a reader (the feedback job, the click model)
    reads them as their defaults without changing the file; a writer adds them."""
    path = tmp_path / "old.db"
    counts = ("searches", "zero_result", "clicked", "ranked_clicked", "clicks", "converted",
              "reformulated", "abandoned")
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE query_stats (application TEXT NOT NULL, query TEXT NOT NULL, "
               "day TEXT NOT NULL, " + ", ".join(f"{c} INTEGER NOT NULL" for c in counts)
               + ", reciprocal_rank_sum REAL NOT NULL, PRIMARY KEY (application, query, day))")
    db.execute("INSERT INTO query_stats VALUES ('web', 'tent', '2026-01-05', 5, 1, 3, 3, 4, "
               "0, 1, 1, 2.5)")
    db.execute("INSERT INTO query_stats VALUES ('web', 'lamp', '2026-01-04', 1, 0, 0, 0, 0, "
               "0, 0, 1, 0)")
    db.commit()
    db.close()
    url = f"sqlite:///{path}"
    reader = open_store(url, read_only=True)
    assert reader.newest_day() == date(2026, 1, 5)  # no table of days: from every row
    totals = reader.totals("2026-01-01")
    assert totals[["searches", "clicks", "judged_searches", "client_marks"]].iloc[1].tolist() \
        == [5, 4, 0, 0]
    assert reader.items("web", "tent", "2026-01-01") == {
        "shown": {}, "clicked_documents": {}, "reformulations": {}, "clients": {},
        "shown_at": {}, "clicked_at": {}}
    assert list(reader.positions("2026-01-01")) == []
    assert reader.clients_of("web", "tent", "2026-01-01") == (set(), 0)
    assert reader.inputs() == {}  # no replay positions: no unfinished replay
    reader.close()
    db = sqlite3.connect(path)
    columns = [row[1] for row in db.execute("PRAGMA table_info(query_stats)")]
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    db.close()
    assert "shown_at" not in columns and "store_inputs" not in tables  # a reader never
    open_store(url).close()  # changes a store
    db = sqlite3.connect(path)
    columns = [row[1] for row in db.execute("PRAGMA table_info(query_stats)")]
    assert {"shown_at", "clicked_at", "judged_ndcg_sum", "client_marks",
            "searches_without_client_id"} <= set(columns)
    assert db.execute("SELECT COUNT(*) FROM store_inputs").fetchone() == (0,)
    assert db.execute("SELECT day FROM store_days ORDER BY day").fetchall() == [
        ("2026-01-04",), ("2026-01-05",)]  # the writer filled in the days the store held


def test_a_day_after_the_wall_clock_neither_prunes_a_day_nor_ends_the_period(store_url):
    """Retention and the newest day are bounded by the wall clock: a row of 2199 (a record
    whose clock ran ahead) deletes no real day and does not become where the feedback job's
    period ends; a store whose every day is after today (a log dated ahead) ends on its
    last day, and keeps every one of them."""
    day = 20_458  # 2026-01-05, "today"
    store = open_store(store_url, retention_days=2)
    store.wall_clock = lambda: day * 86400.0 + 3600
    store.add([((day, "web", "tent"), QueryRow(searches=1)),
               ((day - 1, "web", "tent"), QueryRow(searches=1))])
    store.add([((84_000, "web", "lamp"), QueryRow(searches=1))])  # 2199-12-26
    assert store.newest_day() == date(2026, 1, 5)
    reader = open_store(store_url, read_only=True)
    reader.wall_clock = store.wall_clock
    assert reader.newest_day() == date(2026, 1, 5)
    assert sorted(r["day"] for r in reader.rows()) == ["2026-01-04", "2026-01-05", "2199-12-26"]
    reader.close()
    store.wall_clock = lambda: (day - 400) * 86400.0  # every day is after today
    store.add([((day + 3, "web", "lamp"), QueryRow(searches=2))])
    assert store.newest_day() == date(2199, 12, 26)
    assert len({r["day"] for r in store.rows()}) == 4  # nothing pruned by days ahead
    store.close()


def test_the_newest_day_is_read_from_the_days_written_with_the_rows(store_url):
    """Every flush notes its rows' days in the same transaction, retention drops them with
    the rows, and the newest day is read from them: one lookup, not a scan of every row."""
    store = open_store(store_url, retention_days=2)
    assert store.newest_day() is None
    day = 20_458  # 2026-01-05
    store.add([((day, "web", "tent"), QueryRow(searches=1)),
               ((day - 1, "web", "tent"), QueryRow(searches=1))])
    assert store.newest_day() == date(2026, 1, 5)
    store.add([((day + 3, "web", "lamp"), QueryRow(searches=2))])  # 2026-01-08: 2 days kept
    assert store.newest_day() == date(2026, 1, 8)
    reader = open_store(store_url, read_only=True)
    assert reader.newest_day() == date(2026, 1, 8)
    assert [r["day"] for r in reader.rows()] == ["2026-01-08"]
    reader.close()
    cursor = store.db.cursor()
    cursor.execute("SELECT day FROM store_days")
    assert [d for (d,) in cursor.fetchall()] == ["2026-01-08"]
    if store_url.startswith("sqlite"):
        plan = store.db.execute(f"EXPLAIN QUERY PLAN {store._sql['newest_day']}",
                                ("2026-01-08",)).fetchall()
        assert "query_stats" not in str(plan) and "store_days" in str(plan)
    store.close()
