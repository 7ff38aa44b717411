"""Consumer health on /metrics: lag, throughput, commits, rebalances, assignment, freshness.

A scrape reads a snapshot of the assignment (one C-level copy), so a rebalance on the consumer
thread never makes it fail."""

from __future__ import annotations

import time
from collections.abc import Iterable

from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from collector import definitions as d
from collector.sources.kafka.consumer import KafkaCollector


class KafkaHealthCollector(Collector):
    """Consumer health: lag, throughput, commits, rebalances, assignment, freshness."""

    def __init__(self, source: KafkaCollector) -> None:
        self.source = source

    def collect(self) -> Iterable[Metric]:
        source = self.source
        assigned = dict(source.parts)  # a snapshot: the loop thread may be rebalancing
        lag = d.KAFKA_LAG.metric()
        for tp, value in source.lag(assigned).items():
            lag.add_metric((tp.topic, str(tp.partition)), value)
        yield lag
        consumed = d.KAFKA_CONSUMED.metric()
        for topic, value in sorted(source.consumed.items()):
            consumed.add_metric((topic,), value)
        yield consumed
        for family, key in d.KAFKA_COUNTS:
            yield family.metric(source.health[key])
        parts = list(assigned.values())
        now = time.monotonic()
        for family, value in (
            (d.KAFKA_ASSIGNED, len(parts)),
            (d.KAFKA_REPLAYING, sum(p.replaying for p in parts)),
            (d.KAFKA_SINCE_LAST_RECORD, min((now - p.last_record for p in parts), default=0.0)),
            (d.KAFKA_CONNECTED, int(source.connected)),
        ):
            yield family.metric(value)
