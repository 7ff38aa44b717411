"""Alertmanager: config valid, routes per severity, inhibition on a real Alertmanager."""

from __future__ import annotations

import subprocess
import time

import pytest

from alerts.alertmanager import ROOT_CAUSES
from alerts.build import GENERATED
from testbed.monitoring import Alertmanager
from testbed.process import require

pytestmark = pytest.mark.integration  # amtool and a real Alertmanager
CONFIG = GENERATED / "alertmanager.yml"


def amtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([require("amtool"), *args], capture_output=True, text=True,
                          check=False)


def test_check_config():
    done = amtool("check-config", str(CONFIG))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 receivers" in done.stdout


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
