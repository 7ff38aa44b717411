"""The position-based click model (PBM): how likely each position is to be looked at, and how
attractive each document is for its query once looked at.

P(click on d at position k for query q) = θ_k · γ_qd. θ (the examination curve) is what makes
raw clicks lie: a document at position 1 collects clicks that a better one at position 6 never
gets the chance to. Fitted by EM on counts per (query, document, position) — n impressions,
c clicks — the per-impression update of Chuklin, Markov & de Rijke (2015) collapsed over
identical cells (every click examined and attractive; a non-click examined with probability
θ(1−γ)/(1−θγ), attractive with γ(1−θ)/(1−θγ)).

θ and γ are identified only up to a common factor, and only through documents seen at several
positions (interleaving, variants and ranking churn provide them): a curve is published per
application with θ_1 = 1 (γ rescaled to keep θ·γ), and marked ``identified`` only when at least
``min_moving`` of its (query, document) pairs were shown at two positions or more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

_FLOOR = 1e-6  # keeps θ·γ < 1 and logs finite
# γ's prior: PRIOR pseudo-impressions at attractiveness PRIOR_MEAN (a nearly flat Beta prior,
# MAP-EM): a pair seen a handful of times no longer drifts towards 0 or 1, which made plain EM
# crawl (1,000 iterations unconverged; 689 with it, and closer to a simulated curve).
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


@dataclass
class Fit:
    """θ per (group, position) with θ_1 = 1; γ per pair; how the fit went."""

    theta: np.ndarray  # groups × depth
    gamma: np.ndarray  # per pair
    iterations: int
    converged: bool
    log_likelihood: float
    moving_pairs: np.ndarray = field(default_factory=lambda: np.zeros(0, int))  # per group


def _initial_theta(groups: int, depth: int) -> np.ndarray:
    return np.tile(1.0 / np.arange(1, depth + 1), (groups, 1))


def fit(cells: Cells, warm_theta: np.ndarray | None = None, max_iterations: int = 1000,
        tolerance: float = 1e-5) -> Fit:
    """EM from ``warm_theta`` (yesterday's curve; 1/k when None) until no parameter moves by
    more than ``tolerance``."""
    depth, groups = cells.depth, cells.groups
    theta = (np.clip(warm_theta, _FLOOR, 1 - _FLOOR).copy() if warm_theta is not None
             else _initial_theta(groups, depth))
    cell_theta = cells.group[cells.pair] * depth + cells.position - 1
    n, c = cells.impressions, np.minimum(cells.clicks, cells.impressions)
    skipped = n - c
    shown_at = np.bincount(cell_theta, n, groups * depth)
    shown = np.bincount(cells.pair, n, len(cells.group))
    # γ starts at the pair's CTR divided by the examination of where it was shown
    examined = np.bincount(cells.pair, n * theta.ravel()[cell_theta], len(cells.group))
    gamma = np.clip(np.bincount(cells.pair, c, len(cells.group)) / np.maximum(examined, _FLOOR),
                    _FLOOR, 1 - _FLOOR)
    flat = theta.ravel()
    converged = False
    iteration = 0
    while iteration < max_iterations:
        iteration += 1
        t, g = flat[cell_theta], gamma[cells.pair]
        unclicked = skipped / np.maximum(1 - t * g, _FLOOR)
        new_flat = np.bincount(cell_theta, c + unclicked * t * (1 - g), groups * depth)
        new_flat = np.clip(np.divide(new_flat, shown_at, out=flat.copy(), where=shown_at > 0),
                           _FLOOR, 1 - _FLOOR)
        new_gamma = np.clip((np.bincount(cells.pair, c + unclicked * g * (1 - t),
                                         len(cells.group)) + PRIOR * PRIOR_MEAN)
                            / (shown + PRIOR), _FLOOR, 1 - _FLOOR)
        # θ and γ may trade a common factor without changing any θ·γ: the curve's shape
        # (θ / θ_1) is what must settle
        moved = np.abs(_shape(new_flat, groups, depth) - _shape(flat, groups, depth)).max()
        flat, gamma = new_flat, new_gamma
        if moved < tolerance:
            converged = True
            break
    theta = flat.reshape(groups, depth)
    p = theta.ravel()[cell_theta] * gamma[cells.pair]
    log_likelihood = float((c * np.log(p) + skipped * np.log1p(-p)).sum())
    # the scale: θ_1 = 1 per group, γ × θ_1 keeps every θ·γ
    first = theta[:, :1].copy()
    first[first <= 0] = 1.0
    return Fit(theta / first, gamma * first[cells.group, 0], iteration, converged,
               log_likelihood, moving_pairs(cells))


def _shape(flat: np.ndarray, groups: int, depth: int) -> np.ndarray:
    theta = flat.reshape(groups, depth)
    return theta / theta[:, :1]


def moving_pairs(cells: Cells) -> np.ndarray:
    """Per group: pairs shown at two positions or more (what identifies the curve)."""
    distinct = np.unique(cells.pair * (cells.depth + 1) + cells.position) // (cells.depth + 1)
    positions = np.bincount(distinct, minlength=len(cells.group))  # distinct positions per pair
    return np.bincount(cells.group, positions >= 2, cells.groups).astype(int)


def position_key(key: str) -> tuple[int, str] | None:
    """The store's ``"position:document"`` → (position, document); None when malformed."""
    position, _, document = key.partition(":")
    return (int(position), document) if position.isdigit() and document else None


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
    """One document's γ under a known curve ``theta`` (θ_1 = 1; NaN where unknown), from its
    impressions and clicks per 1-based position within the curve; None when never shown
    there. The γ ``fit`` would give it with θ fixed (same prior): the root of the log
    posterior's derivative, which is decreasing in γ (both are concave), found by bisection."""
    shown = [(k, n, min(clicks.get(k, 0), n)) for k, n in impressions.items()
             if 1 <= k <= len(theta) and n > 0 and theta[k - 1] > 0]
    if not shown:
        return None
    t = np.array([theta[k - 1] for k, _, _ in shown])
    n = np.array([n for _, n, _ in shown], float)
    c = np.array([c for _, _, c in shown], float)
    clicked, skipped = c.sum(), n - c
    ahead, behind = PRIOR * PRIOR_MEAN, PRIOR * (1 - PRIOR_MEAN)  # Beta(1 + a, 1 + b)
    low, high = _FLOOR, min(1.0, 1.0 / t.max()) - _FLOOR
    for _ in range(60):  # 2^-60 of the interval
        gamma = (low + high) / 2
        slope = ((clicked + ahead) / gamma - (skipped * t / (1 - t * gamma)).sum()
                 - behind / (1 - gamma))
        low, high = (gamma, high) if slope > 0 else (low, gamma)
    return (low + high) / 2


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
