"""The Kafka source's pure bookkeeping without a broker: safe offsets, replay boundaries,
dead-letter muting and checkpoint records (a stand-in engine and producer record the calls;
the integration tests run the same code against a real broker)."""

from __future__ import annotations

import json
from math import inf

import pytest
from kafka.errors import KafkaTimeoutError

from collector.config import load_config
from collector.ingest.events import OVERSIZED
from collector.sources.kafka import checkpoints as checkpoints_module
from collector.sources.kafka.checkpoints import Checkpoints, checkpoint_key
from collector.sources.kafka.dead_letters import DeadLetterDelivery, DeadLetterTopic
from collector.sources.kafka.partition import _REPLAY_MARGIN, PartitionEngine


class RecordingEngine:
    """What PartitionEngine asks of an engine, with the answers a test sets."""

    def __init__(self) -> None:
        self.horizon = -inf  # final_before()
        self.newest = 0.0  # buffered_until()
        self.fed: list[tuple[list[bytes], list[float] | None]] = []
        self.resets = 0
        self.rejected: list[tuple[str, str]] = []
        self.query_stats = None

    def process_all(self, values, arrivals) -> None:
        self.fed.append((list(values), arrivals))

    def buffered_until(self) -> float:
        return self.newest

    def final_before(self) -> float:
        return self.horizon

    def reset_counts(self) -> None:
        self.resets += 1

    def reject(self, raw: bytes, reason: str, detail: str) -> None:
        self.rejected.append((reason, detail))


class Sent:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error

    def get(self, timeout: float) -> None:
        if self.error is not None:
            raise self.error


class RecordingProducer:
    def __init__(self, error: Exception | None = None) -> None:
        self.sent: list[dict] = []
        self.error = error

    def send(self, topic, key=None, value=None, headers=None) -> Sent:
        self.sent.append({"topic": topic, "key": key, "value": value, "headers": headers})
        return Sent(self.error)


def _partition(start: int = 100, replay_until: int | None = None,
               stats_until: int | None = None) -> tuple[PartitionEngine, RecordingEngine,
                                                        RecordingProducer]:
    engine, producer = RecordingEngine(), RecordingProducer()
    sink = DeadLetterTopic(DeadLetterDelivery(producer), "ubi-dead-letter", "ubi:0")
    return PartitionEngine(engine, sink, start, replay_until, stats_until), engine, producer


def _records(first: int, count: int, arrival: float | None = 1.0):
    return [(offset, b"{}", arrival) for offset in range(first, first + count)]


def test_the_replay_margin_covers_the_stream_clock_window_twice():
    assert _REPLAY_MARGIN == 2048  # 2 × 128 samples × one record in 8 sampled


def test_a_partition_with_nothing_fed_is_safe_at_its_start():
    part, _, _ = _partition(start=100)
    assert part.safe_offset() == 100
    assert not part.replaying


def test_the_safe_offset_is_the_first_bucket_still_open_and_at_least_the_margin_back():
    part, engine, _ = _partition(start=100)
    engine.newest = 60.0
    part.feed(_records(100, 5), 1000)
    engine.newest = 65.0
    part.feed(_records(105, 5), 1000)  # within 5000 offsets: the same bucket, newer time
    assert list(part.buckets) == [[100, 65.0]]
    engine.newest = 70.0
    part.feed(_records(5200, 1), 1000)  # 5100 offsets on: a bucket of its own
    engine.newest = 80.0
    part.feed(_records(10300, 1), 1000)
    assert list(part.buckets) == [[100, 65.0], [5200, 70.0], [10300, 80.0]]
    assert part.next_offset == 10301
    engine.horizon = 0.0  # every window still open: back to the first record
    assert part.safe_offset() == 100
    engine.horizon = 75.0  # the first bucket is final (the next one's records are older)
    assert part.safe_offset() == 5200
    assert list(part.buckets) == [[5200, 70.0], [10300, 80.0]]
    engine.horizon = 90.0  # everything final: the replay margin back from the next offset
    assert part.safe_offset() == 10301 - _REPLAY_MARGIN
    assert list(part.buckets) == [[10300, 80.0]]


