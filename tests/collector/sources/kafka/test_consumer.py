"""A rebalance the brokers walk away from (logic only: the broker cases are in
tests/integration/test_collect_shutdown.py, where a broker killed right after an assignment hit
this): the assignment is applied after a later poll, never a crash."""

from __future__ import annotations

from collections import Counter, deque

from kafka import TopicPartition
from kafka.errors import KafkaConnectionError

from collector.errors import StoreUnavailable
from collector.sources.kafka.consumer import KafkaCollector
from tests.collector.sources.kafka.fakes import CountingPartition, rig

TP0, TP1 = TopicPartition("ubi", 0), TopicPartition("ubi", 1)


class FlakyCheckpoints:
    """The checkpoint topic's reader: fails while the brokers are away."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.loads = 0

    def load(self) -> None:
        self.loads += 1
        if self.failures:
            self.failures -= 1
            raise KafkaConnectionError("111 ECONNREFUSED")


def collector(checkpoints: FlakyCheckpoints) -> KafkaCollector:
    """The rebalance bookkeeping alone: no clients, no engines."""
    c = KafkaCollector.__new__(KafkaCollector)
    c.parts, c._changes, c.health, c.connected = {}, deque(), Counter(), True
    c.waiting, c.held, c.writer = set(), False, None
    c.checkpoints = checkpoints
    c.cycle = rig().cycle  # no checkpoint in flight
    c._assign = lambda tp: c.parts.__setitem__(tp, f"engine of {tp.partition}")
    return c


def test_an_assignment_whose_checkpoints_cannot_be_read_waits_for_the_next_poll():
    c = collector(FlakyCheckpoints(failures=1))
    c.on_partitions_assigned([TP0, TP1])
    assert c._apply_changes() == set()
    assert (c.parts, c.connected, c.health["rebalances"]) == ({}, False, 0)
    assert list(c._changes) == [("assigned", {TP0, TP1})]
    assert c._apply_changes() == {TP0, TP1}  # the brokers are back
    assert sorted(c.parts) == [TP0, TP1]
    assert (c.checkpoints.loads, c.health["rebalances"], list(c._changes)) == (2, 1, [])


def test_changes_noted_meanwhile_are_applied_in_order_after_it():
    c = collector(FlakyCheckpoints(failures=2))
    c.on_partitions_assigned([TP0, TP1])
    c._apply_changes()
    c.on_partitions_revoked([TP1])  # the group moved on while the brokers were away
    c._retire = lambda tps: [c.parts.pop(tp) for tp in tps]
    c._apply_changes()
    assert list(c._changes) == [("assigned", {TP0, TP1}), ("revoked", {TP1})]
    assert c._apply_changes() == {TP0}
    assert sorted(c.parts) == [TP0]
    assert c.health["rebalances"] == 2


class PausingConsumer:
    """Which partitions the consumer was told to pause and resume."""

    def __init__(self) -> None:
        self.paused: set[TopicPartition] = set()

    def pause(self, *tps: TopicPartition) -> None:
        self.paused.update(tps)

    def resume(self, *tps: TopicPartition) -> None:
        self.paused.difference_update(tps)


class AwayStore:
    """The writer as the consumer sees it: away for ``tries`` placements, then back."""

    def __init__(self, tries: int) -> None:
        self.tries = tries
        self.full = False

    def retry_due(self) -> bool:
        return True

    def forget(self, source) -> None:
        return None


def test_a_partition_waits_paused_while_the_store_cannot_say_where_its_rows_stand():
    c = collector(FlakyCheckpoints(failures=0))
    c.consumer, c.writer = PausingConsumer(), AwayStore(tries=1)

    def assign(tp):
        if c.writer.tries:
            c.writer.tries -= 1
            raise StoreUnavailable("store postgresql://db: connection refused")
        c.parts[tp] = f"engine of {tp.partition}"

    c._assign = assign
    c.on_partitions_assigned([TP0])
    assert c._apply_changes() == set()
    assert (c.waiting, c.consumer.paused, c.ready()) == (
        {TP0}, {TP0}, (False, "waiting for the store: ubi:0"))
    assert c._place_waiting() == {TP0}  # the store answers at the next try
    assert (sorted(c.parts), c.waiting, c.consumer.paused) == ([TP0], set(), set())


def test_reading_stops_while_the_stores_rows_can_neither_be_written_nor_spilled():
    c = collector(FlakyCheckpoints(failures=0))
    c.consumer, c.writer = PausingConsumer(), AwayStore(tries=0)
    c.on_partitions_assigned([TP0, TP1])
    c._apply_changes()
    c.writer.full = True
    c._hold()
    assert c.consumer.paused == {TP0, TP1}
    c.writer.full = False
    c._hold()
    assert c.consumer.paused == set()


def test_a_checkpoint_landed_then_a_failed_group_commit_still_covers_its_counts():
    """The record is the checkpoint: the next owner of a partition replays to its offsets, so
    a partition revoked after it keeps what it covers (a broker stopped between the write and
    the commit lost ~14 % of the searches in a CI run before)."""
    c = collector(FlakyCheckpoints(failures=0))
    c.parts = {TP0: CountingPartition(7)}
    wired = rig(commit_error=KafkaConnectionError("111 ECONNREFUSED"))
    c.cycle, c.health, c.base = wired.cycle, wired.health, wired.cycle.exposed
    c.cycle.begin(c.parts, c.base, None)
    wired.records.answer_all()
    assert c.cycle.advance(c.parts) is True
    assert (c.health["commits"], c.health["commit_failures"]) == (0, 1)
    assert [record["partitions"] for record in wired.records.records()] == [{"ubi:0": [10, 20]}]
    c._retire([TP0])
    assert [s.searches for s in c.base.series] == [7]  # kept, not lost with the partition
