"""Dead letters on their way to the dead-letter topic, and the producer's verdict on each.

A checkpoint's offsets must never pass a record whose dead letter the topic does not hold: the
record would not be read again, and the dead letter would be lost. So every dead letter sent is
kept (its future and its bytes) until the checkpoint that covers it has read the producer's
verdict on it; one the producer reports failed (a broker away for longer than it retries) is
sent again, and that checkpoint is given up (the next one covers it).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka import KafkaProducer
from kafka.producer.future import FutureRecordMetadata

Headers = list[tuple[str, bytes]]


@dataclass(slots=True)
class Sent:
    """One dead letter sent, and what it takes to send it again."""

    future: FutureRecordMetadata
    topic: str
    value: bytes
    headers: Headers


class DeadLetterDelivery:
    """The dead letters sent since the last checkpoint's snapshot (``take``), for every
    partition's engine of this member: one producer, one list."""

    def __init__(self, producer: KafkaProducer) -> None:
        self.producer = producer
        self.sent: list[Sent] = []

    def send(self, topic: str, value: bytes, headers: Headers) -> None:
        self.sent.append(Sent(self.producer.send(topic, value=value, headers=headers), topic,
                              value, headers))

    def take(self) -> list[Sent]:
        """The dead letters a checkpoint taken now covers: every one sent so far."""
        taken, self.sent = self.sent, []
        return taken

    def give_back(self, taken: list[Sent]) -> None:
        """Dead letters of a checkpoint given up before it read their verdicts: the next
        checkpoint covers those not known to be written."""
        self.sent[:0] = [sent for sent in taken if not sent.future.succeeded()]

    def verdict(self, taken: list[Sent]) -> bool | None:
        """Whether every dead letter of ``taken`` is in its topic: None while a verdict is
        still to come; False when one failed — those that failed are sent again (the next
        checkpoint covers them); True when all are written. Never blocks."""
        if not all(sent.future.is_done for sent in taken):
            return None
        failed = [sent for sent in taken if sent.future.failed()]
        for sent in failed:
            self.send(sent.topic, sent.value, sent.headers)
        return not failed


class DeadLetterTopic:
    """Dead letters of one partition's engine: original bytes, reason and source in headers.
    Muted while a partition replays records whose dead letters were already written."""

    def __init__(self, delivery: DeadLetterDelivery, topic: str, source: str) -> None:
        self.delivery = delivery
        self.topic = topic
        self.source = source.encode()
        self.muted = False

    def write(self, raw: bytes, reason: str, detail: str) -> None:
        if self.muted:
            return
        self.delivery.send(self.topic, bytes(raw), [
            ("searchpulse.reason", reason.encode()), ("searchpulse.detail", detail.encode()),
            ("searchpulse.source", self.source)])

    def close(self) -> None:
        return None
