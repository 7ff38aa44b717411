"""`replay --store`, trusted: killed at any point (SIGKILL; SQLite and a real PostgreSQL) the
same command again ends with the store one clean replay leaves; the same records through
another file, a compressed file or stdin are recognised and not counted again; a grown log
continues where the last replay stopped; an unfinished replay is named by the jobs that read
the store, which refuse it unless told to go on."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.config import load_config
from collector.engine import Engine
from collector.replay import replay
from collector.sources import files
from collector.sources.simulator import SimulationSpec, Simulator
from collector.store.query_store import StoreError, open_store

ITEMS = ("shown", "clicked_documents", "reformulations", "clients", "shown_at", "clicked_at")
FLUSH_EVERY_BATCH = {"store.flush_rows": 1}


def _rows(url: str) -> dict[tuple, dict[str, Any]]:
    store = open_store(url)
    try:
        return {(r["application"], r["query"], r["day"]): r for r in store.rows()}
    finally:
        store.close()


def _caps(url: str) -> dict[str, int]:
    store = open_store(url)
    try:
        return dict(store.items_per_flush)
    finally:
        store.close()


def assert_same_store(clean_url: str, url: str, but_application: str | None = None) -> None:
    """Every count and sum of every (application, query, day) equal; the bounded item lists
    (documents shown and clicked, reformulations, client marks) equal wherever the clean
    store's list is below its cap (at the cap, which items survive depends on where flushes
    split a row, in any replay). ``but_application``: its rows are not compared."""
    clean, got = ({key: row for key, row in _rows(store).items() if key[0] != but_application}
                  for store in (clean_url, url))
    caps = _caps(clean_url)
    assert got.keys() == clean.keys()
    for key, row in clean.items():
        for column, value in row.items():
            if column in ITEMS:
                if len(value) < caps[column]:
                    assert got[key][column] == value, (key, column)
            elif isinstance(value, float):
                assert got[key][column] == pytest.approx(value, rel=1e-9, abs=1e-12), key
            else:
                assert got[key][column] == value, (key, column)


def _searches(url: str) -> int:
    return sum(row["searches"] for row in _rows(url).values())


def _simulated(path: Path, sessions: int, seed: int = 4) -> Path:
    """Sparse traffic (a session a second): the log spans hours of event time, so the safe
    position moves as the replay goes (windows close behind it)."""
    path.write_bytes(b"".join(Simulator(SimulationSpec(
        seed=seed, sessions=sessions, sessions_per_second=1.0)).records()))
    return path


def searchpulse(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "searchpulse", *args], input=stdin,
                          capture_output=True, check=False)


@pytest.fixture(scope="module")
def big_log(tmp_path_factory) -> Path:
    return _simulated(tmp_path_factory.mktemp("big") / "ubi.jsonl", 12_000)


@pytest.fixture(scope="module")
def clean_big(big_log, tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('clean') / 'clean.db'}"
    replay([str(big_log)], load_config(environ={}), store=url)
    return url


def _counted(url: str) -> tuple[int, bool]:
    """(records the store's rows hold of the input, complete) as the store says now."""
    try:
        store = open_store(url, read_only=True)
    except StoreError:  # not created yet
        return 0, False
    try:
        marks = list(store.inputs().values())
    finally:
        store.close()
    return (marks[0].high_records, marks[0].complete) if marks else (0, False)


@pytest.mark.slow  # ~15 s each: three replays of 55,000 records, a flush after every MiB
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.85])
def test_killed_at_any_point_the_same_command_again_ends_with_the_clean_store(
        store_url, fraction, big_log, clean_big):
    total = sum(1 for line in big_log.read_bytes().splitlines() if line.strip())
    command = ["replay", str(big_log), "--store", store_url, "--set", "store.flush_rows=1",
               "--no-progress", "--json"]
    child = subprocess.Popen([sys.executable, "-m", "searchpulse", *command],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = int(total * fraction)
    deadline = time.monotonic() + 120
    while _counted(store_url)[0] < target:
        assert child.poll() is None, "the replay ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait()
    counted, complete = _counted(store_url)
    assert target <= counted < total and not complete
    done = searchpulse(*command)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["already_in_store"] == {str(big_log): counted}
    assert _counted(store_url) == (total, True)
    assert_same_store(clean_big, store_url)
    again = json.loads(searchpulse(*command).stdout)  # and once more: nothing to do
    assert (again["records"], again["already_in_store"]) == (0, {str(big_log): total})
    assert_same_store(clean_big, store_url)


# -- any crash point, several inputs, any form of them (in process) ------------------------

class _Crash(BaseException):
    """What SIGKILL does to the replay: it stops; the flushes written stay written."""


def _replay_crashing_after(paths: list[str], url: str, records: int | None,
                           monkeypatch) -> dict | None:
    """Replay, stopped dead once more than ``records`` records were fed (None: not)."""
    feed = Engine.process_all
    fed = [0]

    def crashing(engine: Engine, raws) -> None:
        raws = list(raws)
        fed[0] += len(raws)
        if records is not None and fed[0] > records:
            raise _Crash
        feed(engine, raws)

    with monkeypatch.context() as patch:
        patch.setattr(Engine, "process_all", crashing)
        try:
            return replay(paths, load_config(environ={}, overrides=FLUSH_EVERY_BATCH),
                          store=url)
        except _Crash:
            return None


@pytest.fixture(scope="module")
def hosts(tmp_path_factory) -> dict[str, list[Path]]:
    """A sparse log split into two per-host logs, each in every form replay reads."""
    folder = tmp_path_factory.mktemp("hosts")
    lines = _simulated(folder / "all.jsonl", 700, seed=9).read_bytes().splitlines()
    forms: dict[str, list[Path]] = {}
    for host in (0, 1):
        mine = [line for line in lines if zlib.crc32(line[:80]) % 2 == host]
        text = b"\n".join(mine) + b"\n"
        plain = folder / f"h{host}.jsonl"
        plain.write_bytes(text)
        (folder / f"h{host}.crlf").write_bytes(b"".join(line + b"  \r\n" for line in mine))
        (folder / f"h{host}.gz").write_bytes(gzip.compress(text))
        (folder / f"h{host}.bz2").write_bytes(bz2.compress(text))
        for form in ("jsonl", "crlf", "gz", "bz2"):
            forms.setdefault(form, []).append(folder / f"h{host}.{form}")
    return forms


@pytest.fixture(scope="module")
def clean_hosts(hosts, tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('clean-hosts') / 'clean.db'}"
    replay([str(p) for p in hosts["jsonl"]], load_config(environ={}), store=url)
    return url


def _small_batches(monkeypatch) -> None:
    monkeypatch.setattr(files, "_BATCH", 4096)
    monkeypatch.setattr(files, "_MERGED_BATCH", 8)


@pytest.mark.slow  # ~11 s: crashed and rerun replays
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(crashes=st.lists(st.integers(0, 3600), min_size=1, max_size=3),
       forms=st.lists(st.sampled_from(["jsonl", "crlf", "gz", "bz2"]), min_size=4,
                      max_size=4),
       swapped=st.booleans())
def test_crashed_anywhere_any_number_of_times_the_rerun_equals_a_clean_replay(
        crashes, forms, swapped, hosts, clean_hosts, tmp_path_factory, monkeypatch):
    """Batches of ~10 records (a flush after each): the crash points fall anywhere, also
    while a resumed replay is still catching up; each run may read the inputs in another form
    and order."""
    _small_batches(monkeypatch)
    url = f"sqlite:///{tmp_path_factory.mktemp('crash') / 'store.db'}"
    for n, crash in enumerate([*crashes, None]):
        paths = [str(p) for p in hosts[forms[n]]]
        if swapped:
            paths.reverse()
        _replay_crashing_after(paths, url, crash, monkeypatch)
    assert_same_store(clean_hosts, url)


# -- recognised by content ----------------------------------------------------------------

@pytest.fixture
def small_log(tmp_path) -> Path:
    return _simulated(tmp_path / "ubi.jsonl", 1500, seed=5)


@pytest.mark.slow  # ~12 s: replay subprocesses per compression
def test_the_same_records_through_any_file_compression_or_stdin_count_once(small_log,
                                                                           tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    text = small_log.read_bytes()
    records = sum(1 for line in text.splitlines() if line.strip())
    first = searchpulse("replay", str(small_log), "--store", url, "--json")
    assert first.returncode == 0, first.stderr
    searches = json.loads(first.stdout)["searches"]
    assert _searches(url) == searches > 0
    packed = tmp_path / "renamed.gz"
    packed.write_bytes(gzip.compress(text))
    crlf = tmp_path / "windows.txt"  # CRLF line endings and trailing blanks: the same records
    crlf.write_bytes(b"".join(line.rstrip(b"\n") + b" \t\r\n" for line in text.splitlines()))
    for args, stdin in (([str(packed)], None), (["-"], text), (["-"], bz2.compress(text)),
                        ([str(crlf)], None)):
        again = searchpulse("replay", *args, "--store", url, "--json", stdin=stdin)
        assert again.returncode == 0, again.stderr
        summary = json.loads(again.stdout)
        assert summary["records"] == 0, args
        assert list(summary["already_in_store"].values()) == [records]
        assert b"already" in again.stderr
    assert _searches(url) == searches


def test_a_grown_log_continues_where_the_last_replay_stopped(small_log, tmp_path):
    """Its new records count as a replay of them alone would count them (the searches open
    at the end of the first replay were decided there, as at any end of input)."""
    lines = small_log.read_bytes().splitlines(keepends=True)
    head, tail = lines[: len(lines) * 3 // 5], lines[len(lines) * 3 // 5:]
    growing, rest = tmp_path / "growing.jsonl", tmp_path / "rest.jsonl"
    growing.write_bytes(b"".join(head))
    rest.write_bytes(b"".join(tail))
    grown, expected = f"sqlite:///{tmp_path / 'grown.db'}", f"sqlite:///{tmp_path / 'e.db'}"
    config = load_config(environ={})
    for url in (grown, expected):
        replay([str(growing)], config, store=url)
    growing.write_bytes(b"".join(lines))  # the log grew
    summary = replay([str(growing)], config, store=grown)
    assert summary["already_in_store"] == {str(growing): len(head)}
    assert summary["records"] == len(tail)
    replay([str(rest)], config, store=expected)
    assert_same_store(expected, grown)


def test_a_log_that_begins_like_a_held_one_but_differs_is_refused_untouched(small_log,
                                                                           tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    config = load_config(environ={})
    replay([str(small_log)], config, store=url)
    before = _rows(url)
    lines = small_log.read_bytes().splitlines(keepends=True)
    edited = tmp_path / "edited.jsonl"
    edited.write_bytes(b"".join([*lines[:-3], lines[-3].replace(b"{", b'{"edited": 1, ', 1),
                                 *lines[-2:]]))  # one record changed near the end
    shorter = tmp_path / "shorter.jsonl"
    shorter.write_bytes(b"".join(lines[:100]))
    for path, message in ((edited, "not the ones the store counted"),
                          (shorter, f"ends after 100 records, the store counted {len(lines)}")):
        with pytest.raises(StoreError, match=message):
            replay([str(path)], config, store=url)
    assert _rows(url) == before
    done = searchpulse("replay", str(edited), "--store", url)
    assert done.returncode == 2 and b"use another store" in done.stderr


def test_an_interrupted_replay_is_finished_with_its_inputs_and_only_them(
        hosts, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    both = [str(p) for p in hosts["jsonl"]]
    _small_batches(monkeypatch)
    assert _replay_crashing_after(both, url, 3000, monkeypatch) is None  # after a flush
    config = load_config(environ={})
    with pytest.raises(StoreError, match=f"also read {both[1]}: give the same inputs"):
        replay(both[:1], config, store=url)
    other = tmp_path / "other.jsonl"
    other.write_bytes(hosts["jsonl"][0].read_bytes().replace(b'"q', b'"r', 1))
    with pytest.raises(StoreError, match="finish the interrupted replay of"):
        replay([*both, str(other)], config, store=url)
    with pytest.raises(StoreError, match="begin with the same record"):
        replay([both[0], str(hosts["gz"][0])], config, store=url)


def test_a_store_of_the_earlier_version_still_refuses_what_it_holds(small_log, tmp_path):
    """It marked each input by a fingerprint of its file (store_offsets, group
    searchpulse-replay) and cannot say how far it got."""
    from collector.replay import _fingerprint

    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = open_store(url)
    store.add([], {(_fingerprint(str(small_log)), 0): (1, 1)}, "searchpulse-replay")
    store.close()
    with pytest.raises(StoreError, match="written by an earlier version"):
        replay([str(small_log)], load_config(environ={}), store=url)


# -- an unfinished replay is visible --------------------------------------------------------

@pytest.mark.slow  # ~8 s: CLI subprocesses
def test_feedback_and_clicks_name_an_unfinished_replay_and_go_on_only_when_told(
        small_log, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    assert _replay_crashing_after([str(small_log)], url, 4000, monkeypatch) is None
    counted = _counted(url)[0]
    assert counted > 0
    for job in ("feedback", "clicks"):
        out = tmp_path / job
        refused = searchpulse(job, "--store", url, "--out", str(out), "--no-progress")
        assert refused.returncode == 3, refused.stderr
        assert (f"unfinished replay of {small_log} ({counted} records counted)".encode()
                in refused.stderr)
        assert b"--allow-incomplete" in refused.stderr
        allowed = searchpulse(job, "--store", url, "--out", str(out), "--no-progress",
                              "--allow-incomplete")
        assert allowed.returncode == 0, allowed.stderr
        assert b"used as it is" in allowed.stderr
    by_env = subprocess.run(
        [sys.executable, "-m", "searchpulse", "clicks", "--store", url, "--out",
         str(tmp_path / "clicks"), "--no-progress"], capture_output=True, check=False,
        env={**os.environ, "SEARCHPULSE_STORE_ALLOW_INCOMPLETE": "true"})
    assert by_env.returncode == 0, by_env.stderr
    assert searchpulse("replay", str(small_log), "--store", url).returncode == 0
    finished = searchpulse("feedback", "--store", url, "--out", str(tmp_path / "f"),
                           "--no-progress")
    assert finished.returncode == 0 and b"unfinished" not in finished.stderr
