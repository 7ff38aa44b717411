"""Episodes, their peaks, incidents and their detection, with exact values."""

from __future__ import annotations

import pytest

from collector.backtest.alerting import Firing
from collector.backtest.episodes import (
    Episode,
    comparison,
    detection,
    episode,
    parse_incident,
)

T = 1_767_603_600.0  # 2026-01-05T09:00:00Z


def labels(alert: str, app: str, severity: str) -> tuple:
    return tuple(sorted({"alertname": alert, "application": app,
                         "severity": severity}.items()))


def test_an_episode_peaks_at_its_most_extreme_value():
    fired = Firing(labels("Drop", "web", "warning"), T, T + 600, [0.2, 0.1, 0.15])
    assert episode(fired, T + 3600, "<") == Episode(
        "Drop", "web", "warning", T, T + 600, True, 0.1, fired.labels, T)
    assert episode(fired, T + 3600, ">").peak == 0.2
    still = Firing(labels("High", "web", "critical"), T, None, [])
    assert episode(still, T + 3600, ">") == Episode(
        "High", "web", "critical", T, T + 3600, False, None, still.labels, T)


def test_the_comparison_of_a_rule_is_its_first_operator():
    assert comparison("a:ratio < 0.7 * a:baseline and b > 200") == "<"
    assert comparison('x{l=~"a>b"} >= 2 or y > 1') == ">"
    assert comparison("absent(up)") == ">"


def test_incidents_are_times_or_offsets_with_an_application():
    by_time, by_offset = parse_incident("2026-01-05T10:00:00Z+30m@web", 0), \
        parse_incident("1h+1800s@web", T)
    assert (by_time.start, by_time.duration_s, by_time.application) == \
        (by_offset.start, by_offset.duration_s, by_offset.application) == (T + 3600, 1800, "web")
    found = parse_incident("90m+2h", T)
    assert (found.start, found.duration_s, found.application, found.end) == (
        T + 5400, 7200.0, None, T + 12600)
    for bad, reason in (("10:00", r"expected START\+DURATION"),
                        ("yesterday+30m", "neither an ISO time"),
                        ("1h+soon", "DURATION 'soon'")):
        with pytest.raises(ValueError, match=reason):
            parse_incident(bad, T)


def test_detection_is_the_first_episode_of_the_application_after_the_start():
    def sent(alert: str, app: str, severity: str, start: float, end: float,
             notified: float | None = None) -> Episode:
        return Episode(alert, app, severity, start, end, True, 1.0, (),
                       start if notified is None else notified)

    episodes = [
        sent("Old", "web", "critical", T - 600, T + 7200),  # fired before
        sent("Other", "shop", "critical", T + 60, T + 600),  # another application
        sent("Muted", "web", "critical", T + 120, T + 900, notified=T + 1800 + 1801),
        sent("Slow", "web", "warning", T + 300, T + 900),
        sent("Page", "web", "critical", T + 400, T + 900, notified=T + 480),
        sent("Late", "web", "critical", T + 1800 + 1801, T + 9000),
    ]
    incident = parse_incident("0s+30m@web", T)
    assert detection(incident, episodes) == {
        "incident": "0s+30m@web", "start": "2026-01-05T09:00:00Z", "duration_s": 1800.0,
        "application": "web", "detected_by": "Slow", "detection_delay_s": 300.0,
        "paged": True, "page_delay_s": 480.0, "paged_by": "Page"}
    unseen = parse_incident("5h+10m@web", T)
    assert detection(unseen, episodes)["detected_by"] is None
    assert detection(unseen, episodes)["paged"] is False
