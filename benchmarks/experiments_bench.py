"""Calibration of the experiment verdicts: do the tests and intervals mean what they say?

    python -m benchmarks.experiments_bench [--simulations 500] [--ab-simulations 300]
        [--sessions 3000] [--users 1000] [--effect 0.08] [--workers 1] [--sequential 1000]
        [--clients 300] [--looks 100] [--only-looking] [--json FILE]

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
* **Continuous looking** (A/A, ``--looks`` looks per experiment): the share of experiments whose
  CTR-difference interval excludes 0 at *some* look, for the fixed-horizon 95 % interval and
  the always-valid one the dashboards show (collector/series/confidence_sequence.py; target ≤
  5 %). Pure-Python simulations (``random``), not the engine: ``--sequential`` experiments of
  ``--clients`` clients per variant, each with its own activity (log-normal, σ = 1) and click
  probability (logit-normal around 30 %, σ = 0.8), hashed into the 32 unit buckets; the
  experiment reaches the always-valid interval's horizon (100,000 searches per variant) at its
  last look and is read after every batch, the counts of all batches so far.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import random
import statistics
import time
import tracemalloc
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from collector.config import load_config
from collector.engine import Engine
from collector.exposition.metrics import experiment_text
from collector.series.confidence_sequence import HORIZON, always_valid_difference
from collector.series.experiment_stats import (
    SAMPLE_RATIO_P,
    ExperimentDesign,
    chi2_p_value,
    clustered_ratio,
    difference,
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


def _poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw (Knuth's product of uniforms below 30, else the normal approximation)."""
    if mean >= 30:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k


def _binomial(rng: random.Random, n: int, p: float) -> int:
    if n < 30:
        return sum(rng.random() < p for _ in range(n))
    return min(n, max(0, round(rng.gauss(n * p, math.sqrt(n * p * (1 - p))))))


def looked_at(seed: int, clients: int, looks: int, searches: int, t: float) -> dict[str, Any]:
    """One A/A experiment read after each of ``looks`` batches: the first look at which each
    interval of the CTR difference excluded 0 (None: never), and whether the last look's did."""
    rng = random.Random(seed)
    variants = []
    for _ in range(2):
        activity = [rng.lognormvariate(0, 1) for _ in range(clients)]
        scale = searches / looks / sum(activity)
        variants.append([(a * scale, 1 / (1 + math.exp(-(math.log(0.3 / 0.7)
                                                        + rng.gauss(0, 0.8)))),
                          rng.randrange(32)) for a in activity])
    sums = [[[0, 0] for _ in range(32)] for _ in variants]
    first: dict[str, int | None] = {"fixed": None, "always_valid": None}
    for look in range(1, looks + 1):
        for clients_of, buckets in zip(variants, sums, strict=True):
            for mean, p, bucket in clients_of:
                n = _poisson(rng, mean)
                if n:
                    buckets[bucket][0] += _binomial(rng, n, p)
                    buckets[bucket][1] += n
        estimates = [clustered_ratio([(y, n) for y, n in b if n], 32, t) for b in sums]
        if None in estimates:
            continue
        treatment, control = estimates
        totals = [sum(n for _, n in b) for b in sums]
        fixed = difference(treatment, control, t)
        for kind, diff in (("fixed", fixed),
                           ("always_valid", always_valid_difference(treatment, control,
                                                                    *totals))):
            if first[kind] is None and not diff.low <= 0 <= diff.high:
                first[kind] = look
    return {**first, "fixed_at_end": not fixed.low <= 0 <= fixed.high}


def run_looking(experiments: int, clients: int, looks: int, workers: int, t: float
                ) -> list[dict[str, Any]]:
    seeds = range(2_000_001, 2_000_001 + experiments)
    args = ([clients] * experiments, [looks] * experiments, [HORIZON] * experiments,
            [t] * experiments)
    if workers <= 1:
        return list(map(looked_at, seeds, *args))
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(looked_at, seeds, *args, chunksize=16))


def summarize_looking(found: list[dict[str, Any]], looks: int, clients: int) -> dict[str, Any]:
    n = len(found)
    fixed = _share([x["fixed"] is not None for x in found])
    always = _share([x["always_valid"] is not None for x in found])
    by_looks = {k: _share([x["fixed"] is not None and x["fixed"] <= k for x in found])
                for k in sorted({1, 10, looks // 10, looks // 2, looks} - {0})}
    return {
        "experiments": n, "looks": looks, "clients_per_variant": clients,
        "searches_per_variant_at_the_end": HORIZON,
        "fixed_horizon_ever_excluded_0": fixed,
        "fixed_horizon_ever_excluded_0_ci95": _interval(fixed, n),
        "fixed_horizon_excluded_0_at_the_last_look": _share([x["fixed_at_end"] for x in found]),
        "fixed_horizon_ever_excluded_0_within_looks": by_looks,
        "always_valid_ever_excluded_0": always,
        "always_valid_ever_excluded_0_ci95": _interval(always, n),
        "target": "always_valid_ever_excluded_0 <= 0.05", "met": always <= 0.05,
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
    parser.add_argument("--sequential", type=int, default=1000,
                        help="A/A experiments looked at after every batch")
    parser.add_argument("--clients", type=int, default=300,
                        help="clients per variant of a continuously looked-at experiment")
    parser.add_argument("--looks", type=int, default=100)
    parser.add_argument("--only-looking", action="store_true",
                        help="only the continuous-looking simulations (no engine, no costs)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    design = ExperimentDesign.from_config(load_config(environ={}))
    started = time.perf_counter()
    looking = {**summarize_looking(run_looking(args.sequential, args.clients, args.looks,
                                               args.workers, design.t),
                                   args.looks, args.clients),
               "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(looking), flush=True)
    if args.only_looking:
        _write({"command": _command(args), "continuous_looking": looking}, args.json)
        return
    costs = {"bytes_per_unit": round(bytes_per_unit(args.memory_units)),
             "units_measured": args.memory_units,
             "experiment_scrape_at_caps": scrape_ms_at_caps()}
    print(json.dumps(costs), flush=True)
    started = time.perf_counter()
    aa = run(args.simulations, args.sessions, args.users, 0.0, args.workers, 1)
    ab = run(args.ab_simulations, args.sessions, args.users, args.effect, args.workers,
             1_000_001)
    result = {
        "command": _command(args),
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
        "simulation": {"sessions": args.sessions, "users": args.users,
                       "user_activity_sigma": 1.0, "user_click_sigma": 0.8,
                       "unit_buckets": design.unit_buckets, "t": design.t},
        "aa": summarize_aa(aa),
        "ab": {"effect": args.effect, **summarize_ab(ab, design.t)},
        "continuous_looking": looking,
        "calibration_seconds": round(time.perf_counter() - started, 1),
        "costs": costs,
    }
    _write(result, args.json)


def _command(args: argparse.Namespace) -> str:
    return "python -m benchmarks.experiments_bench " + " ".join(
        f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}")
        for k, v in vars(args).items() if k != "json" and v is not None and v is not False)


def _write(result: dict[str, Any], path: Path | None) -> None:
    text = json.dumps(result, indent=2)
    print(text)
    if path:
        path.write_text(text + "\n")


if __name__ == "__main__":
    main()
