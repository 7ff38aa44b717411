"""Real services for integration tests: a Kafka broker (from Maven Central jars, or the one
`SEARCHPULSE_TEST_BOOTSTRAP` names)."""

from __future__ import annotations

import os

import pytest

from testbed.kafka import KafkaBroker


@pytest.fixture(scope="session")
def kafka(tmp_path_factory):
    external = os.environ.get("SEARCHPULSE_TEST_BOOTSTRAP")
    if external:
        yield external, None
        return
    broker = KafkaBroker(tmp_path_factory.mktemp("kafka")).start()
    yield broker.bootstrap, broker
    broker.stop()
