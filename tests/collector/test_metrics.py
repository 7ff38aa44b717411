"""Exposition: exact sample values from a fresh registry, and a real scrape over HTTP."""

from __future__ import annotations

import shutil
import subprocess
import urllib.error
import urllib.request

import pytest
from prometheus_client import CollectorRegistry

from collector.http import MetricsServer
from collector.metrics import SearchpulseCollector


def scrape_registry(engine) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(SearchpulseCollector(engine.view))
    return registry


def test_samples_have_exact_values(ubi, engine):
    e = engine([
        ubi.query("q1", "shoes", 0, latency_ms=500), ubi.click("q1", 3, position=2),
        ubi.query("q2", "tent", 1, client="c2", total_hits=0, latency_ms=80),
        ubi.query("q3", "lamp", 2, client="c3", app="mobile", variant="B"),
        b"{broken",
    ])
    registry = scrape_registry(e)
    web = {"application": "web", "stratum": "head", "variant": "none"}
    value = registry.get_sample_value
    assert value("searchpulse_searches_total", web) == 2
    assert value("searchpulse_zero_result_searches_total", web) == 1
    assert value("searchpulse_clicked_searches_total", web) == 1
    assert value("searchpulse_first_click_reciprocal_rank_total", web) == 0.5
    assert value("searchpulse_zero_result_exits_total", web) == 1
    assert value("searchpulse_searches_total",
                 {"application": "mobile", "stratum": "head", "variant": "B"}) == 1
    # The guardrail (0.5 s) is a bucket boundary: 500 ms is within it, 80 ms too.
    assert value("searchpulse_search_latency_seconds_bucket", {**web, "le": "0.5"}) == 2
    assert value("searchpulse_search_latency_seconds_bucket", {**web, "le": "0.3"}) == 1
    assert value("searchpulse_search_latency_seconds_count", web) == 2
    assert value("searchpulse_first_click_position_bucket", {**web, "le": "2.0"}) == 1
    assert value("searchpulse_time_to_first_click_seconds_sum", web) == 3.0
    assert value("searchpulse_records_total", {"kind": "query", "outcome": "accepted"}) == 3
    assert value("searchpulse_records_total", {"kind": "unknown", "outcome": "invalid"}) == 1
    assert value("searchpulse_invalid_records_total", {"reason": "malformed_json"}) == 1
    assert value("searchpulse_reformulated_searches_total", {**web, "kind": "other"}) == 0
    assert value("searchpulse_open_sessions") == 0  # closed: everything decided and evicted
    assert value("searchpulse_last_event_timestamp_seconds") == pytest.approx(1_767_600_002.0)


def test_open_state_gauges_while_running(ubi, engine):
    e = engine([ubi.query("q1", "a", 0), ubi.query("q2", "b", 100, client="c2")], close=False)
    value = scrape_registry(e).get_sample_value
    assert value("searchpulse_buffered_records") == 2  # the clock's warm-up holds them
    assert value("searchpulse_open_sessions") == 0
    stream = [ubi.query(f"q{i}", "a", i, client=f"c{i}") for i in range(2000)]
    value = scrape_registry(engine(stream, close=False)).get_sample_value
    # the clock, read at every 16th sample (times ≡ 0 mod 128 ms: every 16th second here), is
    # the 90th percentile of the 128 times up to 1984 s (1857 … 1984): 1971 s; the watermark
    # 1941 s: 0 … 1940 applied, those before 141 s evicted (attribution 1800 s), those after
    # 1640 s undecided, 1941 … 1999 buffered
    assert value("searchpulse_watermark_timestamp_seconds") == 1_767_600_000 + 1941
    assert value("searchpulse_open_sessions") == 1800
    assert value("searchpulse_pending_searches") == 300
    assert value("searchpulse_buffered_records") == 59


def test_label_cap_folds_into_other(ubi, engine):
    e = engine([ubi.query(f"q{i}", "a", i, client=f"c{i}", app=f"app{i}") for i in range(4)],
               **{"labels.application_cap": 2})
    value = scrape_registry(e).get_sample_value
    assert value("searchpulse_searches_total",
                 {"application": "other", "stratum": "head", "variant": "none"}) == 2
    assert value("searchpulse_label_values_folded_total", {"label": "application"}) == 2


@pytest.mark.integration
def test_http_endpoints_and_promtool_accepts_a_real_scrape(ubi, engine, tmp_path):
    e = engine([ubi.query("q1", "shoes", 0, latency_ms=120), ubi.click("q1", 3)])
    ready = {"value": (False, "waiting for partitions")}
    server = MetricsServer(scrape_registry(e), "127.0.0.1", 0, lambda: ready["value"]).start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        with urllib.request.urlopen(base + "/metrics") as response:
            body = response.read()
            assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        assert urllib.request.urlopen(base + "/healthz").read() == b"ok\n"
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(base + "/readyz")
        assert caught.value.code == 503
        ready["value"] = (True, "ready")
        assert urllib.request.urlopen(base + "/readyz").status == 200
    finally:
        server.stop()
    assert b'searchpulse_searches_total{application="web",stratum="head",variant="none"} 1.0' \
        in body
    promtool = shutil.which("promtool")
    assert promtool, "promtool is installed by `make setup` (Debian package prometheus)"
    checked = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                             check=False)
    assert checked.returncode == 0 and checked.stdout == b"" and checked.stderr == b"", \
        checked.stdout + checked.stderr
