"""collector/series/experiment_stats.py: the verdict rules read the difference's interval and a
guardrail's margin, and the sample-ratio χ², power and traffic still needed agree with scipy
and with the module's formulas, since `searchpulse experiments`, the recording rules and the
dashboards all give these verdicts."""

from __future__ import annotations

import pytest
from scipy import stats

from collector.config import load_config
from collector.series.experiment_stats import (
    RATES,
    Estimate,
    ExperimentDesign,
    power,
    sample_ratio,
    still_needed,
    t_quantile,
    verdict,
)

DESIGN = ExperimentDesign.from_config(load_config(environ={}))  # the default settings'


@pytest.mark.parametrize(("low", "high", "higher_is_better", "expected"), [
    (0.01, 0.03, True, "better"), (0.01, 0.03, False, "worse"),
    (-0.03, -0.01, True, "worse"), (-0.03, -0.01, False, "better"),
    (-0.01, 0.01, True, "inconclusive")])
def test_verdicts_read_the_difference_interval(low, high, higher_is_better, expected):
    rate = next(r for r in RATES if r.higher_is_better == higher_is_better and not r.guardrail)
    diff = Estimate((low + high) / 2, 1e-4, low, high)
    assert verdict(rate, diff, 10_000, DESIGN) == expected


def test_a_guardrail_is_breached_only_beyond_its_margin_with_enough_searches():
    zero = next(r for r in RATES if r.guardrail == "guardrail_zero_result_margin")
    design = DESIGN
    assert verdict(zero, Estimate(0.03, 1e-5, 0.011, 0.05), 1000, design) == \
        "guardrail breached"
    assert verdict(zero, Estimate(0.03, 1e-5, 0.011, 0.05), 999, design) == "worse"
    assert verdict(zero, Estimate(0.02, 1e-5, 0.009, 0.03), 5000, design) == "worse"


def test_sample_ratio_against_scipy():
    chi2, df, p = sample_ratio({"control": 720, "treatment": 480}, {})
    assert (chi2, df) == (48.0, 1)
    assert p == pytest.approx(stats.chi2.sf(48.0, 1))
    designed = sample_ratio({"control": 400, "treatment": 400, "interleaved": 400, "x": 9},
                            {"control": 0.5, "treatment": 0.25, "interleaved": 0.25})
    assert designed[:2] == (pytest.approx(400 / 3), 2)
    assert designed[2] == pytest.approx(stats.chi2.sf(400 / 3, 2))
    assert sample_ratio({"control": 10}, {}) is None


def test_power_and_traffic_needed():
    t = t_quantile(31)
    z = stats.norm.ppf(0.8)
    # at the stderr that gives exactly 80 %, nothing more is needed
    stderr = 0.02 / (t + z)
    assert still_needed(10_000, 0.02, stderr, t) == 0
    assert power(0.02, stderr, t) == pytest.approx(0.8, abs=1e-4)
    # twice the stderr: four times the traffic, three times more than now
    assert still_needed(10_000, 0.02, 2 * stderr, t) == 30_000
    assert still_needed(10_000, 0.0, stderr, t) is None
