"""The always-valid interval's boundary (collector/series/confidence_sequence.py): hand-computed
values of z(n), its tuning, and what holds for any estimate."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collector.series.confidence_sequence import (
    HORIZON,
    MIXTURE,
    always_valid,
    always_valid_difference,
    multiplier,
    optimal_ratio,
)
from collector.series.experiment_stats import Estimate, t_quantile


def test_the_boundary_at_hand_computed_points():
    # n = m: z² = 2 · (ln 2 + 2 ln 20) = 2 · (0.693147 + 5.991465) = 13.369223
    assert multiplier(1.0, mixture=1.0) == pytest.approx(3.6563948, abs=1e-7)
    # n = m (e − 1), α = 1/e: ln(1 + n/m) = 1, 1 + m/n = e/(e − 1), 2 ln(1/α) = 2: z² = 3e/(e − 1)
    assert multiplier(math.e - 1, mixture=1.0, alpha=math.exp(-1)) == pytest.approx(
        math.sqrt(3 * math.e / (math.e - 1)), rel=1e-15)
    # the shipped tuning: m = 100,000 / 8.211968 = 12,177.35; at the horizon z² = 1 + x
    assert optimal_ratio() == pytest.approx(8.211968062, abs=1e-9)
    assert MIXTURE == pytest.approx(12177.348870, abs=1e-6)
    assert multiplier(HORIZON) == pytest.approx(math.sqrt(1 + optimal_ratio()), rel=1e-15)
    assert multiplier(HORIZON) == pytest.approx(3.0351224, abs=1e-7)
    # 50,000 searches: √(1.2435470 · (ln 5.1059837 + 5.9914645)) = √(1.2435470 · 7.6218697)
    assert multiplier(50_000) == pytest.approx(3.0786625, abs=1e-7)
    assert multiplier(0) == math.inf


def test_the_tuning_makes_the_horizon_the_narrowest_point():
    x = optimal_ratio()
    assert x == pytest.approx(2 * math.log(20) + math.log1p(x), rel=1e-15)
    at = multiplier(HORIZON)
    for other in (MIXTURE * 0.9, MIXTURE * 1.1):
        assert multiplier(HORIZON, mixture=other) > at
    assert multiplier(HORIZON / 2) > at < multiplier(HORIZON * 2)


def test_a_rate_and_a_difference_of_hand_computed_estimates():
    rate = always_valid(Estimate(0.28, 0.0004, 0, 0), 50_000)
    assert (rate.low, rate.high) == pytest.approx((0.28 - 0.061573250, 0.28 + 0.061573250),
                                                  abs=1e-9)
    near_zero = always_valid(Estimate(0.01, 0.0004, 0, 0), 50_000)
    assert near_zero.low == 0.0 and near_zero.high == pytest.approx(0.07157325, abs=1e-8)
    diff = always_valid_difference(Estimate(0.3, 0.0003, 0, 0), Estimate(0.28, 0.0001, 0, 0),
                                   60_000, 40_000)
    assert (diff.value, diff.variance) == pytest.approx((0.02, 0.0004), abs=1e-15)
    assert diff.high - diff.value == pytest.approx(0.061573250, abs=1e-9)  # n = 50,000


@given(n=st.floats(1e-3, 1e12), mixture=st.floats(1e-3, 1e9))
def test_the_boundary_is_wider_than_any_fixed_horizon_one(n, mixture):
    """z(n)² ≥ 2 ln(1/α) = 5.99 > 1.96² at every n and m; its minimum over n is √(1 + x)."""
    assert multiplier(n, mixture=mixture) > NormalDist().inv_cdf(0.975)
    assert multiplier(n, mixture=mixture) >= math.sqrt(1 + optimal_ratio()) * (1 - 1e-12)


@given(value=st.floats(0, 1), variance=st.floats(0, 1), n=st.floats(1, 1e9))
def test_a_rate_s_interval_stays_in_range_and_holds_the_fixed_horizon_one(value, variance, n):
    fixed = t_quantile(31) * math.sqrt(variance)
    found = always_valid(Estimate(value, variance, value - fixed, value + fixed), n)
    assert 0 <= found.low <= value <= found.high <= 1
    assert found.low <= max(0.0, value - fixed) and found.high >= min(1.0, value + fixed)