def test_the_replay_margin_never_reaches_before_the_partitions_start():
    part, engine, _ = _partition(start=100)
    part.feed(_records(100, 50), 1000)
    engine.horizon = inf
    assert part.safe_offset() == 100  # 150 − 2048 is before where this engine began


def test_a_replay_ending_inside_a_batch_resets_the_counts_exactly_at_its_end():
    part, engine, producer = _partition(start=100, replay_until=110)
    assert part.replaying and part.dead_letters.muted
    part.dead_letters.write(b"bad", "invalid_json", "line 1")
    assert producer.sent == []  # its dead letters were written by the first run
    part.feed(_records(100, 20), 1000)
    assert [len(values) for values, _ in engine.fed] == [10, 10]  # split at offset 110
    assert engine.resets == 1
    assert not part.replaying and not part.dead_letters.muted
    part.dead_letters.write(b"bad", "invalid_json", "line 1")
    assert producer.sent == [{"topic": "ubi-dead-letter", "key": None, "value": b"bad",
                              "headers": [("searchpulse.reason", b"invalid_json"),
                                          ("searchpulse.detail", b"line 1"),
                                          ("searchpulse.source", b"ubi:0")]}]


def test_a_replay_bound_at_or_before_the_start_is_no_replay():
    part, _, _ = _partition(start=100, replay_until=100, stats_until=50)
    assert part.replay_until is None and part.stats_until is None
    assert not part.replaying and not part.dead_letters.muted


def test_oversized_and_empty_records_are_rejected_and_still_advance_the_offset():
    part, engine, _ = _partition(start=0)
    part.feed([(0, b"x" * 11, 1.0), (1, None, 2.0), (2, b"ok", 3.0)], 10)
    assert engine.rejected == [(OVERSIZED, "11 bytes"), (OVERSIZED, "0 bytes")]
    assert engine.fed == [([b"ok"], [3.0])]
    assert part.next_offset == 3


def test_one_record_without_an_arrival_time_drops_the_batchs_arrivals():
    part, engine, _ = _partition(start=0)
    part.feed([(0, b"a", 1.0), (1, b"b", None), (2, b"c", 3.0)], 10)
    assert engine.fed == [([b"a", b"b", b"c"], None)]


@pytest.fixture
def config():
    return load_config(environ={})


def test_a_checkpoint_record_names_its_group_and_topics_and_never_moves_offsets_back(config):
    producer = RecordingProducer()
    checkpoints = Checkpoints(config, producer, "host-a", ["ubi", "events"])
    checkpoints.partitions = {"ubi:0": [100, 200]}
    checkpoints.write({"ubi:0": [90, 250], "ubi:1": [5, 6]}, {"searches": 3}, 1.0)
    [sent] = producer.sent
    assert sent["topic"] == config["kafka.checkpoint_topic"]
    assert sent["key"] == b"searchpulse/host-a" == checkpoint_key("searchpulse", "host-a").encode()
    assert json.loads(sent["value"]) == {
        "group": "searchpulse", "topics": ["events", "ubi"], "sequence": 1,
        "partitions": {"ubi:0": [100, 250], "ubi:1": [5, 6]}, "topic_ids": {},
        "counts": {"searches": 3}}
    assert checkpoints.sequence == 1
    assert checkpoints.partitions == {"ubi:0": [100, 250], "ubi:1": [5, 6]}


