"""The backtest report: per alert and application its episodes, how many a week and how long it
fired; pages (critical) and tickets (warning) a week over the period; each incident's detection.
As JSON (``report``) and as text (``text``).

One episode is one notification, sent at its first moment no inhibiting alert fires (the
Alertmanager configuration's inhibit_rules, inhibition.py); an episode inhibited throughout is
listed and counted apart, never as a page or a ticket. Alertmanager's grouping and repeats are
not replayed (a page that fires for three hours pages once here, and as often as
page_repeat_interval there).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from collector.backtest.episodes import (
    WEEK_S,
    Episode,
    Incident,
    comparison,
    detection,
    episode,
    iso,
)
from collector.backtest.inhibition import InhibitRule, inhibited
from collector.backtest.run import Result

KINDS = {"critical": "pages", "warning": "tickets"}


def episodes(result: Result) -> list[Episode]:
    """Every episode of every alerting rule, in time order."""
    found = [episode(f, result.end, comparison(rule.expr))
             for rule, fired in result.firing for f in fired]
    return sorted(found, key=lambda e: (e.start, e.alert, e.application or ""))


def report(result: Result, incidents: list[Incident],
           inhibit: list[InhibitRule] | None = None) -> dict[str, Any]:
    period = result.end - result.start
    weeks = period / WEEK_S if period else 0.0
    found = inhibited(episodes(result), inhibit or [])
    groups: dict[tuple[str, str | None, str], list[Episode]] = defaultdict(list)
    for e in found:
        groups[e.alert, e.application, e.severity].append(e)
    alerts = [{
        "alert": alert, "application": app, "severity": severity,
        "episodes": len(listed),
        "per_week": _per_week(len(listed), weeks),
        "firing_s": sum(e.duration_s for e in listed),
        "firing_share": sum(e.duration_s for e in listed) / period if period else None,
        "inhibited": sum(1 for e in listed if e.notified is None),
        "list": [{"start": iso(e.start), "end": iso(e.end), "resolved": e.resolved,
                  "duration_s": e.duration_s, "peak": e.peak,
                  "notified": None if e.notified is None else iso(e.notified)}
                 for e in listed],
    } for (alert, app, severity), listed in sorted(groups.items(), key=_order)]
    counts = {kind: sum(1 for e in found if e.severity == severity and e.notified is not None)
              for severity, kind in KINDS.items()}
    return {
        "period": {"start": iso(result.start), "end": iso(result.end), "seconds": period,
                   "weeks": weeks},
        "searches": result.summary["searches"],
        "pages": counts["pages"], "pages_per_week": _per_week(counts["pages"], weeks),
        "tickets": counts["tickets"], "tickets_per_week": _per_week(counts["tickets"], weeks),
        "inhibited": sum(1 for e in found if e.notified is None),
        "alerts": alerts,
        "incidents": [detection(i, found) for i in incidents],
    }


def _order(item: tuple[tuple[str, str | None, str], list[Episode]]) -> tuple:
    (alert, app, severity), _ = item
    return (severity != "critical", alert, app or "")


def _per_week(count: int, weeks: float) -> float | None:
    return count / weeks if weeks else None


def text(data: dict[str, Any]) -> str:
    period = data["period"]
    lines = [f"backtest {period['start']} → {period['end']} "
             f"({period['seconds'] / 3600:.1f} h, {data['searches']} searches)",
             f"pages   {data['pages']:>4}  {_rate(data['pages_per_week'])} a week",
             f"tickets {data['tickets']:>4}  {_rate(data['tickets_per_week'])} a week",
             f"inhibited {data['inhibited']} (never sent)", ""]
    for alert in data["alerts"]:
        muted = f", {alert['inhibited']} inhibited" if alert["inhibited"] else ""
        lines.append(f"{alert['alert']} {alert['application'] or '-'} {alert['severity']}: "
                     f"{alert['episodes']} episodes{muted} ({_rate(alert['per_week'])} a week), "
                     f"firing {alert['firing_s'] / 60:.0f} min "
                     f"({100 * (alert['firing_share'] or 0):.1f} %)")
        for e in alert["list"]:
            peak = "-" if e["peak"] is None else f"{e['peak']:.4g}"
            sent = ("" if e["notified"] == e["start"] else
                    " inhibited" if e["notified"] is None else f" sent {e['notified']}")
            lines.append(f"  {e['start']} → {e['end']}{'' if e['resolved'] else ' (firing)'}"
                         f"  {e['duration_s'] / 60:.0f} min  peak {peak}{sent}")
    if not data["alerts"]:
        lines.append("no alert fired")
    for found in data["incidents"]:
        delay = found["detection_delay_s"]
        lines.append("")
        lines.append(f"incident {found['incident']}: " + (
            "not detected" if delay is None else
            f"detected by {found['detected_by']} after {delay / 60:.1f} min, " + (
                f"paged by {found['paged_by']} after {found['page_delay_s'] / 60:.1f} min"
                if found["paged"] else "no page")))
    return "\n".join(lines) + "\n"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
