"""Dead letters kept until their checkpoint reads the producer's verdict
(collector/sources/kafka/dead_letters.py): none is lost when the broker drops one, none is sent
twice by the bookkeeping itself."""

from __future__ import annotations

from kafka.errors import KafkaTimeoutError

from collector.sources.kafka.dead_letters import DeadLetterDelivery, DeadLetterTopic
from tests.collector.sources.kafka.fakes import AnsweringProducer


def test_the_verdict_is_unknown_until_every_dead_letter_is_answered():
    producer = AnsweringProducer()
    delivery = DeadLetterDelivery(producer)
    delivery.send("dl", b"a", [])
    delivery.send("dl", b"b", [])
    taken = delivery.take()
    assert delivery.sent == []
    producer.sent[0].verdict.success(None)
    assert delivery.verdict(taken) is None
    producer.sent[1].verdict.success(None)
    assert delivery.verdict(taken) is True
    assert len(producer.sent) == 2  # nothing sent again


def test_those_that_failed_are_sent_again_with_their_headers():
    producer = AnsweringProducer()
    delivery = DeadLetterDelivery(producer)
    delivery.send("dl", b"a", [("searchpulse.reason", b"invalid_json")])
    delivery.send("dl", b"b", [])
    taken = delivery.take()
    producer.sent[0].verdict.failure(KafkaTimeoutError("Expiring 1 record(s)"))
    producer.sent[1].verdict.success(None)
    assert delivery.verdict(taken) is False
    assert [(s.topic, s.value, s.headers) for s in delivery.sent] == [
        ("dl", b"a", [("searchpulse.reason", b"invalid_json")])]
    assert [record.value for record in producer.sent] == [b"a", b"b", b"a"]


def test_given_back_are_only_those_not_known_to_be_written():
    producer = AnsweringProducer()
    delivery = DeadLetterDelivery(producer)
    for value in (b"written", b"waiting", b"failed"):
        delivery.send("dl", value, [])
    taken = delivery.take()
    delivery.send("dl", b"after", [])
    producer.sent[0].verdict.success(None)
    producer.sent[2].verdict.failure(KafkaTimeoutError("Expiring 1 record(s)"))
    delivery.give_back(taken)
    assert [sent.value for sent in delivery.sent] == [b"waiting", b"failed", b"after"]
    producer.sent[1].verdict.success(None)
    producer.sent[3].verdict.success(None)
    assert delivery.verdict(delivery.take()) is False  # the failed one goes again, once
    assert [record.value for record in producer.sent] == [
        b"written", b"waiting", b"failed", b"after", b"failed"]


def test_a_muted_partition_writes_no_dead_letters():
    producer = AnsweringProducer()
    sink = DeadLetterTopic(DeadLetterDelivery(producer), "dl", "ubi:0")
    sink.muted = True
    sink.write(b"bad", "invalid_json", "line 1")
    assert producer.sent == []
