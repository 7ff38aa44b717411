"""Which partition a raw record belongs to: the one a Kafka producer keying it by ``client_id``
would send it to (kafka-python's DefaultPartitioner: murmur2 of the key's bytes), so a replay
split over partitions computes what the consumers of such a topic compute.

A record without ``client_id`` has no Kafka key, and a producer sends it to a random partition;
here its ``query_id`` is the key instead (the same run after run, and such a search and its
events meet), and a record with neither — or one that is not a JSON object — goes to partition
0, whose engine rejects it with its reason as one engine would.
"""

from __future__ import annotations

import msgspec
from kafka.partitioner.default import murmur2

# Keys remembered with their partition (clients come back; murmur2 is pure Python, ~5 µs a
# key): cleared when this many, so a month of distinct clients bounds memory.
_CACHE = 1 << 20


class _Key(msgspec.Struct, gc=False):
    client_id: str | None = None
    query_id: str | None = None


_decode_one = msgspec.json.Decoder(_Key).decode
_decode_many = msgspec.json.Decoder(list[_Key]).decode


def partition_of_key(key: bytes, partitions: int) -> int:
    """DefaultPartitioner's choice for a keyed record among ``partitions`` partitions."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class Partitioner:
    """Routes raw records to ``partitions`` partitions by their key, decoding only the two
    fields that make it, a batch at a time: its records joined into one JSON array are one
    C call, not one per record (a batch that is not an array of objects — a record that is
    not one — is decoded record by record)."""

    def __init__(self, partitions: int) -> None:
        self.partitions = partitions
        self._known: dict[str | None, int] = {}
        self._forget()

    def _forget(self) -> None:
        self._known.clear()
        self._known.update({None: 0, "": 0})  # no key: partition 0

    def of(self, raw: bytes) -> int:
        """The partition of one raw record."""
        return self.partitions_of([raw])[0]

    def partitions_of(self, batch: list[bytes]) -> list[int]:
        """The partition of each record of ``batch``."""
        keys = self._keys(batch)
        known = self._known
        return [known[key] if key in known else self._new(key) for key in keys]

    def _keys(self, batch: list[bytes]) -> list[str | None]:
        try:
            decoded = _decode_many(b"[" + b",".join(batch) + b"]")
        except (msgspec.DecodeError, msgspec.ValidationError):
            decoded = []
        # Garbage that still parses (a line of two objects, one split over two lines) can
        # give as many keys as records, some misplaced: only garbage records are misplaced
        # (rejected wherever they go), and the same on every run.
        if len(decoded) != len(batch):
            return [self._key_of(raw) for raw in batch]
        return [key.client_id or key.query_id for key in decoded]

    @staticmethod
    def _key_of(raw: bytes) -> str | None:
        try:
            key = _decode_one(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        return key.client_id or key.query_id

    def _new(self, key: str) -> int:
        if len(self._known) >= _CACHE:
            self._forget()
        found = self._known[key] = partition_of_key(key.encode(), self.partitions)
        return found

    def split(self, batch: list[bytes], mine: range) -> dict[int, list[bytes]]:
        """The records of ``batch`` in each partition of ``mine`` (arrival order kept; the
        other partitions' records dropped)."""
        if len(mine) == self.partitions == 1:
            return {0: batch}
        parts = self.partitions_of(batch)
        return {p: [raw for raw, q in zip(batch, parts, strict=True) if q == p] for p in mine}
