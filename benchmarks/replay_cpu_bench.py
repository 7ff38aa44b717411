"""The CPU time of ``searchpulse replay LOG`` in this checkout against another, same rounds.

    python -m benchmarks.replay_cpu_bench --against DIR [--log LOG]
                                          [--rounds 5] [--json FILE] [--instructions]

Each run is a fresh interpreter (the same Python and installed dependencies, ``PYTHONPATH`` set
to the checkout) replaying the whole log with no store; its CPU time is user + system from
``getrusage(RUSAGE_CHILDREN)`` — less sensitive than wall time to the other work of a shared
machine. Which checkout goes first alternates by round (the second of a pair runs warmer).
Reported: each round's seconds and ratio (this ÷ the other), and their medians.

``--instructions``: instead, the instructions each checkout executes (valgrind's callgrind,
``Ir``) to replay the log, less those of replaying its first record alone (the start-up,
reported apart; an empty log is refused, exit 3): a count that does not move with the
machine's load, for a log of tens of thousands of records (callgrind runs ~50× slower). One
round is enough: two runs of one checkout differ by a few thousand instructions in billions,
because everything that made them differ is held still — the hash seed (``PYTHONHASHSEED=0``);
OpenBLAS's thread pool, which numpy starts at import and whose spinning threads callgrind
counts in proportion to the run's wall time (one thread: no pool); the privacy scan's time
budget per release (unbounded here: how many texts it reads must not depend on how fast the
machine is); and every path, the working directory's included (each checkout's packages are
copied in turn to one fixed directory; address-space randomization off with ``setarch -R``).
Without the last three, one checkout read 1.7 % apart from itself.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.collector_bench import simulated_log
from benchmarks.command import running_main


def cpu_of_replay(tree: Path, log: Path) -> float:
    """CPU seconds of one replay of ``log`` by the checkout at ``tree`` (its exit must be 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", running_main(tree), "replay", str(log)], cwd=tree,
                   check=True,
                   env={**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"},
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


# What would make two runs of one checkout execute different instructions (module docstring).
_STILL = {"PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
_UNBOUNDED_SCAN = ("--set", "privacy.scan_budget_ms=3600000")
_PACKAGES = ("searchpulse", "collector", "feedback")  # those the tree has


def instructions_of_replay(tree: Path, log: Path) -> int:
    """Instructions one replay of ``log`` by the checkout at ``tree`` executes (callgrind)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        sys.exit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    fixed_layout = ["setarch", "-R"] if shutil.which("setarch") else []
    done = subprocess.run([*fixed_layout, valgrind, "--tool=callgrind",
                           "--callgrind-out-file=/dev/null", sys.executable, "-c",
                           running_main(tree), "replay", *_UNBOUNDED_SCAN, str(log)], cwd=tree,
                          check=True, capture_output=True, text=True,
                          env={**os.environ, **_STILL, "PYTHONPATH": str(tree)})
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def _at_one_path(tree: Path) -> Path:
    """The checkout's packages copied to the one directory every checkout is measured from
    (its bytecode written first, so no measured run counts a compile)."""
    place = Path(tempfile.gettempdir()) / "searchpulse-instructions"
    shutil.rmtree(place, ignore_errors=True)
    for package in (name for name in _PACKAGES if (tree / name).is_dir()):
        shutil.copytree(tree / package, place / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return place


def instructions(trees: dict[str, Path], log: Path) -> dict[str, object]:
    """Each checkout's start-up (the log's first record alone) and per-log instructions, and
    their ratio."""
    start: dict[str, int] = {}
    work: dict[str, int] = {}
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as first:
        with open(log, "rb") as handle:
            first.write(handle.readline())
        first.flush()
        for name, tree in trees.items():
            place = _at_one_path(tree)
            subprocess.run([sys.executable, "-c", running_main(place), "replay", first.name],
                           cwd=place, check=True, env={**os.environ, "PYTHONPATH": str(place)},
                           capture_output=True)
            start[name] = instructions_of_replay(place, Path(first.name))
            work[name] = instructions_of_replay(place, log) - start[name]
    return {"log": str(log), "start_up": start, "replay": work,
            "replay_ratio": round(work["this"] / work["against"], 4),
            "start_up_ratio": round(start["this"] / start["against"], 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, required=True, metavar="DIR",
                        help="the other checkout (e.g. main extracted with git archive)")
    parser.add_argument("--log", type=Path, help="the log to replay (default: the simulated "
                        "dense log of `make bench`, 300,000 records; 60,000 with --instructions)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", metavar="FILE", help="also write the results here")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under callgrind instead of CPU time")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    log = (args.log or simulated_log(60_000 if args.instructions else 300_000)).resolve()
    if args.instructions:
        report(instructions({"this": here, "against": args.against.resolve()}, log), args.json)
        return
    ours: list[float] = []
    theirs: list[float] = []
    for n in range(args.rounds):
        pair = [(here, ours), (args.against.resolve(), theirs)]
        for tree, times in pair[::-1] if n % 2 else pair:
            times.append(cpu_of_replay(tree, log))
        print(f"round {n + 1}: this {ours[-1]:.2f} s, against {theirs[-1]:.2f} s, "
              f"ratio {ours[-1] / theirs[-1]:.3f}", flush=True)
    ratios = [o / t for o, t in zip(ours, theirs, strict=True)]
    results = {"log": str(log), "against": str(args.against), "rounds": args.rounds,
               "cpu_s": [round(x, 2) for x in ours], "against_cpu_s": [round(x, 2) for x in theirs],
               "ratios": [round(x, 3) for x in ratios],
               "cpu_s_median": round(statistics.median(ours), 2),
               "against_cpu_s_median": round(statistics.median(theirs), 2),
               "ratio_median": round(statistics.median(ratios), 3)}
    report(results, args.json)


def report(results: dict[str, object], path: str | None) -> None:
    if path:  # first: a closed stdout must not lose the results
        Path(path).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
