"""The statistics of an experiment verdict, at the unit of randomization: one definition.

The recording rules (alerts/rules/recordings.py) compute these same numbers in PromQL from the same
counters; `searchpulse experiments` computes them here; a test runs both on one exposition and
compares (tests/integration/test_experiment_rules.py).

**Clustered interval of a rate** R = Σ_b y_b / Σ_b n_b over the B unit buckets of a variant
(collector/series/units.py: each bucket sums whole clients, so buckets are independent): the delta
method with buckets as units (Deng, Knoblich, Lu 2018; Kohavi, Tang, Xu ch. 18)

    Var(R) = B / (B − 1) · Σ_b (y_b − R · n_b)² / (Σ_b n_b)²

and the 95 % interval R ± t · √Var with t the Student quantile for B − 1 degrees of freedom
(the variance is estimated from B buckets). **Difference** of a variant from the control:
d = R_v − R_c, Var(d) = Var(R_v) + Var(R_c) (independent clients), interval d ± t · √Var(d)
with the same t (Welch's degrees of freedom are at least B − 1: conservative).

**Sample ratio**: χ² of the variants' units against the designed split (`experiments.split`,
shares renormalized over the designed variants present) or an equal split of the variants
present, k − 1 degrees of freedom.

**Power**: at effect δ with standard error s, P(detect) ≈ Φ(|δ|/s − t); 80 % power needs
s = |δ| / (t + z₀.₈), i.e. (s · (t + z₀.₈) / δ)² times the current traffic (s ∝ 1/√n).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from statistics import NormalDist
from typing import Any

from collector import definitions
from collector.definitions import COUNTS
from collector.metric_rows import Rate
from collector.series.labels import scrub

CONFIDENCE = 0.95
POWER = 0.8
SAMPLE_RATIO_P = 0.001  # the sample-ratio ticket's significance

# denominator: searches − zero-result searches, by its unit-bucket attribute
WITH_RESULTS = COUNTS[definitions.WITH_RESULTS].attribute


@dataclass(frozen=True)
class ExperimentRate:
    """An experiment rate (a ``metric_rows.Rate`` read over unit buckets): its ratio name in the
    recording rules, its bucket counts (collector/series/units.py attributes), which direction
    is better, and the margin setting of a guardrail."""

    ratio: str
    title: str
    numerator: str
    denominator: str  # a bucket attribute, or WITH_RESULTS
    higher_is_better: bool
    guardrail: str | None = None  # an ExperimentDesign attribute: the non-inferiority margin


def _experiment(rate: Rate, higher_is_better: bool, guardrail: str | None = None
                ) -> ExperimentRate:
    """An experiment rate of a definitions row, over its counts' unit-bucket attributes (a
    unit bucket holds tracked searches only — an untracked one is in none —, so its searches
    and searches with results are the tracked ones)."""
    denominator = {definitions.TRACKED: WITH_RESULTS,
                   definitions.TRACKED_SEARCHES: COUNTS["searches"].attribute}.get(
        rate.denominator) or COUNTS[rate.denominator].attribute
    return ExperimentRate(rate.ratio, rate.noun, COUNTS[rate.numerator].attribute, denominator,
                higher_is_better, guardrail)


RATES = (
    _experiment(definitions.CTR, True),
    _experiment(definitions.ZERO_RESULT_RATE, False, "guardrail_zero_result_margin"),
    _experiment(definitions.REFORMULATION_RATE, False),
    _experiment(definitions.ABANDONMENT_RATE, False),
    _experiment(definitions.CONVERSION_RATE, True),
    _experiment(definitions.SLOW_SEARCH_SHARE, False, "guardrail_slow_search_margin"),
)


@dataclass(frozen=True)
class ExperimentDesign:
    """The `experiments.*` settings a verdict depends on (their defaults and checks live in
    collector/config/settings.py, the one settings table)."""

    unit_buckets: int
    unit_window_s: float
    control_variant: str
    split: tuple[tuple[str, float], ...]
    min_units: int
    min_searches: int
    guardrail_zero_result_margin: float
    guardrail_slow_search_margin: float

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The settings a design is read from (`searchpulse generate` lists them)."""
        return tuple(f"experiments.{item.name}" for item in fields(cls))

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ExperimentDesign:
        values = {key.removeprefix("experiments."): config[key] for key in cls.keys()}
        return cls(**{**values, "split": tuple(parse_split(values["split"]).items())})

    @property
    def t(self) -> float:
        """The two-sided 95 % Student quantile for unit_buckets − 1 degrees of freedom."""
        return t_quantile(self.unit_buckets - 1)


def parse_split(items: Sequence[str]) -> dict[str, float]:
    """``["control=0.5", "treatment=0.5"]`` → {variant: share}; shares > 0 summing to 1."""
    split: dict[str, float] = {}
    for item in items:
        variant, sep, share = item.partition("=")
        try:
            value = float(share)
        except ValueError:
            value = math.nan
        variant = variant.strip()
        if not sep or not variant or not value > 0:
            raise ValueError(f"{item!r}: expected VARIANT=SHARE with a share > 0")
        if scrub(variant) != variant:
            raise ValueError(f"{variant!r} is not a variant label value (letters, digits, "
                             f"_ . : / - only, at most 64)")
        split[variant] = value
    if split and abs(sum(split.values()) - 1) > 1e-9:
        raise ValueError(f"the shares sum to {sum(split.values()):g}, not 1")
    if len(split) == 1:
        raise ValueError("a split needs at least two variants")
    return split


