"""Poison records: whatever the bytes, nothing raises out of the engine, every record lands in
exactly one outcome, and no sum on /metrics becomes NaN or negative."""

from __future__ import annotations

import gzip
import json
import math
import random
import subprocess
import sys

import pytest

from collector.config import load_config
from collector.engine import Engine
from collector.ingest import accounting as acc
from collector.replay import exposition
from tests.conftest import T0, RecordingDeadLetters

STAMP = int(T0 * 1000)
HOSTILE = {
    "deep nesting": b'{"user_query": "x", "query_id": "q", "timestamp": 1, "a": '
                    + b"[" * 1000 + b"]" * 1000 + b"}",
    "unicode digit stamp": b'{"user_query": "x", "query_id": "q", "timestamp": "\xc2\xb2"}',
    "5000-digit stamp string": b'{"user_query": "x", "query_id": "q", "timestamp": "'
                               + b"9" * 5000 + b'"}',
    "5000-digit stamp number": b'{"user_query": "x", "query_id": "q", "timestamp": '
                               + b"9" * 5000 + b"}",
    "huge float stamp": b'{"user_query": "x", "query_id": "q", "timestamp": 1e308}',
    "NaN latency": json.dumps({"user_query": "x", "query_id": "q1", "timestamp": STAMP,
                               "query_attributes": {"latency_ms": "NaN"}}).encode(),
    "negative latency": json.dumps({"user_query": "x", "query_id": "q2", "timestamp": STAMP,
                                    "query_attributes": {"latency_ms": -5}}).encode(),
    "absurd latency": json.dumps({"user_query": "x", "query_id": "q3", "timestamp": STAMP,
                                  "query_attributes": {"latency_ms": 1e300}}).encode(),
    # Python's json.dumps writes these bare words (not JSON): the search is still usable
    "bare NaN latency": json.dumps({"user_query": "x", "query_id": "q8", "timestamp": STAMP,
                                    "query_attributes": {"latency_ms": float("nan")}}).encode(),
    "bare Infinity latency": json.dumps({"user_query": "x", "query_id": "q9",
                                         "timestamp": STAMP, "query_attributes": {
                                             "latency_ms": float("-inf")}}).encode(),
    "latency beyond a double": b'{"user_query": "x", "query_id": "q10", "timestamp": '
                               + str(STAMP).encode() + b', "query_attributes": '
                               b'{"latency_ms": 1e400}}',
    "NaN and a lone surrogate": b'{"user_query": "\\ud800", "query_id": "q11", "timestamp": '
                                + str(STAMP).encode() + b', "query_attributes": '
                                b'{"latency_ms": NaN}}',
    "negative total_hits": json.dumps({"user_query": "x", "query_id": "q4", "timestamp": STAMP,
                                       "query_attributes": {"total_hits": -3}}).encode(),
    "empty query id": json.dumps({"user_query": "x", "query_id": "", "timestamp": STAMP}
                                 ).encode(),
    "empty client id": json.dumps({"user_query": "x", "query_id": "q5", "client_id": "",
                                   "timestamp": STAMP}).encode(),
    "BOM": b"\xef\xbb\xbf" + json.dumps({"user_query": "x", "query_id": "q6",
                                          "timestamp": STAMP}).encode(),
    "not UTF-8": b'{"user_query": "\xff\xfe", "query_id": "q7", "timestamp": 1}',
    "NUL bytes": b"\x00" * 64,
    "a JSON string": b'"hello"',
}
USABLE = {"NaN latency", "negative latency", "absurd latency", "bare NaN latency",
          "bare Infinity latency", "latency beyond a double", "empty client id", "BOM"}


def run(raws: list[bytes]) -> Engine:
    engine = Engine(load_config(environ={}), RecordingDeadLetters())
    engine.process_all(raws)
    engine.close()
    return engine


def assert_every_record_has_one_outcome(engine: Engine, count: int) -> None:
    assert engine.stats.total() == count


def assert_exposition_is_finite_and_non_negative(engine: Engine) -> None:
    for line in exposition(engine).decode().splitlines():
        if line and not line.startswith("#"):
            value = float(line.rsplit(" ", 1)[1])
            assert math.isfinite(value) and value >= 0, line


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_record_is_counted_and_kept_or_used(name):
    engine = run([HOSTILE[name]])
    assert_every_record_has_one_outcome(engine, 1)
    assert_exposition_is_finite_and_non_negative(engine)
    stats = engine.stats
    if name in USABLE:
        assert stats.records[0][0] == 1  # accepted: a usable search
        (series,) = [s for s in engine.table.series if s.searches]
        assert series.latency.count == 0  # a latency that is not one is dropped …
        bad_latency = "latency" in name.lower()
        assert stats.data_quality[acc.INVALID_LATENCY] == bad_latency  # … and counted
    else:
        assert engine.dead_letters.reasons, name  # rejected: kept with its reason


