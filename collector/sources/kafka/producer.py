"""Produce UBI records to Kafka keyed by `client_id`, as producers must (docs/events.md)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import msgspec
from kafka import KafkaProducer
from kafka.errors import KafkaError

from collector.config import Config
from collector.errors import BrokersUnreachable
from collector.sources.kafka.connection import client_options, close_client

log = logging.getLogger(__name__)
_FLUSH_TIMEOUT_S = 120.0  # the producer's own delivery timeout: by then a record has failed


class _Key(msgspec.Struct):
    client_id: str | None = None


_key = msgspec.json.Decoder(_Key)


def record_key(raw: bytes) -> bytes | None:
    """`client_id` of a record, so a session's queries and events share a partition."""
    try:
        client = _key.decode(raw).client_id
    except msgspec.MsgspecError:
        return None
    return client.encode() if client else None


def produce(records: Iterable[bytes], bootstrap: str, topic: str, use_security: bool,
            config: Config) -> int:
    """Every record to ``topic``; the count. No broker answering within
    ``kafka.connect_timeout_s`` (0: wait for ever) is :class:`BrokersUnreachable`."""
    options = client_options(config) if use_security else {}
    options["bootstrap_servers"] = bootstrap.split(",")
    limit = config["kafka.connect_timeout_s"]
    if limit:
        options["bootstrap_timeout_ms"] = max(1, int(min(limit, 1e9) * 1000))
    try:
        producer = KafkaProducer(**options, acks="all", linger_ms=20, batch_size=256 * 1024)
    except KafkaError as error:
        raise BrokersUnreachable(
            f"Kafka at {bootstrap}: no broker answered within kafka.connect_timeout_s = "
            f"{limit:g} s ({error}): is it running, and is the address right?") from None
    count = 0
    for raw in records:
        producer.send(topic, key=record_key(raw), value=raw.rstrip(b"\n"))
        count += 1
    producer.flush(timeout=_FLUSH_TIMEOUT_S)  # raises KafkaTimeoutError: not all were sent
    close_client(producer, 5.0)
    log.info("produced %d records to %s", count, topic)
    return count
