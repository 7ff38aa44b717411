"""collector/sources/partitions.py: a record goes to the partition a Kafka producer keying it by
``client_id`` would choose (Java's murmur2, as kafka-python's DefaultPartitioner), with the
documented fall-backs for a record without one, since a replay split over partitions must
compute what the consumers of such a topic compute."""

from __future__ import annotations

import json

import pytest

from collector.sources.partitions import Partitioner, partition_of_key

# Apache Kafka's UtilsTest.testMurmur2 vectors (signed 32-bit results of the Java client)
JAVA_MURMUR2 = {
    "21": -973932308,
    "foobar": -790332482,
    "a-little-bit-long-string": -985981536,
    "a-little-bit-longer-string": -1486304829,
    "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    "abc": 479470107,
}


def _record(**fields: object) -> bytes:
    return json.dumps(fields).encode()


@pytest.mark.parametrize(("key", "java"), sorted(JAVA_MURMUR2.items()))
@pytest.mark.parametrize("partitions", [1, 12, 97])
def test_the_partition_of_a_key_is_the_java_clients(key: str, java: int,
                                                    partitions: int) -> None:
    assert partition_of_key(key.encode(), partitions) == (java & 0x7FFFFFFF) % partitions


def test_a_record_is_keyed_by_its_client_then_its_query() -> None:
    partitioner = Partitioner(12)
    assert partitioner.of(_record(client_id="foobar", query_id="abc")) == 6
    assert partitioner.of(_record(query_id="abc")) == 3  # no client: the query is the key
    assert partitioner.of(_record(client_id="", query_id="abc")) == 3
    assert partitioner.of(_record(client_id=None, query_id="foobar")) == 6


@pytest.mark.parametrize("raw", [
    _record(action_name="click"),  # neither key
    b"not json",
    _record(client_id=5, query_id="abc"),  # a field of the wrong type: the engine rejects it
])
def test_a_record_without_a_usable_key_goes_to_partition_0(raw: bytes) -> None:
    assert Partitioner(12).of(raw) == 0


def test_a_record_the_engine_reads_despite_a_byte_order_mark_keeps_its_client() -> None:
    raw = b"\xef\xbb\xbf" + _record(client_id="foobar", query_id="q1")
    assert Partitioner(12).of(raw) == 6
    # one such record in a batch does not shift its neighbours' keys
    batch = [_record(client_id="abc"), raw, _record(client_id="21")]
    assert Partitioner(12).partitions_of(batch) == [3, 6, 0]


def test_split_keeps_arrival_order_and_only_the_partitions_asked_for() -> None:
    batch = [_record(client_id=key, serial=i) for i, key in
             enumerate(["abc", "foobar", "abc", "21", "foobar"])]
    partitioner = Partitioner(12)
    assert partitioner.split(batch, range(12)) == {
        **{p: [] for p in range(12)}, 0: [batch[3]], 3: [batch[0], batch[2]],
        6: [batch[1], batch[4]]}
    assert partitioner.split(batch, range(3, 7)) == {
        3: [batch[0], batch[2]], 4: [], 5: [], 6: [batch[1], batch[4]]}


def test_one_partition_takes_the_batch_as_it_is() -> None:
    batch = [_record(client_id="abc"), b"not json"]
    assert Partitioner(1).split(batch, range(1)) == {0: batch}
