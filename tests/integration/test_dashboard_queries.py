"""Every panel query of every dashboard runs against a real Prometheus that scrapes a real
collector (Kafka, simulated live traffic) with the production rules loaded: each must parse and
return data. Grafana cannot be installed here; this is what it would ask Prometheus."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from alerts.build import GENERATED as ALERTS
from dashboards.build import GENERATED
from testbed.monitoring import Prometheus
from testbed.process import Service, free_port, terminate
from tests.conftest import examination_file

pytestmark = pytest.mark.integration
# Each variable's "All" value, as Grafana sends it.
SUBSTITUTIONS = {"$application": ".*", "$stratum": ".*", "$job": ".+", "$instance": ".+",
                 "$__rate_interval": "30s"}


def substitute(expr: str) -> str:
    for variable, value in SUBSTITUTIONS.items():
        expr = expr.replace(variable, value)
    return expr


def panel_queries():
    for path in sorted(GENERATED.glob("*.json")):
        board = json.loads(path.read_text())
        for panel in board["panels"]:
            for target in panel["targets"]:
                yield f"{board['uid']}/{panel['id']} {panel['title']}", substitute(target["expr"])


@pytest.fixture(scope="module")
def prometheus(kafka, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("dashboards")
    bootstrap = kafka[0]
    topic = f"live-{uuid.uuid4().hex[:6]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, 2, 1)])
    admin.close()
    cli = [sys.executable, "-m", "searchpulse"]
    judgments = workdir / "judgments.csv"  # the simulated vocabulary's, for the judged panels
    subprocess.run([*cli, "simulate", "--sessions", "1", "--out", str(workdir / "none.jsonl"),
                    "--truth", str(workdir / "none.json"), "--judgments-out", str(judgments)],
                   check=True, cwd=workdir)
    # the simulator's clicks fall on position r with weight 1/r: that curve, for the
    # examination and debiased-click panels
    examination = examination_file(workdir, dict.fromkeys(
        ("web", "mobile", "legacy", "opensearch"), [1 / r for r in range(1, 11)]))
    port = free_port()
    with open(workdir / "simulator.log", "wb") as log:  # live traffic, 30× real time
        simulator = subprocess.Popen([*cli, "simulate", "--kafka", bootstrap, "--topic", topic,
                                      "--pace", "30", "--sessions", "1000000",
                                      "--invalid-rate", "0.05", "--interleaving", "0.1"],
                                     stdout=log,
                                     stderr=subprocess.STDOUT, cwd=workdir)
    collector = Service("collector", [
        *cli, "collect", "--bootstrap-servers", bootstrap, "--topic", topic, "--group-id", topic,
        "--instance-id", topic, "--metrics-port", str(port),
        "--store", f"sqlite:///{workdir / 'aggregates.db'}", "--set", "store.flush_interval_s=2",
        "--judgments", str(judgments), "--examination", str(examination)],
        workdir,
        f"http://127.0.0.1:{port}/healthz").start()
    server = Prometheus(workdir, [f"127.0.0.1:{port}"],
                        [ALERTS / "searchpulse-rules.yml"]).start()
    time.sleep(35)  # > the 30s rate interval of live traffic
    yield server
    server.stop()
    collector.stop()
    terminate(simulator, 10)


@pytest.mark.parametrize(("panel", "expr"), list(panel_queries()), ids=lambda x: x[:60])
def test_panel_query_parses_and_returns_data(prometheus, panel, expr):
    if " offset 1w" in expr:  # last week's overlay: parses now, has data after a week
        prometheus.query(expr)
        expr = expr.replace(" offset 1w", "")
    deadline = time.monotonic() + 30
    result = prometheus.query(expr)
    while not result and time.monotonic() < deadline:
        time.sleep(2)
        result = prometheus.query(expr)
    assert result, f"{panel}: no data for {expr}"


def test_annotation_queries_parse(prometheus):
    for path in sorted(GENERATED.glob("*.json")):
        for annotation in json.loads(path.read_text()).get("annotations", {}).get("list", []):
            prometheus.query(annotation["expr"])  # raises on a PromQL error; no alert: no data


def test_variable_queries_find_values(prometheus):
    """`label_values(selector, label)` of every query variable finds the running collector."""
    for path in sorted(GENERATED.glob("*.json")):
        for variable in json.loads(path.read_text())["templating"]["list"]:
            if variable["type"] != "query":
                continue
            selector, label = re.fullmatch(r"label_values\((.+), (\w+)\)",
                                           variable["query"]).groups()
            found = prometheus.query(f"count by ({label}) ({substitute(selector)})")
            assert [series["metric"][label] for series in found], variable["name"]
