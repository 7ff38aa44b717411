"""A checkpoint moved along between polls (collector/sources/kafka/checkpoint_cycle.py): the
loop never waits for a broker, a record passes no dead letter the topic does not hold, nothing
counts as checkpointed before its record's verdict, and a rebalance waits for that verdict.
Logic only: the broker cases run against a real Kafka in tests/integration/."""

from __future__ import annotations

import threading

from kafka import TopicPartition
from kafka.errors import KafkaConnectionError, KafkaTimeoutError

from tests.collector.sources.kafka.fakes import CountingPartition, rig

TP0, TP1 = TopicPartition("ubi", 0), TopicPartition("ubi", 1)


def _searches(view) -> int:
    return sum(series.searches for series in view.series)


def test_nothing_is_exposed_or_committed_before_the_records_verdict():
    wired, parts = rig(), {TP0: CountingPartition(7)}
    before = wired.cycle.exposed
    wired.cycle.begin(parts, before, None)
    [record] = wired.records.records()  # no dead letters to wait for: sent at once
    assert (record["sequence"], record["partitions"]) == (1, {"ubi:0": [10, 20]})
    assert wired.cycle.advance(parts) is False  # no verdict yet: the loop goes on
    assert (wired.cycle.exposed, wired.consumer.commits, parts[TP0].checkpointed) == (
        before, [], None)
    assert wired.cycle.checkpoints.sequence == 0
    wired.records.answer_all()
    assert wired.cycle.advance(parts) is True
    assert _searches(wired.cycle.exposed) == 7 == _searches(parts[TP0].checkpointed)
    [commit] = wired.consumer.commits
    assert commit[TP0].offset == 10  # the safe offset
    assert (wired.cycle.checkpoints.sequence, wired.cycle.checkpoints.partitions) == (
        1, {"ubi:0": [10, 20]})
    assert (wired.health["commits"], wired.health["commit_failures"]) == (1, 0)


def test_one_checkpoint_in_flight_at_a_time():
    wired, parts = rig(), {TP0: CountingPartition(7)}
    wired.cycle.begin(parts, wired.cycle.exposed, None)
    parts[TP0].next_offset = 30
    wired.cycle.begin(parts, wired.cycle.exposed, None)  # the next interval, no verdict yet
    assert len(wired.records.sent) == 1
    wired.records.answer_all()
    wired.cycle.advance(parts)
    wired.cycle.begin(parts, wired.cycle.exposed, None)
    assert [r["partitions"]["ubi:0"] for r in wired.records.records()] == [[10, 20], [10, 30]]
    assert [r["sequence"] for r in wired.records.records()] == [1, 2]


def test_the_record_waits_for_the_dead_letters_sent_before_its_snapshot():
    wired, parts = rig(), {TP0: CountingPartition(7)}
    wired.cycle.dead_letters.send("ubi-dead-letter", b"bad", [])
    wired.cycle.begin(parts, wired.cycle.exposed, None)
    wired.cycle.dead_letters.send("ubi-dead-letter", b"later", [])  # after the snapshot
    assert wired.records.sent == []
    wired.letters.sent[0].verdict.success(None)
    assert wired.cycle.advance(parts) is False
    assert len(wired.records.sent) == 1  # the one it covers is in: the record goes
    assert [sent.value for sent in wired.cycle.dead_letters.sent] == [b"later"]  # the next's


def test_a_dead_letter_that_failed_is_sent_again_and_its_checkpoint_given_up():
    wired, parts = rig(), {TP0: CountingPartition(7)}
    wired.cycle.dead_letters.send("ubi-dead-letter", b"bad", [("searchpulse.reason", b"x")])
    wired.cycle.begin(parts, wired.cycle.exposed, None)
    wired.letters.answer_all(KafkaTimeoutError("Expiring 1 record(s)"))
    assert wired.cycle.advance(parts) is False
    assert (wired.records.sent, wired.cycle.pending, wired.health["commit_failures"]) == (
        [], None, 1)
    [again] = wired.letters.sent[1:]
    assert (again.topic, again.value, again.headers) == (
        "ubi-dead-letter", b"bad", [("searchpulse.reason", b"x")])
    wired.cycle.begin(parts, wired.cycle.exposed, None)  # the next one covers it
    assert wired.records.sent == []
    again.verdict.success(None)
    wired.cycle.advance(parts)
    assert len(wired.records.sent) == 1