def test_a_topic_created_again_under_its_name_is_not_taken_for_the_old_one(config,
                                                                           monkeypatch):
    """Checkpoints name each topic's id: the offsets of the old topic of the name cover no
    partition of the new one, are recognised as another topic's, and are dropped from this
    member's record, not maxed against the new topic's (which start again at 0)."""
    old, new = "5f0c6b3e-0000-4000-8000-000000000001", "5f0c6b3e-0000-4000-8000-000000000002"
    records = {
        "searchpulse/host-a": {"group": "searchpulse", "topics": ["ubi"], "sequence": 3,
                               "partitions": {"ubi:0": [900, 1000], "ubi:1": [40, 50]},
                               "topic_ids": {"ubi": old}, "counts": {}},
        "searchpulse/host-b": {"group": "searchpulse", "topics": ["ubi"], "sequence": 1,
                               "partitions": {"ubi:1": [60, 70]}},  # before topic ids
    }
    monkeypatch.setattr(checkpoints_module, "read_checkpoints", lambda _: records)
    producer = RecordingProducer()
    checkpoints = Checkpoints(config, producer, "host-a", ["ubi"])
    checkpoints.load()
    assert checkpoints.covering("ubi", 0, old) == (900, 1000)
    assert checkpoints.covering("ubi", 0, new) is None
    assert checkpoints.covering("ubi", 1, new) == (60, 70)  # a record without ids: by name
    assert checkpoints.covering("ubi", 0) == (900, 1000)  # a broker without ids: by name
    assert checkpoints.recreated("ubi", old) is None
    assert checkpoints.recreated("ubi", new) == old
    assert checkpoints.recreated("ubi", None) is None
    checkpoints.use("ubi", old)  # the same topic: nothing changes
    assert checkpoints.partitions == {"ubi:0": [900, 1000], "ubi:1": [40, 50]}
    checkpoints.use("ubi", new)
    checkpoints.write({"ubi:0": [0, 12]}, {}, 1.0)
    written = json.loads(producer.sent[-1]["value"])
    assert (written["partitions"], written["topic_ids"]) == ({"ubi:0": [0, 12]}, {"ubi": new})


def test_a_checkpoint_not_acknowledged_changes_nothing(config):
    checkpoints = Checkpoints(config, RecordingProducer(KafkaTimeoutError()), "host-a", ["ubi"])
    with pytest.raises(KafkaTimeoutError):  # a shutdown: the broker did not answer in time
        checkpoints.write({"ubi:0": [1, 2]}, {}, timeout_s=0.5)
    assert (checkpoints.sequence, checkpoints.partitions) == (0, {})


def test_loading_keeps_only_this_groups_records_of_these_topics(config, monkeypatch):
    records = {
        "searchpulse/host-a": {"group": "searchpulse", "topics": ["ubi"], "sequence": 7,
                               "partitions": {"ubi:0": [10, 20]}, "counts": {}},
        "searchpulse/host-b": {"group": "searchpulse", "topics": ["ubi"], "sequence": 2,
                               "partitions": {"ubi:0": [15, 30], "ubi:1": [1, 4]}},
        "other/host-a": {"group": "other", "topics": ["ubi"], "sequence": 9,
                         "partitions": {"ubi:0": [99, 999]}},
        "searchpulse/host-c": {"group": "searchpulse", "topics": ["clicks"], "sequence": 1,
                               "partitions": {"ubi:0": [50, 500]}},
    }
    monkeypatch.setattr(checkpoints_module, "read_checkpoints", lambda _: records)
    checkpoints = Checkpoints(config, RecordingProducer(), "host-a", ["ubi"])
    assert checkpoints.load() is records["searchpulse/host-a"]
    assert (checkpoints.sequence, checkpoints.partitions) == (7, {"ubi:0": [10, 20]})
    assert checkpoints.covering("ubi", 0) == (15, 30)  # the newest (highest) cover wins
    assert checkpoints.covering("ubi", 1) == (1, 4)
    assert checkpoints.covering("ubi", 2) is None
    elsewhere = Checkpoints(config, RecordingProducer(), "host-a", ["ubi", "events"])
    assert elsewhere.load() is None  # same key, other topics: not this pipeline's counters
    assert elsewhere.sequence == 0 and elsewhere.partitions == {}


def test_a_record_that_lands_after_its_topic_was_created_again_does_not_bring_back_its_offsets(
        config):
    """A checkpoint's record lands after the collector moved to the new topic of the name
    (``use``): the old topic's offsets it carries are not taken back into this member's."""
    old, new = "5f0c6b3e-0000-4000-8000-000000000001", "5f0c6b3e-0000-4000-8000-000000000002"
    checkpoints = Checkpoints(config, RecordingProducer(), "host-a", ["ubi"])
    checkpoints.use("ubi", old)
    record = checkpoints.record({"ubi:0": [900, 1000]}, {})
    checkpoints.use("ubi", new)  # before the record's verdict
    checkpoints.landed(record)
    assert (checkpoints.sequence, checkpoints.partitions) == (1, {})
    checkpoints.landed(checkpoints.record({"ubi:0": [0, 12]}, {}))
    assert (checkpoints.sequence, checkpoints.partitions) == (2, {"ubi:0": [0, 12]})
