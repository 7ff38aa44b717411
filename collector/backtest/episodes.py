"""Episodes (one label set's firing interval, with its severity and peak) and incidents (a time
window, maybe one application's, whose detection delay and page are read off the episodes)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from collector.backtest.alerting import Firing

WEEK_S = 7 * 86400.0
_INCIDENT = re.compile(r"([^+@]+)\+([^@]+)(?:@(.+))?")
_OFFSET = re.compile(r"(\d+(?:\.\d+)?)(s|m|h|d)")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DETECTION_GRACE_S = 1800.0  # an alert starting this long after an incident ended still found it


@dataclass(frozen=True)
class Episode:
    alert: str
    application: str | None
    severity: str
    start: float
    end: float  # the resolving evaluation, or the period's end while still firing
    resolved: bool
    peak: float | None  # the expression's most extreme value while firing (None: kept only)
    labels: tuple[tuple[str, str], ...] = ()  # every label of the alert (Alertmanager's)
    notified: float | None = None  # when Alertmanager would send it (None: always inhibited)

    @property
    def duration_s(self) -> float:
        return self.end - self.start


def episode(found: Firing, end: float, comparison: str) -> Episode:
    """``found`` as an episode; ``comparison`` is the rule's first operator, ``<`` for an
    alert on a drop (its peak is its lowest value), else its highest."""
    labels = dict(found.labels)
    pick = min if comparison == "<" else max
    return Episode(labels["alertname"], labels.get("application"),
                   labels.get("severity", "none"), found.start,
                   found.end if found.end is not None else end, found.end is not None,
                   pick(found.values) if found.values else None, found.labels, found.start)


def comparison(expr: str) -> str:
    """The first comparison operator of an expression (``>`` ``<``), ``>`` when none."""
    found = re.search(r"(?<![<>=!])([<>])(?!=)", re.sub(r'"(?:[^"\\]|\\.)*"', "", expr))
    return found.group(1) if found else ">"


@dataclass(frozen=True)
class Incident:
    """``START+DURATION[@APP]``: START an ISO time (UTC unless it says) or an offset from the
    period's start (``90m``), DURATION like ``30m``."""

    start: float
    duration_s: float
    application: str | None
    text: str

    @property
    def end(self) -> float:
        return self.start + self.duration_s


def parse_incident(text: str, period_start: float) -> Incident:
    found = _INCIDENT.fullmatch(text.strip())
    if not found:
        raise ValueError(f"--incident {text!r}: expected START+DURATION[@APP], e.g. "
                         "2026-01-05T10:00:00Z+30m@web or 1h+30m")
    start, duration, app = found.groups()
    offset = _OFFSET.fullmatch(start)
    if offset:
        at = period_start + float(offset.group(1)) * _UNIT_S[offset.group(2)]
    else:
        try:
            moment = datetime.fromisoformat(start.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"--incident {text!r}: START {start!r} is neither an ISO time "
                             "(2026-01-05T10:00:00Z) nor an offset (90m)") from None
        at = (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    length = _OFFSET.fullmatch(duration)
    if not length:
        raise ValueError(f"--incident {text!r}: DURATION {duration!r} is not like 30m or 2h")
    return Incident(at, float(length.group(1)) * _UNIT_S[length.group(2)], app, text)


def detection(incident: Incident, episodes: list[Episode]) -> dict:
    """The first notification of the incident's application (any, without one) sent during
    it or up to DETECTION_GRACE_S after: its delay from the incident's start, and whether a
    critical one (a page) was sent in that window. An episode firing since before the
    incident is no detection of it; an inhibited one tells nobody."""
    window = [e for e in episodes
              if e.notified is not None and e.start >= incident.start
              and incident.start <= e.notified <= incident.end + DETECTION_GRACE_S
              and (incident.application is None or e.application == incident.application)]
    window.sort(key=lambda e: (e.notified, e.severity != "critical"))
    pages = [e for e in window if e.severity == "critical"]
    first = window[0] if window else None
    return {
        "incident": incident.text,
        "start": iso(incident.start), "duration_s": incident.duration_s,
        "application": incident.application,
        "detected_by": first.alert if first else None,
        "detection_delay_s": first.notified - incident.start if first else None,
        "paged": bool(pages),
        "page_delay_s": pages[0].notified - incident.start if pages else None,
        "paged_by": pages[0].alert if pages else None,
    }


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
