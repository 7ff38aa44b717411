"""Alertmanager: config valid, routes per severity, inhibition on a real Alertmanager."""

from __future__ import annotations

import subprocess
import time

import pytest
import yaml

from alerts.alertmanager import ROOT_CAUSES
from alerts.build import GENERATED
from alerts.config import NEEDS_TRACKING, TRACKING_ALERT
from testbed.monitoring import Alertmanager
from testbed.process import require

pytestmark = pytest.mark.integration  # amtool and a real Alertmanager
CONFIG = GENERATED / "alertmanager.yml"
RULES = GENERATED / "searchpulse-rules.yml"


def amtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([require("amtool"), *args], capture_output=True, text=True,
                          check=False)


def test_check_config():
    done = amtool("check-config", str(CONFIG))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 receivers" in done.stdout
    assert "3 inhibit rules" in done.stdout


@pytest.mark.parametrize(("labels", "receiver"), [
    (["severity=critical", "alertname=SearchZeroResultRateHigh", "application=web"], "pager"),
    (["severity=warning", "alertname=SearchClickThroughRateDrop", "application=web"], "ticket"),
    (["severity=critical", "alertname=SearchpulseCollectorDown"], "pager"),
    (["severity=warning", "alertname=SearchpulseConsumerLagHigh"], "ticket"),
    (["alertname=Unlabelled"], "ticket"),
])
def test_routes(labels, receiver):
    done = amtool("config", "routes", "test", f"--config.file={CONFIG}", *labels)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == receiver


def _alert(name: str, severity: str, kind: str, **labels: str) -> dict:
    return {"labels": {"alertname": name, "severity": severity, "service": "searchpulse",
                       "kind": kind, **labels},
            "annotations": {"summary": name}}


@pytest.fixture
def alertmanager(tmp_path):
    service = Alertmanager(tmp_path, CONFIG).start()
    yield service
    service.stop()


@pytest.mark.parametrize("cause", ROOT_CAUSES)
def test_root_causes_mute_quality_alerts(alertmanager, cause):
    alertmanager.post([
        _alert(cause, "critical", "pipeline" if "Searchpulse" in cause else "traffic"),
        _alert("SearchZeroResultRateHigh", "critical", "quality", application="web"),
        _alert("SearchTrafficCessation", "critical", "traffic", application="app"),
    ])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        states = {a["labels"]["alertname"]: a["status"] for a in alertmanager.alerts()}
        if len(states) == 3 and states["SearchZeroResultRateHigh"]["inhibitedBy"]:
            break
        time.sleep(0.2)
    assert states["SearchZeroResultRateHigh"]["state"] == "suppressed"
    assert states["SearchTrafficCessation"]["inhibitedBy"] == []  # not a quality alert
    assert states[cause]["state"] == "active"


def test_critical_mutes_warning_of_the_same_alert_and_application(alertmanager):
    alertmanager.post([
        _alert("SearchZeroResultRateHigh", "critical", "quality", application="web"),
        _alert("SearchZeroResultRateHigh", "warning", "quality", application="web"),
        _alert("SearchZeroResultRateHigh", "warning", "quality", application="app"),
    ])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alerts = alertmanager.alerts()
        if len(alerts) == 3 and any(a["status"]["inhibitedBy"] for a in alerts):
            break
        time.sleep(0.2)
    state = {(a["labels"]["severity"], a["labels"]["application"]): a["status"]["state"]
             for a in alerts}
    assert state == {("critical", "web"): "active", ("warning", "web"): "suppressed",
                     ("warning", "app"): "active"}


def _generated_alerts() -> dict[str, dict]:
    """Each alert rule of the generated rules by name (a critical one over its warning)."""
    groups = yaml.safe_load(RULES.read_text())["groups"]
    rules = [rule for group in groups for rule in group["rules"] if "alert" in rule]
    return {rule["alert"]: rule for rule in sorted(rules, key=lambda r: r["labels"]["severity"],
                                                   reverse=True)}


def _firing(rule: dict, application: str) -> dict:
    """The alert Prometheus sends for ``rule`` of ``application``: the rule's labels, the
    series' application (and a variant for the per-variant experiment alerts)."""
    variant = {"variant": "treatment"} if "Experiment" in rule["alert"] else {}
    return {"labels": {"alertname": rule["alert"], **rule["labels"], "application": application,
                       **variant},
            "annotations": {"summary": rule["alert"]}}


def test_broken_tracking_mutes_what_rests_on_events_for_its_application_only(alertmanager):
    """SearchTrackingBroken of web, every alert whose rule says it needs tracking (CTR,
    reformulation, abandonment, judged relevance, the experiment guardrails, the automated
    share) for web and for shop, and the zero-result page of web, all with the labels the
    generated rules give them: web's tracked alerts read as inhibited by the tracking page
    through the API, shop's and the zero-result page stay active."""
    rules = _generated_alerts()
    tracked = sorted(name for name, rule in rules.items()
                     if rule["labels"].get(NEEDS_TRACKING[0]) == NEEDS_TRACKING[1])
    assert tracked == ["SearchAbandonmentRateHigh", "SearchAutomatedShareJump",
                       "SearchClickThroughRateDrop", "SearchExperimentGuardrailWorse",
                       "SearchExperimentLatencyGuardrailWorse", "SearchJudgedRelevanceDrop",
                       "SearchReformulationRateHigh"]
    loud = rules["SearchZeroResultRateHigh"]
    alertmanager.post([_firing(rules[TRACKING_ALERT], "web"), _firing(loud, "web"),
                       *(_firing(rules[name], app) for name in tracked for app in ("web", "shop"))])
    expected = 2 + 2 * len(tracked)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alerts = alertmanager.alerts()
        if len(alerts) == expected and sum(bool(a["status"]["inhibitedBy"]) for a in alerts) \
                == len(tracked):
            break
        time.sleep(0.2)
    status = {(a["labels"]["alertname"], a["labels"]["application"]): a["status"]
              for a in alerts}
    assert len(status) == expected
    source = status[(TRACKING_ALERT, "web")]
    assert source["state"] == "active" and source["inhibitedBy"] == []
    fingerprint = next(a["fingerprint"] for a in alerts
                       if a["labels"]["alertname"] == TRACKING_ALERT)
    for name in tracked:
        assert status[(name, "web")]["state"] == "suppressed", name
        assert status[(name, "web")]["inhibitedBy"] == [fingerprint], name
        assert status[(name, "shop")]["state"] == "active", name
        assert status[(name, "shop")]["inhibitedBy"] == [], name
    assert status[(loud["alert"], "web")]["state"] == "active"  # a failure seen without events
