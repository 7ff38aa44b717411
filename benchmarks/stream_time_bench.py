"""What the shape of traffic costs the engine: replay time per record, by shape, in one run.

    python -m benchmarks.stream_time_bench [--records 300000] [--rounds 5] [--against DIR]
                                           [--json FILE]

Shapes (simulated logs of about ``--records`` records each, cached in .cache/):
  * dense — the simulator's default, 5 sessions a second, no clock wrong;
  * sparse — one session every 9 minutes, over months (every record after a gap);
  * nights — a diurnal profile: quiet nights at 2 % of the day's peak;
  * lulls — the dense log with a 15-minute lull every 10,000 sessions' worth of time;
  * skewed — the dense log with 5 % of clients' clocks off by up to ±1 h;
  * front_ends — the dense log as real front ends send it: the web application searching as
    you type (a record per debounced keystroke), a crawler and a synthetic monitor (issue 33).

Each replay runs in a fresh interpreter (the real `replay` path: file read → engine → close),
shapes and checkouts interleaved within each round (which checkout goes first alternating by
round), so that machine noise hits all alike;
``--against DIR`` (another checkout, e.g. main in a `git worktree`) runs the same logs in the
same rounds; ``--cpu`` times each replay's CPU seconds instead of its wall time (on a machine
shared with other work). Reported: the median µs per record of each shape, each shape's median
ratio to dense (same run), and with ``--against`` each shape's median ratio of this checkout's
time to the other's.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path

from benchmarks.collector_bench import CACHE, RECORDS_PER_SESSION, time_replay_in
from collector.sources.simulator import SimulationSpec, Simulator
from collector.sources.simulator.spec import Bot

SHAPES = ("dense", "sparse", "nights", "lulls", "skewed", "front_ends")


def _spec(shape: str, sessions: int) -> SimulationSpec:
    if shape == "sparse":
        return SimulationSpec(seed=42, sessions=sessions, sessions_per_second=1 / 540)
    if shape == "nights":
        return SimulationSpec(seed=42, sessions=sessions, sessions_per_second=0.5, diurnal=True)
    if shape == "lulls":
        return SimulationSpec(seed=42, sessions=sessions, lulls=[
            (start, 900.0) for start in range(2000, int(sessions / 5), 2000)])
    if shape == "front_ends":
        return SimulationSpec(seed=42, sessions=sessions, type_ahead=frozenset({"web"}), bots=[
            Bot.parse("crawler@web:25/m"), Bot.parse("monitor@legacy:1/m")])
    return SimulationSpec(seed=42, sessions=sessions)


def shaped_log(shape: str, records: int) -> Path:
    """The shape's log, written once: JSON lines in delivery order."""
    path = CACHE / f"time-{shape}-{records}.jsonl"
    if path.exists():
        return path
    CACHE.mkdir(exist_ok=True)
    sessions = int(records / RECORDS_PER_SESSION)
    lines = Simulator(_spec(shape, sessions)).records()
    if shape == "skewed":
        lines = _skewed(list(lines), share=0.05, bound=3600.0)
    with open(path, "wb") as handle:
        for line in lines:
            handle.write(line)
    return path


def _skewed(lines: list[bytes], share: float, bound: float) -> list[bytes]:
    rng = random.Random(42)
    records = [json.loads(line) for line in lines]
    clients = sorted({r["client_id"] for r in records if r.get("client_id")})
    chosen = rng.sample(clients, int(share * len(clients)))
    offsets = {client: rng.uniform(-bound, bound) for client in chosen}
    out = []
    for record in records:
        offset = offsets.get(record.get("client_id"))
        if offset is not None and isinstance(record.get("timestamp"), int):
            record["timestamp"] += int(offset * 1000)
        out.append(json.dumps(record).encode() + b"\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another checkout whose replay runs the same logs in the same rounds")
    parser.add_argument("--cpu", action="store_true",
                        help="time each replay's CPU seconds, not its wall time (a shared machine)")
    parser.add_argument("--json", metavar="FILE", help="also write the results here")
    args = parser.parse_args()

    here = Path(__file__).resolve().parents[1]
    logs = {shape: shaped_log(shape, args.records) for shape in SHAPES}
    counts = {shape: sum(1 for _ in path.open("rb")) for shape, path in logs.items()}
    ours: dict[str, list[float]] = {shape: [] for shape in SHAPES}
    theirs: dict[str, list[float]] = {shape: [] for shape in SHAPES}
    for n in range(args.rounds):
        for shape in SHAPES:
            # Which checkout goes first alternates by round: the second of a pair ran faster
            # here (by up to 10 %, the log in the page cache, the core warm).
            trees = [(here, ours), (args.against, theirs)] if args.against else [(here, ours)]
            for tree, times in trees[::-1] if n % 2 else trees:
                seconds = time_replay_in(tree, logs[shape], args.cpu)
                times[shape].append(seconds / counts[shape] * 1e6)
        print(f"round {n + 1}: " + ", ".join(
            f"{shape} {ours[shape][-1]:.2f} us" + (f" ({theirs[shape][-1]:.2f})"
                                                   if args.against else "")
            for shape in SHAPES), flush=True)
    results: dict[str, object] = {"records": counts, "rounds": args.rounds,
                                  "clock": "cpu" if args.cpu else "wall", "shapes": {}}
    for shape in SHAPES:
        entry = {
            "us_per_record_median": round(statistics.median(ours[shape]), 3),
            "ratio_to_dense_median": round(statistics.median(
                s / d for s, d in zip(ours[shape], ours["dense"], strict=True)), 3),
            "us_per_record_rounds": [round(x, 3) for x in ours[shape]],
        }
        if args.against:
            entry.update({
                "against_us_per_record_median": round(statistics.median(theirs[shape]), 3),
                "against_ratio_to_dense_median": round(statistics.median(
                    s / d for s, d in zip(theirs[shape], theirs["dense"], strict=True)), 3),
                "ratio_to_against_median": round(statistics.median(
                    o / t for o, t in zip(ours[shape], theirs[shape], strict=True)), 3),
            })
        results["shapes"][shape] = entry  # type: ignore[index]
    if args.against:
        results["against"] = str(args.against)
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
