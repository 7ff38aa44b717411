"""Alerts on the traffic itself (alerts/tests/traffic.test.yml): cessation, absence."""

from __future__ import annotations

from alerts.config import (
    AlertRow,
    Profile,
)
from alerts.rules.recordings import (
    Built,
    Recordings,
    builds,
)
from collector import definitions as d


@builds("SearchTrafficCessation")
def _cessation(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t, sel = profile.thresholds, profile.deployment.selector
    window = t.cessation_window
    return Built(
        f"sum by (application) (rate({d.SEARCHES.name}{{{sel}}}[{window}])) == 0\n"
        f"and on (application) sum by (application) (rate({d.SEARCHES.name}{{{sel}}}"
        f"[1h] offset 1h)) > {t.cessation_substantial_per_s}",
        "{{ $labels.application }} stopped sending searches.",
        f"No search of {{{{ $labels.application }}}} for {window}, while an hour earlier it "
        f"served more than {t.cessation_substantial_per_s} searches/s: the search front end, "
        f"its UBI tracking or the pipeline to Kafka is broken.",
        "traffic", kind="traffic")


@builds("SearchTrafficAbsent")
def _traffic_absent(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    duration = profile.duration(row.for_)
    return Built(
        f"absent({d.SEARCHES.name}{{{profile.deployment.selector}}})",
        "No search-quality series at all.",
        f"{d.SEARCHES.name} has no series for {duration}: the collector sees no "
        f"searches (no producer, wrong topic) or its series are not scraped.",
        "traffic", kind="traffic", per_application=False)
