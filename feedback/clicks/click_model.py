"""The position-based click model (PBM): how likely each position is to be looked at, and how
attractive each document is for its query once looked at.

P(click on d at position k for query q) = θ_k · γ_qd. θ (the examination curve) is what makes
raw clicks lie: a document at position 1 collects clicks that a better one at position 6 never
gets the chance to. Fitted in two steps on counts per (query, document, position) — n
impressions, c clicks:

1. θ by EM over the pairs shown at two positions or more (interleaving, variants and ranking
   churn provide them), the per-impression update of Chuklin, Markov & de Rijke (2015)
   collapsed over identical cells (every click examined and attractive; a non-click examined
   with probability θ(1−γ)/(1−θγ), attractive with γ(1−θ)/(1−θγ)). A pair seen at one position
   says nothing about θ's shape — its γ absorbs anything — but its free γ biases θ when its
   counts are small (the incidental-parameter problem): measured, fitting on every pair left a
   constant 0.02–0.04 error on positions 2–10 that the moving pairs alone do not
   (docs/benchmarks.md).
2. γ of every pair with θ fixed: the root of its log posterior's derivative.

γ has a nearly flat Beta prior (``PRIOR`` pseudo-impressions at ``PRIOR_MEAN``): pairs seen a
handful of times no longer drift towards 0 or 1, which made plain EM crawl. θ and γ are
identified only up to a common factor: the curve is published with θ_1 = 1 (γ rescaled to keep
θ·γ). An application with fewer than ``min_moving`` moving pairs has no curve at all (θ NaN, γ
NaN): fitting it would return EM's starting point, which looks like an answer and is not one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from collector.store.query_stats import position_key

_FLOOR = 1e-6  # keeps θ·γ < 1 and logs finite
PRIOR = 0.1
PRIOR_MEAN = 0.5


@dataclass(frozen=True)
class Cells:
    """Counts per (pair, position): ``pair`` indexes (application, query, document) pairs,
    ``group`` (per pair) indexes the application whose curve the pair shares."""

    pair: np.ndarray  # int, per cell
    position: np.ndarray  # int, 1-based, per cell
    impressions: np.ndarray  # float, per cell
    clicks: np.ndarray  # float, per cell, ≤ impressions
    group: np.ndarray  # int, per pair
    groups: int
    depth: int

    def subset(self, keep: np.ndarray) -> Cells:
        """The cells where ``keep``, their pairs renumbered."""
        pairs, index = np.unique(self.pair[keep], return_inverse=True)
        return Cells(index, self.position[keep], self.impressions[keep], self.clicks[keep],
                     self.group[pairs], self.groups, self.depth)


@dataclass
class Fit:
    """θ per (group, position) with θ_1 = 1 (NaN rows: groups not fitted); γ per pair (NaN for
    their pairs); how the fit went: ``converged`` is None when EM did not run (no group had
    enough moving pairs), else whether it settled within the iterations allowed."""

    theta: np.ndarray  # groups × depth
    gamma: np.ndarray  # per pair
    iterations: int
    converged: bool | None
    log_likelihood: float | None
    moving_pairs: np.ndarray  # per group
    fitted: np.ndarray  # per group: had at least min_moving moving pairs


def _initial_theta(groups: int, depth: int) -> np.ndarray:
    return np.tile(1.0 / np.arange(1, depth + 1), (groups, 1))


def fit(cells: Cells, warm_theta: np.ndarray | None = None, max_iterations: int = 1000,
        tolerance: float = 1e-5, min_moving: int = 1) -> Fit:
    """θ from ``warm_theta`` (yesterday's curve; 1/k when None) by EM over the moving pairs of
    the groups with at least ``min_moving`` of them, until the curve's shape moves by less
    than ``tolerance``; then the γ of every pair of those groups."""
    theta = (np.clip(warm_theta, _FLOOR, 1 - _FLOOR).copy() if warm_theta is not None
             else _initial_theta(cells.groups, cells.depth))
    moved = _moved(cells)
    moving = np.bincount(cells.group, moved, cells.groups).astype(int)
    fitted = moving >= max(min_moving, 1)
    learn = moved[cells.pair] & fitted[cells.group[cells.pair]]
    iterations, converged = 0, None
    if learn.any():
        theta, iterations, converged = _examination(cells.subset(learn), theta, max_iterations,
                                                    tolerance)
    first = theta[:, :1].copy()
    first[first <= 0] = 1.0
    theta = theta / first  # θ_1 = 1 per group; γ below is on this scale
    theta[~fitted] = np.nan  # no curve: attractiveness leaves their cells out
    gamma = attractiveness(cells, theta)
    gamma[~fitted[cells.group]] = np.nan
    ours = fitted[cells.group[cells.pair]]
    log_likelihood = None
    if ours.any():
        p = np.clip(theta[cells.group[cells.pair], cells.position - 1][ours]
                    * gamma[cells.pair][ours], _FLOOR, 1 - _FLOOR)
        c = np.minimum(cells.clicks, cells.impressions)[ours]
        log_likelihood = float((c * np.log(p) + (cells.impressions[ours] - c)
                                * np.log1p(-p)).sum())
    return Fit(theta, gamma, iterations, converged, log_likelihood, moving, fitted)


def _examination(cells: Cells, theta: np.ndarray, max_iterations: int, tolerance: float
                 ) -> tuple[np.ndarray, int, bool]:
    """EM for θ and γ together; returns θ (any scale), iterations, converged."""
    depth, groups, pairs = cells.depth, cells.groups, len(cells.group)
    cell_theta = cells.group[cells.pair] * depth + cells.position - 1
    n, c = cells.impressions, np.minimum(cells.clicks, cells.impressions)
    skipped = n - c
    shown_at = np.bincount(cell_theta, n, groups * depth)
    shown = np.bincount(cells.pair, n, pairs)
    flat = theta.ravel()
    # γ starts at the pair's CTR divided by the examination of where it was shown
    examined = np.bincount(cells.pair, n * flat[cell_theta], pairs)
    gamma = np.clip(np.bincount(cells.pair, c, pairs) / np.maximum(examined, _FLOOR),
                    _FLOOR, 1 - _FLOOR)
    iteration = 0
    while iteration < max_iterations:
        iteration += 1
        t, g = flat[cell_theta], gamma[cells.pair]
        unclicked = skipped / np.maximum(1 - t * g, _FLOOR)
        new_flat = np.bincount(cell_theta, c + unclicked * t * (1 - g), groups * depth)
        new_flat = np.clip(np.divide(new_flat, shown_at, out=flat.copy(), where=shown_at > 0),
                           _FLOOR, 1 - _FLOOR)
        gamma = np.clip((np.bincount(cells.pair, c + unclicked * g * (1 - t), pairs)
                         + PRIOR * PRIOR_MEAN) / (shown + PRIOR), _FLOOR, 1 - _FLOOR)
        # θ and γ may trade a common factor without changing any θ·γ: the curve's shape
        # (θ / θ_1) is what must settle
        shift = np.abs(_shape(new_flat, groups, depth) - _shape(flat, groups, depth)).max()
        flat = new_flat
        if shift < tolerance:
            return flat.reshape(groups, depth), iteration, True
    return flat.reshape(groups, depth), iteration, False


def attractiveness(cells: Cells, theta: np.ndarray, steps: int = 60) -> np.ndarray:
    """γ of every pair under a known curve ``theta`` (groups × depth; NaN or 0 where unknown:
    those cells are left out): the root of the log posterior's derivative in γ, which
    decreases (likelihood and prior are concave), found by bisection (2^-steps)."""
    pairs = len(cells.group)
    t = theta[cells.group[cells.pair], cells.position - 1]
    known = np.nan_to_num(t) > 0
    t = np.where(known, t, 0.0)
    n = np.where(known, cells.impressions, 0.0)
    c = np.minimum(np.where(known, cells.clicks, 0.0), n)
    clicked = np.bincount(cells.pair, c, pairs) + PRIOR * PRIOR_MEAN
    behind = PRIOR * (1 - PRIOR_MEAN)
    low = np.full(pairs, _FLOOR)
    top = np.zeros(pairs)
    np.maximum.at(top, cells.pair, t)
    high = np.minimum(1.0, 1.0 / np.maximum(top, _FLOOR)) - _FLOOR
    for _ in range(steps):
        gamma = (low + high) / 2
        slope = (clicked / gamma - behind / (1 - gamma)
                 - np.bincount(cells.pair, (n - c) * t / (1 - t * gamma[cells.pair]), pairs))
        rising = slope > 0
        low = np.where(rising, gamma, low)
        high = np.where(rising, high, gamma)
    return (low + high) / 2


def _shape(flat: np.ndarray, groups: int, depth: int) -> np.ndarray:
    theta = flat.reshape(groups, depth)
    return theta / theta[:, :1]


def _moved(cells: Cells) -> np.ndarray:
    """Per pair: shown at two positions or more (what identifies the curve)."""
    distinct = np.unique(cells.pair * (cells.depth + 1) + cells.position) // (cells.depth + 1)
    return np.bincount(distinct, minlength=len(cells.group)) >= 2


def moving_pairs(cells: Cells) -> np.ndarray:
    """Per group: pairs shown at two positions or more."""
    return np.bincount(cells.group, _moved(cells), cells.groups).astype(int)


def relevance_by_document(shown_at: dict[str, int], clicked_at: dict[str, int],
                          theta: np.ndarray) -> dict[str, tuple[float, int, int, int]]:
    """Per document of one query: (γ under ``theta``, impressions, clicks, clicks at 1)."""
    impressions: dict[str, dict[int, int]] = {}
    clicks: dict[str, dict[int, int]] = {}
    for counts, into in ((shown_at, impressions), (clicked_at, clicks)):
        for key, count in counts.items():
            parsed = position_key(key)
            if parsed is not None:
                into.setdefault(parsed[1], {})[parsed[0]] = count
    found = {}
    for document, shown in impressions.items():
        clicked = clicks.get(document, {})
        gamma = relevance(shown, clicked, theta)
        if gamma is not None:
            found[document] = (gamma, sum(shown.values()), sum(clicked.values()),
                               clicked.get(1, 0))
    return found


def relevance(impressions: dict[int, int], clicks: dict[int, int], theta: np.ndarray
              ) -> float | None:
    """One document's γ under a known curve ``theta`` (θ_1 = 1; NaN where unknown) from its
    impressions and clicks per 1-based position; None when never shown within the known
    curve. The γ ``fit`` gives a pair (same prior)."""
    shown = [(k, n) for k, n in impressions.items()
             if 1 <= k <= len(theta) and n > 0 and theta[k - 1] > 0]
    if not shown:
        return None
    cells = Cells(np.zeros(len(shown), dtype=np.int64), np.array([k for k, _ in shown]),
                  np.array([n for _, n in shown], float),
                  np.array([clicks.get(k, 0) for k, _ in shown], float),
                  np.zeros(1, dtype=np.int64), 1, len(theta))
    return float(attractiveness(cells, theta[None, :])[0])


def ips_weights(theta: np.ndarray, max_weight: float) -> np.ndarray:
    """Inverse-propensity weight per position: 1/θ_k, clipped at ``max_weight`` (a position
    examined less than 1/max_weight as often as the first counts as if examined that often:
    bounded variance, at the price of under-weighting the deepest clicks)."""
    return np.minimum(1.0 / np.maximum(theta, 1.0 / max_weight), max_weight)


def coec(impressions: np.ndarray, clicks: np.ndarray, expected_ctr: np.ndarray) -> np.ndarray:
    """The Search Relevance Workbench's COEC rating per pair: clicks / (``expected_ctr``, the
    CTR of all documents at the pair's best position, × impressions); 0 when that is 0."""
    expected = expected_ctr * impressions
    return np.divide(clicks, expected, out=np.zeros_like(expected, dtype=float),
                     where=expected > 0)
