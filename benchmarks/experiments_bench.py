"""Calibration of the experiment verdicts: do the tests and intervals mean what they say?

    python -m benchmarks.experiments_bench [--simulations 500] [--ab-simulations 300]
        [--sessions 3000] [--users 1000] [--effect 0.08] [--workers 1] [--json FILE]

Each simulation is an independent simulated log (its own seed) of returning users with
heavy-tailed activity (log-normal, σ = 1) and their own click propensity
(collector/sources/simulator/, SimulationSpec.users), replayed through the engine; its two
experiment applications (web, mobile: control / treatment, users randomized 50/50) are two
independent experiments, read by `searchpulse experiments`' own code
(feedback/experiments/verdicts.py). Also measured: Python bytes per tracked unit (tracemalloc), and
the experiment families' text at the label caps with every unit bucket filled.

* **A/A** (no effect): the share of experiments whose sample-ratio test on units alarms at
  p < 0.001 (target ≤ 0.3 %), and the share whose 95 % interval of the CTR difference covers 0
  (target 93.5–96.5 %); beside them the same tests done per search (what searchpulse did
  before: a χ² of searches, a binomial interval with n = searches).
* **A/B** (the treatment's click probability + ``--effect``): the share of experiments whose
  CTR-difference interval excludes 0, against the power the report's formula predicts at the
  true CTR effect (per application, the mean observed difference of its A/B experiments; its
  standard error printed) with each experiment's own standard error (target: within 5
  points); and the power
  the report prints, at each experiment's observed difference (post-hoc: biased, shown for
  what it is).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import statistics
import time
import tracemalloc
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from collector.config import load_config
from collector.engine import Engine
from collector.exposition.metrics import experiment_text
from collector.series.experiment_stats import (
    SAMPLE_RATIO_P,
    ExperimentDesign,
    chi2_p_value,
    power,
)
from collector.series.units import ExperimentUnits, UnitTracker
from collector.sources.simulator import SimulationSpec, Simulator
from feedback.experiments.verdicts import verdicts

CTR = "clicked_searches_per_tracked_searches_with_results"
Z = 1.959963984540054


def experiments_of(seed: int, sessions: int, users: int, effect: float) -> list[dict[str, Any]]:
    """One simulated log → per experiment application: what the report says, and the
    per-search statistics beside it."""
    spec = SimulationSpec(seed=seed, sessions=sessions, users=users,
                          treatment_click_effect=effect)
    engine = Engine(load_config(environ={}))
    engine.process_all(Simulator(spec).records())
    engine.close()
    design = ExperimentDesign.from_config(load_config(environ={}))
    experiments = engine.view(release=False).experiments
    report = verdicts(experiments, design)
    found = []
    for application, entry in report["applications"].items():
        variants = entry["variants"]
        if set(variants) != {"control", "treatment"}:
            continue
        diff = variants["treatment"]["rates"][CTR]["difference"]
        found.append({"seed": seed, "application": application,
                      "units": {v: variants[v]["units"] for v in variants},
                      "searches": {v: variants[v]["searches"] for v in variants},
                      "srm_p": entry["sample_ratio"]["p_value"],
                      "diff": diff["value"], "low": diff["low"], "high": diff["high"],
                      "stderr": diff["stderr"], "reported_power": diff["power"],
                      **_per_search([e for e in experiments if e.application == application])})
    return found


def _per_search(experiments: list[Any]) -> dict[str, float]:
    """The χ² of searches and the binomial CTR-difference interval with n = searches."""
    counts = {}
    for e in experiments:
        buckets = e.filled()
        searches = sum(b.searches for b in buckets)
        with_results = searches - sum(b.zero_result for b in buckets)
        counts[e.variant] = (searches, with_results, sum(b.clicked for b in buckets))
    total = sum(c[0] for c in counts.values())
    chi2 = sum((c[0] - total / 2) ** 2 / (total / 2) for c in counts.values())
    (_, n_c, y_c), (_, n_t, y_t) = counts["control"], counts["treatment"]
    p_c, p_t = y_c / n_c, y_t / n_t
    half = Z * math.sqrt(p_c * (1 - p_c) / n_c + p_t * (1 - p_t) / n_t)
    return {"search_srm_p": chi2_p_value(chi2, 1),
            "naive_low": p_t - p_c - half, "naive_high": p_t - p_c + half}


def run(simulations: int, sessions: int, users: int, effect: float, workers: int,
        first_seed: int) -> list[dict[str, Any]]:
    seeds = range(first_seed, first_seed + simulations)
    if workers <= 1:
        return [x for seed in seeds for x in experiments_of(seed, sessions, users, effect)]
    with ProcessPoolExecutor(workers) as pool:
        chunks = pool.map(experiments_of, seeds, [sessions] * simulations,
                          [users] * simulations, [effect] * simulations, chunksize=8)
        return [x for chunk in chunks for x in chunk]


def _share(flags: list[bool]) -> float:
    return sum(flags) / len(flags)


def _interval(share: float, n: int) -> list[float]:
    """The 95 % Wilson interval of a measured share (its own sampling error)."""
    centre = (share + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(share * (1 - share) / n + Z * Z / (4 * n * n))
    return [centre - half, centre + half]


def summarize_aa(found: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(found)
    srm = _share([x["srm_p"] < SAMPLE_RATIO_P for x in found])
    covered = _share([x["low"] <= 0 <= x["high"] for x in found])
    search_srm = _share([x["search_srm_p"] < SAMPLE_RATIO_P for x in found])
    naive = _share([x["naive_low"] <= 0 <= x["naive_high"] for x in found])
    searches = [sum(x["searches"].values()) for x in found]
    units = [sum(x["units"].values()) for x in found]
    return {
        "experiments": n,
        "median_units": statistics.median(units), "median_searches": statistics.median(searches),
        "units_srm_alarm_share": srm, "units_srm_alarm_share_ci95": _interval(srm, n),
        "units_srm_p_below_0.05_share": _share([x["srm_p"] < 0.05 for x in found]),
        "ctr_difference_coverage": covered, "ctr_difference_coverage_ci95": _interval(covered, n),
        "per_search_srm_alarm_share": search_srm,
        "per_search_ctr_difference_coverage": naive,
        "targets": {"units_srm_alarm_share": "<= 0.003",
                    "ctr_difference_coverage": "0.935 .. 0.965"},
        "met": srm <= 0.003 and 0.935 <= covered <= 0.965,
    }


def summarize_ab(found: list[dict[str, Any]], t: float) -> dict[str, Any]:
    """Detection against predicted power, per application (its true CTR effect: the mean
    observed difference of its experiments) and over all."""
    by_application = {}
    predicted_all = []
    for application in sorted({x["application"] for x in found}):
        mine = [x for x in found if x["application"] == application]
        effect = statistics.fmean(x["diff"] for x in mine)
        predicted = [power(effect, x["stderr"], t) for x in mine]
        predicted_all += predicted
        by_application[application] = {
            "experiments": len(mine), "true_ctr_effect": effect,
            "true_ctr_effect_stderr": statistics.stdev(x["diff"] for x in mine)
            / math.sqrt(len(mine)),
            "detected": _share([x["low"] > 0 for x in mine]),
            "predicted": statistics.fmean(predicted)}
    n = len(found)
    detected = _share([x["low"] > 0 for x in found])
    predicted = statistics.fmean(predicted_all)
    return {
        "experiments": n, "detected_share": detected,
        "detected_share_ci95": _interval(detected, n), "predicted_power": predicted,
        "post_hoc_reported_power": statistics.fmean(x["reported_power"] for x in found),
        "by_application": by_application,
        "target": "|detected - predicted| <= 0.05", "met": abs(detected - predicted) <= 0.05,
    }


def bytes_per_unit(units: int) -> float:
    """Python allocations per tracked client (tracemalloc), its id string included: the
    tracker keeps the id alive once the record that brought it is gone."""
    experiment = ExperimentUnits("web", "control", 32)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    tracker = UnitTracker(21600.0, units, 0.5)
    for i in range(units):
        tracker.counts(experiment, f"c-{i:012x}", float(i))
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert experiment.units == units
    return (after - before) / units


def scrape_ms_at_caps(applications: int = 20, variants: int = 20, buckets: int = 32) -> dict:
    """The experiment families' text at the label caps with every unit bucket filled (the
    worst case: every application runs 20 variants), median of 5."""
    experiments = []
    for a in range(applications):
        for v in range(variants):
            experiment = ExperimentUnits(f"app{a}", f"v{v}", buckets)
            for b in range(buckets):
                experiment.bucket(b).searches = 1000 + b
            experiments.append(experiment)
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        body = experiment_text(experiments)
        samples.append(time.perf_counter() - started)
    return {"series": body.count(b"\n") - body.count(b"# "),
            "ms_median": round(statistics.median(samples) * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simulations", type=int, default=500,
                        help="A/A simulated logs (each holds two experiments)")
    parser.add_argument("--ab-simulations", type=int, default=300,
                        help="A/B simulated logs (each holds two experiments)")
    parser.add_argument("--sessions", type=int, default=3000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--effect", type=float, default=0.08,
                        help="the A/B treatment's click-probability effect")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--memory-units", type=int, default=1_000_000,
                        help="clients tracked for the bytes-per-unit measurement")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    costs = {"bytes_per_unit": round(bytes_per_unit(args.memory_units)),
             "units_measured": args.memory_units,
             "experiment_scrape_at_caps": scrape_ms_at_caps()}
    print(json.dumps(costs), flush=True)
    started = time.perf_counter()
    aa = run(args.simulations, args.sessions, args.users, 0.0, args.workers, 1)
    ab = run(args.ab_simulations, args.sessions, args.users, args.effect, args.workers,
             1_000_001)
    design = ExperimentDesign.from_config(load_config(environ={}))
    result = {
        "command": "python -m benchmarks.experiments_bench " + " ".join(
            f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
            if k != "json" and v is not None),
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "simulation": {"sessions": args.sessions, "users": args.users,
                       "user_activity_sigma": 1.0, "user_click_sigma": 0.8,
                       "unit_buckets": design.unit_buckets, "t": design.t},
        "aa": summarize_aa(aa),
        "ab": {"effect": args.effect, **summarize_ab(ab, design.t)},
        "calibration_seconds": round(time.perf_counter() - started, 1),
        "costs": costs,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
