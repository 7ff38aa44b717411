"""dashboards/experiments.py: the experiments board reads the windows of the profile's
recording rules and guardrail tickets, shows each guardrail's fixed-horizon interval beside its
always-valid one with its margin, draws the sample-ratio χ² line at p = 0.001 and lays its
panels out without overlap, since a verdict read off the board must be the one the alerts and
the report give."""

from __future__ import annotations

from typing import Any

import pytest

from alerts.config import Profile, Thresholds, Windows
from dashboards import experiments
from tests.dashboards.grafana import as_json, overlaps

PROFILE = Profile(windows=Windows(page_short="10m", page_long="2h", ticket_short="1h",
                                  ticket_long="12h"),
                  thresholds=Thresholds(latency_quantile=0.95))


@pytest.fixture(scope="module")
def panels() -> dict[str, dict[str, Any]]:
    """The experiments board of PROFILE's deployment, its panels by title."""
    return {panel["title"]: panel for panel in as_json(experiments.build(PROFILE))["panels"]}


def test_interleaving_and_clicks_read_the_paging_long_window(
        panels: dict[str, dict[str, Any]]) -> None:
    verdict = [t["expr"] for t in panels["Interleaving verdict: Δ per team"]["targets"]]
    preference = ("application_variant_team:searchpulse_interleaving_preference:"
                  'ratio_increase2h{application=~"$application"}')
    interval = ("application_variant_team:searchpulse_interleaving_preference_interval:"
                'ratio_increase2h{application=~"$application"}')
    assert verdict == [preference, f"{preference} - {interval}", f"{preference} + {interval}"]
    clicks = panels["Clicks per search by variant: raw and position-debiased"]
    assert all(":ratio_increase2h{" in t["expr"] for t in clicks["targets"])


def test_a_guardrail_also_shows_its_tickets_interval_and_margin(
        panels: dict[str, dict[str, Any]]) -> None:
    guardrail = panels["Zero-result rate difference from the control, always-valid 95 %"]
    legends = [t["legendFormat"] for t in guardrail["targets"]]
    assert legends == ["{{variant}} Δ ({{application}})",
                       "{{variant}} always-valid 95 % low ({{application}})",
                       "{{variant}} always-valid 95 % high ({{application}})",
                       "{{variant}} ticket's 95 % low, last 12h ({{application}})",
                       "{{variant}} ticket's 95 % high, last 12h ({{application}})"]
    assert "difference_low_increase12h" in guardrail["targets"][3]["expr"]
    assert "is above the margin (0.01, experiments.guardrail_zero_result_margin)" in \
        guardrail["description"]
    verdict = panels["CTR difference from the control, always-valid 95 %"]  # no guardrail
    assert len(verdict["targets"]) == 3
    assert "an interval clear of 0 is the verdict" in verdict["description"]


def test_the_sample_ratio_line_is_chi2_at_p_0_001_for_two_variants(
        panels: dict[str, dict[str, Any]]) -> None:
    chi2 = panels["Sample-ratio χ² of units"]
    steps = chi2["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert steps[0] == {"color": "green", "value": None}
    assert steps[1]["color"] == "red"
    assert steps[1]["value"] == pytest.approx(10.828, abs=5e-4)  # χ²(1) at p = 0.001
    assert "(10.83; more variants have higher ones)" in chi2["description"]


def test_latency_by_variant_is_the_profiles_quantile(panels: dict[str, dict[str, Any]]) -> None:
    (target,) = panels["Latency p95 by variant"]["targets"]
    assert target["expr"].startswith("histogram_quantile(0.95, sum by (le, variant) (rate(")


def test_the_panels_fit_the_grid_without_overlapping(panels: dict[str, dict[str, Any]]) -> None:
    assert all(p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in panels.values())
    assert overlaps(list(panels.values())) == []
    assert sorted(p["id"] for p in panels.values()) == list(range(1, 28))


def test_the_board_links_the_others() -> None:
    board = as_json(experiments.build(PROFILE))
    assert board["uid"] == experiments.UID == "searchpulse-experiments"
    assert [link["url"] for link in board["links"]] == ["/d/searchpulse-overview",
                                                        "/d/searchpulse-collector"]
    assert (board["refresh"], board["time"]) == ("1m", {"from": "now-24h", "to": "now"})
