"""feedback/experiments/intervals.py on hostile input (hypothesis): rate and share intervals
inside [0, 1] around their value; every interval excludes its null exactly when its p-value is
below 0.05 (one computation); and the Wilson-type interval's coverage of a rare rate against
the symmetric one it replaced, on simulated clustered traffic."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from collector.series.experiment_stats import clustered_ratio, t_quantile
from feedback.experiments.intervals import (
    difference,
    rate_interval,
    ratio,
    share_against_half,
)

# clusters: (y, n) with 0 ≤ y ≤ n, at least two of them with n > 0
clusters = st.lists(st.integers(0, 50).flatmap(
    lambda n: st.tuples(st.integers(0, n), st.just(n))), min_size=2, max_size=30).filter(
    lambda pairs: sum(1 for _, n in pairs if n) >= 2)


def _estimate(pairs):
    return clustered_ratio(pairs, len(pairs), t_quantile(len(pairs) - 1))


@given(clusters)
def test_a_rate_interval_stays_in_the_unit_interval(pairs):
    estimate = _estimate(pairs)
    tested = rate_interval(estimate, sum(n for _, n in pairs), len(pairs) - 1)
    assert 0.0 <= tested.low <= estimate.value <= tested.high <= 1.0


@given(clusters)
def test_interleavings_share_stays_in_range_and_agrees_with_its_p(pairs):
    estimate = _estimate(pairs)
    tested = share_against_half(estimate, sum(n for _, n in pairs), len(pairs) - 1)
    assert -0.5 <= tested.low <= tested.value <= tested.high <= 0.5
    assert (tested.low > 0 or tested.high < 0) == (tested.p_value < 0.05)


@given(clusters, clusters)
def test_difference_and_ratio_exclude_their_null_iff_p_below_5_percent(mine, theirs):
    a, b = _estimate(mine), _estimate(theirs)
    df = min(len(mine), len(theirs)) - 1
    diff = difference(a, b, df)
    assert diff.low <= diff.value <= diff.high
    assert (diff.low > 0 or diff.high < 0) == (diff.p_value < 0.05)
    relative = ratio(a, b, df)
    if relative is not None:
        assert 0 < relative.low <= relative.value <= relative.high
        assert (relative.low > 1 or relative.high < 1) == (relative.p_value < 0.05)


def test_coverage_of_a_rare_rate():
    """A 0.5 % share over 120 clients of 1–9 searches each, each client with its own rate
    (Beta-distributed: clustered): the Wilson-type interval covers the true share in ≥ 93 %
    of 1,000 draws, where the symmetric R ± t·SE (the interval before: it also went below 0)
    covers it in fewer."""
    rng = random.Random(37)
    wilson = symmetric = below_zero = 0
    draws, truth = 1000, 0.005
    for _ in range(draws):
        pairs = []
        for _client in range(120):
            n = rng.randint(1, 9)
            p = rng.betavariate(0.5, 0.5 / truth - 0.5)
            pairs.append((sum(rng.random() < p for _ in range(n)), n))
        estimate = _estimate(pairs)
        tested = rate_interval(estimate, sum(n for _, n in pairs), len(pairs) - 1)
        wilson += tested.low <= truth <= tested.high
        symmetric += estimate.low <= truth <= estimate.high
        below_zero += estimate.low < 0
    assert wilson / draws >= 0.93
    assert symmetric < wilson
    assert below_zero > 0
