"""The consumer loop and the rebalance listener of `searchpulse collect`.

One engine per assigned partition: producers key records by `client_id`, so a session's records
share a partition and sessions never span engines (nor does the stream clock: each partition has
its own). Delivery (docs/delivery.md):

* every `commit_interval_s` (and at shutdown) a **checkpoint**: for each partition the *safe*
  offset C (every earlier record is out of every window: its effects are final) and the
  *high-water* offset H (next record to process); the counters exposed (the sum of the engines,
  plus what was restored and what revoked partitions left) and the offsets go in one record of
  the checkpoint topic (``checkpoints``); the group commits C with H in its metadata. The
  record waits for the dead letters it covers and its own verdict without blocking the loop
  (``checkpoint_cycle``);
* /metrics serves the counters of the last checkpoint, never uncommitted ones;
* a partition (re)starts at C and **replays** up to H to rebuild its open sessions, then forgets
  what the replay counted (those effects are in the checkpointed counters): nothing twice;
* per-query aggregates (with ``store.url``) go to the store every ``store.flush_interval_s``, in
  one database transaction with each partition's [C, H]: on assignment the partition also
  replays from the store's C and drops the aggregates it rebuilt before the store's H. A store
  that holds nothing of a partition records where it starts counting it, at once; while the
  store cannot say (it is away), the partition waits, paused, and is set up once it answers;
* a topic is known by its Kafka topic id, not only its name: offsets of another topic of the
  name (one deleted and created again) are not applied to it — at assignment (the
  checkpoint's, the store's) nor under a running partition (the consumer's metadata brings
  the new id: the old topic's engine ends as at an end of input, the new topic is read from
  its start).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.errors import KafkaError

from collector.config import Config
from collector.engine import Engine
from collector.errors import StoreUnavailable
from collector.exposition.view import View, merge_views, view_from_dict
from collector.ingest import accounting as acc
from collector.series.examination import ExaminationFile
from collector.series.judged_relevance import JudgmentsFile
from collector.series.zero_result_queries import QueryRelease
from collector.sources.kafka.checkpoint_cycle import CheckpointCycle
from collector.sources.kafka.checkpoints import Checkpoints, checkpoint_producer
from collector.sources.kafka.connection import (
    client_options,
    close_client,
    ensure_topics,
    topic_id_of,
)
from collector.sources.kafka.dead_letters import DeadLetterDelivery, DeadLetterTopic
from collector.sources.kafka.partition import PartitionEngine
from collector.sources.kafka.start_offsets import StartOffsets
from collector.store.store_writer import StoreWriter

log = logging.getLogger(__name__)
_POLL_TIMEOUT_MS = 200
_POLL_RECORDS = 2000
# Each step of the shutdown (final checkpoint write, group commit, consumer close, producer
# close) waits at most this long: with a commit in progress at the signal, 4 s in all.
SHUTDOWN_STEP_S = 0.5


class KafkaCollector(ConsumerRebalanceListener):
    def __init__(self, config: Config, topics: list[str] | None = None,
                 bootstrap_timeout_s: float | None = None) -> None:
        self.config = config
        self.topics = topics or config["kafka.topics"]
        self.instance = config["kafka.instance_id"] or socket.gethostname()
        self.parts: dict[TopicPartition, PartitionEngine] = {}
        self.base = View(series=[], stats=acc.PipelineStats(), folded={})
        self.stop_event = threading.Event()
        self._changes: deque[tuple[str, set[TopicPartition]]] = deque()
        self.health = Counter()  # commits, commit_failures, rebalances
        self.release = QueryRelease.from_config(config)  # top queries of all partitions
        self.consumed: Counter[str] = Counter()
        self.connected = False
        self.waiting: set[TopicPartition] = set()  # assigned, paused until the store answers
        self.held = False  # every partition paused: the store's rows fill memory and disk
        self._recreations: set[tuple[str, str]] = set()  # (topic, new id) recognised
        # one judgment set for every partition's engine (loaded once, reloaded on change)
        self.judgments = (JudgmentsFile(config["judgments.file"], config["judgments.max_grade"])
                          if config["judgments.file"] else None)
        self.examination = ExaminationFile.from_config(config)
        self.writer: StoreWriter | None = None
        self.producer: KafkaProducer | None = None  # dead letters
        self.checkpoint_producer: KafkaProducer | None = None
        self.consumer: KafkaConsumer | None = None
        try:  # each step may wait for the brokers, and fail
            self.writer = StoreWriter.from_config(config)
            options = client_options(config)
            if bootstrap_timeout_s is not None:  # kafka-python's default: 30 s per client
                options["bootstrap_timeout_ms"] = max(1, int(bootstrap_timeout_s * 1000))
            self.producer = KafkaProducer(**options, acks="all", linger_ms=20,
                                          client_id=f"searchpulse-{self.instance}")
            self.dead_letters = DeadLetterDelivery(self.producer)
            self.checkpoint_producer = checkpoint_producer(options, self.instance)
            self.consumer = KafkaConsumer(
                **options, group_id=config["kafka.group_id"], enable_auto_commit=False,
                auto_offset_reset="earliest", client_id=f"searchpulse-{self.instance}",
                group_instance_id=self.instance,  # a restart reclaims its partitions at once
                session_timeout_ms=int(config["kafka.session_timeout_s"] * 1000),
                partition_assignment_strategy=[CooperativeStickyAssignor])
            ensure_topics(config)
            self.checkpoints = Checkpoints(config, self.checkpoint_producer, self.instance,
                                           self.topics)
            self._restore()
            self.starts = StartOffsets(config["kafka.group_id"], self.checkpoints, self.writer,
                                       self.consumer)
            self.cycle = CheckpointCycle(self.checkpoints, self.dead_letters, self.consumer,
                                         self.health, self.base)
        except BaseException:
            self.close(0.0)  # what a failed attempt opened, before the next one
            raise

    # -- the loop: poll → apply rebalances → feed → checkpoint when due --------------------
    def run(self) -> None:
        self.consumer.subscribe(self.topics, listener=self)
        interval = self.config["kafka.commit_interval_s"]
        next_checkpoint = time.monotonic() + interval
        while not self.stop_event.is_set():
            batches = self._poll()
            if batches is None:
                continue
            self._feed(batches, fresh=(self._apply_changes() | self._follow_recreated()
                                       | self._place_waiting()))
            now = time.monotonic()
            if now >= next_checkpoint:
                self._advance_idle(now)
                self.flush_aggregates()
                self._hold()
                self.cycle.begin(self.parts, self.base, self.release)
                next_checkpoint = now + interval
            else:
                self.cycle.advance(self.parts)
        self._shutdown()

    def _poll(self) -> dict[TopicPartition, list] | None:
        """One poll; None while the brokers cannot be reached (the loop goes on)."""
        try:
            batches = self.consumer.poll(timeout_ms=_POLL_TIMEOUT_MS, max_records=_POLL_RECORDS)
        except KafkaError as error:
            self._set_connected(False, error)
            time.sleep(1)
            return None
        self._set_connected(True)
        return batches

    def _feed(self, batches: dict[TopicPartition, list], fresh: set[TopicPartition]) -> None:
        """Give each partition's new records to its engine (records of a partition assigned
        in this poll were fetched before our seek: they come again)."""
        max_bytes = self.config["kafka.max_record_bytes"]
        arrival = self.config["kafka.record_timestamps"] == "arrival"
        for tp, records in batches.items():
            part = self.parts.get(tp)
            if part is None or tp in fresh:
                continue
            batch = [(r.offset, r.value,
                      r.timestamp / 1000.0 if arrival and r.timestamp > 0 else None)
                     for r in records if r.offset >= part.next_offset]
            if batch:
                part.feed(batch, max_bytes)
                self.consumed[tp.topic] += len(records)

    def _shutdown(self) -> None:
        """The last flush and checkpoint, then every client closed, each step bounded
        (SHUTDOWN_STEP_S) whatever the brokers do: a checkpoint not written now is not lost,
        the next start replays from the last one written."""
        self.flush_aggregates(force=True)
        if not self.cycle.final(self.parts, self.base, self.release, SHUTDOWN_STEP_S):
            # Counters and offsets travel together in a checkpoint: the next start resumes
            # from the last one the broker holds and recounts from its offsets, so stopping
            # without the broker is not a failure (exit 0, no traceback).
            log.warning("stopping without the broker: the next start resumes from the last "
                        "checkpoint it received")
        self.close(SHUTDOWN_STEP_S)

    def close(self, timeout_s: float) -> None:
        """Close the store and the clients (the consumer leaves the group), each within
        about ``timeout_s``."""
        if self.writer is not None:
            self.writer.close()
        close_client(self.consumer, timeout_s)
        close_client(self.producer, timeout_s)
        close_client(self.checkpoint_producer, timeout_s)

    # -- checkpoints -----------------------------------------------------------------------
    def _restore(self) -> None:
        """Restore this member's counters from its last checkpoint (same group, same topics)."""
        mine = self.checkpoints.load()
        if mine:
            self.base = view_from_dict(mine["counts"])
            log.info("restored checkpoint %d of %s", self.checkpoints.sequence,
                     self.checkpoints.key)

    def flush_aggregates(self, force: bool = False) -> None:
        """Per-query aggregates and the offsets they cover, in one store transaction, when due.
        A partition still replaying neither flushes nor moves its stored offsets."""
        if self.writer is None:
            return
        self.writer.settle(block=False)  # a write that landed meanwhile ends an outage now
        parts = {(tp.topic, tp.partition): p for tp, p in self.parts.items()
                 if not p.replaying and p.query_stats is not None}
        stats = {key: p.query_stats for key, p in parts.items()}
        if not parts or not (force or self.writer.due(stats.values())):
            return
        offsets = {key: (p.safe_offset(), p.next_offset) for key, p in parts.items()}
        self.writer.flush(stats, offsets, self.config["kafka.group_id"], wait=force,
                          topic_ids=_topic_ids(self.parts))

    def _hold(self) -> None:
        """While the store is away with its rows at the memory bound and the spill failing
        (``StoreWriter.full``), nothing more is read: every partition pauses until the store
        or the spill takes them (the loop still polls: the group keeps its members)."""
        full = self.writer is not None and self.writer.full
        if full == self.held:
            return
        self.held = full
        live = [tp for tp in self.parts if tp not in self.waiting]
        if full:
            log.error("store away and its rows cannot be spilled: reading paused")
            self.consumer.pause(*live)
        else:
            log.warning("the store or the spill takes rows again: reading resumed")
            self.consumer.resume(*live)

    @property
    def exposed(self) -> View:
        """The counters of the last checkpoint that landed: what /metrics serves."""
        return self.cycle.exposed

    # -- rebalance -------------------------------------------------------------------------
    # kafka-python runs these callbacks on its IO thread, where the consumer cannot be called:
    # they note the change; the loop applies it between polls. A revoked partition is not
    # checkpointed again: what it processed since its last checkpoint was never exposed, and
    # its next owner processes it again after the committed high-water offset. It leaves only
    # once the checkpoint record in flight has landed or failed (``CheckpointCycle``), since
    # its next owner starts where the topic's record says.
    def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        self.cycle.await_verdict()
        self._changes.append(("revoked", set(revoked)))

    def on_partitions_lost(self, lost: Iterable[TopicPartition]) -> None:
        self.cycle.await_verdict()
        self._changes.append(("revoked", set(lost)))

    def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        self._changes.append(("assigned", set(assigned)))

    def _apply_changes(self) -> set[TopicPartition]:
        """Apply noted rebalances; returns the partitions assigned now. The checkpoint topic is
        read once for all the partitions a rebalance assigns."""
        assigned: set[TopicPartition] = set()
        loaded = False
        while self._changes:
            change, tps = self._changes.popleft()
            if change == "revoked":
                self.health["rebalances"] += 1
                self.cycle.advance(self.parts)  # the verdict awaited by the listener
                self._retire(list(tps))
                assigned -= tps
                continue
            new = [tp for tp in tps if tp not in self.parts]
            try:
                if new and not loaded:
                    self.checkpoints.load()
                    loaded = True
                for tp in new:
                    if self._place(tp):
                        assigned.add(tp)
            except KafkaError as error:
                # The brokers went away mid-rebalance: the partitions not yet set up are set
                # up after a later poll succeeds. Their records fetched meanwhile are skipped
                # (_feed) and come again: _assign seeks each to where it starts.
                self._changes.appendleft((change, tps))
                self._set_connected(False, error)
                break
            self.health["rebalances"] += 1
        return assigned

    def _place(self, tp: TopicPartition) -> bool:
        """Set up an assigned partition; False while the store cannot say where its rows
        stand (StoreUnavailable): the partition waits, paused, for ``_place_waiting``."""
        try:
            if self.writer is not None and not self.writer.retry_due():  # its backoff
                raise StoreUnavailable(f"store {self.writer.url_shown}: away")
            self._assign(tp)
        except StoreUnavailable as error:
            if tp not in self.waiting:
                self.waiting.add(tp)
                self.consumer.pause(tp)
                log.warning("partition %s:%d waits for the store to say where its rows stand "
                            "(%s)", tp.topic, tp.partition, error)
            return False
        if tp in self.waiting:
            self.waiting.discard(tp)
            log.info("partition %s:%d: the store answered", tp.topic, tp.partition)
            if not self.held:
                self.consumer.resume(tp)
        elif self.held:
            self.consumer.pause(tp)
        return True

    def _place_waiting(self) -> set[TopicPartition]:
        """The partitions waiting for the store, set up once its backoff allows a try;
        returns those set up now."""
        if not self.waiting or self.writer is None or not self.writer.retry_due():
            return set()
        placed = set()
        try:
            for tp in sorted(self.waiting):
                if self._place(tp):
                    placed.add(tp)
                else:
                    break  # the store is still away: the others wait for the next try
        except KafkaError as error:
            self._set_connected(False, error)
        return placed

    def _retire(self, tps: list[TopicPartition]) -> None:
        """What revoked partitions had checkpointed stays in this instance's counters; their
        rows waiting for the store are dropped (their next owner counts them from the
        store's offsets)."""
        for tp in tps:
            self.waiting.discard(tp)
            if self.writer is not None:
                self.writer.forget((tp.topic, tp.partition))
        tps = [tp for tp in tps if tp in self.parts]
        if not tps:
            return
        self._keep([p.checkpointed for p in (self.parts.pop(tp) for tp in tps)])
        log.info("partitions revoked: %s", ", ".join(f"{t.topic}:{t.partition}" for t in tps))

    def _keep(self, done: list[View | None]) -> None:
        """Counts of partitions this instance no longer reads, kept in its counters."""
        self.base = merge_views([self.base, *(view for view in done if view)])
        self.base.top_candidates = {}  # their windows are the new owners' to rebuild
        for experiment in self.base.experiments:
            experiment.units = 0  # so are their clients (state, not counts)

    def _follow_recreated(self) -> set[TopicPartition]:
        """Partitions whose topic was deleted and created again under its name while they
        were assigned: the consumer's metadata names another topic id (kafka-python itself
        then seeks to where the old log diverges from the new one, past the new topic's
        first records). The old topic's records are gone: its engine ends as at an end of
        input, what it counted is kept (counters, store rows), and the partition starts again
        at the new topic's beginning. Returns those partitions (their records of this poll
        come again). One dict lookup per partition and poll."""
        gone = {}
        for tp, part in self.parts.items():
            current = topic_id_of(self.consumer, tp.topic)
            if current is None or current == part.topic_id:
                continue
            if part.topic_id is None:  # first known now
                part.topic_id = current
                continue
            gone[tp] = part.topic_id
            self._recognise(tp.topic, part.topic_id, current)
        if gone:
            self._end_gone(gone)
            for tp in gone:
                self._assign(tp, from_start=True)
        return set(gone)

    def _end_gone(self, gone: dict[TopicPartition, str]) -> None:
        """The engines of partitions whose topic is gone: closed (every open outcome decided),
        their rows flushed with the old topic's offsets, their counts kept. One still
        replaying keeps what its checkpoint holds (the replay counted nothing new)."""
        done: list[View | None] = []
        for tp, old_id in gone.items():
            part = self.parts.pop(tp)
            if part.replaying:
                done.append(part.checkpointed)
                continue
            part.engine.close()
            done.append(merge_views([part.engine.view(release=False)]))
            if self.writer is not None and part.query_stats is not None:
                key = (tp.topic, tp.partition)
                self.writer.flush({key: part.query_stats},
                                  {key: (part.next_offset, part.next_offset)},
                                  self.config["kafka.group_id"], topic_ids={tp.topic: old_id})
        self._keep(done)

    def _recognise(self, topic: str, old_id: str, new_id: str) -> None:
        """A recreated topic, logged and counted once (whichever partition shows it first)."""
        if (topic, new_id) in self._recreations:
            return
        self._recreations.add((topic, new_id))
        self.health["topic_recreations"] += 1
        log.warning("topic %s was deleted and created again (topic id %s, was %s): it is read "
                    "from its start; the old topic's offsets are not applied to it, and what "
                    "was counted of the old topic stays counted", topic, new_id, old_id)

    def _assign(self, tp: TopicPartition, from_start: bool = False) -> None:
        """Set up a partition where its counts end: the older of the checkpoint's and the
        store's safe offset, replaying to their high ones — each only when it is of this
        topic (its topic id); ``from_start``: the topic is new, read from its beginning.
        Raises StoreUnavailable while the store cannot say where the partition's rows
        stand."""
        topic_id = topic_id_of(self.consumer, tp.topic)
        start = high = stats_until = None
        if not from_start:
            start, high, stats_until, other = self.starts.of(tp, topic_id)
            if other is not None:
                self._recognise(tp.topic, other, topic_id)
        if start is None:
            start = self.consumer.beginning_offsets([tp])[tp]
            if from_start and self.writer is not None:  # the store counts the new topic
                self.starts.store_counts_from(tp, topic_id, start)  # from its start
        self.consumer.seek(tp, start)
        self.checkpoints.use(tp.topic, topic_id)
        engine = Engine(self.config, query_stats=self.writer.new_stats() if self.writer else None,
                        judgments=self.judgments, examination=self.examination)
        sink = DeadLetterTopic(self.dead_letters, self.config["kafka.dead_letter_topic"],
                               f"{tp.topic}:{tp.partition}")
        engine.dead_letters = sink
        self.parts[tp] = PartitionEngine(engine, sink, start, high, stats_until, topic_id)
        log.info("partition %s:%d assigned at offset %d%s", tp.topic, tp.partition, start,
                 f", replaying to {max(high or 0, stats_until or 0)}"
                 if max(high or 0, stats_until or 0) > start else "")

    # -- time and health -------------------------------------------------------------------
    def _advance_idle(self, now: float) -> None:
        """A partition silent for ``ordering.idle_s`` *and* confirmed at its end offset by the
        broker is idle: its engine releases what it holds and its stream time follows the wall
        clock from its newest record (``Engine.idle``), so a quiet night's last searches are
        counted and get their outcomes. A broker outage is not silence: without the
        confirmation nothing advances."""
        idle = self.config["ordering.idle_s"]
        quiet = [tp for tp, part in self.parts.items()
                 if now - part.last_record >= idle and not part.replaying]
        if not quiet:
            return
        try:
            ends = self.consumer.end_offsets(quiet, timeout_ms=2000)
        except KafkaError:
            return
        for tp in quiet:
            part = self.parts.get(tp)
            if part is not None and ends.get(tp) == part.next_offset:
                part.engine.idle(now - part.last_record)

    def _set_connected(self, connected: bool, error: Exception | None = None) -> None:
        if connected != self.connected:
            self.connected = connected
            if connected:
                log.info("connected to Kafka")
            else:
                log.warning("Kafka unavailable, retrying: %s", error)

    def ready(self) -> tuple[bool, str]:
        parts = dict(self.parts)  # one atomic copy: the loop thread may be rebalancing
        if self.waiting:
            return False, "waiting for the store: " + ", ".join(
                f"{t.topic}:{t.partition}" for t in sorted(self.waiting))
        if not parts:
            return False, "no partition assigned"
        replaying = [f"{t.topic}:{t.partition}" for t, p in parts.items() if p.replaying]
        if replaying:
            return False, "replaying " + ", ".join(replaying)
        lag = sum(self.lag(parts).values())
        if lag > 10_000:
            return False, f"catching up: lag {lag}"
        return True, "ready"

    def lag(self, parts: dict[TopicPartition, PartitionEngine] | None = None
            ) -> dict[TopicPartition, int]:
        lags = {}
        for tp, part in (dict(self.parts) if parts is None else parts).items():
            highwater = self.consumer.highwater(tp)
            if highwater is not None:
                lags[tp] = max(0, highwater - part.next_offset)
        return lags


def _topic_ids(parts: dict[TopicPartition, PartitionEngine]) -> dict[str, str]:
    return {tp.topic: part.topic_id for tp, part in parts.items() if part.topic_id}
