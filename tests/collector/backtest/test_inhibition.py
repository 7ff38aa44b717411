"""Alertmanager's inhibition, rule by rule, on labels."""

from __future__ import annotations

import pytest

from alerts.alertmanager import alertmanager_config
from alerts.config import load_profile
from collector.backtest.inhibition import inhibit_rules, matcher

RULES = inhibit_rules(alertmanager_config(load_profile(environ={}).deployment,
                                          load_profile(environ={}).routing))


def alert(name: str, severity: str, app: str = "web", **labels: str) -> dict[str, str]:
    return {"alertname": name, "severity": severity, "service": "searchpulse",
            "application": app, **labels}


def muted(source: dict, target: dict) -> bool:
    return any(rule.inhibits(source, target) for rule in RULES)


def test_the_generated_rules_mute_what_they_say():
    tracking = alert("SearchTrackingBroken", "critical", kind="traffic")
    ctr = alert("SearchClickThroughRateDrop", "warning", kind="quality", needs="tracking")
    assert muted(tracking, ctr)
    assert not muted(tracking, {**ctr, "application": "shop"})  # another application
    down = alert("SearchpulseCollectorDown", "critical", kind="pipeline")
    assert muted({**down, "application": ""}, {**ctr, "application": "shop"})  # all of them
    page = alert("SearchZeroResultRateHigh", "critical", kind="quality")
    ticket = alert("SearchZeroResultRateHigh", "warning", kind="quality")
    assert muted(page, ticket) and not muted(ticket, page)


def test_an_alert_on_both_sides_does_not_mute_its_like():
    page = alert("SearchpulseCollectorDown", "critical", kind="quality")
    assert not muted(page, dict(page))


def test_matchers_are_alertmanagers():
    assert matcher('alertname=~"A|B"').matches({"alertname": "B"})
    assert not matcher('alertname=~"A|B"').matches({"alertname": "AB"})  # anchored
    assert matcher('needs!="tracking"').matches({})
    assert matcher('needs!~"track.*"').matches({"needs": "x"})
    with pytest.raises(ValueError, match="not an Alertmanager matcher"):
        matcher("severity=critical")
