"""Stand-ins for the Kafka clients the source talks to, for the logic's unit tests: a producer
that answers every send at once, producers whose verdicts a test gives (real kafka-python
futures), a consumer that records its group commits, a partition with fixed offsets and counts.
The integration tests run the same code against a real broker."""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kafka.errors import KafkaError, KafkaTimeoutError
from kafka.future import Future

from collector.config import load_config
from collector.exposition.view import View
from collector.ingest import accounting as acc
from collector.series.quality import QualitySeries, latency_buckets
from collector.sources.kafka.checkpoint_cycle import CheckpointCycle
from collector.sources.kafka.checkpoints import Checkpoints
from collector.sources.kafka.dead_letters import DeadLetterDelivery


class Verdict(Future):
    """A record's future whose verdict the test gives (``success``, ``failure``), maybe from
    another thread; ``get`` waits for it up to ``timeout`` as kafka-python's does."""

    def __init__(self) -> None:
        super().__init__()
        self.answered = threading.Event()

    def success(self, value: Any) -> Verdict:
        super().success(value)
        self.answered.set()
        return self

    def failure(self, error: Exception) -> Verdict:
        super().failure(error)
        self.answered.set()
        return self

    def get(self, timeout: float | None = None) -> Any:
        if not self.answered.wait(timeout):
            raise KafkaTimeoutError(f"Timeout after waiting for {timeout} secs.")
        if self.failed():
            raise self.exception
        return self.value


class Sent:
    """A send's future whose ``get`` answers at once: acknowledged, or failing with ``error``."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error

    def get(self, timeout: float) -> None:
        if self.error is not None:
            raise self.error


class RecordingProducer:
    """Every send recorded and answered at once (``Sent``)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.sent: list[dict] = []
        self.error = error

    def send(self, topic, key=None, value=None, headers=None) -> Sent:
        self.sent.append({"topic": topic, "key": key, "value": value, "headers": headers})
        return Sent(self.error)


@dataclass
class ProducedRecord:
    topic: str
    key: bytes | None
    value: bytes
    headers: list[tuple[str, bytes]] | None
    verdict: Verdict = field(default_factory=Verdict)


class AnsweringProducer:
    """Every record sent waits for the verdict a test gives."""

    def __init__(self) -> None:
        self.sent: list[ProducedRecord] = []
        self.flushes = 0

    def send(self, topic: str, key: bytes | None = None, value: bytes = b"",
             headers: list[tuple[str, bytes]] | None = None) -> Verdict:
        self.sent.append(ProducedRecord(topic, key, value, headers))
        return self.sent[-1].verdict

    def flush(self, timeout: float | None = None) -> None:
        self.flushes += 1

    def answer_all(self, error: KafkaError | None = None) -> None:
        for record in self.sent:
            if not record.verdict.is_done:
                (record.verdict.failure(error) if error else record.verdict.success(None))

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(record.value) for record in self.sent]


class RecordingConsumer:
    """The group commits asked for; each raises ``error`` when one is given."""

    def __init__(self, error: KafkaError | None = None) -> None:
        self.error = error
        self.commits: list[dict] = []

    def commit(self, offsets: dict, timeout_ms: int) -> None:
        self.commits.append(offsets)
        if self.error is not None:
            raise self.error


class CountingPartition:
    """A partition engine as the checkpoint reads it: its offsets and a view of its counts."""

    replaying = False

    def __init__(self, searches: int, safe: int = 10, high: int = 20) -> None:
        self.engine = self
        self.searches = searches
        self.safe, self.next_offset = safe, high
        self.checkpointed: View | None = None

    def safe_offset(self) -> int:
        return self.safe

    def view(self, release: bool) -> View:
        series = QualitySeries("web", "head", "none", latency_buckets(1.0))
        series.searches = self.searches
        return View(series=[series], stats=acc.PipelineStats(), folded={})


@dataclass
class Rig:
    """A checkpoint cycle wired to stand-ins: ``records`` the checkpoint producer,
    ``letters`` the dead letters' producer."""

    cycle: CheckpointCycle
    records: AnsweringProducer
    letters: AnsweringProducer
    consumer: RecordingConsumer
    health: Counter


def rig(commit_error: KafkaError | None = None) -> Rig:
    records, letters = AnsweringProducer(), AnsweringProducer()
    consumer, health = RecordingConsumer(commit_error), Counter()
    checkpoints = Checkpoints(load_config(environ={}), records, "host-a", ["ubi"])
    base = View(series=[], stats=acc.PipelineStats(), folded={})
    cycle = CheckpointCycle(checkpoints, DeadLetterDelivery(letters), consumer, health, base)
    return Rig(cycle, records, letters, consumer, health)
