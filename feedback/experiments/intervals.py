"""The offline report's intervals and p-values: each interval and its p-value are one test
inverted, so an interval excludes the null exactly when p < 0.05; rates stay in [0, 1].

All start from a clustered estimate (``collector.series.experiment_stats.clustered_ratio``: the
delta method over G clusters, t with G − 1 degrees of freedom):

* **a rate** R = Σy / Σn: the Wilson score interval at the effective sample size
  n_eff = R(1 − R) / Var(R) (the clustered variance as a design effect: Korn & Graubard 1998),
  the R₀ with |R − R₀| ≤ t · √(R₀(1 − R₀) / n_eff) — inside [0, 1] whatever R and Var are. At
  R = 0 or 1 every cluster agrees and Var = 0 says nothing of the design effect: n_eff = Σn
  (design effect 1), so 0 of 40 reads [0, t² / (40 + t²)], not [0, 0].
* **interleaving's Δ** = share − ½: the same Wilson interval on the share, and its p-value the
  score test of share = ½ that the interval inverts.
* **a difference** d = R_v − R_c: d ± t · SE, p = 2 · P(T > |d| / SE), one (d, SE, t).
* **a ratio** ρ = R_v / R_c (relative change ρ − 1): on the log scale, log ρ ± t · SE_log with
  SE_log² = Var_v / R_v² + Var_c / R_c², and p from the same log-scale statistic; always > 0.
  It is its own test: near p = 0.05 it can differ from the difference's, which the verdict reads.
* **Holm**'s step-down adjustment of a family of p-values (Holm 1979): controls the chance of
  any false "better" or "worse" among an experiment's metrics × applications × variants at 5 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from collector.series.experiment_stats import CONFIDENCE, Estimate, t_quantile

ALPHA = 1 - CONFIDENCE


@dataclass(frozen=True)
class Tested:
    """An estimate, its standard error, its 95 % interval and the p-value of its null (0 for a
    difference, 1 for a ratio, ½ for a share), from one computation; ``p_value`` is None for a
    rate alone (no null)."""

    value: float
    stderr: float
    low: float
    high: float
    p_value: float | None = None


def two_sided_p(statistic: float, df: int) -> float:
    """P(|T| > |statistic|) for Student's T with ``df`` degrees of freedom (the t of every
    interval here is its 0.975 quantile, so |statistic| > t ⇔ p < 0.05)."""
    from scipy.special import stdtr

    return float(2 * stdtr(df, -abs(statistic)))


def _z_test(value: float, stderr: float, null: float, df: int) -> float:
    if stderr > 0:
        return two_sided_p((value - null) / stderr, df)
    return 1.0 if value == null else 0.0


def _effective_n(rate: float, variance: float, total_n: float) -> float:
    if variance > 0 and 0 < rate < 1:
        return rate * (1 - rate) / variance
    return math.inf if 0 < rate < 1 else total_n


def _wilson(rate: float, n: float, t: float) -> tuple[float, float]:
    if math.isinf(n):
        return rate, rate
    k = t * t / n
    centre = (rate + k / 2) / (1 + k)
    half = t / (1 + k) * math.sqrt(rate * (1 - rate) / n + k / (4 * n))
    # it holds the rate and lies in [0, 1]: exactly so, not up to rounding
    return max(0.0, min(rate, centre - half)), min(1.0, max(rate, centre + half))


def rate_interval(estimate: Estimate, total_n: float, df: int) -> Tested:
    """A rate's Wilson interval at its effective sample size (module docstring)."""
    n = _effective_n(estimate.value, estimate.variance, total_n)
    low, high = _wilson(estimate.value, n, t_quantile(df))
    return Tested(estimate.value, estimate.stderr, low, high)


def share_against_half(estimate: Estimate, total_n: float, df: int) -> Tested:
    """Interleaving's Δ = share − ½ with the Wilson interval of the share and the score test
    of share = ½ it inverts: SE under the null ½ / √n_eff."""
    n = _effective_n(estimate.value, estimate.variance, total_n)
    low, high = _wilson(estimate.value, n, t_quantile(df))
    null_se = 0.0 if math.isinf(n) else 0.5 / math.sqrt(n)
    return Tested(estimate.value - 0.5, estimate.stderr, low - 0.5, high - 0.5,
                  _z_test(estimate.value, null_se, 0.5, df))


def difference(variant: Estimate, control: Estimate, df: int) -> Tested:
    """R_v − R_c, its interval and p-value from one (d, SE, t)."""
    value = variant.value - control.value
    stderr = math.sqrt(variant.variance + control.variance)
    half = t_quantile(df) * stderr
    return Tested(value, stderr, value - half, value + half, _z_test(value, stderr, 0.0, df))


def ratio(variant: Estimate, control: Estimate, df: int) -> Tested | None:
    """R_v / R_c with its log-scale interval and p-value; None when either rate is 0."""
    if variant.value <= 0 or control.value <= 0:
        return None
    log_ratio = math.log(variant.value / control.value)
    stderr = math.sqrt(variant.variance / variant.value ** 2
                       + control.variance / control.value ** 2)
    half = t_quantile(df) * stderr
    return Tested(math.exp(log_ratio), stderr, math.exp(log_ratio - half),
                  math.exp(log_ratio + half), _z_test(log_ratio, stderr, 0.0, df))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given: the i-th smallest times (m − i + 1),
    made monotone, at most 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
