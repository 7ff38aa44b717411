"""Failure signals: Wilson bounds and the failure score, with exact values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from feedback.candidates.signals import add_signals, wilson_lower, z_score


def test_wilson_lower_bound_known_values():
    bounds = wilson_lower(np.array([1, 10, 0, 0]), np.array([2, 10, 10, 0]), z=1.959964)
    assert bounds[:3] == pytest.approx([0.094531, 0.722467, 0.0], abs=1e-6)
    assert math.isnan(bounds[3])  # no trials: no data, not 0
    assert z_score(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert z_score(0.99) == pytest.approx(2.575829, abs=1e-6)


def _totals(**columns) -> pd.DataFrame:
    base = {"application": ["web"] * 3, "query": ["a", "b", "c"], "reciprocal_rank_sum": 0.0,
            "ranked_clicked": 0, "converted": 0, "clicks": 0, "days": 1}
    return pd.DataFrame(base | columns)


def _signals(frame: pd.DataFrame, **kw) -> pd.DataFrame:
    """Signals with the application's rates taken over exactly these queries."""
    return add_signals(frame, frame.groupby("application").sum(numeric_only=True), **kw)


def test_failure_is_the_largest_excess_of_a_lower_bound_over_the_application_rate():
    frame = _signals(_totals(
        searches=[100, 100, 1000], zero_result=[60, 0, 40], reformulated=[0, 0, 0],
        abandoned=[0, 0, 0], clicked=[40, 100, 960]), z=1.959964)
    usual_zero = 100 / 1200
    zero_lb = wilson_lower(np.array([60]), np.array([100]), z=1.959964)[0]
    assert frame.loc[0, "zero_result_rate"] == 0.6
    assert frame.loc[0, "failure"] == pytest.approx(zero_lb - usual_zero)
    assert frame.loc[0, "reason"] == "zero results"
    assert frame.loc[0, "impact"] == pytest.approx(100 * (zero_lb - usual_zero))
    assert frame.loc[1, "failure"] == 0.0 and frame.loc[1, "reason"] == ""
    assert frame.loc[1, "ctr_rate"] == 1.0


def test_a_rarely_clicked_query_fails_on_its_no_click_rate():
    frame = _signals(_totals(
        searches=[200, 200, 2000], zero_result=[0, 0, 0], reformulated=[0, 0, 0],
        abandoned=[0, 0, 0], clicked=[20, 120, 1200]), z=2.575829)
    usual_no_click = 1 - 1340 / 2400
    no_click_lb = wilson_lower(np.array([180]), np.array([200]), z=2.575829)[0]
    assert frame.loc[0, "reason"] == "rarely clicked"
    assert frame.loc[0, "failure"] == pytest.approx(no_click_lb - usual_no_click)
    assert "no_click_rate" not in frame  # CTR is reported; no-click only scores


def test_rates_with_a_zero_denominator_are_no_data():
    frame = _signals(_totals(
        searches=[4, 1, 1], zero_result=[4, 0, 0], reformulated=[0, 0, 0],
        abandoned=[0, 0, 0], clicked=[0, 0, 1]))
    assert math.isnan(frame.loc[0, "ctr_rate"]) and math.isnan(frame.loc[0, "abandonment_rate"])
    assert math.isnan(frame.loc[0, "mrr"])
    assert frame.loc[0, "zero_result_rate"] == 1.0
