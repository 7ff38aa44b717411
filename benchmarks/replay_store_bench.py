"""What a resumable replay into a store costs: throughput before and after, and the progress
record's cost per flush.

    python -m benchmarks.replay_store_bench [--records 1000000] [--rounds 3] [--against DIR]
                                            [--json FILE]

1. Throughput: `replay` of the ~1M-record simulated log of benchmarks/collector_bench.py
   without a store and with a fresh SQLite store (default flush settings), each in a fresh
   interpreter, rounds interleaved; with ``--against DIR`` (another version's source tree, e.g.
   ``git archive 0873b15 | tar -x -C DIR``) the same two replays of that version run in the
   same rounds. Also: the same command again on the full store (every record held: read,
   digested and skipped). CPU and wall time; ratios per round and their medians.
2. Per flush: the store's transaction with and without the input positions (one
   ``store_inputs`` row per input, the positions computed by ``ReplayProgress.marks``), 2,000
   of each alternating, on a SQLite store holding the whole log's rows, one row per flush.
3. `collect`'s flush (with ``--against``): four partitions' rows (Zipf-popular queries, so the
   head is in every partition, ten shown documents and a client mark each) flushed by
   ``StoreWriter`` into a fresh SQLite store, 20 flushes of 4 × 20,000 rows, in a fresh
   interpreter per version, rounds interleaved: CPU and wall seconds of the flushes alone
   (the writer thread included), and their ratio per round.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.collector_bench import CACHE, simulated_log

REPLAY = ("import sys\nfrom collector.config import load_config\n"
          "from collector.replay import replay\n"
          "replay([sys.argv[1]], load_config(environ={}), store=sys.argv[2] or None)")


# 20 flushes of four partitions' rows through StoreWriter, timed (either version's API)
FLUSHES = """
import inspect, json, random, sys, time
from collector.store.query_stats import QueryStats
from collector.store.query_store import open_store
from collector.store.store_writer import StoreWriter

url, partitions, rows, flushes = sys.argv[1], 4, 20_000, 20
by_url = "url" in inspect.signature(StoreWriter.__init__).parameters
writer = (StoreWriter(url, 60.0, 10**9) if by_url else StoreWriter(open_store(url), 60.0, 10**9))
rng = random.Random(7)
cpu = wall = 0.0
for flush in range(flushes):
    stats = []
    for p in range(partitions):
        s = QueryStats()
        for i in range(rows):
            rank = int(rng.paretovariate(1.1))
            row = s.row(2e9 + flush * 60, "web", f"query {rank}")
            row.searches += 1
            for d in range(10):
                row.shown[f"d{(rank + d) % 97}"] = row.shown.get(f"d{(rank + d) % 97}", 0) + 1
            row.clients[f"{rng.getrandbits(32):08x}"] = 1
        stats.append(s)
    offsets = {("ubi", p): (flush, flush) for p in range(partitions)}
    started, started_cpu = time.perf_counter(), time.process_time()
    if by_url:
        writer.flush({("ubi", p): s for p, s in enumerate(stats)}, offsets, "g", wait=True)
    else:
        writer.flush(stats, offsets, "g", wait=True)
    wall += time.perf_counter() - started
    cpu += time.process_time() - started_cpu
