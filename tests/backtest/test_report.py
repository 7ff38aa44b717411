"""The report of a backtest's firing intervals: rates a week, time firing, text and JSON."""

from __future__ import annotations

from collector.backtest.alerting import Firing
from collector.backtest.episodes import parse_incident
from collector.backtest.report import report, text
from collector.backtest.run import AlertRule, Result

T = 1_767_603_600.0  # 2026-01-05T09:00:00Z
DAY = 86400.0


def result() -> Result:
    high = AlertRule("ZeroHigh", "ratio > 0.15", 120, 600, 15, {"severity": "critical"})
    drop = AlertRule("CtrDrop", "ctr < 0.7 * baseline", 900, 600, 15, {"severity": "warning"})

    def fired(rule: AlertRule, app: str, start: float, end: float | None, values: list) -> Firing:
        labels = tuple(sorted({"alertname": rule.name, "application": app,
                               **rule.labels}.items()))
        return Firing(labels, start, end, values)

    return Result({"searches": 1234}, T, T + 14 * DAY, [
        (high, [fired(high, "web", T + DAY, T + DAY + 1800, [0.2, 0.4, 0.3]),
                fired(high, "web", T + 13 * DAY, None, [0.5])]),
        (drop, [fired(drop, "shop", T + 2 * DAY, T + 2 * DAY + 3600, [0.5, 0.3])]),
    ])


def test_rates_are_per_week_of_the_period():
    data = report(result(), [parse_incident("1d+30m@web", T), parse_incident("2d+1h", T)])
    assert {k: data[k] for k in ("pages", "pages_per_week", "tickets", "tickets_per_week",
                                 "searches")} == {
        "pages": 2, "pages_per_week": 1.0, "tickets": 1, "tickets_per_week": 0.5,
        "searches": 1234}
    assert data["period"] == {"start": "2026-01-05T09:00:00Z", "end": "2026-01-19T09:00:00Z",
                              "seconds": 14 * DAY, "weeks": 2.0}
    assert data["alerts"] == [
        {"alert": "ZeroHigh", "application": "web", "severity": "critical", "episodes": 2,
         "per_week": 1.0, "firing_s": 1800 + DAY, "firing_share": (1800 + DAY) / (14 * DAY),
         "list": [{"start": "2026-01-06T09:00:00Z", "end": "2026-01-06T09:30:00Z",
                   "resolved": True, "duration_s": 1800.0, "peak": 0.4},
                  {"start": "2026-01-18T09:00:00Z", "end": "2026-01-19T09:00:00Z",
                   "resolved": False, "duration_s": DAY, "peak": 0.5}]},
        {"alert": "CtrDrop", "application": "shop", "severity": "warning", "episodes": 1,
         "per_week": 0.5, "firing_s": 3600.0, "firing_share": 3600 / (14 * DAY),
         "list": [{"start": "2026-01-07T09:00:00Z", "end": "2026-01-07T10:00:00Z",
                   "resolved": True, "duration_s": 3600.0, "peak": 0.3}]}]
    assert [(i["detected_by"], i["detection_delay_s"], i["paged"]) for i in data["incidents"]] \
        == [("ZeroHigh", 0.0, True), ("CtrDrop", 0.0, False)]


def test_the_text_says_the_same():
    assert text(report(result(), [parse_incident("1d+30m@web", T - 300)])) == """\
backtest 2026-01-05T09:00:00Z → 2026-01-19T09:00:00Z (336.0 h, 1234 searches)
pages      2  1.00 a week
tickets    1  0.50 a week

ZeroHigh web critical: 2 episodes (1.00 a week), firing 1470 min (7.3 %)
  2026-01-06T09:00:00Z → 2026-01-06T09:30:00Z  30 min  peak 0.4
  2026-01-18T09:00:00Z → 2026-01-19T09:00:00Z (firing)  1440 min  peak 0.5
CtrDrop shop warning: 1 episodes (0.50 a week), firing 60 min (0.3 %)
  2026-01-07T09:00:00Z → 2026-01-07T10:00:00Z  60 min  peak 0.3

incident 1d+30m@web: detected by ZeroHigh after 5.0 min, paged by ZeroHigh after 5.0 min
"""
