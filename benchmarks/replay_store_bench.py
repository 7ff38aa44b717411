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
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