writer.close()
print(json.dumps({"wall_s": wall, "cpu_s": cpu}))
"""


def partition_flushes(rounds: int, against: Path) -> dict:
    """`collect`'s flush of four partitions' rows, this version and ``against``, rounds
    interleaved (CPU and wall seconds of the flushes, medians and per-round ratios)."""
    store = (CACHE / "bench-partition-flushes.db").resolve()
    runs: dict[str, list[dict]] = {"this": [], "against": []}
    for n in range(rounds):
        for name, source in (("this", Path.cwd()), ("against", against.resolve())):
            done = subprocess.run([sys.executable, "-c", FLUSHES, _fresh(store)], cwd=source,
                                  env={**os.environ, "PYTHONPATH": str(source)},
                                  capture_output=True, text=True, check=True)
            runs[name].append(json.loads(done.stdout))
        print(f"partition flushes, round {n + 1}: " + ", ".join(
            f"{k} {v[-1]['cpu_s']:.2f} s CPU / {v[-1]['wall_s']:.2f} s wall"
            for k, v in runs.items()), flush=True)
    ratios = {key: [round(t[key] / a[key], 3) for t, a in zip(runs["this"], runs["against"],
                                                              strict=True)]
              for key in ("cpu_s", "wall_s")}
    return {"rounds": runs,
            "median_s": {name: {key: round(statistics.median(r[key] for r in v), 3)
                                for key in ("cpu_s", "wall_s")} for name, v in runs.items()},
            "this_vs_against_per_round": ratios,
            "this_vs_against_median": {k: round(statistics.median(v), 3)
                                       for k, v in ratios.items()}}


def child(source: Path, *args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one replay in a fresh interpreter, with ``source`` first on the
    path (this checkout or another version's tree)."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", REPLAY, *args], cwd=source,
                               env={**os.environ, "PYTHONPATH": str(source)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise RuntimeError(f"replay in {source} failed with status {status}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def _fresh(store: Path) -> str:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    return f"sqlite:///{store}"


def throughput(records: int, rounds: int, against: Path | None) -> dict:
    log = simulated_log(records).resolve()
    here = Path.cwd()
    store = (CACHE / "bench-resume.db").resolve()
    versions = {"this": here, **({"against": against.resolve()} if against else {})}
    runs: dict[str, list[tuple[float, float]]] = {}
    for n in range(rounds):
        for name, source in versions.items():
            runs.setdefault(f"{name} plain", []).append(child(source, str(log), ""))
            runs.setdefault(f"{name} stored", []).append(child(source, str(log), _fresh(store)))
            if name == "this":  # again on the full store: everything held
                runs.setdefault("this held", []).append(
                    child(source, str(log), f"sqlite:///{store}"))
        print(f"round {n + 1}: " + ", ".join(f"{k} {v[-1][0]:.2f} s wall / {v[-1][1]:.2f} s CPU"
                                             for k, v in runs.items()), flush=True)

    def median_ratio(a: str, b: str, index: int) -> float:
        return round(statistics.median(x[index] / y[index]
                                       for x, y in zip(runs[a], runs[b], strict=True)), 3)

    result = {"rounds_wall_cpu_s": {k: [(round(w, 2), round(c, 2)) for w, c in v]
                                    for k, v in runs.items()},
              "median_cpu_s": {k: round(statistics.median(c for _, c in v), 2)
                               for k, v in runs.items()},
              "store_ratio_this_cpu": median_ratio("this plain", "this stored", 1),
              "store_ratio_this_wall": median_ratio("this plain", "this stored", 0),
              "held_rerun_vs_plain_cpu": median_ratio("this held", "this plain", 1)}
    if against:
        result |= {"store_ratio_against_cpu": median_ratio("against plain", "against stored", 1),
                   "store_ratio_against_wall": median_ratio("against plain", "against stored",
                                                            0),
                   "stored_this_vs_against_cpu": median_ratio("against stored", "this stored",
                                                              1),
                   "plain_this_vs_against_cpu": median_ratio("against plain", "this plain", 1)}
    return result


def per_flush(records: int, flushes: int = 2000) -> dict:
    """One small flush (a row) with and without the positions, alternating, on a store that
    holds the whole log's rows (as late in a replay); microseconds, medians of each."""
    from collector.config import load_config
    from collector.replay import replay
    from collector.sources.files import open_inputs
    from collector.store.query_stats import QueryRow
    from collector.store.replay_progress import ReplayProgress
    from collector.store.store_writer import StoreWriter

    log = simulated_log(records)
    url = _fresh((CACHE / "bench-flush-marks.db").resolve())
    replay([str(log)], load_config(environ={}), store=url)
    writer = StoreWriter.from_config(load_config(environ={}), url)
    assert writer is not None
    inputs = open_inputs([str(log)], digest=True)
    progress = ReplayProgress(inputs, {})  # a fresh run's positions: same shape, same size
    for batch in iter(inputs[0].read, []):  # the whole input handed on: buckets to look at
        inputs[0].hand_on(batch)
        progress.after_batch(0.0)
    row = {(20_000, "bench", "flush row"): QueryRow(searches=1)}
    timings: dict[str, list[float]] = {"without": [], "with": []}
    marks_us = []
    for n in range(flushes):
        for variant in ("without", "with"):
            started = time.perf_counter()
            marks = progress.marks(float(n)) if variant == "with" else None
            if marks is not None:
                marks_us.append((time.perf_counter() - started) * 1e6)
            writer.store.add(((key, QueryRow(searches=r.searches)) for key, r in row.items()),
                             inputs=marks or ())
            timings[variant].append((time.perf_counter() - started) * 1e6)
    writer.close()
    medians = {variant: round(statistics.median(values), 1) for variant, values in
               timings.items()}
    return {"flush_us_median": medians,
            "positions_cost_us": round(medians["with"] - medians["without"], 1),
            "marks_us_median": round(statistics.median(marks_us), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another version's source tree")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    result = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
                         f"Python {platform.python_version()}",
              "records": args.records,
              "per_flush": per_flush(args.records),
              "throughput": throughput(args.records, args.rounds, args.against)}
    if args.against:
        result["partition_flushes"] = partition_flushes(args.rounds, args.against)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
