"""`searchpulse collect`: the engine fed by a Kafka consumer group, with checkpoints.

One engine per assigned partition: producers key records by `client_id`, so a session's records
share a partition and sessions never span engines (nor does the watermark: each partition has
its own). Delivery (docs/delivery.md):

* every `commit_interval_s` (and on revoke and shutdown) a **checkpoint**: for each partition the
  *safe* offset C (every earlier record is out of every window: its effects are final) and the
  *high-water* offset H (next record to process); the group commits C with H in its metadata,
  and the instance's exposed counters (the sum of its engines, plus what it restored and what
  revoked partitions left) are written to a compacted topic keyed by the instance id;
* /metrics serves the counters of the last checkpoint, never uncommitted ones;
* a partition (re)starts at C and **replays** up to H to rebuild its open sessions, then forgets
  what the replay counted (those effects are in the checkpointed counters): nothing twice;
* a restarted instance restores its counters from its last checkpoint, so every counter series
  continues where Prometheus last saw it;
* per-query aggregates (with ``store.url``) go to the store every ``store.flush_interval_s``, in
  one database transaction with each partition's [C, H]: on assignment the partition also
  replays from the store's C and drops the aggregates it rebuilt before the store's H.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.errors import KafkaError, TopicAlreadyExistsError
from kafka.structs import OffsetAndMetadata
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from collector import accounting as acc
from collector.config import Config
from collector.engine import Engine
from collector.events import OVERSIZED
from collector.query_stats import QueryStats
from collector.store_writer import StoreWriter
from collector.view import View, merge_views, view_from_dict, view_to_dict

log = logging.getLogger(__name__)
_BUCKET_RECORDS = 5000  # offsets per safe-offset bucket: bounded memory, coarse safe offsets


def client_options(config: Config) -> dict[str, Any]:
    """Connection and security settings shared by consumers and producers (secrets included,
    so this dict is never logged)."""
    options: dict[str, Any] = {"bootstrap_servers": config["kafka.bootstrap_servers"].split(","),
                               "security_protocol": config["kafka.security_protocol"]}
    for key, option in (("kafka.sasl_mechanism", "sasl_mechanism"),
                        ("kafka.sasl_username", "sasl_plain_username"),
                        ("kafka.sasl_password", "sasl_plain_password"),
                        ("kafka.ssl_cafile", "ssl_cafile"), ("kafka.ssl_certfile", "ssl_certfile"),
                        ("kafka.ssl_keyfile", "ssl_keyfile")):
        if config[key]:
            options[option] = config[key]
    return options


def read_checkpoints(config: Config) -> dict[str, dict[str, Any]]:
    """The latest checkpoint of every instance (a compacted topic: one record each)."""
    topic = config["kafka.checkpoint_topic"]
    reader = KafkaConsumer(**client_options(config), enable_auto_commit=False, group_id=None)
    latest: dict[str, dict[str, Any]] = {}
    try:
        tps = [TopicPartition(topic, p) for p in reader.partitions_for_topic(topic) or ()]
        if tps:
            reader.assign(tps)
            reader.seek_to_beginning(*tps)
            ends = reader.end_offsets(tps)
            while any(reader.position(tp) < ends[tp] for tp in tps):
                for records in reader.poll(timeout_ms=1000).values():
                    for record in records:
                        if record.key and record.value:
                            latest[record.key.decode()] = json.loads(record.value)
    finally:
        reader.close()
    return latest


class DeadLetterTopic:
    """Dead letters of one partition's engine: original bytes, reason and source in headers.
    Muted while a partition replays records whose dead letters were already written."""

    def __init__(self, producer: KafkaProducer, topic: str, source: str) -> None:
        self.producer = producer
        self.topic = topic
        self.source = source.encode()
        self.muted = False

    def write(self, raw: bytes, reason: str, detail: str) -> None:
        if self.muted:
            return
        self.producer.send(self.topic, value=bytes(raw), headers=[
            ("searchpulse.reason", reason.encode()), ("searchpulse.detail", detail.encode()),
            ("searchpulse.source", self.source)])

    def close(self) -> None:
        return None


class PartitionEngine:
    """An engine for one partition, its offsets and its replay state: counters rebuilt before
    ``replay_until`` and per-query aggregates rebuilt before ``stats_until`` are already kept
    (in the checkpoint, in the store) and are dropped when the replay reaches them."""

    def __init__(self, engine: Engine, dead_letters: DeadLetterTopic, start: int,
                 replay_until: int | None, stats_until: int | None = None) -> None:
        self.engine = engine
        self.dead_letters = dead_letters
        self.next_offset = start
        self.replay_until = replay_until if replay_until and replay_until > start else None
        self.stats_until = stats_until if stats_until and stats_until > start else None
        dead_letters.muted = self.replay_until is not None
        self.buckets: deque[list[float]] = deque()  # [first offset, newest event time after]
        self.last_record = time.monotonic()
        self.checkpointed: View | None = None  # what this partition added at the last checkpoint

    @property
    def replaying(self) -> bool:
        return self.replay_until is not None or self.stats_until is not None

    @property
    def query_stats(self) -> QueryStats | None:
        return self.engine.sessions.query_stats

    def feed(self, offsets_and_values: list[tuple[int, bytes]], max_bytes: int) -> None:
        until = min((h for h in (self.replay_until, self.stats_until) if h is not None),
                    default=None)
        if until is not None and offsets_and_values[-1][0] >= until > offsets_and_values[0][0]:
            # A replay ends inside this batch: what follows its end must be counted.
            split = next(i for i, (offset, _) in enumerate(offsets_and_values) if offset >= until)
            self.feed(offsets_and_values[:split], max_bytes)
            self.feed(offsets_and_values[split:], max_bytes)
            return
        values = []
        for offset, value in offsets_and_values:
            if value is None or len(value) > max_bytes:
                self._oversized(value)
            else:
                values.append(value)
            self.next_offset = offset + 1
        self.engine.process_all(values)
        self.last_record = time.monotonic()
        first = offsets_and_values[0][0]
        if self.buckets and first - self.buckets[-1][0] < _BUCKET_RECORDS:
            self.buckets[-1][1] = self.engine.newest
        else:
            self.buckets.append([first, self.engine.newest])
        if self.replay_until is not None and self.next_offset >= self.replay_until:
            self.engine.reset_counts()  # those effects are in the checkpointed counters
            self.replay_until = None
            self.dead_letters.muted = False
        if self.stats_until is not None and self.next_offset >= self.stats_until:
            if self.query_stats is not None:
                self.query_stats.drain()  # those aggregates are in the store
            self.stats_until = None

    def _oversized(self, value: bytes | None) -> None:
        stats = self.engine.stats
        stats.records[acc.UNKNOWN][acc.INVALID] += 1
        stats.invalid[OVERSIZED] += 1
        stats.dead_lettered[OVERSIZED] += 1
        self.dead_letters.write(value or b"", OVERSIZED, f"{len(value or b'')} bytes")

    def safe_offset(self) -> int:
        """Every record before it is older than every window still open: its effects are
        final. Buckets whose newest event time is behind that horizon are dropped."""
        horizon = self.engine.final_before()
        while len(self.buckets) > 1 and self.buckets[1][1] < horizon:
            self.buckets.popleft()
        if len(self.buckets) == 1 and self.buckets[0][1] < horizon:
            return self.next_offset
        return int(self.buckets[0][0]) if self.buckets else self.next_offset


class KafkaCollector(ConsumerRebalanceListener):
    def __init__(self, config: Config, topics: list[str] | None = None) -> None:
        self.config = config
        self.topics = topics or config["kafka.topics"]
        self.instance = config["kafka.instance_id"] or socket.gethostname()
        self.parts: dict[TopicPartition, PartitionEngine] = {}
        self.base = View(series=[], stats=acc.PipelineStats(), folded={})
        self.exposed = self.base
        self.checkpoint_partitions: dict[str, list[int]] = {}
        self.stop_event = threading.Event()
        self._changes: deque[tuple[str, set[TopicPartition]]] = deque()
        self.health = Counter()  # commits, commit_failures, rebalances, records per topic
        self.consumed: Counter[str] = Counter()
        self.connected = False
        self.sequence = 0
        self.writer = StoreWriter.from_config(config)
        options = client_options(config)
        self.producer = KafkaProducer(**options, acks="all", linger_ms=20,
                                      client_id=f"searchpulse-{self.instance}")
        self.consumer = KafkaConsumer(
            **options, group_id=config["kafka.group_id"], enable_auto_commit=False,
            auto_offset_reset="earliest", client_id=f"searchpulse-{self.instance}",
            group_instance_id=self.instance,  # a restart reclaims its partitions at once
            session_timeout_ms=int(config["kafka.session_timeout_s"] * 1000),
            partition_assignment_strategy=[CooperativeStickyAssignor])
        self._ensure_topics()
        self._restore()

    # -- checkpoints -----------------------------------------------------------------------
    def _restore(self) -> None:
        """Restore this instance's counters from its last checkpoint."""
        latest = self._checkpoints().get(self.instance)
        if latest:
            self.base = self.exposed = view_from_dict(latest["counts"])
            self.checkpoint_partitions = latest["partitions"]
            self.sequence = latest["sequence"]
            log.info("restored checkpoint %d of instance %s", self.sequence, self.instance)

    def _checkpoints(self) -> dict[str, dict[str, Any]]:
        return read_checkpoints(self.config)

    def _ensure_topics(self) -> None:
        """The checkpoint topic must be compacted (one record per instance, kept forever)."""
        admin = KafkaAdminClient(**client_options(self.config))
        try:
            admin.create_topics([
                NewTopic(self.config["kafka.checkpoint_topic"], 1, -1,
                         topic_configs={"cleanup.policy": "compact"}),
                NewTopic(self.config["kafka.dead_letter_topic"], 1, -1),
            ])
        except TopicAlreadyExistsError:
            pass
        finally:
            admin.close()

    def flush_aggregates(self, force: bool = False) -> None:
        """Per-query aggregates and the offsets they cover, in one store transaction, when due.
        A partition still replaying neither flushes nor moves its stored offsets."""
        if self.writer is None:
            return
        parts = {tp: p for tp, p in self.parts.items()
                 if not p.replaying and p.query_stats is not None}
        stats = [p.query_stats for p in parts.values()]
        if not parts or not (force or self.writer.due(stats)):
            return
        offsets = {(tp.topic, tp.partition): (p.safe_offset(), p.next_offset)
                   for tp, p in parts.items()}
        self.writer.flush(stats, offsets, self.config["kafka.group_id"], wait=force)

    def checkpoint(self) -> bool:
        """Commit safe offsets (high-water in the metadata), then persist and expose counts."""
        offsets = {}
        partitions = {}
        snapshots = {}
        for tp, part in self.parts.items():
            if part.replaying:
                continue
            safe, high = part.safe_offset(), part.next_offset
            meta = json.dumps({"high": high, "by": self.instance, "seq": self.sequence + 1})
            offsets[tp] = OffsetAndMetadata(safe, meta, -1)
            partitions[f"{tp.topic}:{tp.partition}"] = [safe, high]
            snapshots[tp] = merge_views([part.engine.view()])  # a copy, frozen now
        view = merge_views([self.base, *snapshots.values()])
        try:
            # One record holds the counters and the offsets they cover: it is the atomic
            # checkpoint. The group commit after it serves lag monitoring and a fallback.
            record = {"sequence": self.sequence + 1,
                      "partitions": {**self.checkpoint_partitions, **partitions},
                      "counts": view_to_dict(view)}
            self.producer.send(self.config["kafka.checkpoint_topic"], key=self.instance.encode(),
                               value=json.dumps(record).encode()).get(timeout=10)
            self.sequence += 1
            self.checkpoint_partitions = record["partitions"]
            if offsets:  # bounded: during a broker outage the loop must go on polling
                self.consumer.commit(offsets, timeout_ms=5000)
        except KafkaError as error:
            self.health["commit_failures"] += 1
            log.warning("checkpoint failed, will retry: %s", error)
            return False
        self.health["commits"] += 1
        for tp, snapshot in snapshots.items():
            self.parts[tp].checkpointed = snapshot
        self.exposed = view
        return True

    # -- rebalance -------------------------------------------------------------------------
    # kafka-python runs these callbacks on its IO thread, where blocking calls are not allowed:
    # they only note the change; the loop applies it between polls. A revoked partition is not
    # checkpointed again: what it processed since its last checkpoint was never exposed, and
    # its next owner processes it again after the committed high-water offset.
    def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        self._changes.append(("revoked", set(revoked)))

    def on_partitions_lost(self, lost: Iterable[TopicPartition]) -> None:
        self._changes.append(("revoked", set(lost)))

    def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        self._changes.append(("assigned", set(assigned)))

    def _apply_changes(self) -> set[TopicPartition]:
        """Apply noted rebalances; returns the partitions assigned now (their records in the
        current poll were fetched before our seek, from the group's position)."""
        assigned: set[TopicPartition] = set()
        while self._changes:
            change, tps = self._changes.popleft()
            self.health["rebalances"] += 1
            if change == "revoked":
                self._retire([tp for tp in tps if tp in self.parts])
                assigned -= tps
            else:
                for tp in tps:
                    if tp not in self.parts:
                        self._assign(tp)
                        assigned.add(tp)
        return assigned

    def _retire(self, tps: list[TopicPartition]) -> None:
        """What revoked partitions had checkpointed stays in this instance's counters."""
        if not tps:
            return
        done = [p.checkpointed for p in (self.parts.pop(tp) for tp in tps) if p.checkpointed]
        self.base = merge_views([self.base, *done])
        log.info("partitions revoked: %s", ", ".join(f"{t.topic}:{t.partition}" for t in tps))

    def _assign(self, tp: TopicPartition) -> None:
        start, high = self._start_offsets(tp)
        stats_until = high
        if self.writer is not None:
            stored = self.writer.offsets(self.config["kafka.group_id"]).get(
                (tp.topic, tp.partition))
            if stored is not None:  # the store may be ahead of or behind the checkpoint
                start = stored[0] if start is None else min(start, stored[0])
                stats_until = stored[1]
        if start is None:
            start = self.consumer.beginning_offsets([tp])[tp]
        self.consumer.seek(tp, start)
        engine = Engine(self.config, query_stats=self.writer.new_stats() if self.writer else None)
        sink = DeadLetterTopic(self.producer, self.config["kafka.dead_letter_topic"],
                               f"{tp.topic}:{tp.partition}")
        engine.dead_letters = sink
        self.parts[tp] = PartitionEngine(engine, sink, start, high, stats_until)
        log.info("partition %s:%d assigned at offset %d%s", tp.topic, tp.partition, start,
                 f", replaying to {max(high or 0, stats_until or 0)}"
                 if max(high or 0, stats_until or 0) > start else "")

    def _start_offsets(self, tp: TopicPartition) -> tuple[int | None, int | None]:
        """(safe, high) of the newest checkpoint of any instance that covered the partition:
        its counters include everything before `high`, so the replay must not count it."""
        key = f"{tp.topic}:{tp.partition}"
        covered = [c["partitions"][key] for c in self._checkpoints().values()
                   if key in c.get("partitions", {})]
        if covered:
            safe, high = max(covered, key=lambda entry: entry[1])
            return safe, high
        committed = self.consumer.committed(tp)
        return (committed, None) if committed is not None else (None, None)

    # -- the loop --------------------------------------------------------------------------
    def run(self) -> None:
        self.consumer.subscribe(self.topics, listener=self)
        interval = self.config["kafka.commit_interval_s"]
        idle = self.config["kafka.idle_timeout_s"]
        max_bytes = self.config["kafka.max_record_bytes"]
        next_checkpoint = time.monotonic() + interval
        while not self.stop_event.is_set():
            try:
                batches = self.consumer.poll(timeout_ms=200, max_records=2000)
                self._set_connected(True)
            except KafkaError as error:
                self._set_connected(False, error)
                time.sleep(1)
                continue
            fresh = self._apply_changes()
            for tp, records in batches.items():
                part = self.parts.get(tp)
                if part is None or tp in fresh:
                    continue  # revoked, or fetched before the seek: fetched again
                batch = [(r.offset, r.value) for r in records if r.offset >= part.next_offset]
                if not batch:
                    continue
                part.feed(batch, max_bytes)
                self.consumed[tp.topic] += len(records)
            now = time.monotonic()
            if now >= next_checkpoint:
                self._advance_idle(now, idle)
                self.flush_aggregates()
                self.checkpoint()
                next_checkpoint = now + interval
        self.flush_aggregates(force=True)
        self.checkpoint()
        if self.writer is not None:
            self.writer.close()
        self.consumer.close()  # leaves the group; its partitions were checkpointed just before
        self.producer.close(timeout=10)

    def _advance_idle(self, now: float, idle: float) -> None:
        """A partition silent for `idle` seconds *and* confirmed at its end offset by the broker
        follows the clock, so a quiet night's last searches get their outcome. A broker outage
        is not silence: without the confirmation nothing advances."""
        quiet = [tp for tp, part in self.parts.items()
                 if now - part.last_record > idle and not part.replaying]
        if not quiet:
            return
        try:
            ends = self.consumer.end_offsets(quiet, timeout_ms=2000)
        except KafkaError:
            return
        for tp in quiet:
            part = self.parts.get(tp)
            if part is not None and ends.get(tp) == part.next_offset:
                part.engine.advance(time.time())  # live: a silent partition follows the clock

    def _set_connected(self, connected: bool, error: Exception | None = None) -> None:
        if connected != self.connected:
            self.connected = connected
            if connected:
                log.info("connected to Kafka")
            else:
                log.warning("Kafka unavailable, retrying: %s", error)

    def ready(self) -> tuple[bool, str]:
        if not self.parts:
            return False, "no partition assigned"
        replaying = [f"{t.topic}:{t.partition}" for t, p in self.parts.items() if p.replaying]
        if replaying:
            return False, "replaying " + ", ".join(replaying)
        lag = sum(self.lag().values())
        if lag > 10_000:
            return False, f"catching up: lag {lag}"
        return True, "ready"

    def lag(self) -> dict[TopicPartition, int]:
        lags = {}
        for tp, part in list(self.parts.items()):
            highwater = self.consumer.highwater(tp)
            if highwater is not None:
                lags[tp] = max(0, highwater - part.next_offset)
        return lags


class KafkaHealthCollector(Collector):
    """Consumer health: lag, throughput, commits, rebalances, assignment, freshness."""

    def __init__(self, source: KafkaCollector) -> None:
        self.source = source

    def collect(self) -> Iterable[Metric]:
        source = self.source
        lag = GaugeMetricFamily("searchpulse_kafka_consumer_lag_records",
                                "Records not yet consumed per partition (high-water − position).",
                                labels=("topic", "partition"))
        for tp, value in source.lag().items():
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
        parts = list(source.parts.values())
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
