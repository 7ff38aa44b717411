"""alerts/rules/quality.py: the search-quality alerts (zero results, known items, the three
baseline drifts, latency) read their severity's window pair and the profile's thresholds,
require enough searches in the long window, and only the drifts that events make wait for the
front end's tracking, since a page on too few searches or the wrong window wakes someone for
nothing."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from alerts.config import Profile, Thresholds, Windows
from tests.alerts.rules.built import alerts_of

PROFILE = Profile(
    windows=Windows(page_short="10m", page_long="2h", ticket_short="1h", ticket_long="12h"),
    thresholds=replace(Thresholds(), zero_result_rate_critical=0.2, zero_result_rate_warning=0.12,
                       ctr_drop_factor=0.7, latency_quantile=0.95, min_searches_long_window=300,
                       known_item_zero_result_rate_critical=0.06,
                       min_known_item_searches_long_window=40),
    latency_guardrail_s=0.8)
ZERO = "application:searchpulse_zero_result_searches_per_searches:ratio_rate"


def _enough(window: str, seconds: int, baseline: bool = False) -> str:
    """The guard: enough searches in the long window (and in its baseline)."""
    searches = f"\nand on (application) application:searchpulse_searches:rate{window}"
    guard = f"{searches} * {seconds} >= 300"
    if baseline:
        guard += f"{searches}_baseline * {seconds} >= 300"
    return guard


@pytest.fixture(scope="module")
def quality() -> dict[tuple[str, str], dict[str, Any]]:
    return alerts_of(PROFILE, "searchpulse-quality")


@pytest.mark.parametrize(("severity", "short", "long", "seconds", "objective"), [
    ("critical", "10m", "2h", 7200, 0.2),
    ("warning", "1h", "12h", 43200, 0.12),
])
def test_zero_results_above_the_objective_and_the_baseline_in_both_windows(
        quality: dict[tuple[str, str], dict[str, Any]], severity: str, short: str, long: str,
        seconds: int, objective: float) -> None:
    rule = quality[("SearchZeroResultRateHigh", severity)]
    base = f"{ZERO}{long}_baseline"
    assert rule["expr"] == (
        f"({ZERO}{short} > {objective}\nand {ZERO}{long} > {objective}\n"
        f"and (\n  {ZERO}{long} > 1.5 * {base}\n  or {ZERO}{long} unless {base}\n))"
        + _enough(long, seconds))
    assert f"over {short} (objective {objective:.0%}, baseline over {long}: " in \
        rule["annotations"]["description"]
    assert "needs" not in rule["labels"]  # searches alone make it


def test_known_items_that_find_nothing_page_on_their_own_stratum(
        quality: dict[tuple[str, str], dict[str, Any]]) -> None:
    rule = quality[("SearchKnownItemZeroResultRateHigh", "critical")]
    ratio = "application_stratum:searchpulse_zero_result_searches_per_searches:ratio_rate"
    known = '{stratum="known_item"}'
    assert rule["expr"] == (
        f"{ratio}10m{known} > 0.06\nand {ratio}2h{known} > 0.06\n"
        f"and application_stratum:searchpulse_searches:rate2h{known} * 7200 >= 40")
    assert "(objective 6%)" in rule["annotations"]["description"]


@pytest.mark.parametrize(("alert", "ratio", "comparison"), [
    ("SearchClickThroughRateDrop",
     "application:searchpulse_clicked_searches_per_tracked_searches_with_results:ratio_rate",
     "< 0.7"),
    ("SearchReformulationRateHigh",
     "application:searchpulse_reformulated_searches_per_tracked_searches:ratio_rate", "> 1.25"),
    ("SearchAbandonmentRateHigh",
     "application:searchpulse_abandoned_searches_per_tracked_searches_with_results:ratio_rate",
     "> 1.25"),
])
def test_a_drift_from_the_baseline_in_both_ticket_windows_needs_tracking(
        quality: dict[tuple[str, str], dict[str, Any]], alert: str, ratio: str,
        comparison: str) -> None:
    rule = quality[(alert, "warning")]
    base = f"{ratio}12h_baseline"
    assert rule["expr"] == (
        f"({ratio}1h {comparison} * {base}\nand {ratio}12h {comparison} * {base})"
        + _enough("12h", 43200, baseline=True))
    assert rule["labels"]["needs"] == "tracking"  # events make it: muted by broken tracking
    factor = comparison.split()[1]
    assert (f"over 1h and beyond ×{factor} of its baseline over 12h too; baseline (median of "
            "the same 12h window 1w, 2w, 3w earlier)") in rule["annotations"]["description"]


def test_latency_above_the_guardrail_at_the_profiles_quantile(
        quality: dict[tuple[str, str], dict[str, Any]]) -> None:
    """A ticket on the paging windows (its row says why): user-visible at once."""
    rule = quality[("SearchLatencyHigh", "warning")]
    quantile = "application:searchpulse_search_latency_seconds:p95_rate"
    assert rule["expr"] == (f"({quantile}10m > 0.8\nand {quantile}2h > 0.8)"
                            + _enough("2h", 7200))
    assert rule["annotations"]["summary"] == \
        "Search latency p95 of {{ $labels.application }} is above the guardrail."
    assert "above the guardrail (0.8s) over 2h too" in rule["annotations"]["description"]
