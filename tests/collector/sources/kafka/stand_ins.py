"""A stand-in Kafka producer that records what it is asked to send, and its send's future
(failing with a given error): shared by the partition's and the checkpoints' tests."""

from __future__ import annotations


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
