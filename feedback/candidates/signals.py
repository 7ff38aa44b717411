"""Per-query failure signals, each with a Wilson lower bound so rare queries do not dominate.

A query seen twice with one zero-result search has a zero-result rate of 0.5, but all we know is
that its true rate is probably (95 %) somewhere in [0.09, 0.91]; its lower bound is what ranks
it. The default confidence is 99 %: over thousands of tail queries, 95 % lets chance through.
Definitions follow docs/metrics.md: zero-result and reformulation rates are per search,
CTR and abandonment per search with results, MRR over first clicks with a known position.
A zero denominator gives NaN ("no data"), never 0. A low CTR enters the failure score as its
complement, the no-click rate.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

from collector import definitions as d
from collector.definitions import count_of

Z = 2.575829  # two-sided 99 %: over thousands of queries, 95 % lets chance through
FAILURE_SIGNALS = {"zero_result": "zero results", "reformulation": "reformulated",
                   "abandonment": "abandoned", "no_click": "rarely clicked"}  # → reason


def wilson_lower(successes: np.ndarray | pd.Series, trials: np.ndarray | pd.Series,
                 z: float = Z) -> np.ndarray:
    """Lower bound of the Wilson score interval; NaN where there are no trials."""
    n = np.asarray(trials, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.asarray(successes, dtype="float64") / n
        z2 = z * z
        centre = p + z2 / (2 * n)
        margin = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
        bound = (centre - margin) / (1 + z2 / n)
    return np.where(n > 0, np.clip(bound, 0.0, 1.0), np.nan)


def _rate(numerator: pd.Series, denominator: pd.Series) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def z_score(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (0.99 → 2.576)."""
    return NormalDist().inv_cdf((1 + confidence) / 2)


# signal → its rate of collector/definitions.py, over the store's columns (the rates' count
# attributes); no_click, CTR's complement, is the failure signal of a low CTR.
SIGNAL_RATES = {"zero_result": d.ZERO_RESULT_RATE, "reformulation": d.REFORMULATION_RATE,
                "abandonment": d.ABANDONMENT_RATE, "ctr": d.CTR}


def _pairs(counts: pd.DataFrame) -> dict[str, tuple[pd.Series, pd.Series]]:
    """(numerator, denominator) of every rate, from columns of counts."""
    pairs = {name: (count_of(counts, rate.numerator), count_of(counts, rate.denominator))
             for name, rate in SIGNAL_RATES.items()}
    clicked, with_results = pairs["ctr"]
    pairs["no_click"] = (with_results - clicked, with_results)
    return pairs


def add_signals(frame: pd.DataFrame, applications: pd.DataFrame, z: float = Z) -> pd.DataFrame:
    """Adds to per-(application, query) totals, in place: each rate and its lower bound;
    `failure`, the largest excess of a failure signal's lower bound over the application's
    rate for the period (``applications``: counts per application over every query; how much
    worse than usual the query is, with confidence z, ≥ 0); `reason`, that signal; and
    `impact` = searches × failure, the searches that failed beyond the usual."""
    usual_pairs = _pairs(applications)
    excess = []
    for name, (numerator, denominator) in _pairs(frame).items():
        frame[f"{name}_rate"] = _rate(numerator, denominator)
        frame[f"{name}_lb"] = wilson_lower(numerator, denominator, z)
        if name in FAILURE_SIGNALS:
            usual_numerator, usual_denominator = usual_pairs[name]
            usual = frame["application"].map(usual_numerator / usual_denominator).to_numpy(
                dtype="float64")
            excess.append(np.nan_to_num(frame[f"{name}_lb"].to_numpy() - usual, nan=0.0))
    del frame["no_click_rate"], frame["no_click_lb"]
    frame["mrr"] = _rate(count_of(frame, d.MRR.numerator), count_of(frame, d.MRR.denominator))
    bounds = np.clip(np.column_stack(excess), 0.0, None)
    worst = bounds.argmax(axis=1)
    frame["failure"] = bounds[np.arange(len(frame)), worst]
    frame["reason"] = np.where(frame["failure"] > 0, np.asarray(
        list(FAILURE_SIGNALS.values()), dtype=object)[worst], "")
    frame["impact"] = frame["searches"] * frame["failure"]
    return frame
