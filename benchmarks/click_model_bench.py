"""How well the position-based model recovers a known examination curve, against how much
traffic it sees, and what naive per-position CTR would have said instead.

    python -m benchmarks.click_model_bench [--seeds 3] [--json FILE]

Users (the interleaving benchmark's): a search of query q shows 10 documents; the document at
rank k is examined with probability θ_k = 1 / k^0.9 and clicked, if examined, with its
attractiveness α_d (30 candidates per query, α ~ Beta(0.4, 3.6)). Two rankers order a query's
candidates by α plus Gaussian noise (sd 0.35 and 0.25), half of the searches each: the same
document lands at different positions, which is what identifies θ. Clicks per cell are binomial.

Reported per traffic size (queries × searches per query), medians over seeds: the largest
absolute error of the fitted curve (θ / θ_1) against the truth, the same for the naive curve
(CTR at k / CTR at 1, what a dashboard of CTR by position shows: it mixes examination with the
rankers putting better documents first), EM iterations and seconds, and the iterations of a
warm start from another seed's curve (a daily run starts from yesterday's).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from statistics import median

import numpy as np

from feedback.clicks import click_model

DEPTH, CANDIDATES = 10, 30
THETA = 1.0 / np.arange(1, DEPTH + 1) ** 0.9
SIZES = ((200, 20), (1000, 20), (1000, 100), (5000, 40), (20000, 20))


def simulate(seed: int, queries: int, searches: int) -> click_model.Cells:
    rng = np.random.default_rng(seed)
    alpha = rng.beta(0.4, 3.6, (queries, CANDIDATES))
    pair, position, shown, clicked = [], [], [], []
    per_ranker = searches // 2
    for noise in (0.35, 0.25):
        order = np.argsort(-(alpha + rng.normal(0, noise, alpha.shape)), axis=1)[:, :DEPTH]
        attractiveness = np.take_along_axis(alpha, order, axis=1)
        clicks = rng.binomial(per_ranker, THETA * attractiveness)
        pair.append((np.arange(queries)[:, None] * CANDIDATES + order).ravel())
        position.append(np.tile(np.arange(1, DEPTH + 1), queries))
        shown.append(np.full(queries * DEPTH, per_ranker, dtype=float))
        clicked.append(clicks.ravel().astype(float))
    numbers, index = np.unique(np.concatenate(pair), return_inverse=True)
    return click_model.Cells(index, np.concatenate(position), np.concatenate(shown),
                             np.concatenate(clicked), np.zeros(len(numbers), dtype=np.int64),
                             1, DEPTH)


def naive_curve(cells: click_model.Cells) -> np.ndarray:
    ctr = (np.bincount(cells.position - 1, cells.clicks, DEPTH)
           / np.bincount(cells.position - 1, cells.impressions, DEPTH))
    return ctr / ctr[0]


def measure(seeds: int) -> list[dict]:
    rows = []
    truth = THETA / THETA[0]
    for queries, searches in SIZES:
        runs = []
        for seed in range(seeds):
            cells = simulate(seed, queries, searches)
            started = time.perf_counter()
            fit = click_model.fit(cells)
            seconds = time.perf_counter() - started
            warm = click_model.fit(simulate(seed + 100, queries, searches), fit.theta)
            runs.append({"error": float(np.abs(fit.theta[0] - truth).max()),
                         "naive_error": float(np.abs(naive_curve(cells) - truth).max()),
                         "iterations": fit.iterations, "seconds": seconds,
                         "warm_iterations": warm.iterations, "cells": int(len(cells.pair))})
        row = {"queries": queries, "searches_per_query": searches,
               "searches": queries * searches, "cells": runs[0]["cells"]}
        row.update({key: median(run[key] for run in runs) for key in
                    ("error", "naive_error", "iterations", "seconds", "warm_iterations")})
        rows.append(row)
        print(f"{queries:>6} queries × {searches:>3} searches: curve error {row['error']:.3f} "
              f"(naive CTR by position {row['naive_error']:.3f}); {row['iterations']:.0f} "
              f"iterations in {row['seconds']:.2f} s over {row['cells']:,} cells; warm start "
              f"{row['warm_iterations']:.0f} iterations", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = measure(args.seeds)
    if args.json:
        args.json.write_text(json.dumps({
            "python": platform.python_version(), "seeds": args.seeds,
            "true_curve": [round(float(t), 4) for t in THETA], "sizes": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
