"""The CPU time of ``searchpulse replay LOG`` in this checkout against another, same rounds.

    python -m benchmarks.replay_cpu_bench --against DIR [--log .cache/bench-300000.jsonl]
                                          [--rounds 5] [--json FILE]

Each run is a fresh interpreter (the same Python and installed dependencies, ``PYTHONPATH`` set
to the checkout) replaying the whole log with no store; its CPU time is user + system from
``getrusage(RUSAGE_CHILDREN)`` — less sensitive than wall time to the other work of a shared
machine. Which checkout goes first alternates by round (the second of a pair runs warmer).
Reported: each round's seconds and ratio (this ÷ the other), and their medians.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

_REPLAY = "import sys; from collector.cli import main; sys.exit(main())"


def cpu_of_replay(tree: Path, log: Path) -> float:
    """CPU seconds of one replay of ``log`` by the checkout at ``tree`` (its exit must be 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", _REPLAY, "replay", str(log)], cwd=tree, check=True,
                   env={**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"},
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, required=True, metavar="DIR",
                        help="the other checkout (e.g. main extracted with git archive)")
    parser.add_argument("--log", type=Path, default=Path(".cache/bench-300000.jsonl"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", metavar="FILE", help="also write the results here")
    args = parser.parse_args()
    here, log = Path(__file__).resolve().parents[1], args.log.resolve()
    ours: list[float] = []
    theirs: list[float] = []
    for n in range(args.rounds):
        pair = [(here, ours), (args.against.resolve(), theirs)]
        for tree, times in pair[::-1] if n % 2 else pair:
            times.append(cpu_of_replay(tree, log))
        print(f"round {n + 1}: this {ours[-1]:.2f} s, against {theirs[-1]:.2f} s, "
              f"ratio {ours[-1] / theirs[-1]:.3f}", flush=True)
    ratios = [o / t for o, t in zip(ours, theirs, strict=True)]
    results = {"log": str(args.log), "against": str(args.against), "rounds": args.rounds,
               "cpu_s": [round(x, 2) for x in ours], "against_cpu_s": [round(x, 2) for x in theirs],
               "ratios": [round(x, 3) for x in ratios],
               "cpu_s_median": round(statistics.median(ours), 2),
               "against_cpu_s_median": round(statistics.median(theirs), 2),
               "ratio_median": round(statistics.median(ratios), 3)}
    if args.json:  # first: a closed stdout must not lose the results
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
