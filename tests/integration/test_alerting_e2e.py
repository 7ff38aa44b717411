"""End to end with real processes: simulator + collector (`searchpulse demo`, event time 60×)
→ Prometheus (fast-profile rules, 1 s scrapes) → Alertmanager → webhook receiver.

Two zero-result incidents (×8) are injected: the first must page with the failing queries and
resolve when it ends; during the second the collector is stopped, and the collector-down alert
must inhibit the quality page. Every recording rule must return data during the run.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace

import pytest
import yaml

from alerts.build import build
from alerts.config import Deployment, Profile
from testbed.monitoring import Alertmanager, Prometheus
from testbed.process import Service, free_port
from testbed.webhook import WebhookReceiver

pytestmark = pytest.mark.integration
APP = "web"


def is_page(status: str):
    def match(payload: dict) -> bool:
        labels = payload["groupLabels"]
        return (payload["status"] == status and labels.get("alertname") ==
                "SearchZeroResultRateHigh" and labels.get("application") == APP)
    return match


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("alerting")
    receiver = WebhookReceiver()
    build(workdir, replace(Profile.fast(), deployment=Deployment(
        pager_url=receiver.url + "/pager", ticket_url=receiver.url + "/ticket")))
    port = free_port()
    collector = Service("collector", [
        sys.executable, "-m", "searchpulse", "demo", "--speed", "60", "--port", str(port),
        "--sessions-per-second", "10", "--seed", "3",
        "--incident", "zero_results:x8:15m+40m", "--incident", "zero_results:x8:100m+600m",
    ], workdir, f"http://127.0.0.1:{port}/readyz").start()
    alertmanager = Alertmanager(workdir, workdir / "alertmanager.yml").start()
    prometheus = Prometheus(workdir, [f"127.0.0.1:{port}"], [workdir / "searchpulse-rules.yml"],
                            alertmanager=alertmanager.url).start()
    yield {"receiver": receiver, "collector": collector, "prometheus": prometheus,
           "alertmanager": alertmanager, "rules": workdir / "searchpulse-rules.yml"}
    for service in (prometheus, alertmanager, collector):
        service.stop()
    receiver.close()


def test_incident_pages_with_failing_queries_then_resolves(stack):
    receiver = stack["receiver"]
    page = receiver.wait_for("/pager", is_page("firing"), timeout=90)
    alert = next(a for a in page["alerts"] if a["labels"]["severity"] == "critical")
    assert alert["labels"] == {"alertname": "SearchZeroResultRateHigh", "application": APP,
                               "severity": "critical", "service": "searchpulse",
                               "kind": "quality"}
    annotations = alert["annotations"]
    assert annotations["summary"] == \
        f"Searches of {APP} return nothing far more often than usual."
    assert annotations["description"].startswith(f"Zero-result rate of {APP} is ")
    assert "(objective 35%, baseline over 20s: none yet)" in annotations["description"]
    failing = annotations["description"].split("Top zero-result queries now: ")[1]
    assert failing.count('" (') >= 3, failing  # the top queries, quoted, with their counts
    assert annotations["runbook_url"].endswith("runbooks.md#searchzeroresultratehigh")
    assert annotations["dashboard_url"].endswith(f"viewPanel=2&var-application={APP}")
    # While the page fires, the warning of the same alert and application is muted (the
    # warning's longer windows and `for:` make it fire seconds after the page).
    deadline = time.monotonic() + 30
    warning: list = []
    while not warning and time.monotonic() < deadline:
        warning = stack["alertmanager"].alerts(filter=[
            'alertname="SearchZeroResultRateHigh"', f'application="{APP}"', 'severity="warning"'])
        time.sleep(0.5)
    assert warning and warning[0]["status"]["state"] == "suppressed"

    receiver.wait_for("/pager", is_page("resolved"), timeout=90)
    ratio = stack["prometheus"].query(
        f'application:searchpulse_zero_result_searches_per_searches:ratio_rate10s'
        f'{{application="{APP}"}}')
    assert ratio and float(ratio[0]["value"][1]) < 0.35


def test_every_recording_rule_returns_data(stack):
    rules = yaml.safe_load(stack["rules"].read_text())["groups"][0]["rules"]
    names = [r["record"] for r in rules if not r["record"].endswith("_baseline")]
    deadline = time.monotonic() + 60
    missing = names
    while missing and time.monotonic() < deadline:
        missing = [n for n in missing if not stack["prometheus"].query(n)]
        time.sleep(1)
    assert missing == []  # baselines need weeks of history: quality-baseline.test.yml


def test_collector_down_inhibits_the_quality_page(stack):
    receiver, alertmanager = stack["receiver"], stack["alertmanager"]
    pages_before = len([p for p in receiver.payloads("/pager") if is_page("firing")(p)])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the second incident pages again
        if len([p for p in receiver.payloads("/pager") if is_page("firing")(p)]) > pages_before:
            break
        time.sleep(0.5)
    else:
        pytest.fail("the second incident did not page")
    stack["collector"].stop()
    deadline = time.monotonic() + 45
    state: dict = {}
    while time.monotonic() < deadline:
        alerts = alertmanager.alerts()
        state = {(a["labels"]["alertname"], a["labels"].get("application")): a["status"]
                 for a in alerts}
        quality = state.get(("SearchZeroResultRateHigh", APP))
        if ("SearchpulseCollectorDown", None) in state and quality and quality["inhibitedBy"]:
            break
        time.sleep(0.5)
    assert state[("SearchpulseCollectorDown", None)]["state"] == "active"
    assert state[("SearchZeroResultRateHigh", APP)]["state"] == "suppressed"
    down = receiver.wait_for("/pager", lambda p: p["groupLabels"].get("alertname") ==
                             "SearchpulseCollectorDown", timeout=30)
    assert down["status"] == "firing"
