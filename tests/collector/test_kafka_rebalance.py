"""A rebalance the brokers walk away from (logic only: the broker cases are in
tests/integration/test_collect_shutdown.py, where a broker killed right after an assignment hit
this): the assignment is applied after a later poll, never a crash."""

from __future__ import annotations

from collections import Counter, deque

from kafka import TopicPartition
from kafka.errors import KafkaConnectionError

from collector.sources.kafka.consumer import KafkaCollector

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
    c.waiting, c.held = set(), False
    c.checkpoints = checkpoints
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
