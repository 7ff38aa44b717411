"""One replay into a store at a time (collector/store/replay_lock.py): a second replay is
refused while one runs, with or without --workers, on SQLite and a real PostgreSQL; the lock
goes with the process that held it; two replays started together leave the store one replay
leaves (before the lock they each counted the log: 10,244 searches where it holds 5,122)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from collector.config import load_config
from collector.errors import StoreError
from collector.replay import replay
from collector.replay_workers import replay_partitioned
from collector.store.replay_lock import ReplayLock
from searchpulse import main
from tests.collector.store.test_replay_progress import _rows, _simulated

_HOLD = ("import sys, time\nfrom collector.store.replay_lock import ReplayLock\n"
         "lock = ReplayLock.taken(sys.argv[1])\nprint('held', flush=True)\ntime.sleep(60)\n")


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    return _simulated(tmp_path_factory.mktemp("lock") / "ubi.jsonl", 1500)


def test_a_replay_is_refused_while_another_holds_the_store(log, store_url, capsys):
    with ReplayLock.taken(store_url):
        assert main(["replay", str(log), "--store", store_url, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "another replay into it is running" in err and "one replay into a store" in err
        with pytest.raises(StoreError, match="another replay into it is running"):
            replay_partitioned([str(log)], load_config(environ={},
                                                       overrides={"store.url": store_url}), 2)
    assert main(["replay", str(log), "--store", store_url, "--no-progress"]) == 0
    assert _rows(store_url) != {}


def test_the_lock_goes_with_the_process_that_held_it(store_url):
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, store_url], text=True,
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(StoreError, match="another replay into it is running"):
            ReplayLock.taken(store_url)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    ReplayLock.taken(store_url).release()  # released with the process: nothing to clear


def test_two_replays_started_together_count_the_log_once(log, tmp_path):
    url, alone = (f"sqlite:///{tmp_path / name}" for name in ("both.db", "alone.db"))
    replay([str(log)], load_config(environ={}, overrides={"store.url": alone}))
    command = [sys.executable, "-m", "searchpulse", "replay", str(log), "--store", url,
               "--no-progress"]
    runs = [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for _ in range(2)]
    codes = sorted(run.wait() for run in runs)
    assert codes in ([0, 0], [0, 2])  # the second refused, or begun after the first ended
    assert _rows(url) == _rows(alone) != {}


def _drop_lock_connection(url: str) -> None:
    """What a PostgreSQL restart does to the lock: its backend ends, its session lock goes."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        [(ended,)] = db.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
            "application_name = 'searchpulse replay lock' AND datname = current_database()"
        ).fetchall()
    assert ended == 1


def test_a_lock_whose_connection_dropped_is_taken_again_before_the_next_write(
        postgres_database):
    lock = ReplayLock.taken(postgres_database)
    try:
        _drop_lock_connection(postgres_database)
        ReplayLock.taken(postgres_database).release()  # nobody holds it now
        lock.keep()
        with pytest.raises(StoreError, match="another replay into it is running"):
            ReplayLock.taken(postgres_database)  # held again
    finally:
        lock.release()


def test_a_replay_whose_dropped_lock_another_took_does_not_write_again(postgres_database):
    lock = ReplayLock.taken(postgres_database)
    _drop_lock_connection(postgres_database)
    with ReplayLock.taken(postgres_database):  # another replay, started meanwhile
        with pytest.raises(StoreError, match="another replay took the store meanwhile"):
            lock.keep()
    lock.release()


def test_the_replay_checks_its_lock_before_every_write_and_stops_when_it_is_lost(
        log, tmp_path, monkeypatch):
    url, alone = (f"sqlite:///{tmp_path / name}" for name in ("lost.db", "alone.db"))
    replay([str(log)], load_config(environ={}, overrides={"store.url": alone}))
    checks = []

    def lost_after_the_first_write(self: ReplayLock) -> None:
        checks.append(len(checks))
        if len(checks) > 1:
            raise StoreError(f"store {url}: another replay took the store meanwhile")

    monkeypatch.setattr(ReplayLock, "keep", lost_after_the_first_write)
    config = load_config(environ={}, overrides={"store.url": url, "store.flush_rows": 50})
    with pytest.raises(StoreError, match="another replay took the store meanwhile"):
        replay([str(log)], config)
    assert len(checks) == 2  # the first write, then the check that stopped the second
    assert 0 < len(_rows(url)) < len(_rows(alone))  # the first write stays, no other came