def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, 1 - (1 - confidence) / 2))


def chi2_critical(df: int, p: float = SAMPLE_RATIO_P) -> float:
    from scipy.special import chdtri

    return float(chdtri(df, p))


def chi2_p_value(chi2: float, df: int) -> float:
    from scipy.special import chdtrc

    return float(chdtrc(df, chi2))


@dataclass(frozen=True)
class Estimate:
    """A rate or a difference, its clustered variance and its 95 % interval."""

    value: float
    variance: float
    low: float
    high: float

    @property
    def stderr(self) -> float:
        return math.sqrt(self.variance)


def clustered_ratio(pairs: Sequence[tuple[float, float]], buckets: int, t: float
                    ) -> Estimate | None:
    """Σy / Σn over the (y_b, n_b) of the filled buckets (an empty bucket adds nothing to any
    sum), with the bucket variance of the module docstring; None when Σn = 0 (no data)."""
    total_n = sum(n for _, n in pairs)
    if not total_n:
        return None
    rate = sum(y for y, _ in pairs) / total_n
    spread = sum((y - rate * n) ** 2 for y, n in pairs)
    variance = buckets / (buckets - 1) * spread / total_n ** 2
    half = t * math.sqrt(variance)
    return Estimate(rate, variance, rate - half, rate + half)


def interleaving_preference(buckets: Sequence[tuple[dict[str, int] | None, int]], team: str,
                            unit_buckets: int, t: float) -> Estimate | None:
    """Δ of ``team`` against the rest (Δ_AB for two teams) with its interval clustered by
    client, from each unit bucket's (wins per team, ties): the team's score in bucket b is
    y_b = wins + ties/2 of n_b = contests (Σ wins + ties), Δ = Σy/Σn − ½ (Chapelle et al.
    2012); None without a contest."""
    pairs = [((wins or {}).get(team, 0) + ties / 2, sum((wins or {}).values()) + ties)
             for wins, ties in buckets]
    share = clustered_ratio(pairs, unit_buckets, t)
    if share is None:
        return None
    return Estimate(share.value - 0.5, share.variance, share.low - 0.5, share.high - 0.5)


def difference(variant: Estimate, control: Estimate, t: float) -> Estimate:
    value = variant.value - control.value
    variance = variant.variance + control.variance
    half = t * math.sqrt(variance)
    return Estimate(value, variance, value - half, value + half)


def verdict(rate: ExperimentRate, diff: Estimate, denominator: float,
            design: ExperimentDesign) -> str:
    """better / worse / inconclusive from the interval of the difference; a guardrail is
    breached when even its low end is worse than the margin (non-inferiority fails) with
    ``min_searches`` in the variant — the guardrail tickets' condition."""
    if guardrail_breached(rate, diff.low, denominator, design):
        return "guardrail breached"
    if diff.low > 0:
        return "better" if rate.higher_is_better else "worse"
    if diff.high < 0:
        return "worse" if rate.higher_is_better else "better"
    return "inconclusive"


def guardrail_breached(rate: ExperimentRate, low: float, denominator: float,
                       design: ExperimentDesign) -> bool:
    """Non-inferiority fails: the difference's low end ``low`` is worse than the rate's
    margin, with ``min_searches`` in the variant (False for a rate that is no guardrail)."""
    if rate.guardrail is None:
        return False
    return low > getattr(design, rate.guardrail) and denominator >= design.min_searches


def sample_ratio(units: Mapping[str, float], split: Mapping[str, float]
                 ) -> tuple[float, int, float] | None:
    """(χ², degrees of freedom, p) of the variants' units against the design (renormalized
    over the designed variants present) or an equal split; None with fewer than 2 variants
    or no unit."""
    shares = ({v: split[v] for v in units if v in split} if split
              else dict.fromkeys(units, 1.0))
    total = sum(units[v] for v in shares)
    if len(shares) < 2 or not total:
        return None
    weight = sum(shares.values())
    chi2 = sum((units[v] - total * s / weight) ** 2 / (total * s / weight)
               for v, s in shares.items())
    df = len(shares) - 1
    return chi2, df, chi2_p_value(chi2, df)


def power(effect: float, stderr: float, t: float) -> float:
    """The probability that the difference's interval excludes 0 at this true effect."""
    if not stderr:
        return 1.0 if effect else 0.0
    normal = NormalDist()
    shift = abs(effect) / stderr
    return normal.cdf(shift - t) + normal.cdf(-shift - t)


def still_needed(current: float, effect: float, stderr: float, t: float) -> int | None:
    """How much more traffic (searches, or units: ``current`` of them so far) gives 80 %
    power at ``effect``; 0 when there is already; None without an effect to detect."""
    if not effect:
        return None
    factor = (stderr * (t + NormalDist().inv_cdf(POWER)) / abs(effect)) ** 2
    return max(0, math.ceil(current * (factor - 1)))
