"""A checkpoint from its snapshot to its verdict, moved along between polls: the loop never waits
for a broker.

A checkpoint is a snapshot taken at once — each partition's offsets, a frozen copy of its
counts, the view they make with what this member keeps — then two waits that a broker outage
stretches to the producers' delivery timeouts:

1. the dead letters sent before the snapshot must be in their topic before a record passes
   their offsets (``dead_letters``): one that failed is sent again and the checkpoint is given
   up, the next one covers it;
2. the record's own verdict must be in before its offsets count as checkpointed: a record taken
   for lost must never land later (a partition revoked meanwhile would keep the counts of the
   checkpoint before it while the record told its next owner to start after it). The records
   have a producer of their own whose delivery timeout bounds that wait
   (``checkpoints.CHECKPOINT_DELIVERY_S``).

Only one checkpoint is in flight, so records land in order. The loop polls on meanwhile (the
group keeps its member, the store its flushes), and asks ``advance`` after every poll whether a
wait is over. A rebalance is the one place that waits (``await_verdict``, bounded): a revoked
partition leaves only once the record covering it has landed or failed, since its next owner
starts from whichever record the topic holds then.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError
from kafka.producer.future import FutureRecordMetadata
from kafka.structs import OffsetAndMetadata

from collector.exposition.view import View, merge_views, view_to_dict
from collector.series.zero_result_queries import QueryRelease
from collector.sources.kafka.checkpoints import CHECKPOINT_DELIVERY_S, Checkpoints
from collector.sources.kafka.dead_letters import DeadLetterDelivery, Sent
from collector.sources.kafka.partition import PartitionEngine

log = logging.getLogger(__name__)
# How long a record's verdict may take: the producer reports it within its delivery timeout;
# past this bound it broke its own (logged, the record may still land).
VERDICT_BOUND_S = CHECKPOINT_DELIVERY_S + 5.0
# A group commit (kafka-python's commit cannot be interrupted) while running waits at most
# this; the shutdown's, its step.
COMMIT_TIMEOUT_S = 2.0


@dataclass
class Pending:
    """One checkpoint in flight: its snapshot, the dead letters it waits for, its record."""

    record: dict[str, Any]
    offsets: dict[TopicPartition, OffsetAndMetadata]
    snapshots: dict[TopicPartition, tuple[PartitionEngine, View]]
    view: View
    dead_letters: list[Sent]
    sent_at: float = 0.0
    sent: FutureRecordMetadata | None = None
    abandoned: bool = False  # by a rebalance before its record was sent: it never is
    overdue_logged: bool = field(default=False, repr=False)


class CheckpointCycle:
    """This member's checkpoints: at most one in flight, started by ``begin``, moved along by
    ``advance``, ended by the shutdown's ``final``. ``exposed`` is the view of the last
    record that landed (what /metrics serves)."""

    def __init__(self, checkpoints: Checkpoints, dead_letters: DeadLetterDelivery,
                 consumer: KafkaConsumer, health: Counter, exposed: View) -> None:
        self.checkpoints = checkpoints
        self.dead_letters = dead_letters
        self.consumer = consumer
        self.health = health
        self.exposed = exposed
        self.pending: Pending | None = None
        self._lock = threading.Lock()  # the listener (kafka-python's IO thread) and the loop

    def begin(self, parts: dict[TopicPartition, PartitionEngine], base: View,
              release: QueryRelease | None) -> None:
        """Take the snapshot of a checkpoint unless one is in flight (it goes on), and move
        it as far as it goes without waiting."""
        if self.pending is None:
            self.pending = self._snapshot(parts, base, release)
        self.advance(parts)

    def advance(self, parts: dict[TopicPartition, PartitionEngine], wait_s: float = 0.0
                ) -> bool:
        """Move the checkpoint in flight along: its dead letters' verdicts, then its record's,
        each waited for at most ``wait_s`` (0 while running: never blocks). True when its
        record landed now (the checkpoint, even if the group commit after it failed)."""
        pending = self.pending
        if pending is None or (pending.sent is None and not self._send(pending)):
            return False
        if wait_s:
            self._wait(pending.sent, wait_s)
        if not pending.sent.is_done:
            self._note_overdue(pending)
            return False
        self.pending = None
        if pending.sent.failed():
            self._failed("checkpoint record not written, will retry: %s",
                         pending.sent.exception)
            return False
        self._landed(pending, parts, wait_s or COMMIT_TIMEOUT_S)
        return True

    def await_verdict(self) -> None:
        """A rebalance revokes partitions (the listener, on kafka-python's IO thread): a
        record sent waits for its verdict (bounded), one not yet sent never is. Nothing
        else changes here; the loop's ``advance`` applies the verdict before the
        partitions are retired."""
        with self._lock:
            pending = self.pending
            if pending is None:
                return
            if pending.sent is None:
                pending.abandoned = True
                return
            sent = pending.sent
        self._wait(sent, max(0.0, pending.sent_at + VERDICT_BOUND_S - time.monotonic()))

    def final(self, parts: dict[TopicPartition, PartitionEngine], base: View,
              release: QueryRelease | None, wait_s: float) -> bool:
        """The shutdown's checkpoint: the one in flight given ``wait_s`` to land, then a new
        snapshot whose dead letters and record each wait at most ``wait_s``. True when its
        record landed. A checkpoint not written now is not lost: the next start resumes from
        the last record the topic holds."""
        self.advance(parts, wait_s)
        if self.pending is not None:  # the record's verdict did not come: a new one covers it
            self._drop(self.pending)
        self.pending = self._snapshot(parts, base, release)
        try:
            self.dead_letters.producer.flush(timeout=wait_s)
        except KafkaError:
            pass  # the verdicts not in are read as not in: the checkpoint is given up
        landed = self.advance(parts, wait_s)
        if self.pending is not None:
            self._drop(self.pending)
        return landed

    # -- the steps ---------------------------------------------------------------------------
    def _snapshot(self, parts: dict[TopicPartition, PartitionEngine], base: View,
                  release: QueryRelease | None) -> Pending:
        offsets = {}
        partitions = {}
        snapshots = {}
        for tp, part in parts.items():
            if part.replaying:
                continue
            safe, high = part.safe_offset(), part.next_offset
            meta = json.dumps({"high": high, "by": self.checkpoints.key,
                               "seq": self.checkpoints.sequence + 1})
            offsets[tp] = OffsetAndMetadata(safe, meta, -1)
            partitions[f"{tp.topic}:{tp.partition}"] = [safe, high]
            snapshots[tp] = (part, merge_views([part.engine.view(release=False)]))  # frozen
        view = merge_views([base, *(snapshot for _, snapshot in snapshots.values())], release)
        return Pending(self.checkpoints.record(partitions, view_to_dict(view)), offsets,
                       snapshots, view, self.dead_letters.take())

    def _send(self, pending: Pending) -> bool:
        """The record sent once every dead letter it covers is in its topic; False while it
        waits for them, or when it was given up (a dead letter failed, a rebalance)."""
        with self._lock:
            if pending.abandoned:
                self._drop(pending)
                return False
            verdict = self.dead_letters.verdict(pending.dead_letters)
            if verdict is None:
                return False
            if not verdict:
                self.pending = None
                self._failed("checkpoint waits: dead letters were not written (sent again)")
                return False
            try:
                pending.sent = self.checkpoints.send(pending.record)
            except KafkaError as error:
                self.pending = None
                self._failed("checkpoint record not sent, will retry: %s", error)
                return False
            pending.sent_at = time.monotonic()
        return True

    def _landed(self, pending: Pending, parts: dict[TopicPartition, PartitionEngine],
                commit_s: float) -> None:
        """The record is in the topic: the next owner of a partition replays to its offsets,
        so what they cover is what this member keeps of a partition revoked from now on,
        whatever the group commit does (a broker that stops between the two must not lose
        the counts between the last two checkpoints)."""
        self.checkpoints.landed(pending.record)
        for tp, (part, snapshot) in pending.snapshots.items():
            if parts.get(tp) is part:
                part.checkpointed = snapshot
        self.exposed = pending.view
        offsets = {tp: offset for tp, offset in pending.offsets.items()
                   if parts.get(tp) is pending.snapshots[tp][0]}
        if offsets:  # bounded: during a broker outage the loop must go on polling
            try:
                self.consumer.commit(offsets, timeout_ms=int(commit_s * 1000))
            except KafkaError as error:
                self._failed("group commit failed (the checkpoint holds the offsets), will "
                             "retry: %s", error)
                return
        self.health["commits"] += 1

    def _drop(self, pending: Pending) -> None:
        """A checkpoint given up before its record was sent: the next one covers its dead
        letters not known to be written (a failed one is sent again when that one reads it)."""
        if self.pending is pending:
            self.pending = None
        if pending.sent is None:
            self.dead_letters.give_back(pending.dead_letters)

    def _failed(self, message: str, *args: object) -> None:
        self.health["commit_failures"] += 1
        log.warning(message, *args)

    def _note_overdue(self, pending: Pending) -> None:
        if (pending.sent is not None and not pending.overdue_logged
                and time.monotonic() - pending.sent_at > VERDICT_BOUND_S):
            pending.overdue_logged = True
            log.error("checkpoint %d: no verdict from the producer within %.0f s; it may "
                      "still land", pending.record["sequence"], VERDICT_BOUND_S)

    @staticmethod
    def _wait(sent: FutureRecordMetadata, wait_s: float) -> None:
        try:
            sent.get(timeout=wait_s)
        except KafkaError:
            pass  # the verdict (or its absence) is read from the future
