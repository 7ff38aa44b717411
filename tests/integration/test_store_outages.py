"""Store outages under `searchpulse collect` and `replay --store`, with the real services: a
PostgreSQL stopped and started again (testbed/postgres.py), a real Kafka broker, SIGKILLs of
the collector during and after the outage. Each ends equal to a clean run: the counters on
/metrics and every row of the store (docs/delivery.md, "Store outages")."""

from __future__ import annotations

import time
import urllib.error

import pytest
from prometheus_client.parser import text_string_to_metric_families

from testbed.postgres import PostgresServer
from tests.integration.test_kafka_collector import (
    Run,
    scrape,
    truth_counts,
    wait_for_stored_truth,
    wait_for_truth,
)

pytestmark = pytest.mark.integration


def gauges(url: str, *names: str) -> dict[str, float]:
    try:
        text = scrape(url)
    except (urllib.error.URLError, ConnectionError):
        return {}
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples
            if s.name in names}


@pytest.fixture
def postgres():
    """A PostgreSQL of this test's own: the test stops and starts it."""
    server = PostgresServer().start()
    yield server
    server.stop()


def test_postgres_stopped_for_10_s_under_collect_is_reconnected(kafka, tmp_path, postgres):
    run = Run(kafka[0], tmp_path, sessions=12_000, seed=21)
    collector, url = run.collector("a", "--set", f"store.url={postgres.url}",
                                   "--set", "store.flush_interval_s=0.5")
    collector.start()
    try:
        deadline = time.monotonic() + 60
        while gauges(url, "searchpulse_store_flushes_total").get(
                "searchpulse_store_flushes_total", 0) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        postgres.halt()
        waiting = []
        outage = time.monotonic() + 10
        while time.monotonic() < outage:
            waiting.append(gauges(url, "searchpulse_store_rows_waiting").get(
                "searchpulse_store_rows_waiting", 0))
            time.sleep(0.5)
        postgres.resume()
        wait_for_truth(url, truth_counts(run.truth))
        wait_for_stored_truth(postgres.url, run.truth)
    finally:
        collector.stop()
    assert max(waiting) > 0, waiting


def test_no_flush_before_the_outage_then_a_restart_keeps_every_search(kafka, tmp_path,
                                                                      postgres):
    run = Run(kafka[0], tmp_path, sessions=12_000, seed=22)
    collector, url = run.collector("a", "--set", f"store.url={postgres.url}",
                                   "--set", "store.flush_interval_s=4")
    collector.start()
    try:
        deadline = time.monotonic() + 60
        while not gauges(url, "searchpulse_kafka_commits_total").get(
                "searchpulse_kafka_commits_total"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        postgres.halt()  # before the first flush
        time.sleep(8)
        postgres.resume()
        collector.stop()
        collector.start()
        wait_for_truth(url, truth_counts(run.truth))
        wait_for_stored_truth(postgres.url, run.truth)
    finally:
        collector.stop()
