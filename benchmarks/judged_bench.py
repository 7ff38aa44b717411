"""Judged relevance benchmark: what live judged scoring costs the collector, and how fast the
offline gate runs.

    python -m benchmarks.judged_bench [--records 1000000] [--rounds 5] [--json FILE]

1. Live scoring: `replay` of the ~1M-record simulated log of benchmarks/collector_bench.py
   without and with a judgment set of 10,000 queries × 50 documents (every query of the
   simulated vocabulary judged on its 50 best-ranked documents — so every search with hit ids is
   scored, the worst case — plus synthetic queries up to 10,000), each in a fresh interpreter,
   rounds interleaved. CPU seconds of the replay call; the set is loaded before it, timed apart
   (it happens once per start and on each change), and handed to the replay's engine, so the
   replay's time holds no load. Ratio of throughputs per round, and its median.
2. Offline gate: `searchpulse evaluate` comparing two TREC runs of 100,000 queries × 10
   documents against 100,000 judged queries × 10 grades, in a child process: wall and CPU
   seconds.

    python -m benchmarks.judged_bench --gate-baseline DIR [--rounds 3]

   instead: the offline gate only, this tree against the code at DIR (e.g. main exported with
   `git archive`), rounds interleaved, each in a fresh interpreter on the same inputs: wall and
   CPU seconds, peak RSS, and CPU ratios per round.

    python -m benchmarks.judged_bench --by-share [--records 1000000] [--rounds 5]

   instead: the live cost by the share of searches that are judged. Sets of the same size
   (10,000 × 50) that judge the simulated head queries only (about half of all searches, by the
   vocabulary's construction), head and torso (about 80 %), or every query (the worst case
   above), each against the mean of a plain replay before and after them in the same round.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.collector_bench import CACHE, simulated_log
from benchmarks.command import command_module
from benchmarks.store_bench import child
from collector.sources.simulator import SimulationSpec, Simulator, ranked

JUDGED_QUERIES = 10_000
DOCUMENTS = 50
GATE_QUERIES = 100_000

REPLAY = ("import sys, time\nfrom collector.config import load_config\n"
          "from collector.replay import replay\n"
          "import collector.series.judged_relevance as judged\n"
          "overrides = {'judgments.file': sys.argv[2]} if len(sys.argv) > 2 else {}\n"
          "config = load_config(environ={}, overrides=overrides)\n"
          "load = 0.0\n"
          "if overrides:  # loaded once, apart; the replay's engine is handed the loaded set\n"
          "    started = time.process_time(); loaded = judged.load(sys.argv[2], 3)\n"
          "    load = time.process_time() - started\n"
          "    judged.load = lambda path, max_grade: loaded\n"
          "started = time.process_time()\n"
          "summary = replay([sys.argv[1]], config)\n"
          "print(time.process_time() - started, load, summary['records'])")


SHARES = {"head": (0,), "head-torso": (0, 1), "all": (0, 1, 2)}  # strata judged


def judgment_set(path: Path, strata: tuple[int, ...] = SHARES["all"]) -> None:
    """The simulated queries of ``strata`` × their 50 best-ranked documents, then synthetic
    queries up to 10,000."""
    vocabulary = Simulator(SimulationSpec(seed=42)).vocab
    queries = [query for query in vocabulary.queries if vocabulary.strata[query] in strata]
    queries += [f"synthetic query {i}" for i in range(JUDGED_QUERIES - len(queries))]
    rng = random.Random(1)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("application,query,doc_id,rater,grade\n")
        for query in queries[:JUDGED_QUERIES]:
            handle.writelines(f",{query},{ranked(query, i)},bench,{rng.randint(0, 3)}\n"
                              for i in range(DOCUMENTS))


def gate_inputs(directory: Path) -> tuple[Path, Path, Path, Path]:
    rng = random.Random(2)
    judgments, topics = directory / "gate-judgments.csv", directory / "gate-topics.tsv"
    runs = directory / "a.run", directory / "b.run"
    with open(judgments, "w") as j, open(topics, "w") as t, open(runs[0], "w") as a, \
            open(runs[1], "w") as b:
        j.write("application,query,doc_id,rater,grade\n")
        for q in range(GATE_QUERIES):
            t.write(f"t{q}\tquery {q}\n")
            documents = [f"d{q}-{i}" for i in range(12)]
            j.writelines(f",query {q},{d},bench,{rng.randint(0, 3)}\n" for d in documents[:10])
            for handle in (a, b):
                ranked = rng.sample(documents, 10)
                handle.writelines(f"t{q} Q0 {d} {r} {10 - r} run\n"
                                  for r, d in enumerate(ranked, start=1))
    return judgments, topics, *runs


def gate(module: str = "searchpulse") -> str:
    """The offline gate run by the command in ``module`` (benchmarks.command)."""
    return (f"import sys\nfrom {module} import main\n"
            "main(['evaluate', '--judgments', sys.argv[1], '--topics', sys.argv[2], '--run', "
            "sys.argv[3], '--run', sys.argv[4], '--json'])")


def gate_from(tree: Path) -> str:
    """The gate importing the packages of ``tree`` (a baseline's), named last on its command."""
    return "import sys\nsys.path.insert(0, sys.argv.pop())\n" + gate(command_module(tree))


def gate_against(baseline: Path, rounds: int) -> dict[str, object]:
    """The gate on this tree and on ``baseline``'s, rounds interleaved (the order alternates,
    so neither always runs second on a warm page cache)."""
    inputs = [str(p) for p in gate_inputs(CACHE)]
    runs: dict[str, list[tuple[float, int, float]]] = {"baseline": [], "this": []}
    for number in range(rounds):
        order = ("baseline", "this") if number % 2 == 0 else ("this", "baseline")
        for which in order:
            extra = (str(baseline.resolve()),) if which == "baseline" else ()
            runs[which].append(child(gate_from(baseline) if extra else gate(), *inputs, *extra))
        wall_b, _, cpu_b = runs["baseline"][-1]
        wall_t, _, cpu_t = runs["this"][-1]
        print(f"round {number + 1}: baseline {wall_b:.1f} s wall / {cpu_b:.1f} s CPU, "
              f"this {wall_t:.1f} s / {cpu_t:.1f} s CPU (CPU ratio {cpu_t / cpu_b:.3f})")
    ratios = [t[2] / b[2] for t, b in zip(runs["this"], runs["baseline"], strict=True)]
    result = {which: {"wall_s": [r[0] for r in values], "cpu_s": [r[2] for r in values],
                      "peak_rss_mib": [r[1] / 2**20 for r in values]}
              for which, values in runs.items()}
    result["cpu_ratio_per_round"] = ratios
    result["cpu_ratio_median"] = statistics.median(ratios)
    for which, values in runs.items():
        print(f"{which}: median {statistics.median(r[0] for r in values):.1f} s wall, "
              f"{statistics.median(r[2] for r in values):.1f} s CPU, "
              f"{max(r[1] for r in values) / 2**20:.0f} MiB peak")
    print(f"CPU ratio (this / baseline) median {result['cpu_ratio_median']:.3f}")
    return result


def judgment_file(share: str = "all") -> Path:
    """The cached judgment set judging the simulated queries of ``share``; made when missing."""
    suffix = "" if share == "all" else f"-{share}"
    path = CACHE / f"judged-{JUDGED_QUERIES}x{DOCUMENTS}{suffix}.csv"
    if not path.exists():
        judgment_set(path, SHARES[share])
    return path


def replay_seconds(log: Path, judgments: Path | None = None) -> tuple[float, float, int]:
    """(replay CPU seconds, judgment set load CPU seconds, records) in a fresh interpreter."""
    extra = () if judgments is None else (str(judgments),)
    done = subprocess.run([sys.executable, "-c", REPLAY, str(log), *extra],
                          capture_output=True, text=True, check=True)
    seconds, load, records = done.stdout.split()
    return float(seconds), float(load), int(records)


def by_share(log: Path, rounds: int) -> dict[str, object]:
    """Replay ÷ plain replay for judgment sets that judge more or fewer of the searches."""
    sets = {name: judgment_file(name) for name in SHARES}
    ratios: dict[str, list[float]] = {name: [] for name in sets}
    for _ in range(rounds):  # interleaved, a plain replay before and after the sets
        before = replay_seconds(log)[0]
        judged = {name: replay_seconds(log, path)[0] for name, path in sets.items()}
        plain = (before + replay_seconds(log)[0]) / 2
        for name, seconds in judged.items():
            ratios[name].append(plain / seconds)
        print("  ".join(f"{name} × {values[-1]:.3f}" for name, values in ratios.items()))
    medians = {name: statistics.median(values) for name, values in ratios.items()}
    print("medians: " + ", ".join(f"{name} {median:.3f}" for name, median in medians.items()))
    return {"ratio_per_round_by_share": ratios, "ratio_median_by_share": medians}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--by-share", action="store_true",
                        help="the live cost by the share of searches judged, instead")
    parser.add_argument("--gate-baseline", metavar="DIR", type=Path,
                        help="the offline gate only, against the code in DIR, instead")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    if args.gate_baseline:
        result = {"machine": platform.platform(), "python": platform.python_version(),
                  "evaluate_queries": GATE_QUERIES, **gate_against(args.gate_baseline,
                                                                   args.rounds)}
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        return
    log = simulated_log(args.records)
    if args.by_share:
        result = {"machine": platform.platform(), "python": platform.python_version(),
                  "records": args.records, **by_share(log, args.rounds)}
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        return
    judgments = judgment_file()
    ratios, plain, judged, loads = [], [], [], []
    for _ in range(args.rounds):  # interleaved: the machine's noise hits both alike
        for runs, extra in ((plain, None), (judged, judgments)):
            seconds, load, records = replay_seconds(log, extra)
            runs.append(records / seconds)
            if extra:
                loads.append(load)
        ratios.append(judged[-1] / plain[-1])
        print(f"replay {plain[-1]:,.0f} rec/s, with judgments {judged[-1]:,.0f} rec/s "
              f"(× {ratios[-1]:.3f}), set loaded in {loads[-1]:.2f} s CPU")
    inputs = gate_inputs(CACHE)
    wall, rss, cpu = child(gate(), *map(str, inputs))
    print(f"evaluate, 2 runs × {GATE_QUERIES:,} queries: {wall:.1f} s wall, {cpu:.1f} s CPU, "
          f"{rss / 2**20:.0f} MiB peak")
    result = {
        "machine": platform.platform(), "python": platform.python_version(),
        "records": args.records, "judged_queries": JUDGED_QUERIES, "documents": DOCUMENTS,
        "replay_records_per_s": plain, "replay_judged_records_per_s": judged,
        "ratio_per_round": ratios, "ratio_median": statistics.median(ratios),
        "judgment_set_load_cpu_s": loads,
        "evaluate_queries": GATE_QUERIES, "evaluate_wall_s": wall, "evaluate_cpu_s": cpu,
        "evaluate_peak_rss_mib": rss / 2**20,
    }
    print(f"median ratio {result['ratio_median']:.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
