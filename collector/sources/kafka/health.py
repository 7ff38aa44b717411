"""Consumer health on /metrics: lag, throughput, commits, rebalances, assignment, freshness.

A scrape reads a snapshot of the assignment (one C-level copy), so a rebalance on the consumer
thread never makes it fail."""

from __future__ import annotations

import time
from collections.abc import Iterable

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from collector.sources.kafka.consumer import KafkaCollector


class KafkaHealthCollector(Collector):
    """Consumer health: lag, throughput, commits, rebalances, assignment, freshness."""

    def __init__(self, source: KafkaCollector) -> None:
        self.source = source

    def collect(self) -> Iterable[Metric]:
        source = self.source
        assigned = dict(source.parts)  # a snapshot: the loop thread may be rebalancing
        lag = GaugeMetricFamily("searchpulse_kafka_consumer_lag_records",
                                "Records not yet consumed per partition (high-water − position).",
                                labels=("topic", "partition"))
        for tp, value in source.lag(assigned).items():
            lag.add_metric((tp.topic, str(tp.partition)), value)
        yield lag
        consumed = CounterMetricFamily("searchpulse_kafka_records_consumed",
                                       "Records consumed, per topic.", labels=("topic",))
        for topic, value in sorted(source.consumed.items()):
            consumed.add_metric((topic,), value)
        yield consumed
        for name, key, help_text in (
            ("searchpulse_kafka_commits", "commits", "Checkpoints committed."),
            ("searchpulse_kafka_commit_failures", "commit_failures", "Checkpoints that failed."),
            ("searchpulse_kafka_rebalances", "rebalances", "Partition assignment changes."),
        ):
            yield CounterMetricFamily(name, help_text, value=source.health[key])
        parts = list(assigned.values())
        now = time.monotonic()
        for name, value, help_text in (
            ("searchpulse_kafka_assigned_partitions", len(parts), "Partitions assigned."),
            ("searchpulse_kafka_replaying_partitions", sum(p.replaying for p in parts),
             "Partitions rebuilding their sessions after an assignment."),
            ("searchpulse_kafka_seconds_since_last_record",
             min((now - p.last_record for p in parts), default=0.0),
             "Wall seconds since the last record of any assigned partition."),
            ("searchpulse_kafka_connected", int(source.connected),
             "1 while the consumer reaches the brokers."),
        ):
            yield GaugeMetricFamily(name, help_text, value=value)