def test_hostile_records_do_not_disturb_the_rest(ubi):
    clean = [ubi.query("ok", "tent", 0), ubi.click("ok", 3)]
    engine = run([*HOSTILE.values(), *clean])
    assert_every_record_has_one_outcome(engine, len(HOSTILE) + 2)
    assert sum(s.clicked for s in engine.table.series) == 1


def _random_json(rng: random.Random, depth: int = 0):
    choice = rng.randrange(9 if depth < 6 else 5)
    if choice == 0:
        return rng.choice([None, True, False])
    if choice == 1:
        return rng.choice([0, -1, 2**63, -(2**70), 10**rng.randrange(400), 1767600000000])
    if choice == 2:
        return rng.choice([1e308, -0.0, 3.5, 1767600000000.5])
    if choice == 3:
        return "".join(rng.choice("a1²٣\u00a0\x00\"\\{") for _ in range(rng.randrange(12)))
    if choice == 4:
        return rng.choice(["2026-01-05T09:00:00Z", "20260105T090000Z", "1767600000000", "x"])
    if choice in (5, 6):
        keys = ["query_id", "user_query", "action_name", "timestamp", "client_id",
                "session_id", "query_attributes", "event_attributes", "position", "object",
                "total_hits", "latency_ms", "page", "object_id", "ordinal", "rank", "junk"]
        return {rng.choice(keys): _random_json(rng, depth + 1) for _ in range(rng.randrange(8))}
    return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]


def test_fuzz_100k_random_bytes_and_structures():
    rng = random.Random(20261130)
    records: list[bytes] = []
    for i in range(100_000):
        if i % 3 == 0:
            records.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))))
        else:
            value = _random_json(rng)
            if isinstance(value, dict) and rng.random() < 0.7:  # often close to a real record
                value.setdefault("query_id", f"q{rng.randrange(500)}")
                value.setdefault("timestamp", 1767600000000 + rng.randrange(-10**9, 10**9))
                value.setdefault(rng.choice(["user_query", "action_name"]), "click")
            records.append(json.dumps(value).encode())
    engine = Engine(load_config(environ={}), RecordingDeadLetters())
    for start in range(0, len(records), 997):  # batches of any size, as Kafka polls come
        engine.process_all(records[start:start + 997])
    engine.close()
    assert_every_record_has_one_outcome(engine, len(records))
    assert_exposition_is_finite_and_non_negative(engine)
    stats = engine.stats  # what was not used is kept: invalid, orphan and lost-late records
    kept = (stats.total(acc.INVALID) + stats.total(acc.ORPHAN)
            + stats.data_quality[acc.LATE_NOT_APPLIED])
    assert len(engine.dead_letters.letters) == sum(stats.dead_lettered.values()) == kept > 0


def test_replay_cli_survives_poison_and_names_a_truncated_file(ubi, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_bytes(b"\n".join([*HOSTILE.values(), ubi.query("a", "tent", 0),
                                 ubi.click("a", 2)]) + b"\n")
    cr_only = tmp_path / "old-mac.jsonl"  # CR-only line endings
    cr_only.write_bytes(b"\r".join([ubi.query("b", "lamp", 5, client="c2"),
                                    ubi.click("b", 6, client="c2")]) + b"\r")
    truncated = tmp_path / "cut.jsonl.gz"
    truncated.write_bytes(gzip.compress(b"\n".join(
        ubi.query(f"t{i}", "desk", 10 + i, client=f"t{i}") for i in range(2000)))[:3000])
    done = subprocess.run([sys.executable, "-m", "searchpulse", "replay", str(good),
                           str(cr_only), str(truncated), "--json", "--no-progress"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 3, done.stderr
    assert f"input {truncated}: " in done.stderr and "Traceback" not in done.stderr
    summary = json.loads(done.stdout)
    assert summary["clicked_searches"] == 2  # both good files counted in full
    assert summary["searches"] > 2  # and what the truncated one held before its cut
    assert summary["input_error"].startswith(f"input {truncated}")


def test_deep_nesting_on_a_small_thread_stack_is_rejected_not_raised():
    """The Kafka consumer runs the engine on its own thread, whose stack is smaller: there the
    typed decode itself runs out of stack (found against the real broker)."""
    import threading

    found: list = []
    previous = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=lambda: found.append(run([HOSTILE["deep nesting"]])))
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
    assert found[0].dead_letters.reasons == ["malformed_json"]
