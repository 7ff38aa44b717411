"""collector/sources/kafka/checkpoints.py: a checkpoint record names its group and topics and
never moves offsets back, loading keeps only this group's records of these topics, a topic
created again under its name is not taken for the old one (nor does a record landing after the
move bring its offsets back), and an unacknowledged write changes nothing (a stand-in producer
records the sends; the integration tests use a real broker)."""

from __future__ import annotations

import json

import pytest
from kafka.errors import KafkaTimeoutError

from collector.config import load_config
from collector.sources.kafka import checkpoints as checkpoints_module
from collector.sources.kafka.checkpoints import Checkpoints, checkpoint_key
from tests.collector.sources.kafka.fakes import RecordingProducer


@pytest.fixture
def config():
    return load_config(environ={})


def test_a_checkpoint_record_names_its_group_and_topics_and_never_moves_offsets_back(config):
    producer = RecordingProducer()
    checkpoints = Checkpoints(config, producer, "host-a", ["ubi", "events"])
    checkpoints.partitions = {"ubi:0": [100, 200]}
    checkpoints.write({"ubi:0": [90, 250], "ubi:1": [5, 6]}, {"searches": 3}, 1.0)
    [sent] = producer.sent
    assert sent["topic"] == config["kafka.checkpoint_topic"]
    assert sent["key"] == b"searchpulse/host-a" == checkpoint_key("searchpulse", "host-a").encode()
    assert json.loads(sent["value"]) == {
        "group": "searchpulse", "topics": ["events", "ubi"], "sequence": 1,
        "partitions": {"ubi:0": [100, 250], "ubi:1": [5, 6]}, "topic_ids": {},
        "counts": {"searches": 3}}
    assert checkpoints.sequence == 1
    assert checkpoints.partitions == {"ubi:0": [100, 250], "ubi:1": [5, 6]}


def test_a_topic_created_again_under_its_name_is_not_taken_for_the_old_one(config,
                                                                           monkeypatch):
    """Checkpoints name each topic's id: the offsets of the old topic of the name cover no
    partition of the new one, are recognised as another topic's, and are dropped from this
    member's record, not maxed against the new topic's (which start again at 0)."""
    old, new = "5f0c6b3e-0000-4000-8000-000000000001", "5f0c6b3e-0000-4000-8000-000000000002"
    records = {
        "searchpulse/host-a": {"group": "searchpulse", "topics": ["ubi"], "sequence": 3,
                               "partitions": {"ubi:0": [900, 1000], "ubi:1": [40, 50]},
                               "topic_ids": {"ubi": old}, "counts": {}},
        "searchpulse/host-b": {"group": "searchpulse", "topics": ["ubi"], "sequence": 1,
                               "partitions": {"ubi:1": [60, 70]}},  # before topic ids
    }
    monkeypatch.setattr(checkpoints_module, "read_checkpoints", lambda _: records)
    producer = RecordingProducer()
    checkpoints = Checkpoints(config, producer, "host-a", ["ubi"])
    checkpoints.load()
    assert checkpoints.covering("ubi", 0, old) == (900, 1000)
    assert checkpoints.covering("ubi", 0, new) is None
    assert checkpoints.covering("ubi", 1, new) == (60, 70)  # a record without ids: by name
    assert checkpoints.covering("ubi", 0) == (900, 1000)  # a broker without ids: by name
    assert checkpoints.recreated("ubi", old) is None
    assert checkpoints.recreated("ubi", new) == old
    assert checkpoints.recreated("ubi", None) is None
    checkpoints.use("ubi", old)  # the same topic: nothing changes
    assert checkpoints.partitions == {"ubi:0": [900, 1000], "ubi:1": [40, 50]}
    checkpoints.use("ubi", new)
    checkpoints.write({"ubi:0": [0, 12]}, {}, 1.0)
    written = json.loads(producer.sent[-1]["value"])
    assert (written["partitions"], written["topic_ids"]) == ({"ubi:0": [0, 12]}, {"ubi": new})


def test_a_checkpoint_not_acknowledged_changes_nothing(config):
    checkpoints = Checkpoints(config, RecordingProducer(KafkaTimeoutError()), "host-a", ["ubi"])
    with pytest.raises(KafkaTimeoutError):  # a shutdown: the broker did not answer in time
        checkpoints.write({"ubi:0": [1, 2]}, {}, timeout_s=0.5)
    assert (checkpoints.sequence, checkpoints.partitions) == (0, {})


def test_loading_keeps_only_this_groups_records_of_these_topics(config, monkeypatch):
    records = {
        "searchpulse/host-a": {"group": "searchpulse", "topics": ["ubi"], "sequence": 7,
                               "partitions": {"ubi:0": [10, 20]}, "counts": {}},
        "searchpulse/host-b": {"group": "searchpulse", "topics": ["ubi"], "sequence": 2,
                               "partitions": {"ubi:0": [15, 30], "ubi:1": [1, 4]}},
        "other/host-a": {"group": "other", "topics": ["ubi"], "sequence": 9,
                         "partitions": {"ubi:0": [99, 999]}},
        "searchpulse/host-c": {"group": "searchpulse", "topics": ["clicks"], "sequence": 1,
                               "partitions": {"ubi:0": [50, 500]}},
    }
    monkeypatch.setattr(checkpoints_module, "read_checkpoints", lambda _: records)
    checkpoints = Checkpoints(config, RecordingProducer(), "host-a", ["ubi"])
    assert checkpoints.load() is records["searchpulse/host-a"]
    assert (checkpoints.sequence, checkpoints.partitions) == (7, {"ubi:0": [10, 20]})
    assert checkpoints.covering("ubi", 0) == (15, 30)  # the newest (highest) cover wins
    assert checkpoints.covering("ubi", 1) == (1, 4)
    assert checkpoints.covering("ubi", 2) is None
    elsewhere = Checkpoints(config, RecordingProducer(), "host-a", ["ubi", "events"])
    assert elsewhere.load() is None  # same key, other topics: not this pipeline's counters
    assert elsewhere.sequence == 0 and elsewhere.partitions == {}


def test_a_record_that_lands_after_its_topic_was_created_again_does_not_bring_back_its_offsets(
        config):
    """A checkpoint's record lands after the collector moved to the new topic of the name
    (``use``): the old topic's offsets it carries are not taken back into this member's."""
    old, new = "5f0c6b3e-0000-4000-8000-000000000001", "5f0c6b3e-0000-4000-8000-000000000002"
    checkpoints = Checkpoints(config, RecordingProducer(), "host-a", ["ubi"])
    checkpoints.use("ubi", old)
    record = checkpoints.record({"ubi:0": [900, 1000]}, {})
    checkpoints.use("ubi", new)  # before the record's verdict
    checkpoints.landed(record)
    assert (checkpoints.sequence, checkpoints.partitions) == (1, {})
    checkpoints.landed(checkpoints.record({"ubi:0": [0, 12]}, {}))
    assert (checkpoints.sequence, checkpoints.partitions) == (2, {"ubi:0": [0, 12]})
