"""feedback/evaluate/randomization.py: the paired test behind the gate's intervals and p values
agrees with a resampling bootstrap and always holds the mean, since every verdict of `evaluate`
rests on it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from feedback.evaluate.randomization import paired


def test_the_interval_agrees_with_a_resampling_bootstrap():
    rng = np.random.default_rng(3)
    differences = np.column_stack([rng.normal(-0.02, 0.15, 400), rng.exponential(0.1, 400)])
    test = paired(differences)
    resampled = np.array([differences[rng.integers(0, 400, 400)].mean(axis=0)
                          for _ in range(4000)])
    low, high = np.percentile(resampled, [2.5, 97.5], axis=0)
    width = high - low
    assert np.all(np.abs(test.low - low) < 0.06 * width)
    assert np.all(np.abs(test.high - high) < 0.06 * width)
    assert np.all(test.low < differences.mean(axis=0)) and np.all(
        differences.mean(axis=0) < test.high)
    assert test.p[1] < 0.001  # exponential: all positive


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=40))
def test_the_interval_holds_the_mean_and_p_is_a_probability(values):
    differences = np.array(values)[:, None]
    test = paired(differences, rounds=500)
    mean = differences.mean()
    assert test.low[0] <= mean + 1e-9 and mean - 1e-9 <= test.high[0]
    assert 0 < test.p[0] <= 1
    if not differences.any():
        assert test.p[0] == 1 and test.low[0] == test.high[0] == 0
