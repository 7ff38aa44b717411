"""The paired randomization (sign-flip) test of `evaluate`'s comparisons, and intervals on the
mean differences read from the same randomization distribution.

Test: under "A and B are exchangeable", each ranking's difference d_i = B_i − A_i is as likely
to have had the other sign; ``rounds`` random sign vectors s give the distribution of
mean(s · d); p = (rounds with |mean(s · d)| ≥ |mean(d)| + 1) / (rounds + 1), two-sided.

Interval (test inversion): δ is inside the interval when the same test does not reject
"the differences are symmetric around δ", i.e. when p(δ) ≥ 1 − level, with
p(δ) = (#{rounds: |mean(s · (d − δ))| ≥ |mean(d) − δ|} + 1) / (rounds + 1). Since
s · (d − δ) = s · d − δ Σ s, one pass over the sign vectors (Σ s_i d_i for every measure and Σ s_i)
gives every δ: the interval costs one more column of the same product, not another resampling.
Its ends are found by bisection to 1e-9. When every difference is equal the interval is that
value alone (no variation to speak of).

All measures of a slice share the same sign vectors (one matrix product); slices draw their
own. Seeded, so the same inputs give the same p and interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ROUNDS = 10_000
LEVEL = 0.95
_TIE = 1e-12
_CHUNK_CELLS = 2_000_000  # sign matrix cells per block: ~16 MB of float64


@dataclass(frozen=True)
class Paired:
    """Per measure (column of the differences): p and the interval's ends."""

    p: np.ndarray
    low: np.ndarray
    high: np.ndarray


def sign_sums(differences: np.ndarray, rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(Σ s_i d_i per round and column, Σ s_i per round) for ``rounds`` random sign vectors.

    Signs come from random bits (eight per random byte), and each block of rounds is one
    matrix product over every column and a column of ones."""
    n, m = differences.shape
    columns = np.hstack([differences, np.ones((n, 1))])
    column_sums = columns.sum(axis=0)
    rng = np.random.default_rng(seed)
    out = np.empty((rounds, m + 1))
    block = max(1, _CHUNK_CELLS // max(n, 1))
    for start in range(0, rounds, block):
        size = min(block, rounds - start)
        bits = np.unpackbits(rng.integers(0, 256, (size, (n + 7) // 8), dtype=np.uint8),
                             axis=1, count=n)
        # s = 2b − 1, so s · c = 2 (b · c) − Σ c
        out[start:start + size] = 2.0 * (bits.astype(np.float64) @ columns) - column_sums
    return out[:, :m], out[:, m]


def paired(differences: np.ndarray, rounds: int = ROUNDS, seed: int = 1,
           level: float = LEVEL) -> Paired:
    """p and interval of the mean of each column of ``differences`` (n rankings × m)."""
    n, m = differences.shape
    means = differences.mean(axis=0) if n else np.zeros(m)
    p, low, high = np.ones(m), means.copy(), means.copy()
    if n == 0:
        return Paired(p, np.full(m, np.nan), np.full(m, np.nan))
    varied = differences.max(axis=0) - differences.min(axis=0) > _TIE
    if not differences.any():
        return Paired(p, low, high)
    sums, ones = sign_sums(differences, rounds, seed)
    for j in range(m):
        if not differences[:, j].any():
            continue  # p 1, the interval the point 0
        p[j] = _p_at(0.0, sums[:, j], ones, means[j], n)
        if varied[j]:
            spread = float(differences[:, j].std())
            low[j] = _end(sums[:, j], ones, means[j], n, -spread, 1 - level)
            high[j] = _end(sums[:, j], ones, means[j], n, spread, 1 - level)
    return Paired(p, low, high)


def _p_at(delta: float, sums: np.ndarray, ones: np.ndarray, mean: float, n: int) -> float:
    observed = abs(mean - delta)
    extreme = int((np.abs(sums - delta * ones) / n >= observed - _TIE).sum())
    return (extreme + 1) / (len(sums) + 1)


def _end(sums: np.ndarray, ones: np.ndarray, mean: float, n: int, step: float,
         alpha: float) -> float:
    """The interval's end on the side of ``step``: the last δ from the mean at which
    p(δ) ≥ alpha, by doubling the step until rejected, then bisection."""
    inside, outside = 0.0, step
    for _ in range(60):
        if _p_at(mean + outside, sums, ones, mean, n) < alpha:
            break
        inside, outside = outside, outside * 2
    for _ in range(60):
        if abs(outside - inside) < 1e-9:
            break
        middle = (inside + outside) / 2
        if _p_at(mean + middle, sums, ones, mean, n) >= alpha:
            inside = middle
        else:
            outside = middle
    return mean + inside
