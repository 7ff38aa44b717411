"""Always-valid 95 % intervals of the live experiment rates: a confidence sequence, one definition.

A fixed-horizon 95 % interval is valid at one look decided in advance; the experiments dashboard
is looked at every minute, and the chance that a fixed-horizon interval of an A/A experiment
excludes 0 at *some* look grows without bound with the looks (Johari, Koomen, Pekelis, Walsh,
"Peeking at A/B tests", KDD 2017; measured in docs/benchmarks.md). A confidence sequence holds at
every look at once: P(∃ n: the true value is outside the interval at n) ≤ α.

**The boundary**: the two-sided normal mixture (Robbins 1970; Howard, Ramdas, McAuliffe, Sekhon
2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences", eq. (14); the mixture
of Johari et al.'s mSPRT). For a sum S of centred increments with intrinsic time V (its
variance), mixing exp(λS − λ²V/2) over λ ~ N(0, 1/ρ) gives the martingale
√(ρ / (V + ρ)) · exp(S² / (2 (V + ρ))); by Ville's inequality it ever reaches 1/α with
probability ≤ α, i.e. |S| < √((V + ρ) · log((V + ρ) / (ρ α²))) at every V at once.
Divided by V (S/V = estimate − truth, V ∝ 1/Var), with V/ρ = n/m:

    estimate ± z(n) · √Var,   z(n) = √((1 + m/n) · (log(1 + n/m) + 2 log(1/α)))

where Var is the clustered variance of collector/series/experiment_stats.py (the same unit
buckets), n the experiment's denominator so far (searches, or searches with results: the rate's
denominator; for a difference, the mean of the two variants') and m the mixture parameter ρ in
those units. With the variance estimated this is the asymptotic confidence sequence of
Waudby-Smith, Arbour, Sinha, Kennedy, Ramdas (2024, "Time-uniform central limit theory and
asymptotic confidence sequences"); its coverage under continuous looking is measured on A/A
simulations (`make bench-experiments`).

**Tuning**: z(n) is smallest at n = HORIZON when m = HORIZON / x with x = 2 log(1/α) +
log(1 + x) (d z²/dm = 0; x = 8.2120 at α = 0.05): then z(HORIZON) = 3.035 (the fixed-horizon
1.96 · 1.55), 3.25 at ten times the horizon, 8.9 at a hundredth of it. Any m gives a valid
sequence; the horizon only says where it is narrowest.

**The rates** stay in [0, 1] (the sequence intersected with the range a share can take: still
valid); a difference of two shares in [−1, 1].
"""

from __future__ import annotations

import math

from collector.series.experiment_stats import Estimate

ALPHA = 0.05
# The denominator (searches per variant) at which the always-valid interval is narrowest: an
# experiment of a couple of weeks on a few thousand searches a day per variant.
HORIZON = 100_000


def optimal_ratio(alpha: float = ALPHA) -> float:
    """x = HORIZON / m that makes z(HORIZON) smallest: the root of x = 2 log(1/α) + log(1 + x)
    (a contraction: 30 iterations reach double precision)."""
    x = 2 * math.log(1 / alpha)
    for _ in range(30):
        x = 2 * math.log(1 / alpha) + math.log1p(x)
    return x


MIXTURE = HORIZON / optimal_ratio()  # m = ρ in searches: 12,177.35 at α = 0.05


def multiplier(n: float, mixture: float = MIXTURE, alpha: float = ALPHA) -> float:
    """z(n) of the module docstring: the always-valid interval is ± z(n) standard errors after
    a denominator of ``n``; +inf before any (no interval yet)."""
    if n <= 0:
        return math.inf
    return math.sqrt((1 + mixture / n) * (math.log1p(n / mixture) + 2 * math.log(1 / alpha)))


def always_valid(estimate: Estimate, n: float, bounds: tuple[float, float] = (0.0, 1.0)
                 ) -> Estimate:
    """A rate's always-valid 95 % interval after a denominator of ``n``, inside ``bounds``."""
    half = multiplier(n) * estimate.stderr
    low, high = bounds
    return Estimate(estimate.value, estimate.variance, max(low, estimate.value - half),
                    min(high, estimate.value + half))


def always_valid_difference(variant: Estimate, control: Estimate, n_variant: float,
                            n_control: float) -> Estimate:
    """The variant's rate minus the control's with its always-valid 95 % interval: the two
    variances added, n the two denominators' mean."""
    value = variant.value - control.value
    both = Estimate(value, variant.variance + control.variance, value, value)
    return always_valid(both, (n_variant + n_control) / 2, (-1.0, 1.0))
