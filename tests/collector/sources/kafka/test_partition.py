"""The Kafka source's pure bookkeeping without a broker: safe offsets, replay boundaries and
dead-letter muting (a stand-in engine and producer record the calls; the integration tests run
the same code against a real broker). Checkpoint records: test_checkpoints.py."""

from __future__ import annotations

from math import inf

from collector.ingest.events import OVERSIZED
from collector.sources.kafka.dead_letters import DeadLetterDelivery, DeadLetterTopic
from collector.sources.kafka.partition import _REPLAY_MARGIN, PartitionEngine
from tests.collector.sources.kafka.fakes import RecordingProducer


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
