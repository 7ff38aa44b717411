"""The privacy rules on `collect`'s live endpoint, against a real broker: the records of
tests/test_privacy.py spread over two partitions (a query's clients on both), scraped as
Prometheus would. Personal data and queries without client ids never reach a label; the
benign query of many clients does; every withheld query is counted by its reason."""

from __future__ import annotations

import sys
import time
import uuid

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from collector.outcomes import normalize_query
from testbed.process import Service, free_port
from tests.conftest import T0, UBI
from tests.integration.test_kafka_collector import scrape
from tests.test_privacy import BENIGN, PERSONAL, UNCOUNTED, records

pytestmark = pytest.mark.integration


def test_collect_exposes_only_queries_of_k_client_ids(kafka, tmp_path):
    bootstrap = kafka[0]
    topic = f"ubi-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, 2, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    # minutes ago (the records span ~630 s, all before now): a search is counted at its
    # decision (docs/metrics.md), here 20 s after it, and the live top-K is the 900 s window
    # before the stream's time then — the first round's searches still in it
    for n, raw in enumerate(records(UBI(), start=time.time() - T0 - 700)):
        producer.send(topic, value=raw, partition=n % 2)  # a query's clients on both
    producer.flush()
    producer.close()
    port = free_port()
    collector = Service("collector-privacy", [
        sys.executable, "-m", "searchpulse", "collect", "--bootstrap-servers", bootstrap,
        "--topic", topic, "--group-id", f"g-{topic}", "--instance-id", topic,
        "--metrics-port", str(port), "--idle", "1",
        "--set", "windows.abandonment_s=20", "--set", "windows.reformulation_s=20",
        "--set", f"kafka.checkpoint_topic=cp-{topic}",
        "--set", f"kafka.dead_letter_topic=dlq-{topic}"],
        tmp_path, f"http://127.0.0.1:{port}/healthz")
    url = f"http://127.0.0.1:{port}/metrics"
    collector.start()
    try:
        # a search is counted when it is decided (docs/metrics.md, search intents): read once
        # none is pending
        deadline = time.monotonic() + 60
        text = scrape(url)
        while not (f'query="{BENIGN}"' in text and "\nsearchpulse_pending_searches 0.0" in text) \
                and time.monotonic() < deadline:
            time.sleep(0.3)
            text = scrape(url)
    finally:
        collector.stop()
    samples = [s for family in text_string_to_metric_families(text) for s in family.samples]
    shown = {s.labels["query"]: s.value for s in samples
             if s.name == "searchpulse_top_zero_result_queries"}
    withheld = {s.labels["reason"]: s.value for s in samples
                if s.name == "searchpulse_top_zero_result_queries_withheld"}
    assert shown == {BENIGN: 6.0}
    assert withheld == {**dict.fromkeys(PERSONAL, 1.0), "fewer_distinct_clients": 2.0,
                        "without_client_id": 2.0}
    for text_typed in (*PERSONAL.values(), *UNCOUNTED.values()):
        assert normalize_query(text_typed) not in text.lower()
