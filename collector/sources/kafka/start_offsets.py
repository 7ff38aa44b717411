"""Where a newly assigned partition starts, by the group's checkpoints and the store.

The counters start at the safe offset of the group's newest checkpoint covering the partition
(else the group's committed offset) and replay to its high one; the store's per-query
aggregates start at the store's own [C, H] for the partition, which may be ahead of or behind
the checkpoint's. Either is taken only when it is of this topic (its Kafka topic id): the
offsets of a topic deleted and created again under its name are recognised and left.
"""

from __future__ import annotations

from kafka import KafkaConsumer, TopicPartition

from collector.sources.kafka.checkpoints import Checkpoints
from collector.store.store_writer import StoreWriter


class StartOffsets:
    """The partition's start, read from what the checkpoints and the store hold."""

    def __init__(self, group: str, checkpoints: Checkpoints, writer: StoreWriter | None,
                 consumer: KafkaConsumer) -> None:
        self.group = group
        self.checkpoints = checkpoints
        self.writer = writer
        self.consumer = consumer

    def of(self, tp: TopicPartition, topic_id: str | None
           ) -> tuple[int | None, int | None, int | None, str | None]:
        """(start, counters' high, aggregates' high, the other topic id the checkpoint or the
        store named for the topic — it was created again — or None)."""
        other = self.checkpoints.recreated(tp.topic, topic_id)
        start, high = self._checkpointed(tp, topic_id)
        stats_until = high
        if self.writer is not None:
            key = (tp.topic, tp.partition)
            stored = self.writer.offsets(self.group).get(key)
            stored_id = self.writer.topic_ids(self.group).get(key) or None
            if stored is not None and topic_id is not None and stored_id not in (None, topic_id):
                other, stored = other or stored_id, None
            if stored is None:  # nothing of this topic in the store: it counts the partition
                if start is None:  # from where it starts now
                    start = self.consumer.beginning_offsets([tp])[tp]
                stored = self.store_counts_from(tp, topic_id, start)
            # the store may be ahead of or behind the checkpoint
            start = stored[0] if start is None else min(start, stored[0])
            stats_until = stored[1]
        return start, high, stats_until, other if topic_id is not None else None

    def store_counts_from(self, tp: TopicPartition, topic_id: str | None, start: int
                          ) -> tuple[int, int]:
        """A store that holds nothing of the partition (of this topic id) counts it from
        ``start``: recorded at once as [start, start], so that a restart before its first
        flush knows it (and does not take the checkpoint's high offset for the store's: issue
        34's 417 of ~20,400 searches); raises StoreUnavailable."""
        return self.writer.record_start(self.group, (tp.topic, tp.partition), start,
                                        {tp.topic: topic_id} if topic_id else None)

    def _checkpointed(self, tp: TopicPartition, topic_id: str | None
                      ) -> tuple[int | None, int | None]:
        """(safe, high) of the group's newest checkpoint covering the partition of this
        topic, else the group's committed offset (Kafka deletes a topic's committed offsets
        with it)."""
        covered = self.checkpoints.covering(tp.topic, tp.partition, topic_id)
        if covered:
            return covered
        committed = self.consumer.committed(tp)
        return (committed, None) if committed is not None else (None, None)
