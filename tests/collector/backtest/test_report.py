"""The report of a backtest's firing intervals: rates a week, time firing, inhibition, text and
JSON."""

from __future__ import annotations

from collector.backtest.alerting import Firing
from collector.backtest.episodes import parse_incident
from collector.backtest.inhibition import inhibit_rules
from collector.backtest.report import report, text
from collector.backtest.run import AlertRule, Result

T = 1_767_603_600.0  # 2026-01-05T09:00:00Z
DAY = 86400.0
# the generated Alertmanager configuration's tracking rule, and its page-mutes-ticket rule
INHIBIT = inhibit_rules({"inhibit_rules": [
    {"source_matchers": ['alertname="Tracking"'], "target_matchers": ['needs="tracking"'],
     "equal": ["service", "application"]},
    {"source_matchers": ['severity="critical"'], "target_matchers": ['severity="warning"'],
     "equal": ["alertname", "service", "application"]}]})


def result() -> Result:
    high = AlertRule("ZeroHigh", "ratio > 0.15", 120, 600, 15, {"severity": "critical"})
    drop = AlertRule("CtrDrop", "ctr < 0.7 * baseline", 900, 600, 15,
                     {"severity": "warning", "needs": "tracking"})
    tracking = AlertRule("Tracking", "coverage < 0.5", 120, 600, 15, {"severity": "critical"})

    def fired(rule: AlertRule, app: str, start: float, end: float | None, values: list) -> Firing:
        labels = tuple(sorted({"alertname": rule.name, "application": app,
                               **rule.labels}.items()))
        return Firing(labels, start, end, values)

    return Result({"searches": 1234}, T, T + 14 * DAY, [
        (high, [fired(high, "web", T + DAY, T + DAY + 1800, [0.2, 0.4, 0.3]),
                fired(high, "web", T + 13 * DAY, None, [0.5])]),
        (drop, [fired(drop, "shop", T + 2 * DAY, T + 2 * DAY + 3600, [0.5, 0.3]),
                fired(drop, "shop", T + 3 * DAY, T + 3 * DAY + 600, [0.6])]),
        (tracking, [fired(tracking, "shop", T + 2 * DAY - 600, T + 2 * DAY + 1200, [0.1]),
                    fired(tracking, "shop", T + 3 * DAY - 60, T + 3 * DAY + 900, [0.2])]),
    ])


def test_rates_are_per_week_of_the_period_and_inhibited_episodes_are_never_sent():
    data = report(result(), [parse_incident("1d+30m@web", T), parse_incident("2d+1h@shop", T)],
                  INHIBIT)
    assert {k: data[k] for k in ("pages", "pages_per_week", "tickets", "tickets_per_week",
                                 "inhibited", "searches")} == {
        "pages": 4, "pages_per_week": 2.0, "tickets": 1, "tickets_per_week": 0.5,
        "inhibited": 1, "searches": 1234}
    assert data["period"] == {"start": "2026-01-05T09:00:00Z", "end": "2026-01-19T09:00:00Z",
                              "seconds": 14 * DAY, "weeks": 2.0}
    tracking, zero, drop = data["alerts"]
    assert zero == {
        "alert": "ZeroHigh", "application": "web", "severity": "critical", "episodes": 2,
        "per_week": 1.0, "firing_s": 1800 + DAY, "firing_share": (1800 + DAY) / (14 * DAY),
        "inhibited": 0,
        "list": [{"start": "2026-01-06T09:00:00Z", "end": "2026-01-06T09:30:00Z",
                  "resolved": True, "duration_s": 1800.0, "peak": 0.4,
                  "notified": "2026-01-06T09:00:00Z"},
                 {"start": "2026-01-18T09:00:00Z", "end": "2026-01-19T09:00:00Z",
                  "resolved": False, "duration_s": DAY, "peak": 0.5,
                  "notified": "2026-01-18T09:00:00Z"}]}
    assert (tracking["alert"], tracking["episodes"], tracking["inhibited"]) == ("Tracking", 2, 0)
    assert drop == {
        "alert": "CtrDrop", "application": "shop", "severity": "warning", "episodes": 2,
        "per_week": 1.0, "firing_s": 4200.0, "firing_share": 4200 / (14 * DAY),
        "inhibited": 1,
        # sent when the tracking page resolved, 20 min in; the second one muted throughout
        "list": [{"start": "2026-01-07T09:00:00Z", "end": "2026-01-07T10:00:00Z",
                  "resolved": True, "duration_s": 3600.0, "peak": 0.3,
                  "notified": "2026-01-07T09:20:00Z"},
                 {"start": "2026-01-08T09:00:00Z", "end": "2026-01-08T09:10:00Z",
                  "resolved": True, "duration_s": 600.0, "peak": 0.6, "notified": None}]}
    assert [(i["detected_by"], i["detection_delay_s"], i["paged"], i["paged_by"])
            for i in data["incidents"]] == [("ZeroHigh", 0.0, True, "ZeroHigh"),
                                            ("CtrDrop", 1200.0, False, None)]


def test_the_text_says_the_same():
    assert text(report(result(), [parse_incident("1d+30m@web", T - 300)], INHIBIT)) == """\
backtest 2026-01-05T09:00:00Z → 2026-01-19T09:00:00Z (336.0 h, 1234 searches)
pages      4  2.00 a week
tickets    1  0.50 a week
inhibited 1 (never sent)

Tracking shop critical: 2 episodes (1.00 a week), firing 46 min (0.2 %)
  2026-01-07T08:50:00Z → 2026-01-07T09:20:00Z  30 min  peak 0.1
  2026-01-08T08:59:00Z → 2026-01-08T09:15:00Z  16 min  peak 0.2
ZeroHigh web critical: 2 episodes (1.00 a week), firing 1470 min (7.3 %)
  2026-01-06T09:00:00Z → 2026-01-06T09:30:00Z  30 min  peak 0.4
  2026-01-18T09:00:00Z → 2026-01-19T09:00:00Z (firing)  1440 min  peak 0.5
CtrDrop shop warning: 2 episodes, 1 inhibited (1.00 a week), firing 70 min (0.3 %)
  2026-01-07T09:00:00Z → 2026-01-07T10:00:00Z  60 min  peak 0.3 sent 2026-01-07T09:20:00Z
  2026-01-08T09:00:00Z → 2026-01-08T09:10:00Z  10 min  peak 0.6 inhibited

incident 1d+30m@web: detected by ZeroHigh after 5.0 min, paged by ZeroHigh after 5.0 min
"""
