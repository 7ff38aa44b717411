"""What every Kafka client of searchpulse shares: connection and security options, and the
topics it owns (created when missing)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError

from collector.config import Config

log = logging.getLogger(__name__)


def client_options(config: Config) -> dict[str, Any]:
    """Connection and security settings shared by consumers and producers (secrets included,
    so this dict is never logged)."""
    options: dict[str, Any] = {"bootstrap_servers": config["kafka.bootstrap_servers"].split(","),
                               "security_protocol": config["kafka.security_protocol"]}
    for key, option in (("kafka.sasl_mechanism", "sasl_mechanism"),
                        ("kafka.sasl_username", "sasl_plain_username"),
                        ("kafka.sasl_password", "sasl_plain_password"),
                        ("kafka.ssl_cafile", "ssl_cafile"), ("kafka.ssl_certfile", "ssl_certfile"),
                        ("kafka.ssl_keyfile", "ssl_keyfile")):
        if config[key]:
            options[option] = config[key]
    return options


def ensure_topics(config: Config) -> None:
    """The checkpoint topic must be compacted (one record per pipeline member, kept forever);
    the dead-letter topic keeps what could not be used."""
    admin = KafkaAdminClient(**client_options(config))
    try:
        admin.create_topics([
            NewTopic(config["kafka.checkpoint_topic"], 1, -1,
                     topic_configs={"cleanup.policy": "compact"}),
            NewTopic(config["kafka.dead_letter_topic"], 1, -1),
        ])
    except TopicAlreadyExistsError:
        pass
    finally:
        admin.close()


def topic_id_of(consumer: KafkaConsumer, topic: str) -> str | None:
    """The Kafka topic id (KIP-516) of ``topic`` as the consumer's metadata holds it, or None
    when unknown (a broker before 2.8, a topic not in the metadata yet): the topic is then
    known by its name alone, as before topic ids.

    kafka-python 3.0 reads the id from MetadataResponse v10+ into its ``ClusterMetadata``
    (``topic_id(name)``, a ``uuid.UUID``; it logs "topic_id changed … likely recreated" when a
    refresh brings another one) and keeps that object as the consumer's ``_cluster``, with no
    public accessor: read here, in one place. Every metadata refresh the consumer makes
    (on any error, and every ``metadata_max_age_ms``) updates it, so a lookup is a dict read,
    no request."""
    cluster = getattr(consumer, "_cluster", None)
    value = cluster.topic_id(topic) if cluster is not None else None
    if not isinstance(value, uuid.UUID) or value.int == 0:  # the zero id: none assigned
        return None
    return str(value)


def close_client(client: KafkaProducer | KafkaConsumer | KafkaAdminClient | None,
                 timeout_s: float) -> None:
    """Close a client within about ``timeout_s`` whatever the brokers do (kafka-python's
    defaults wait up to 30 s for a consumer, for ever for a producer). A producer's batches
    still unacknowledged then (a broker gone: dead letters, a checkpoint) are given up, and
    what they held is written again after the restart (docs/delivery.md)."""
    if client is None:
        return
    try:
        if isinstance(client, KafkaProducer):
            client.close(timeout=timeout_s)
        elif isinstance(client, KafkaConsumer):
            client.close(timeout_ms=int(timeout_s * 1000))
        else:
            client.close()
    except KafkaError as error:
        log.warning("%s not closed cleanly within %.1f s: %s", type(client).__name__,
                    timeout_s, error)
        if isinstance(client, KafkaProducer):
            _give_up(client)


def _give_up(producer: KafkaProducer) -> None:
    """End a producer whose close timed out. kafka-python 3.0's ``close`` flushes first and
    raises there, before it stops its sender and marks itself closed: its ``__del__`` would
    then wait 1 s more for the same batches at exit and print their timeout as a traceback
    ("Exception ignored in KafkaProducer.__del__"). This is what its close does next, without
    the wait: the sender is told to drop what it holds, the producer is marked closed."""
    sender = getattr(producer, "_sender", None)
    if sender is not None:
        sender.force_close()
    producer._closed = True
