"""Checkpoints of one pipeline: a consumer group's member, its counters and the offsets they
cover, in one record of a compacted topic.

The record's key is ``GROUP/INSTANCE``, and it names the topics it covers: a second consumer
group on the same cluster — even run from the same host, under the same instance id — never
restores another group's counters nor starts from its offsets. The topic is read once per
rebalance (``load``), not once per partition. Per partition, the recorded offsets never go
backwards — within one topic: the record names each topic's Kafka topic id too
(``topic_ids``), so the offsets of a topic that was deleted and created again under its name
(another id) are neither applied to the new one nor kept against it (``use``). A record
written before topic ids names none: its offsets are taken by the topic's name, as then.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaTimeoutError
from kafka.producer.future import FutureRecordMetadata

from collector.config import Config
from collector.sources.kafka.connection import client_options, close_client

log = logging.getLogger(__name__)
_READ_TIMEOUT_S = 30.0  # reading the whole topic takes well under a second while brokers answer
CHECKPOINT_DELIVERY_S = 10.0  # a checkpoint record is written, or reported failed, within this


def checkpoint_key(group: str, instance: str) -> str:
    return f"{group}/{instance}"


def read_checkpoints(config: Config) -> dict[str, dict[str, Any]]:
    """The latest checkpoint record of every pipeline member on the topic, by key."""
    topic = config["kafka.checkpoint_topic"]
    reader = KafkaConsumer(**client_options(config), enable_auto_commit=False, group_id=None)
    latest: dict[str, dict[str, Any]] = {}
    try:
        tps = [TopicPartition(topic, p) for p in reader.partitions_for_topic(topic) or ()]
        if tps:
            reader.assign(tps)
            reader.seek_to_beginning(*tps)
            ends = reader.end_offsets(tps)
            deadline = time.monotonic() + _READ_TIMEOUT_S
            while any(reader.position(tp) < ends[tp] for tp in tps):
                if time.monotonic() > deadline:  # the brokers went away: read it all again later
                    raise KafkaTimeoutError(f"{topic} not read to its end offsets in "
                                            f"{_READ_TIMEOUT_S:.0f} s")
                for records in reader.poll(timeout_ms=1000).values():
                    for record in records:
                        if record.key and record.value:
                            latest[record.key.decode()] = json.loads(record.value)
    finally:
        close_client(reader, 1.0)
    return latest


class Checkpoints:
    """This member's checkpoint (what it restores and writes) and its group's (where a newly
    assigned partition starts)."""

    def __init__(self, config: Config, producer: KafkaProducer, instance: str,
                 topics: list[str]) -> None:
        self.config = config
        self.producer = producer
        self.group = config["kafka.group_id"]
        self.key = checkpoint_key(self.group, instance)
        self.topics = sorted(topics)
        self.sequence = 0
        self.partitions: dict[str, list[int]] = {}  # "topic:partition" → [safe, high]
        self.topic_ids: dict[str, str] = {}  # topic → its Kafka topic id, where known
        self.group_records: list[dict[str, Any]] = []

    def load(self) -> dict[str, Any] | None:
        """Read the topic once: keep the group's records; return this member's, if any."""
        records = read_checkpoints(self.config)
        self.group_records = [record for key, record in records.items()
                              if record.get("group") == self.group
                              and set(record.get("topics", ())) & set(self.topics)]
        mine = records.get(self.key)
        if mine is None or mine.get("group") != self.group or mine.get("topics") != self.topics:
            return None
        self.sequence = mine["sequence"]
        self.partitions = dict(mine["partitions"])
        self.topic_ids = dict(mine.get("topic_ids", {}))
        return mine

    def covering(self, topic: str, partition: int,
                 topic_id: str | None = None) -> tuple[int, int] | None:
        """(safe, high) of the group's newest checkpoint that covered the partition of this
        topic (``topic_id``; None: any of the name): its counters include every record before
        `high`, so a replay must not count them."""
        key = f"{topic}:{partition}"
        covered = [record["partitions"][key] for record in self.group_records
                   if key in record.get("partitions", {})
                   and _same_topic(record, topic, topic_id)]
        if not covered:
            return None
        safe, high = max(covered, key=lambda entry: entry[1])
        return safe, high

    def recreated(self, topic: str, topic_id: str | None) -> str | None:
        """The other topic id a checkpoint of the group names for ``topic``, if any: the topic
        was deleted and created again since (its offsets are not this topic's)."""
        for record in self.group_records:
            named = record.get("topic_ids", {}).get(topic)
            if topic_id is not None and named is not None and named != topic_id:
                return named
        return None

    def use(self, topic: str, topic_id: str | None) -> None:
        """This member reads ``topic`` as the topic of that id from now on: the offsets its
        record kept of another topic of the name are dropped, not carried on (nor maxed
        against the new topic's)."""
        if topic_id is None:
            return
        if self.topic_ids.get(topic, topic_id) != topic_id:
            self.partitions = {key: offsets for key, offsets in self.partitions.items()
                               if key.rpartition(":")[0] != topic}
        self.topic_ids[topic] = topic_id

    def record(self, partitions: dict[str, list[int]], counts: dict[str, Any]) -> dict[str, Any]:
        """The next record: the counters and the offsets they cover, per partition never
        behind this member's last record (within one topic)."""
        merged = dict(self.partitions)
        for key, (safe, high) in partitions.items():
            before = merged.get(key, [safe, high])
            merged[key] = [max(safe, before[0]), max(high, before[1])]
        return {"group": self.group, "topics": self.topics, "sequence": self.sequence + 1,
                "partitions": merged, "topic_ids": dict(self.topic_ids), "counts": counts}

    def send(self, record: dict[str, Any]) -> FutureRecordMetadata:
        """Hand ``record`` to the checkpoint producer; its future holds the verdict (within
        ``CHECKPOINT_DELIVERY_S``: ``checkpoint_producer``)."""
        return self.producer.send(self.config["kafka.checkpoint_topic"], key=self.key.encode(),
                                  value=json.dumps(record).encode())

    def landed(self, record: dict[str, Any]) -> None:
        """``record`` is in the topic: it is this member's last. Offsets of a topic read
        under another id since it was sent (``use``) are not taken back."""
        self.sequence = record["sequence"]
        for key, (safe, high) in record["partitions"].items():
            topic = key.rpartition(":")[0]
            if record["topic_ids"].get(topic) != self.topic_ids.get(topic):
                continue
            before = self.partitions.get(key, [safe, high])
            self.partitions[key] = [max(safe, before[0]), max(high, before[1])]

    def write(self, partitions: dict[str, list[int]], counts: dict[str, Any],
              timeout_s: float) -> None:
        """One record, acknowledged within ``timeout_s`` (the shutdown's; raises KafkaError
        when not: the next start restores whichever record landed)."""
        record = self.record(partitions, counts)
        self.send(record).get(timeout=timeout_s)
        self.landed(record)


def checkpoint_producer(options: dict[str, Any], instance: str) -> KafkaProducer:
    """The producer of checkpoint records alone: its delivery timeout (how long it retries a
    record before it reports it failed) is ``CHECKPOINT_DELIVERY_S``, not kafka-python's
    120 s, so that a checkpoint learns within that bound whether its record landed, while
    dead letters keep the default producer's patience. A send waits at most 1 s for the
    topic's metadata (kafka-python's default: 60 s), since it is made from the loop."""
    return KafkaProducer(**options, acks="all", linger_ms=0, max_block_ms=1000,
                         request_timeout_ms=int(CHECKPOINT_DELIVERY_S * 1000) - 500,
                         delivery_timeout_ms=int(CHECKPOINT_DELIVERY_S * 1000),
                         client_id=f"searchpulse-{instance}-checkpoints")


def _same_topic(record: dict[str, Any], topic: str, topic_id: str | None) -> bool:
    """Whether a checkpoint record's offsets of ``topic`` are of the topic of that id: yes
    when either id is unknown (a record written before topic ids, a broker without them)."""
    named = record.get("topic_ids", {}).get(topic)
    return named is None or topic_id is None or named == topic_id
