"""alerts/rules/traffic.py: the traffic alerts — cessation, absence, broken tracking and a jump
of the automated share — read the deployment's selector and the profile's thresholds, judge the
two traffic-health rates against the health baselines (a day and weeks back), and the tracking
page falls back to its floor while an application has no baseline yet, since a new deployment
must be covered from its first day."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from alerts.config import Deployment, Profile, Thresholds, Windows
from alerts.rules import rule_groups
from tests.alerts.rules.built import alerts_of

PROFILE = Profile(
    windows=Windows(page_short="10m", page_long="2h", health_baseline_offsets=("1d", "1w")),
    thresholds=replace(Thresholds(), cessation_window="15m", cessation_substantial_per_s=2.0,
                       event_coverage_drop_factor=0.4, event_coverage_floor=0.08,
                       automated_share_rise=0.15, min_searches_long_window=300),
    deployment=Deployment(selector='job="sp"'))
COVERAGE = "application:searchpulse_searches_with_events_per_searches_with_results:ratio_rate"
AUTOMATED = "application:searchpulse_automated_searches_per_all_searches:ratio_rate"


@pytest.fixture(scope="module")
def traffic() -> dict[tuple[str, str], dict[str, Any]]:
    return alerts_of(PROFILE, "searchpulse-traffic")


def test_cessation_is_no_search_now_after_substantial_traffic_an_hour_ago(
        traffic: dict[tuple[str, str], dict[str, Any]]) -> None:
    rule = traffic[("SearchTrafficCessation", "critical")]
    searches = 'searchpulse_searches_total{job="sp"}'
    assert rule["expr"] == (
        f"sum by (application) (rate({searches}[15m])) == 0\n"
        f"and on (application) sum by (application) (rate({searches}[1h] offset 1h)) > 2.0")
    assert "No search of {{ $labels.application }} for 15m" in rule["annotations"]["description"]


def test_absent_traffic_is_one_alert_for_the_deployment(
        traffic: dict[tuple[str, str], dict[str, Any]]) -> None:
    rule = traffic[("SearchTrafficAbsent", "critical")]
    assert rule["expr"] == 'absent(searchpulse_searches_total{job="sp"})'
    assert rule["for"] == "15m"
    assert "var-application" not in rule["annotations"]["dashboard_url"]


def test_broken_tracking_against_its_baseline_or_while_it_has_none_its_floor(
        traffic: dict[tuple[str, str], dict[str, Any]]) -> None:
    rule = traffic[("SearchTrackingBroken", "critical")]
    base = f"{COVERAGE}2h_baseline"
    known = "application:searchpulse_searches_with_results:rate2h_baseline * 7200 >= 300"
    assert rule["expr"] == (
        f"((\n  {COVERAGE}10m < 0.4 * {base}\n  and {COVERAGE}2h < 0.4 * {base}\n"
        f"  and on (application) {known}\n)\n"
        f"or (\n  {COVERAGE}10m < 0.08\n  and {COVERAGE}2h < 0.08\n"
        f"  unless on (application) {known}\n))\n"
        "and on (application) application:searchpulse_searches_with_results:rate2h * 7200 >= 300")
    assert "needs" not in rule["labels"]  # it is what mutes the others
    description = rule["annotations"]["description"]
    assert "below ×0.4 of its baseline (median of the same 2h window 1d, 1w earlier" in description
    assert "with no baseline yet, below 8%" in description


def test_the_automated_share_jump_is_points_above_its_baseline_and_needs_tracking(
        traffic: dict[tuple[str, str], dict[str, Any]]) -> None:
    rule = traffic[("SearchAutomatedShareJump", "warning")]
    base = f"{AUTOMATED}6h_baseline"
    searches = "\nand on (application) application:searchpulse_all_searches:rate6h"
    assert rule["expr"] == (
        f"({AUTOMATED}30m > {base} + 0.15\nand {AUTOMATED}6h > {base} + 0.15)"
        f"{searches} * 21600 >= 300{searches}_baseline * 21600 >= 300")
    assert rule["labels"]["needs"] == "tracking"
    assert "more than 15 points above its baseline" in rule["annotations"]["description"]


def test_the_health_baselines_read_the_health_offsets() -> None:
    (recordings,) = [g["rules"] for g in rule_groups(PROFILE)["groups"]
                     if g["name"] == "searchpulse-recording"]
    baseline = next(r for r in recordings if r["record"] == f"{COVERAGE}2h_baseline")
    assert baseline["expr"] == (
        "quantile by (application) (0.5, "
        f'label_replace({COVERAGE}2h offset 1d, "baseline_offset", "1d", "", "") or '
        f'label_replace({COVERAGE}2h offset 1w, "baseline_offset", "1w", "", ""))')
