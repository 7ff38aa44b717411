"""alerts/rules/pipeline.py: the collector's pipeline alerts (down, absent, stale, invalid
records, consumer lag, a store away) read the deployment's selector and the profile's
thresholds and windows, are pipeline alerts of the collector-health board, and never wait for
the front end's tracking, since these are the alerts that say the quality alerts are blind."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from alerts.config import Deployment, Profile, Thresholds, Windows
from tests.alerts.rules.built import alerts_of

SELECTOR = 'job="sp",env="prod"'
PROFILE = Profile(
    windows=Windows(ticket_short="1h", ticket_long="12h"),
    thresholds=replace(Thresholds(), event_staleness_s_critical=900,
                       invalid_record_ratio_warning=0.05, min_records_for_invalid_ratio=1000,
                       consumer_lag_records_warning=50_000, consumer_lag_growing_from_records=5000),
    deployment=Deployment(selector=SELECTOR), store_flush_interval_s=30.0)
LAG = f"searchpulse_kafka_consumer_lag_records{{{SELECTOR}}}"
RECORDS = f"searchpulse_records_total{{{SELECTOR}}}"


@pytest.fixture(scope="module")
def pipeline() -> dict[str, dict[str, Any]]:
    return {name: rule for (name, _), rule in alerts_of(PROFILE, "searchpulse-pipeline").items()}


def test_the_expressions_read_the_selector_thresholds_and_windows(
        pipeline: dict[str, dict[str, Any]]) -> None:
    last = f"searchpulse_last_event_timestamp_seconds{{{SELECTOR}}}"
    assert {name: rule["expr"] for name, rule in pipeline.items()} == {
        "SearchpulseCollectorDown": f"up{{{SELECTOR}}} == 0",
        "SearchpulseCollectorAbsent": f"absent(up{{{SELECTOR}}})",
        "SearchpulseEventsStale": f"time() - max({last}) > 900\nand max({last}) > 0",
        "SearchpulseInvalidRecordRateHigh": (
            f'sum(rate(searchpulse_records_total{{{SELECTOR},outcome="invalid"}}[1h])) / '
            f"sum(rate({RECORDS}[1h])) > 0.05\nand sum(increase({RECORDS}[1h])) >= 1000"),
        "SearchpulseConsumerLagHigh": f"sum by (topic) ({LAG}) > 50000",
        "SearchpulseConsumerLagGrowing": (f"sum by (topic) (deriv({LAG}[1h])) > 0\n"
                                          f"and sum by (topic) ({LAG}) > 5000"),
        "SearchpulseStoreFlushFailing":
            f"max by (instance) (searchpulse_store_away_seconds{{{SELECTOR}}}) > 30",
    }


def test_they_are_pipeline_alerts_that_need_no_tracking(
        pipeline: dict[str, dict[str, Any]]) -> None:
    assert {rule["labels"]["kind"] for rule in pipeline.values()} == {"pipeline"}
    assert all("needs" not in rule["labels"] for rule in pipeline.values())
    assert all(rule["annotations"]["dashboard_url"].startswith(
        "http://localhost:3000/d/searchpulse-collector/searchpulse-collector-health?viewPanel=")
        and "var-application" not in rule["annotations"]["dashboard_url"]
        for rule in pipeline.values())


def test_the_descriptions_state_the_limits_they_judge(pipeline: dict[str, dict[str, Any]]) -> None:
    def description(name: str) -> str:
        return pipeline[name]["annotations"]["description"]

    assert f"No scrape target matches {SELECTOR} for 15m" in \
        description("SearchpulseCollectorAbsent")
    assert "(limit 900s)" in description("SearchpulseEventsStale")
    assert "invalid over 1h (limit 5%)" in description("SearchpulseInvalidRecordRateHigh")
    assert "(limit 50000) for 15m" in description("SearchpulseConsumerLagHigh")
    assert "over 1h while above 5000 records" in description("SearchpulseConsumerLagGrowing")
    assert "(store.flush_interval_s = 30 s)" in description("SearchpulseStoreFlushFailing")


def test_a_store_away_fires_at_once(pipeline: dict[str, dict[str, Any]]) -> None:
    """The expression already waits a flush interval: no `for:` on top (0s is the default)."""
    assert "for" not in pipeline["SearchpulseStoreFlushFailing"]
    assert pipeline["SearchpulseCollectorDown"]["for"] == "5m"
