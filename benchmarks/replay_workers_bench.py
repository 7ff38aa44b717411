"""`replay --workers N` against one process: wall and CPU time, interleaved rounds, medians.

    python -m benchmarks.replay_workers_bench [--records 300000] [--rounds 3]
                                              [--workers 1,2] [--against DIR] [--json FILE]

Each round replays the dense simulated log (benchmarks/collector_bench.py's, cached in
.cache/) once with the plain replay (one engine) and once per worker count, each in a fresh
interpreter, in that order; CPU is the process's and its children's (user + system). With
``--against DIR`` (another checkout, e.g. ``git worktree add DIR HEAD~1``), each round also runs
its ``--workers`` counts from that tree, right after this one's. Then, in this process, where
the time goes on the same log: the reader's reading and routing, and the engines of every
partition, of each half of them.
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

from benchmarks.collector_bench import simulated_log
from collector.config import load_config
from collector.replay import replay
from collector.replay_workers import PartitionGroup, assigned
from collector.sources.files import open_inputs, read_batches
from collector.sources.partitions import Partitioner

_RUN = (
    "import resource, sys, time\n"
    "from collector.config import load_config\n"
    "workers = int(sys.argv[2])\n"
    "started = time.perf_counter()\n"
    "if workers:\n"
    "    from collector.replay_workers import replay_partitioned\n"
    "    replay_partitioned([sys.argv[1]], load_config(environ={}), workers)\n"
    "else:\n"
    "    from collector.replay import replay\n"
    "    replay([sys.argv[1]], load_config(environ={}))\n"
    "wall = time.perf_counter() - started\n"
    "me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,"
    " resource.RUSAGE_CHILDREN))\n"
    "print(wall, me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,"
    " kids.ru_maxrss)\n"
)


def run(path: Path, workers: int, tree: Path | None = None) -> tuple[float, float, int]:
    """(wall s, CPU s, the largest worker's peak RSS in KiB) of one replay by this checkout
    or the one at ``tree``; workers 0: the plain replay (one engine, no fork)."""
    done = subprocess.run([sys.executable, "-c", _RUN, str(path.resolve()), str(workers)],
                          capture_output=True, text=True, check=True, cwd=tree,
                          env={**os.environ, "PYTHONPATH": str(tree)} if tree else None)
    wall, cpu, rss = done.stdout.split()
    return float(wall), float(cpu), int(rss)


def stages(path: Path, partitions: int) -> dict[str, float]:
    """CPU seconds of the reader's reading and routing on ``path``, the second routing with
    the partitions of its keys known."""
    started = time.process_time()
    batches = list(read_batches(open_inputs([str(path)])))
    read = time.process_time() - started
    router = Partitioner(partitions)
    every = range(0, partitions)
    started = time.process_time()
    for batch in batches:
        router.split(batch, every)
    first = time.process_time() - started
    started = time.process_time()
    for batch in batches:
        router.split(batch, every)
    again = time.process_time() - started
    return {"read_s": round(read, 3), "route_first_s": round(first, 3),
            "route_known_keys_s": round(again, 3),
            "records": sum(map(len, batches)), "distinct_keys": len(router._known) - 2}


def critical_path(path: Path, rounds: int) -> dict[str, list[float]]:
    """CPU seconds, in this process, interleaved: the plain replay (one engine), the engines
    of every partition (a worker of ``--workers 1``) and of each half of them (a worker of
    ``--workers 2``), fed the reader's routed records (routed once, before). On two free cores
    ``--workers 2`` takes at least as long as its slower worker, and the reader's reading and
    routing (``stages``) share the cores with them."""
    config = load_config(environ={})
    partitions = config["replay.partitions"]
    halves = assigned(partitions, 2)
    router = Partitioner(partitions)
    routed = [sorted(router.split(batch, range(partitions)).items())
              for batch in read_batches(open_inputs([str(path)]))]
    times: dict[str, list[float]] = {"one_engine": [], "all_partitions": [],
                                     "first_half": [], "second_half": []}
    for _ in range(rounds):
        for name, mine in (("one_engine", None), ("all_partitions", range(partitions)),
                           ("first_half", halves[0]), ("second_half", halves[1])):
            started = time.process_time()
            if mine is None:
                replay([str(path)], config)
            else:
                group = PartitionGroup(config, mine, None, False)
                for parts in routed:
                    group.process_parts([(p, records) for p, records in parts
                                         if p in mine and records])
                group.close()
                group.results()
            times[name].append(round(time.process_time() - started, 3))
    return times


def _speedup(base: list[tuple[float, float, int]], this: list[tuple[float, float, int]]
             ) -> dict[str, object]:
    """How many times faster ``this`` ran than ``base``: per round, and of the medians."""
    return {"wall_per_round": [round(b[0] / t[0], 3) for b, t in zip(base, this, strict=True)],
            "wall_of_medians": round(statistics.median(b[0] for b in base)
                                     / statistics.median(t[0] for t in this), 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another checkout whose --workers runs join each round")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    path = simulated_log(args.records)
    counts = [0, *(int(w) for w in args.workers.split(","))]
    rounds: dict[int, list[tuple[float, float, int]]] = {w: [] for w in counts}
    against: dict[int, list[tuple[float, float, int]]] = {w: [] for w in counts[1:]}
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for w in counts:
            rounds[w].append(run(path, w))
            if args.against and w:
                against[w].append(run(path, w, args.against.resolve()))
        loads.append(os.getloadavg()[0])
    result: dict = {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "log": str(path), "rounds": args.rounds, "load_1m": loads}
    for w, runs in rounds.items():
        name = f"workers_{w}" if w else "one_engine"
        result[name] = {"wall_s": [round(r[0], 3) for r in runs],
                        "cpu_s": [round(r[1], 3) for r in runs],
                        "wall_median_s": round(statistics.median(r[0] for r in runs), 3),
                        "cpu_median_s": round(statistics.median(r[1] for r in runs), 3),
                        "worker_peak_rss_mib": round(max(r[2] for r in runs) / 1024, 1)}
    for w in counts[2:]:
        base, this = rounds[counts[1]], rounds[w]
        result[f"speedup_{w}_vs_{counts[1]}"] = _speedup(base, this)
    if args.against:
        result["against"] = {"tree": str(args.against), **{
            f"workers_{w}": {"wall_s": [round(r[0], 3) for r in runs],
                             "wall_median_s": round(statistics.median(r[0] for r in runs), 3)}
            for w, runs in against.items()}}
        for w in counts[2:]:
            result["against"][f"speedup_{w}_vs_{counts[1]}"] = _speedup(against[counts[1]],
                                                                        against[w])
            result[f"this_vs_against_workers_{w}"] = _speedup(against[w], rounds[w])
    result["stages"] = stages(path, load_config(environ={})["replay.partitions"])
    cpu = critical_path(path, args.rounds)
    result["cpu_in_process_s"] = cpu
    median = {name: statistics.median(values) for name, values in cpu.items()}
    result["cpu_speedup_2_vs_1_on_free_cores"] = round(
        median["all_partitions"] / max(median["first_half"], median["second_half"]), 3)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
