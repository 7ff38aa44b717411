"""dashboards/overview.py: the overview on-call opens from a page reads its headline from the
recording rules of the profile's paging short window and draws the thresholds its alerts fire
at, compares each rate with the same time a week ago, and lays its panels out without overlap,
since a headline that disagreed with the page would send on-call the wrong way."""

from __future__ import annotations

from typing import Any

import pytest

from alerts.config import Profile, Thresholds, Windows
from dashboards import overview
from tests.dashboards.grafana import as_json, overlaps

PROFILE = Profile(windows=Windows(page_short="10m", page_long="2h"),
                  thresholds=Thresholds(zero_result_rate_critical=0.2, latency_quantile=0.95,
                                        known_item_zero_result_rate_critical=0.07,
                                        event_coverage_floor=0.1))


@pytest.fixture(scope="module")
def panels() -> dict[str, dict[str, Any]]:
    """The overview of PROFILE's deployment, its panels by title."""
    return {panel["title"]: panel for panel in as_json(overview.build(PROFILE))["panels"]}


def _steps(panel: dict[str, Any]) -> list[tuple[float | None, str]]:
    thresholds = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    return [(step["value"], step["color"]) for step in thresholds]


def test_the_headline_reads_the_recording_rules_of_the_paging_short_window(
        panels: dict[str, dict[str, Any]]) -> None:
    recorded = [title for title, panel in panels.items()
                if panel["type"] == "stat" and ":rate10m{" in panel["targets"][0]["expr"]]
    assert recorded == ["Zero-result rate", "CTR", "Reformulation rate", "Abandonment rate",
                        "Event coverage", "Automated share", "Keystrokes per search"]
    assert all("over 10m, all collectors (recording rule)" in panels[title]["description"]
               for title in recorded)


def test_the_headline_draws_what_the_alerts_fire_at(panels: dict[str, dict[str, Any]]) -> None:
    assert _steps(panels["Zero-result rate"]) == [(None, "green"), (0.2, "red")]
    assert _steps(panels["Known-item zero-result rate"]) == [(None, "green"), (0.07, "red")]
    latency = panels["Latency p95"]  # the quantile the latency ticket judges
    assert latency["targets"][0]["expr"].startswith("histogram_quantile(0.95, ")
    assert _steps(latency) == [(None, "green"), (PROFILE.latency_guardrail_s, "red")]
    coverage = panels["Event coverage"]  # red below the floor, where the tracking page fires
    assert _steps(coverage) == [(None, "red"), (0.1, "green")]
    assert "Red below 10%" in coverage["description"]
    assert _steps(panels["Event coverage by application"]) == [(None, "red"), (0.1, "green")]
    assert _steps(panels["Firing alerts"]) == [(None, "green"), (1, "red")]


def test_each_rate_by_application_is_shown_beside_a_week_ago(
        panels: dict[str, dict[str, Any]]) -> None:
    targets = panels["CTR by application"]["targets"]
    assert [t["legendFormat"] for t in targets] == ["{{application}}",
                                                    "{{application}}, a week ago"]
    now, week_ago = (t["expr"] for t in targets)
    assert week_ago == now.replace("[$__rate_interval]", "[$__rate_interval] offset 1w")
    assert now.count("[$__rate_interval]") == week_ago.count(" offset 1w") >= 2


def test_the_panels_fit_the_grid_without_overlapping(panels: dict[str, dict[str, Any]]) -> None:
    grids = [panel["gridPos"] for panel in panels.values()]
    assert all(grid["x"] + grid["w"] <= 24 for grid in grids)
    assert overlaps(list(panels.values())) == []
    ids = [panel["id"] for panel in panels.values()]
    assert len(ids) == len(set(ids)) == len(panels)


def test_the_board_links_the_others_and_marks_firing_alerts() -> None:
    board = as_json(overview.build(PROFILE))
    assert board["uid"] == overview.UID == "searchpulse-overview"
    assert [link["url"] for link in board["links"]] == ["/d/searchpulse-experiments",
                                                        "/d/searchpulse-collector"]
    (annotation,) = board["annotations"]["list"]
    assert annotation["expr"] == 'ALERTS{alertstate="firing",service="searchpulse"}'
    assert (board["refresh"], board["time"]) == ("30s", {"from": "now-6h", "to": "now"})
