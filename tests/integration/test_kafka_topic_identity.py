"""A topic deleted and created again under its name — `docker compose down && up` with no
Kafka volume, an operator's delete and create — is another topic: under a running collector,
while it is stopped, and with the broker itself restarted without its data (the store kept),
the counters on /metrics and the rows in the store equal a clean run of both topics' records
(the simulator's ground truth of each, added up), the recreation logged and counted once."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable

import pytest
from kafka.admin import KafkaAdminClient
from kafka.errors import TopicAlreadyExistsError
from prometheus_client.parser import text_string_to_metric_families

from collector.sources.simulator import SimulationSpec, Simulator
from testbed.kafka import KafkaBroker
from testbed.process import Service
from tests.integration.test_kafka_collector import (
    COUNTERS,
    STORED,
    Run,
    add,
    scrape,
    truth_counts,
    wait_for_stored_truth,
    wait_for_truth,
)

pytestmark = pytest.mark.integration
RECREATED = "was deleted and created again"


def both(first: dict, second: dict) -> dict:
    """The ground truth of two runs' records counted together."""
    apps = set(first["by_application"]) | set(second["by_application"])
    return {"by_application": {app: add(*({key: run["by_application"].get(app, {}).get(key, 0)
                                           for key in {*COUNTERS, *STORED}}
                                          for run in (first, second)))
                               for app in apps}}


def recreate(run: Run) -> None:
    """Delete the run's topic, wait until it is gone, create it again (or find it created
    again by a running consumer's metadata request: the testbed broker auto-creates)."""
    admin = KafkaAdminClient(bootstrap_servers=run.bootstrap)
    try:
        old = {t["topic_id"] for t in admin.describe_topics([run.topic])}
        admin.delete_topics([run.topic])
        deadline = time.monotonic() + 60
        while run.topic in admin.list_topics():  # deletion is asynchronous
            assert time.monotonic() < deadline, "the topic was never deleted"
            time.sleep(0.2)
        try:
            run.create_topic()
        except TopicAlreadyExistsError:
            pass
        while True:  # the new topic is in the metadata with its own id
            new = {t["topic_id"] for t in admin.describe_topics([run.topic])}
            if new and None not in new and not new & old:
                return
            assert time.monotonic() < deadline, "the topic was never created again"
            time.sleep(0.2)
    finally:
        admin.close()


def counted_once(run: Run, then: Callable[[str, str], None] | None = None
                 ) -> tuple[Service, str, str]:
    """A collector with a store (flushed twice a second), run until the counters and the
    store hold the run's truth, ``then(metrics URL, store)`` still under it, then stopped:
    (it, its /metrics, its store)."""
    store = f"sqlite:///{run.workdir / 'aggregates.db'}"
    collector, url = run.collector("a", "--set", f"store.url={store}",
                                   "--set", "store.flush_interval_s=0.5")
    collector.start()
    try:
        wait_for_truth(url, truth_counts(run.truth))
        wait_for_stored_truth(store, run.truth)
        if then is not None:
            then(url, store)
    finally:
        collector.stop()
    return collector, url, store


def recreations(url: str) -> float:
    return next(s.value for f in text_string_to_metric_families(scrape(url)) for s in f.samples
                if s.name == "searchpulse_kafka_topic_recreations_total")


def test_a_topic_recreated_under_a_running_collector_is_read_from_its_start(kafka, tmp_path):
    """kafka-python alone, seeing the same partitions under a new id, seeks to where the old
    log diverges from the new one: the new topic's first records would be skipped."""
    run = Run(kafka[0], tmp_path, sessions=3000, seed=31)

    def recreated_meanwhile(url: str, store: str) -> None:
        recreate(run)
        second = run.produce(Simulator(SimulationSpec(seed=32, sessions=3000)))
        expected = both(run.truth, second)
        wait_for_truth(url, truth_counts(expected), timeout=150)
        wait_for_stored_truth(store, expected)
        time.sleep(2)  # several checkpoints and flushes later: still once
        wait_for_truth(url, truth_counts(expected), timeout=5)
        assert recreations(url) == 1

    collector, _, _ = counted_once(run, recreated_meanwhile)
    assert collector.log(10**7).count(RECREATED) == 1


def test_a_topic_recreated_while_the_collector_is_stopped(kafka, tmp_path):
    """The checkpoint and the store hold the old topic's offsets: not this topic's."""
    run = Run(kafka[0], tmp_path, sessions=3000, seed=35)
    collector, url, store = counted_once(run)
    recreate(run)
    second = run.produce(Simulator(SimulationSpec(seed=36, sessions=3000)))
    expected = both(run.truth, second)
    collector.start()  # its counters restored from its checkpoint: the first topic's
    try:
        wait_for_truth(url, truth_counts(expected), timeout=150)
        wait_for_stored_truth(store, expected)
        assert recreations(url) == 1
    finally:
        collector.stop()
    assert collector.log(10**7).count(RECREATED) == 1


def test_a_broker_restarted_without_its_data_leaves_the_store_exact(tmp_path):
    """`docker compose down && up` without a Kafka volume: a new cluster (no topic, no group,
    no checkpoint) on the same address, the store (PostgreSQL's volume) kept. The counters
    start again (a restart: no checkpoint to restore); the store goes on from its rows."""
    broker = KafkaBroker(tmp_path / "broker").start()  # its own broker: this test wipes it
    try:
        run = Run(broker.bootstrap, tmp_path, sessions=3000, seed=33)
        collector, url, store = counted_once(run)
        broker.stop()
        shutil.rmtree(tmp_path / "broker" / "data")
        broker.start()  # formats a new cluster on the same ports
        run.create_topic()
        second = run.produce(Simulator(SimulationSpec(seed=34, sessions=3000)))
        collector.start()
        try:
            wait_for_truth(url, truth_counts(second), timeout=150)
            wait_for_stored_truth(store, both(run.truth, second))
            assert recreations(url) == 1
        finally:
            collector.stop()
    finally:
        broker.stop()
