"""One definition, tested equal: the generated recording rules, run by a real Prometheus over
the collector's exposition of a simulated experiment with returning users (clustered:
heavy-tailed activity, a click propensity per user), give the numbers
`searchpulse experiments --metrics` prints — every rate and its always-valid interval, every
difference from the control and its always-valid interval, the guardrails' fixed-horizon
interval, interleaving's Δ and interval, the sample-ratio χ².

Prometheus scrapes the exposition twice over: first with every experiment counter at 0, then
with the replay's final counts. All series share their scrape times, so every `increase()` is
the final count times one common extrapolation factor, which every ratio, variance over squared
total and difference is free of; the units are a gauge."""

from __future__ import annotations

import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from alerts.build import GENERATED as ALERTS
from collector.config import load_config
from collector.engine import Engine
from collector.replay import exposition
from collector.series.experiment_stats import RATES, ExperimentDesign
from collector.sources.simulator import SimulationSpec, Simulator
from feedback.experiments import always_valid
from feedback.experiments.verdicts import from_exposition, from_logs, verdicts
from testbed.monitoring import Prometheus
from testbed.process import free_port

pytestmark = pytest.mark.integration
_COUNTER = re.compile(rb"^(searchpulse_experiment_\w+_total\{[^}]*\}) \S+$", re.MULTILINE)


def _zeroed(body: bytes) -> bytes:
    return _COUNTER.sub(rb"\1 0.0", body)


class _Exposition(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(type(self).body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("experiment-rules")
    log = workdir / "ubi.jsonl"
    spec = SimulationSpec(seed=8, sessions=6000, users=2500, interleaving_preference=0.1)
    log.write_bytes(b"".join(Simulator(spec).records()))
    engine = Engine(load_config(environ={}))
    engine.process_all(log.read_bytes().splitlines())
    engine.close()
    final = exposition(engine)
    handler = type("Handler", (_Exposition,), {"body": _zeroed(final)})
    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    prometheus = Prometheus(workdir, [f"127.0.0.1:{port}"],
                            [ALERTS / "searchpulse-rules.yml"]).start()
    try:
        chi2 = "application:searchpulse_experiment_sample_ratio_chi2:sum"
        _wait(prometheus, chi2)
        time.sleep(4)  # zeros scraped several times
        handler.body = final
        time.sleep(6)  # the final counts scraped, every rule evaluated on them
        yield prometheus, final, log
    finally:
        prometheus.stop()
        server.shutdown()


def _wait(prometheus: Prometheus, expr: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not prometheus.query(expr) and time.monotonic() < deadline:
        time.sleep(1)


def _samples(prometheus: Prometheus, expr: str, *labels: str) -> dict[tuple, float]:
    return {tuple(s["metric"][label] for label in labels): float(s["value"][1])
            for s in prometheus.query(expr)}


def test_the_rules_compute_what_the_report_prints(measured):
    """The always-valid rules read the counters as they stand (the final counts: exactly what
    `experiments --metrics` reads); the guardrails' fixed-horizon differences their increase."""
    prometheus, final, _ = measured
    design = ExperimentDesign.from_config(load_config(environ={}))
    experiments = from_exposition(final.decode(), design.unit_buckets)
    report = verdicts(experiments, design)
    shown = always_valid.report(experiments, design)["applications"]
    applications = report["applications"]
    assert set(applications) == {"web", "mobile"} == set(shown)
    compared = 0

    def compare(expr: str, expected: dict[tuple, float]) -> int:
        found = _samples(prometheus, expr, "application", "variant")
        assert found.keys() == expected.keys(), expr
        for labels, value in expected.items():
            assert found[labels] == pytest.approx(value, rel=1e-9, abs=1e-12), (expr, labels)
        return len(expected)

    for rate in RATES:
        name = f"application_variant:searchpulse_{rate.ratio}"
        for kind, key in (("ratio_sum", "value"), ("always_valid_low_sum", "low"),
                          ("always_valid_high_sum", "high")):
            compared += compare(f"{name}:{kind}", {
                (app, variant): entry[key] for app, rates in shown.items()
                for variant, entry in rates[rate.ratio].items()})
        for kind, key in (("difference_sum", "value"), ("difference_always_valid_low_sum", "low"),
                          ("difference_always_valid_high_sum", "high")):
            compared += compare(f"{name}:{kind}", {
                (app, variant): entry["difference"][key] for app, rates in shown.items()
                for variant, entry in rates[rate.ratio].items() if "difference" in entry})
        if rate.guardrail:  # the tickets' fixed-horizon interval, from the increase over 6h
            for kind, key in (("difference_low", "low"), ("difference_high", "high")):
                compared += compare(f"{name}:{kind}_increase6h", {
                    (app, variant): entry["rates"][rate.ratio]["difference"][key]
                    for app, found_app in applications.items()
                    for variant, entry in found_app["variants"].items()
                    if "difference" in entry["rates"][rate.ratio]})
    chi2 = _samples(prometheus, "application:searchpulse_experiment_sample_ratio_chi2:sum",
                    "application")
    assert chi2 == pytest.approx({(app, ): found["sample_ratio"]["chi2"]
                                  for app, found in applications.items()}, rel=1e-9)
    preference = "application_variant_team:searchpulse_interleaving_preference"
    deltas = _samples(prometheus, f"{preference}:ratio_increase1h", "application", "team")
    halves = _samples(prometheus, f"{preference}_interval:ratio_increase1h", "application",
                      "team")
    for app, found in applications.items():
        for team, delta in found["interleaving"]["interleaved"]["delta"].items():
            assert deltas[app, team] == pytest.approx(delta["value"], rel=1e-9)
            assert halves[app, team] == pytest.approx(design.t * delta["stderr"], rel=1e-9)
            compared += 2
    assert compared == 6 * 3 * 6 + 6 * 3 * 4 + 2 * 2 * 4 + 2 * 2 * 2


def test_the_report_reads_the_same_from_the_log_and_from_the_exposition(measured):
    _, final, log = measured
    config = load_config(environ={})
    design = ExperimentDesign.from_config(config)
    from_log, error = from_logs([str(log)], config)
    assert error is None
    # the log's report clusters by client exactly, the exposition's over its 32 buckets: the
    # same units, searches and rates, other variances
    by_client = verdicts(from_log, design, by_client=True)
    hashed = verdicts(from_exposition(final.decode(), 32), design)
    assert (by_client["design"]["clusters"], hashed["design"]["clusters"]) == ("client", 32)
    for app, found in hashed["applications"].items():
        for variant, entry in found["variants"].items():
            mine = by_client["applications"][app]["variants"][variant]
            assert (mine["units"], mine["searches"]) == (entry["units"], entry["searches"])
            for rate in RATES:
                assert mine["rates"][rate.ratio]["value"] == pytest.approx(
                    entry["rates"][rate.ratio]["value"], rel=1e-12)
