"""`replay --workers N`: every test log replayed over 1, 2 and 3 processes gives the same
summary (byte for byte), exposition and dead letters; partitions are Kafka's; into a store
(SQLite, a real PostgreSQL) the same rows, a grown log continued, a broken input written
only once whole, what a replay into a store refuses refused."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from itertools import islice
from pathlib import Path

import pytest
from kafka.partitioner.default import DefaultPartitioner, murmur2

from collector.config import load_config
from collector.errors import StoreError
from collector.replay import replay
from collector.replay_workers import Router, assigned, replay_partitioned
from collector.sources.partitions import Partitioner, partition_of_key
from collector.store.query_store import InputMark, open_store
from searchpulse import main
from tests.collector.store.test_replay_progress import _rows
from tests.collector.test_properties import without_sparse_tail_retiming
from tests.collector.test_replay import _rounded, searchpulse

FIXTURE = Path(__file__).parent.parent / "fixtures" / "opensearch-generator-chunk.jsonl"
# Simulator outputs of every shape the tests use: invalid records and duplicates; front ends
# that search as you type, bots and a tracking outage; nights, a lull and an incident.
SIMULATED = {
    "invalid": ("--seed", "7", "--sessions", "1500", "--invalid-rate", "0.02"),
    "front_ends": (
        "--seed",
        "3",
        "--sessions",
        "1200",
        "--type-ahead",
        "web,opensearch",
        "--bot",
        "crawler@web:25/m:0+1h",
        "--bot",
        "monitor@web:1/m",
        "--bot",
        "fleet@mobile:25x4/m:10m+30m",
        "--tracking-outage",
        "web:20m+10m",
    ),
    "nights": (
        "--seed",
        "5",
        "--sessions",
        "1500",
        "--diurnal",
        "--lull",
        "5m+20m",
        "--incident",
        "zero_results:x5:5m+10m",
    ),
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, list[str]]:
    """Each test log as the inputs of one replay."""
    folder = tmp_path_factory.mktemp("logs")
    found = {"fixture": [str(FIXTURE)]}
    for name, args in SIMULATED.items():
        out, truth = folder / f"{name}.jsonl", folder / f"{name}-truth.json"
        done = searchpulse("simulate", *args, "--out", str(out), "--truth", str(truth))
        assert done.returncode == 0, done.stderr
        found[name] = [str(out)]
    invalid = folder / "invalid.jsonl"
    repeated = folder / "repeated.jsonl.gz"  # a range repeated (cat log log), compressed
    with gzip.open(repeated, "wb") as handle:
        handle.write(invalid.read_bytes() * 2)
    found["repeated_gz"] = [str(repeated)]
    second = folder / "second-host.jsonl"  # two per-host logs merged by event time
    shutil.copy(folder / "nights.jsonl", second)
    found["two_inputs"] = [str(folder / "front_ends.jsonl"), str(second)]
    return found


def _marks(url: str) -> list[InputMark]:
    store = open_store(url, read_only=True)
    try:
        return sorted(store.inputs().values(), key=lambda mark: mark.ordinal)
    finally:
        store.close()


def _records(path: str) -> int:
    return sum(1 for line in Path(path).read_bytes().splitlines() if line.strip())


def _replayed(paths: list[str], workers: int, folder: Path) -> tuple[bytes, bytes, bytes]:
    """(summary as the CLI prints it, --metrics-out, --dlq) of one replay."""
    prom, dlq = folder / f"{workers}.prom", folder / f"{workers}.dlq"
    summary = replay_partitioned(
        paths, load_config(environ={}), workers, dlq=str(dlq), metrics_out=str(prom)
    )
    return json.dumps(summary, indent=2).encode(), prom.read_bytes(), dlq.read_bytes()


@pytest.mark.parametrize("name", ["fixture", *SIMULATED, "repeated_gz", "two_inputs"])
def test_every_number_of_workers_gives_the_same_replay(logs, name, tmp_path):
    one = _replayed(logs[name], 1, tmp_path)
    assert json.loads(one[0])["records"] > 0
    for workers in (2, 3):
        assert _replayed(logs[name], workers, tmp_path) == one, f"--workers {workers}"


def test_repeats_and_dead_letters_are_counted_once(logs, tmp_path):
    (tmp_path / "alone").mkdir()
    summary, prom, dlq = _replayed(logs["repeated_gz"], 2, tmp_path)
    alone, _, alone_dlq = _replayed(logs["invalid"], 2, tmp_path / "alone")
    got, expected = json.loads(summary), json.loads(alone)
    repeated = got.pop("repeated_records")
    assert got == expected
    assert repeated[logs["repeated_gz"][0]]["records"] == expected["records"]
    assert b"searchpulse_repeated_records_total %d.0" % expected["records"] in prom
    assert dlq == alone_dlq and dlq.count(b"\n") >= expected["invalid_records"] > 0


def test_partitioned_replay_equals_the_ground_truth(tmp_path):
    log, truth = tmp_path / "ubi.jsonl", tmp_path / "truth.json"
    done = searchpulse(
        "simulate", "--seed", "11", "--sessions", "1500", "--out", str(log), "--truth", str(truth)
    )
    assert done.returncode == 0, done.stderr
    summary = replay_partitioned([str(log)], load_config(environ={}), 2)
    expected = json.loads(truth.read_text())
    assert _rounded(summary) == _rounded(without_sparse_tail_retiming(summary, expected))


def test_partitions_are_kafkas_default_partitioner():
    class Cluster:  # the metadata DefaultPartitioner reads: a topic of 4 partitions
        def topics(self):
            return {"ubi"}

        def partitions_for_topic(self, topic):
            return {0, 1, 2, 3}

        available_partitions_for_topic = partitions_for_topic

    keys = [f"c-{n:012x}".encode() for n in range(2000)] + ["klient-ü".encode(), b"x"]
    kafka = [DefaultPartitioner().partition("ubi", k, k, None, None, Cluster()) for k in keys]
    assert [partition_of_key(k, 4) for k in keys] == kafka
    assert sorted(set(kafka)) == [0, 1, 2, 3]
    assert partition_of_key(b"c-d63592fe00e8", 4) == (murmur2(b"c-d63592fe00e8") & 0x7FFFFFFF) % 4


def test_the_key_is_client_id_else_query_id_else_partition_0():
    router = Partitioner(4)
    records = [
        b'{"client_id":"c-1","query_id":"q-9"}',
        b'{"query_id":"q-9"}',
        b'{"client_id":"","query_id":"q-9"}',
        b'{"user_query":"x"}',
        b"not json",
        b'{"client_id":7,"query_id":"q-9"}',
        b"[1]",
    ]
    expected = [partition_of_key(b"c-1", 4), *[partition_of_key(b"q-9", 4)] * 2, 0, 0, 0, 0]
    assert router.partitions_of(records) == expected  # one bad record: each decoded alone
    assert router.partitions_of(records[:3]) == expected[:3]  # the batch as one array
    assert router.split(records, range(0, 4)) == {
        p: [r for r, q in zip(records, expected, strict=True) if q == p] for p in range(4)
    }


def test_a_record_the_two_field_decode_refuses_goes_where_the_engine_reads_its_key():
    """A byte-order mark, a bare NaN (what Python's json.dumps writes), a field of another
    type: the engine reads these records, so their client_id routes them, not partition 0."""
    router = Partitioner(4)
    client = next(f"c-{n}" for n in range(50) if partition_of_key(f"c-{n}".encode(), 4) != 0)
    read_by_the_engine = [
        b'\xef\xbb\xbf{"client_id":"%s","query_id":"q-1"}' % client.encode(),
        b'{"client_id":"%s","query_attributes":{"latency_ms":NaN}}' % client.encode(),
        b'{"client_id":"%s","timestamp":Infinity}' % client.encode(),
    ]
    assert router.partitions_of(read_by_the_engine) == [partition_of_key(client.encode(), 4)] * 3


def test_lines_that_are_not_one_object_do_not_move_their_neighbours():
    """Two objects on one line, an object split over two lines: joined into one JSON array
    they would still make as many objects as lines, each key one record late."""
    router = Partitioner(4)
    keys = [f"c-{n}" for n in range(40)]
    records = []
    for key in keys:
        records += [b'{"client_id":"%s"}' % key.encode(), b'{"client_id":"x"},{"client_id":"zz"}',
                    b'{"a":[1', b'2]}']
    expected = [p for key in keys for p in (partition_of_key(key.encode(), 4), 0, 0, 0)]
    assert router.partitions_of(records) == expected


def test_a_fifo_is_read_once_whoever_replays_it(logs, tmp_path):
    """One reader: a named pipe (or <(…)) gives the file's summary; workers that each read
    it would split one stream between them."""
    log = Path(logs["invalid"][0])
    fifo = tmp_path / "records"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(log.read_bytes()))
    writer.start()
    from_fifo = searchpulse("replay", str(fifo), "--workers", "2", "--json", "--no-progress")
    writer.join()
    from_file = searchpulse("replay", str(log), "--workers", "2", "--json", "--no-progress")
    assert from_fifo.returncode == from_file.returncode == 0, from_fifo.stderr
    assert json.loads(from_fifo.stdout) == {**json.loads(from_file.stdout),
                                            "records": _records(str(log))}


def test_workers_end_when_their_reader_is_killed(long_log, tmp_path):
    """SIGKILL to the parent alone: its workers see their pipes end and exit, not wait on
    them for ever holding their partitions (a store's rows fill the pipe of a result)."""
    parent, children = _started_with_workers(long_log, tmp_path,
                                             "--store", f"sqlite:///{tmp_path / 'store.db'}")
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_running(pid) for pid in children):
        time.sleep(0.05)
    assert [pid for pid in children if _running(pid)] == []


def _started_with_workers(log: Path, tmp_path: Path, *extra: str) -> tuple[subprocess.Popen,
                                                                          list[int]]:
    """``replay --workers 2`` of ``log`` begun (its temporary files in ``tmp_path``), and its
    two workers' process ids once both run."""
    parent = subprocess.Popen([sys.executable, "-m", "searchpulse", "replay", str(log),
                               "--workers", "2", "--no-progress", *extra],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env={**os.environ, "TMPDIR": str(tmp_path)})
    children: list[int] = []
    deadline = time.monotonic() + 30
    while len(children) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
        found = Path(f"/proc/{parent.pid}/task/{parent.pid}/children")
        children = [int(pid) for pid in found.read_text().split()] if found.exists() else []
    assert len(children) == 2 and parent.poll() is None
    return parent, children


@pytest.fixture(scope="module")
def long_log(tmp_path_factory) -> Path:
    log = tmp_path_factory.mktemp("long") / "long.jsonl"
    done = searchpulse("simulate", "--seed", "2", "--sessions", "20000", "--invalid-rate",
                       "0.02", "--out", str(log))
    assert done.returncode == 0, done.stderr
    return log


def test_sigterm_to_the_reader_removes_the_dead_letters_kept_apart(long_log, tmp_path):
    """Raw records wait in a temporary folder until the merge: SIGTERM (or SIGHUP) ends the
    replay as Ctrl-C does, that folder removed, exit 143."""
    parent, _ = _started_with_workers(long_log, tmp_path, "--dlq", str(tmp_path / "x.dlq"))
    time.sleep(0.5)
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(timeout=30) == 128 + signal.SIGTERM
    assert list(tmp_path.glob("searchpulse-dlq-*")) == []


def test_a_worker_killed_ends_the_replay_in_one_line(long_log, tmp_path):
    parent, children = _started_with_workers(long_log, tmp_path)
    os.kill(children[1], signal.SIGKILL)
    _, err = parent.communicate(timeout=60)
    assert parent.returncode == 1
    assert b"searchpulse-replay-1 ended without its result (exit code -9" in err
    assert b"Traceback" not in err


def test_dead_letters_wait_for_the_store_to_hold_what_they_go_with(logs, tmp_path,
                                                                  monkeypatch):
    """A store that refuses the final write: the same command runs again from the start, so
    the dead letters it would write again are not written yet."""
    def away(*_):
        raise StoreError("store away")

    monkeypatch.setattr("collector.replay_workers._into_store", away)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    dlq = tmp_path / "d.jsonl"
    with pytest.raises(StoreError, match="store away"):
        _into_store(logs["invalid"], 2, f"sqlite:///{tmp_path / 's.db'}", dlq)
    assert not dlq.exists() or dlq.read_bytes() == b""
    assert list((tmp_path / "tmp").iterdir()) == []  # nor kept


def test_a_batch_is_split_in_one_pass_whatever_the_partitions():
    router = Partitioner(64)
    records = [b'{"client_id":"c-%d"}' % n for n in range(3000)]
    parts = router.partitions_of(records)
    assert router.split(records, range(64)) == {
        p: [r for r, q in zip(records, parts, strict=True) if q == p] for p in range(64)}
    assert router.split(records, range(8, 12)) == {
        p: [r for r, q in zip(records, parts, strict=True) if q == p] for p in range(8, 12)}


def test_a_closed_standard_input_is_an_input_error():
    done = subprocess.run([sys.executable, "-m", "searchpulse", "replay", "-", "--workers", "2",
                           "--no-progress"], stdin=subprocess.DEVNULL, capture_output=True,
                          check=False, preexec_fn=lambda: os.close(0))
    assert done.returncode == 3
    assert b"input -: standard input is closed" in done.stderr


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_workers_get_contiguous_even_ranges_of_partitions():
    assert assigned(4, 1) == [range(0, 4)]
    assert assigned(4, 3) == [range(0, 2), range(2, 3), range(3, 4)]
    assert assigned(5, 2) == [range(0, 3), range(3, 5)]


def test_more_workers_than_partitions_is_a_usage_error(capsys):
    assert main(["replay", str(FIXTURE), "--workers", "5", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--workers 5: must be 1 to replay.partitions (4)" in err
    with pytest.raises(SystemExit) as refused:
        main(["replay", str(FIXTURE), "--workers", "0"])
    assert refused.value.code == 2 and "--workers" in capsys.readouterr().err


def test_stdin_is_read_once_by_the_reader_and_gives_the_files_summary(logs):
    """The parent alone reads the inputs, so - (stdin) is one input like a file."""
    log = Path(logs["front_ends"][0])
    from_file = searchpulse("replay", str(log), "--workers", "2", "--json", "--no-progress")
    from_stdin = searchpulse("replay", "-", "--workers", "2", "--json", "--no-progress",
                             stdin=log.read_bytes())
    assert from_file.returncode == from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout
    assert json.loads(from_stdin.stdout)["searches"] > 1000


# -- into a store ---------------------------------------------------------------------------


def _into_store(paths: list[str], workers: int, url: str, dlq: Path | None = None) -> dict:
    config = load_config(environ={}, overrides={"store.url": url})
    return replay_partitioned(paths, config, workers, dlq=str(dlq) if dlq else None)


def test_a_store_from_any_number_of_workers_holds_the_same_rows(logs, store_url, tmp_path):
    """The partitions' rows merged in partition order: the same rows for every N, floats
    included, every input complete; the summary and dead letters those of the replay
    without a store."""
    paths = logs["two_inputs"]
    plain, _, plain_dlq = _replayed(paths, 2, tmp_path)
    got = {}
    for workers in (1, 2, 3):
        url = store_url if workers == 2 else f"sqlite:///{tmp_path / f'{workers}.db'}"
        dlq = tmp_path / f"store-{workers}.dlq"
        summary = _into_store(paths, workers, url, dlq)
        assert json.dumps(summary, indent=2).encode() == plain, f"--workers {workers}"
        assert dlq.read_bytes() == plain_dlq
        got[workers] = _rows(url)
        assert [(m.high_records, m.complete) for m in _marks(url)] == [
            (_records(p), True) for p in paths
        ]
    assert got[1] == got[2] == got[3]
    assert sum(r["searches"] for r in got[1].values()) == json.loads(plain)["searches"] > 0


def test_a_grown_log_continues_with_workers_where_the_store_stopped(logs, tmp_path):
    lines = Path(logs["nights"][0]).read_bytes().splitlines(keepends=True)
    cut = len(lines) * 3 // 5
    growing, rest = tmp_path / "growing.jsonl", tmp_path / "rest.jsonl"
    growing.write_bytes(b"".join(lines[:cut]))
    rest.write_bytes(b"".join(lines[cut:]))
    grown, expected = (f"sqlite:///{tmp_path / name}" for name in ("grown.db", "e.db"))
    for url in (grown, expected):
        _into_store([str(growing)], 2, url)
    growing.write_bytes(b"".join(lines))  # the log grew
    summary = _into_store([str(growing)], 2, grown)
    assert summary["already_in_store"] == {str(growing): cut}
    assert summary["records"] == len(lines) - cut
    assert _into_store([str(rest)], 2, expected)["records"] == len(lines) - cut
    assert _rows(grown) == _rows(expected)
    again = _into_store([str(growing)], 3, grown)  # held whole: nothing to do
    assert (again["records"], again["already_in_store"]) == (0, {str(growing): len(lines)})
    assert _rows(grown) == _rows(expected)


def test_a_log_growing_while_it_is_replayed_is_marked_as_far_as_it_was_read(
        logs, tmp_path, monkeypatch):
    """The one reader reads a growing log to one end: the store marks what was counted, and
    the next run continues from there to what one replay of the prefix, then of the whole
    log, leaves (each worker reading it, each to another end, double-counted it)."""
    lines = Path(logs["nights"][0]).read_bytes().splitlines(keepends=True)
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"".join(lines[: len(lines) // 3]))
    appended = iter(lines[len(lines) // 3:])
    route, end = Router.process_all, Router.close

    def append(lines: int | None) -> None:
        with open(growing, "ab") as handle:
            handle.write(b"".join(islice(appended, lines)))

    batches = iter(range(3))

    def grow(self, batch):  # a producer appends 300 lines while each of 3 batches is routed,
        route(self, batch)
        if next(batches, None) is not None:
            append(300)

    def late(self):  # and the rest once the reader has found the end
        append(None)
        end(self)

    url, expected = f"sqlite:///{tmp_path / 'g.db'}", f"sqlite:///{tmp_path / 'e.db'}"
    with monkeypatch.context() as patched:
        patched.setattr(Router, "process_all", grow)
        patched.setattr(Router, "close", late)
        summary = _into_store([str(growing)], 2, url)
    [mark] = _marks(url)
    assert len(lines) // 3 < mark.high_records == summary["records"]
    assert mark.high_records < _records(str(growing))  # the last append came after the end
    prefix = tmp_path / "prefix.jsonl"
    prefix.write_bytes(b"".join(lines[: mark.high_records]))
    _into_store([str(prefix)], 2, expected)
    growing.write_bytes(b"".join(lines))
    _into_store([str(growing)], 2, url)
    _into_store([str(growing)], 2, expected)
    assert _rows(url) == _rows(expected) != {}


def test_an_input_that_breaks_off_writes_nothing_until_it_is_whole(logs, tmp_path):
    """No position every worker can resume from: the store stays as it was, and the same
    command with the input whole writes what one clean run writes."""
    whole = Path(logs["front_ends"][0]).read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    packed = gzip.compress(whole)
    cut.write_bytes(packed[: len(packed) * 2 // 3])
    url, clean = f"sqlite:///{tmp_path / 'store.db'}", f"sqlite:///{tmp_path / 'clean.db'}"
    summary = _into_store([str(cut)], 2, url)
    assert "input_error" in summary and summary["records"] > 0
    assert _rows(url) == {} and _marks(url) == []
    cut.write_bytes(packed)  # the same input, whole
    _into_store([str(cut)], 2, url)
    _into_store(logs["front_ends"], 2, clean)
    assert _rows(url) == _rows(clean) != {}


def test_dead_letters_of_an_input_that_broke_off_are_written_with_its_whole_replay(
        tmp_path):
    """Nothing of the broken run is kept, its dead letters neither: the --dlq the two runs
    leave is one clean run's."""
    log, truth = tmp_path / "ubi.jsonl", tmp_path / "truth.json"
    done = searchpulse("simulate", "--seed", "4", "--sessions", "1500", "--invalid-rate",
                       "0.05", "--out", str(log), "--truth", str(truth))
    assert done.returncode == 0, done.stderr
    packed = gzip.compress(log.read_bytes())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed[: len(packed) * 2 // 3])
    url, dlq, clean_dlq = f"sqlite:///{tmp_path / 's.db'}", tmp_path / "d", tmp_path / "c"
    assert "input_error" in _into_store([str(cut)], 2, url, dlq)
    cut.write_bytes(packed)
    _into_store([str(cut)], 2, url, dlq)
    _into_store([str(cut)], 2, f"sqlite:///{tmp_path / 'clean.db'}", clean_dlq)
    assert dlq.read_bytes() == clean_dlq.read_bytes()
    assert dlq.read_bytes().count(b"\n") >= 60


def test_what_a_replay_into_the_store_refuses_workers_refuse_before_writing(
    logs, tmp_path, capsys
):
    lines = Path(logs["invalid"][0]).read_bytes().splitlines(keepends=True)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    _into_store(logs["invalid"], 2, url)
    before = _rows(url)
    edited = tmp_path / "edited.jsonl"  # one record changed near the end
    edited.write_bytes(
        b"".join([*lines[:-3], lines[-3].replace(b"{", b'{"edited": 1, ', 1), *lines[-2:]])
    )
    shorter = tmp_path / "shorter.jsonl"
    shorter.write_bytes(b"".join(lines[:100]))
    for path, message in (
        (edited, "not the ones the store counted"),
        (shorter, f"ends after 100 records, the store counted {len(lines)}"),
        (Path(logs["invalid"][0]), "begin with the same record"),
    ):
        paths = [str(path)] if path != Path(logs["invalid"][0]) else [str(path), str(shorter)]
        with pytest.raises(StoreError, match=message):
            _into_store(paths, 2, url)
    assert _rows(url) == before
    assert main(["replay", str(edited), "--workers", "2", "--store", url, "--no-progress"]) == 2
    assert "use another store" in capsys.readouterr().err


def test_an_interrupted_replay_without_workers_is_not_finished_with_them(logs, tmp_path):
    """Its rows are one engine's: the partitions' would not continue them."""
    whole = Path(logs["nights"][0]).read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(whole[: len(whole) // 2] + b'{"query_id": "cut mid-rec')
    url = f"sqlite:///{tmp_path / 'store.db'}"
    config = load_config(environ={}, overrides={"store.url": url})
    assert "input_error" in replay([str(cut)], config)
    before = _rows(url)
    assert before and not _marks(url)[0].complete
    cut.write_bytes(whole)
    with pytest.raises(StoreError, match="interrupted replay of .* finish it with the command"):
        _into_store([str(cut)], 2, url)
    assert _rows(url) == before
