"""Collector engine benchmark: one command, baseline in the same run, medians.

    python -m benchmarks.collector_bench [--records 1000000] [--rounds 5] [--json FILE]
                                         [--against DIR]

Measures, on a simulated log of ~1M records (typical UBI sizes, cached in .cache/):
  1. `replay` throughput: the real replay path (file read → engine → close), median of rounds;
  2. the naive baseline (benchmarks/naive_collector.py) and a bare stdlib `json.loads` loop on
     the same records, rounds interleaved with (1) so machine noise hits all alike; ratios are
     reported per round and as medians; with ``--against DIR`` (another checkout, e.g. the
     previous commit in a `git worktree`) its replay runs in the same rounds too, and both
     replays run in fresh interpreters;
  3. bytes per open session with 1M open sessions (tracemalloc: exact Python allocations);
  4. /metrics scrape time (generate_latest), median of 20, at the simulated cardinality and
     at the default label caps (20 applications × 20 variants × 4 strata).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
import uuid
from pathlib import Path

from benchmarks.naive_collector import NaiveCollector
from collector.config import load_config
from collector.engine import Engine
from collector.replay import exposition, replay
from collector.sources.simulator import SimulationSpec, Simulator

CACHE = Path(".cache")
RECORDS_PER_SESSION = 4.62  # measured mean of the simulator's default mix


def simulated_log(records: int) -> Path:
    path = CACHE / f"bench-{records}.jsonl"
    if not path.exists():
        CACHE.mkdir(exist_ok=True)
        sessions = int(records / RECORDS_PER_SESSION)
        with open(path, "wb") as handle:
            for line in Simulator(SimulationSpec(seed=42, sessions=sessions)).records():
                handle.write(line)
    return path


def time_replay(path: Path) -> float:
    started = time.perf_counter()
    replay([str(path)], load_config(environ={}))
    return time.perf_counter() - started


_REPLAY_IN = ("import sys, time\nfrom collector.config import load_config\n"
              "from collector.replay import replay\n"
              "started, cpu = time.perf_counter(), time.process_time()\n"
              "replay([sys.argv[1]], load_config(environ={}))\n"
              "print(time.perf_counter() - started, time.process_time() - cpu)")


def time_replay_in(tree: Path, path: Path, cpu: bool = False) -> float:
    """The replay of the checkout at ``tree``, in a fresh interpreter (same Python, same
    installed dependencies): its wall seconds, or with ``cpu`` its process's CPU seconds (what
    other processes on a shared machine disturb least)."""
    done = subprocess.run([sys.executable, "-c", _REPLAY_IN, str(path.resolve())], cwd=tree,
                          env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True,
                          text=True, check=True)
    wall, seconds = done.stdout.strip().splitlines()[-1].split()
    return float(seconds if cpu else wall)


def time_json(lines: list[bytes]) -> float:
    loads = json.loads
    started = time.perf_counter()
    for raw in lines:
        loads(raw)
    return time.perf_counter() - started


def time_naive(lines: list[bytes]) -> float:
    collector = NaiveCollector()
    started = time.perf_counter()
    for raw in lines:
        collector.process(raw)
    return time.perf_counter() - started


def bytes_per_open_session(sessions: int) -> float:
    queries = [q for q in Simulator(SimulationSpec(seed=1)).vocab.queries]
    base = 1_767_600_000_000
    engine = Engine(load_config(environ={}))
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]

    def records():
        for i in range(sessions):  # 2,000 new sessions per second of event time
            yield json.dumps({
                "query_id": str(uuid.UUID(int=i)), "client_id": str(uuid.UUID(int=i + 2**64)),
                "user_query": queries[i % len(queries)], "timestamp": base + i // 2,
                "application": "web", "query_response_hit_ids": ["a", "b"],
                "query_attributes": {"total_hits": 2, "latency_ms": 80},
            }).encode()

    engine.process_all(records())
    engine.advance((base + sessions // 2) / 1000 + engine.lateness + 1)  # apply all, evict none
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    open_sessions = len(engine.sessions.sessions)
    assert open_sessions == sessions, open_sessions
    return (after - before) / open_sessions


def scrape_ms(engine: Engine) -> float:
    samples = []
    for _ in range(20):
        started = time.perf_counter()
        exposition(engine)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def engine_at_caps() -> Engine:
    engine = Engine(load_config(environ={}))
    """Worst case: every application × variant × stratum series with a latency histogram."""
    lines = [json.dumps({"query_id": f"q{a}-{v}-{s}", "client_id": f"c{a}-{v}-{s}",
                         "user_query": q, "timestamp": 1_767_600_000_000,
                         "application": f"app{a}",
                         "query_attributes": {"variant": f"v{v}", "latency_ms": 80}}).encode()
             for a in range(20) for v in range(20) for s, q in enumerate(("tv", "B07XLFYN6S"))]
    engine.process_all(lines)
    engine.close()
    return engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--open-sessions", type=int, default=1_000_000)
    parser.add_argument("--json", metavar="FILE", help="also write the results here")
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another checkout whose replay runs in the same rounds")
    args = parser.parse_args()

    path = simulated_log(args.records)
    lines = path.read_bytes().splitlines(keepends=True)
    count = len(lines)
    here = Path(__file__).resolve().parents[1]
    ours, naive, bare, theirs = [], [], [], []
    for n in range(args.rounds):
        ours.append(count / (time_replay_in(here, path) if args.against else time_replay(path)))
        naive.append(count / time_naive(lines))
        bare.append(count / time_json(lines))
        line = (f"round {n + 1}: replay {ours[-1]:,.0f} rec/s, naive {naive[-1]:,.0f}, "
                f"bare json {bare[-1]:,.0f}: {ours[-1] / bare[-1]:.2f}x bare json")
        if args.against:
            theirs.append(count / time_replay_in(args.against, path))
            line += f"; {args.against.name} {theirs[-1]:,.0f}: {theirs[-1] / bare[-1]:.2f}x"
        print(line, flush=True)
    del lines

    engine = Engine(load_config(environ={}))
    engine.process_all(path.read_bytes().splitlines(keepends=True))
    engine.close()
    results = {
        "machine": f"{platform.machine()}, {platform.python_implementation()} "
                   f"{platform.python_version()}",
        "records": count,
        "log_bytes": path.stat().st_size,
        "replay_records_per_s_median": round(statistics.median(ours)),
        "naive_records_per_s_median": round(statistics.median(naive)),
        "ratio_median": round(statistics.median(
            o / n for o, n in zip(ours, naive, strict=True)), 2),
        "bare_json_records_per_s_median": round(statistics.median(bare)),
        "ratio_to_bare_json_median": round(statistics.median(
            o / b for o, b in zip(ours, bare, strict=True)), 2),
        "replay_rounds": [round(x) for x in ours],
        "naive_rounds": [round(x) for x in naive],
        "bare_json_rounds": [round(x) for x in bare],
        **({"against": str(args.against), "against_rounds": [round(x) for x in theirs],
            "against_ratio_to_bare_json_median": round(statistics.median(
                t / b for t, b in zip(theirs, bare, strict=True)), 2)} if args.against else {}),
        "scrape_ms_simulated": round(scrape_ms(engine), 2),
        "series_simulated": len(engine.table.series),
        "scrape_ms_at_caps": round(scrape_ms(engine_at_caps()), 2),
        "series_at_caps": len(engine_at_caps().table.series),
        "bytes_per_open_session": round(bytes_per_open_session(args.open_sessions)),
        "open_sessions": args.open_sessions,
    }
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