def test_a_record_reported_failed_changes_nothing_and_the_next_one_tries_again():
    wired, parts = rig(), {TP0: CountingPartition(7)}
    before = wired.cycle.exposed
    wired.cycle.begin(parts, before, None)
    wired.records.answer_all(KafkaTimeoutError("Expiring 1 record(s)"))
    assert wired.cycle.advance(parts) is False
    assert (wired.cycle.exposed, parts[TP0].checkpointed, wired.consumer.commits) == (
        before, None, [])
    assert (wired.cycle.checkpoints.sequence, wired.health["commit_failures"]) == (0, 1)
    wired.cycle.begin(parts, before, None)
    assert [r["sequence"] for r in wired.records.records()] == [1, 1]


def test_a_rebalance_waits_for_the_verdict_of_the_record_in_flight():
    wired, parts = rig(), {TP0: CountingPartition(7)}
    wired.cycle.begin(parts, wired.cycle.exposed, None)
    answer = threading.Timer(0.2, wired.records.answer_all)  # the broker answers meanwhile
    answer.start()
    wired.cycle.await_verdict()  # the listener, on kafka-python's IO thread
    assert wired.records.sent[0].verdict.succeeded()  # it returned once the broker answered
    answer.join()
    assert wired.cycle.advance(parts) is True  # applied by the loop before the partition goes
    assert _searches(parts[TP0].checkpointed) == 7


def test_a_rebalance_before_the_record_is_sent_means_it_never_is():
    wired, parts = rig(), {TP0: CountingPartition(7)}
    wired.cycle.dead_letters.send("ubi-dead-letter", b"bad", [])
    wired.cycle.begin(parts, wired.cycle.exposed, None)
    wired.cycle.await_verdict()  # returns at once: nothing sent to wait for
    wired.letters.answer_all()
    assert wired.cycle.advance(parts) is False
    assert (wired.records.sent, wired.cycle.pending) == ([], None)
    assert wired.cycle.dead_letters.sent == []  # written: nothing left for the next one


def test_a_partition_set_up_again_meanwhile_takes_nothing_of_the_old_ones_checkpoint():
    wired, parts = rig(), {TP0: CountingPartition(7), TP1: CountingPartition(3)}
    wired.cycle.begin(parts, wired.cycle.exposed, None)
    parts[TP1] = CountingPartition(0)  # revoked and assigned again before the verdict
    wired.records.answer_all()
    wired.cycle.advance(parts)
    assert (parts[TP1].checkpointed, _searches(parts[TP0].checkpointed)) == (None, 7)
    assert list(wired.consumer.commits[0]) == [TP0]


def test_a_failed_group_commit_is_counted_and_the_checkpoint_stands():
    wired = rig(commit_error=KafkaConnectionError("111 ECONNREFUSED"))
    parts = {TP0: CountingPartition(7)}
    wired.cycle.begin(parts, wired.cycle.exposed, None)
    wired.records.answer_all()
    assert wired.cycle.advance(parts) is True
    assert _searches(wired.cycle.exposed) == 7
    assert (wired.health["commits"], wired.health["commit_failures"]) == (0, 1)


def test_the_shutdown_gives_up_on_a_broker_that_does_not_answer():
    wired, parts = rig(), {TP0: CountingPartition(7)}
    wired.cycle.begin(parts, wired.cycle.exposed, None)
    assert wired.cycle.final(parts, wired.cycle.exposed, None, 0.01) is False
    assert (wired.cycle.pending, wired.cycle.checkpoints.sequence) == (None, 0)
    assert [r["sequence"] for r in wired.records.records()] == [1, 1]  # one more try
    assert wired.letters.flushes == 1


def test_the_shutdowns_checkpoint_lands_when_the_broker_answers():
    wired, parts = rig(), {TP0: CountingPartition(7)}
    wired.records.send = _answered(wired.records.send)
    assert wired.cycle.final(parts, wired.cycle.exposed, None, 0.01) is True
    assert (wired.cycle.checkpoints.sequence, _searches(wired.cycle.exposed)) == (1, 7)


def _answered(send):
    def answered(*args, **kwargs):
        verdict = send(*args, **kwargs)
        verdict.success(None)
        return verdict
    return answered
