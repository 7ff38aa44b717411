"""JSON-lines input: files or ``-`` (stdin), plain or compressed (gzip, bzip2, zstd: told by
their first bytes, not their name), read as raw bytes per record.

A record is a line without its surrounding whitespace (so ``\\r\\n`` and ``\\n`` endings, and
trailing spaces, give the same record); blank lines are none; a UTF-8 byte-order mark at the
start of an input is skipped. Several inputs (per-host logs of the same hours) are merged by
event time, so replaying them equals replaying their union in time order. An input that cannot
be read to its end (a truncated or corrupt compressed file, an I/O error) contributes every
complete line before the break; the other inputs are read whole, and only then does an
``InputError`` name it.

Each input counts the records it has handed on and, for a replay into a store, keeps a running
digest of them: what the store records of how far it got (collector/store/replay_progress.py).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import heapq
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from itertools import islice
from operator import itemgetter
from typing import IO, Any

import msgspec

from collector.errors import InputError, InputMismatch

try:  # Python 3.14's standard library; before it, its backport (the same module)
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd

_BATCH = 1 << 20  # bytes read at a time
_MERGED_BATCH = 4096  # lines of merged inputs handed on at a time
_BOM = b"\xef\xbb\xbf"
# How a compressed stream begins, and what reads it (every one a stdlib-style file object
# whose read1 returns what could be decompressed before a break, then raises).
_COMPRESSED: tuple[tuple[bytes, Callable[[IO[bytes]], IO[bytes]]], ...] = (
    (b"\x1f\x8b", lambda handle: gzip.GzipFile(fileobj=handle, mode="rb")),
    (b"BZh", bz2.BZ2File), (b"\x28\xb5\x2f\xfd", zstd.ZstdFile))
_READ_ERRORS = (OSError, EOFError, zlib.error, zstd.ZstdError)




class _Stamp(msgspec.Struct):
    timestamp: datetime | float | None = None


_stamp = msgspec.json.Decoder(_Stamp)


def _decompressing(handle: IO[bytes]) -> IO[bytes]:
    """``handle`` itself, or a decompressing reader over it when its first bytes say so."""
    start = handle.peek(4)[:4] if hasattr(handle, "peek") else b""
    for magic, reader in _COMPRESSED:
        if start.startswith(magic):
            return reader(handle)
    return handle


class Input:
    """One input: its records in batches of about ``_BATCH`` bytes (split in C: no per-line
    Python step but the strip), how many of them were handed on, their running digest (sha256
    of every record followed by a newline: the same however the records were batched) when
    ``digest``, and the error that ended it early.

    ``read`` gives records without handing them on: the merge of several inputs reads a line
    ahead of what it hands on; ``hand_on`` counts and digests them, and checks them against
    the digests ``expect`` was given."""

    def __init__(self, path: str, digest: bool = False) -> None:
        self.path = path
        self.records = 0  # handed on
        self.error: InputError | None = None
        self._digest = hashlib.sha256() if digest else None
        self._expected: dict[int, str] = {}  # position → digest of the records before it
        self._read = 0  # records read (handed on or not)
        self.skipped: list[bytes] = []  # the last records skipped
        self._source = self._batches()
        self._pending = next(self._source, [])
        self.head = (hashlib.sha256(self._pending[0]).hexdigest() if self._pending and digest
                     else None)  # what identifies the input: its first record

    def read(self) -> list[bytes]:
        """The next records (an empty list at the end)."""
        if self._pending:
            batch, self._pending = self._pending, []
            return batch
        return next(self._source, [])

    def hand_on(self, records: list[bytes]) -> None:
        """``records`` (the next ones read) are handed on: count and digest them; raises
        ``InputMismatch`` when a position ``expect``-ed falls among them with another digest."""
        while self._expected and records:
            position = min(self._expected)
            if position > self.records + len(records):
                break
            split = position - self.records
            self._account(records[:split])
            records = records[split:]
            expected = self._expected.pop(position)
            if self.digest() != expected:
                raise InputMismatch(f"input {self.path}: its first {position} records are not "
                                    "the ones the store counted")
        self._account(records)

    def _account(self, records: list[bytes]) -> None:
        if records:
            self.records += len(records)
            if self._digest is not None:
                self._digest.update(b"\n".join(records))
                self._digest.update(b"\n")

    def expect(self, position: int, digest: str) -> None:
        """The records before ``position`` must have this digest (checked as they go by)."""
        if position > self.records:
            self._expected[position] = digest
        elif position == self.records and self.digest() != digest:
            raise InputMismatch(f"input {self.path}: its first {position} records are not "
                                "the ones the store counted")

    def skip(self, count: int) -> None:
        """Hand on the next ``count`` records without giving them to anyone (a store holds
        them); the last batch skipped is kept (a merge starts from the time it reached).
        Raises ``InputMismatch`` if the input ends before."""
        while count > 0:
            batch = self.read()
            if not batch:
                raise InputMismatch(f"input {self.path}: ends after {self.records} records, "
                                    f"the store counted {self.records + count} of it")
            taken, self._pending = batch[:count], batch[count:]
            self.hand_on(taken)
            count -= len(taken)
            self.skipped = taken

    def digest(self) -> str:
        """The running digest of the records handed on (hex)."""
        return self._digest.hexdigest() if self._digest is not None else ""

    def snapshot(self) -> tuple[int, Any]:
        """(records handed on, a copy of the digest): a position to come back to."""
        return self.records, self._digest.copy() if self._digest is not None else None

    def _batches(self) -> Iterator[list[bytes]]:
        """A read error ends this input: the complete lines before it are given, the partial
        one at the break is not (it cannot be told from a complete record)."""
        rest = b""
        first = True
        try:
            with _opened(self.path) as handle:
                read = getattr(handle, "read1", handle.read)
                while chunk := read(_BATCH):
                    if first:
                        chunk = rest + chunk
                        if len(chunk) < len(_BOM) and _BOM.startswith(chunk):
                            rest = chunk  # too short to tell yet
                            continue
                        first, rest = False, b""
                        if chunk.startswith(_BOM):
                            chunk = chunk[len(_BOM):]
                    lines = chunk.split(b"\n")
                    if rest:  # the line the last chunk ended in (no copy of the chunk)
                        lines[0] = rest + lines[0]
                    rest = lines.pop()
                    yield from self._records(lines, b"\r" in chunk)
                rest, tail = b"", rest  # the end: the last line is complete
                yield from self._records([tail], b"\r" in tail)
        except _READ_ERRORS as error:
            self.error = InputError(f"input {self.path}: {error or type(error).__name__} "
                                    f"(after {self._read} complete records)")

    def _records(self, lines: list[bytes], carriage_returns: bool) -> Iterator[list[bytes]]:
        """Stripped, blank lines dropped; lines holding bare CRs (old Mac line endings) split
        at them (JSON strings cannot hold a raw CR: it only ever separates)."""
        if carriage_returns:
            records = [s for line in lines for part in line.split(b"\r") if (s := part.strip())]
        else:
            records = [s for line in lines if (s := line.strip())]
        if records:
            self._read += len(records)
            yield records



@contextmanager
def _opened(path: str) -> Iterator[IO[bytes]]:
    """The input's records' bytes (standard input is read, never closed)."""
    if path == "-":
        yield _decompressing(sys.stdin.buffer)
        return
    with open(path, "rb", buffering=0) as raw:  # a plain file: one read() per chunk, no copy
        if raw.seekable():
            start = raw.read(4)
            raw.seek(0)
            if not any(start.startswith(magic) for magic, _ in _COMPRESSED):
                yield raw
                return
    with open(path, "rb", buffering=_BATCH) as handle, _decompressing(handle) as reader:
        yield reader


def open_inputs(paths: list[str], digest: bool = False) -> list[Input]:
    """Every input opened and its first batch read (its ``head`` known)."""
    return [Input(path, digest) for path in paths]


def read_batches(inputs: list[Input], until: int | None = None) -> Iterator[list[bytes]]:
    """The records of the inputs in lists, handed on as they are given: one input as it is;
    several merged by event time (stable: ties keep input order). With ``until``, a list ends
    exactly where the inputs have handed on ``until`` records in all (where a resumed replay
    has caught up). Raises the first ``InputError`` after the last line that could be read."""
    if len(inputs) == 1:
        yield from _single(inputs[0], until)
    else:
        yield from _merged(inputs, until)
    errors = [i.error for i in inputs if i.error is not None]
    if errors:
        raise errors[0]


def _single(source: Input, until: int | None) -> Iterator[list[bytes]]:
    while batch := source.read():
        if until is not None and source.records < until < source.records + len(batch):
            split = until - source.records
            source.hand_on(batch[:split])
            yield batch[:split]
            batch = batch[split:]
        source.hand_on(batch)
        yield batch


def _merged(inputs: list[Input], until: int | None) -> Iterator[list[bytes]]:
    merged = heapq.merge(*(_timed(index, source) for index, source in enumerate(inputs)),
                         key=itemgetter(0))
    handed = sum(source.records for source in inputs)
    while True:
        size = _MERGED_BATCH
        if until is not None and handed < until:
            size = min(size, until - handed)
        chunk = list(islice(merged, size))
        if not chunk:
            return
        per_input: list[list[bytes]] = [[] for _ in inputs]
        for _, index, line in chunk:
            per_input[index].append(line)
        for source, lines in zip(inputs, per_input, strict=True):
            source.hand_on(lines)
        handed += len(chunk)
        yield [line for _, _, line in chunk]


def _timed(index: int, source: Input) -> Iterator[tuple[float, int, bytes]]:
    """(event time, input, line); a line without a readable time keeps its predecessor's, so
    it stays where it was in its input (the engine rejects it with its reason)."""
    last = next((t for t in map(_time_of, reversed(source.skipped)) if t is not None),
                float("-inf"))
    while batch := source.read():
        for line in batch:
            stamp = _time_of(line)
            if stamp is not None:
                last = stamp
            yield last, index, line


def _time_of(line: bytes) -> float | None:
    try:
        stamp = _stamp.decode(line).timestamp
    except (msgspec.DecodeError, RecursionError):
        return None
    if stamp.__class__ is datetime:
        return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()
    if stamp is not None and abs(stamp) < 1e16:  # NaN fails too: it would break the merge
        return stamp / 1000.0
    return None


def input_size(paths: list[str]) -> int | None:
    """Total bytes of the plain-file inputs, for a progress bar; None when unknowable (stdin,
    a compressed input: its records are more bytes than its file)."""
    if "-" in paths:
        return None
    total = 0
    for path in paths:
        with open(path, "rb") as handle:
            start = handle.read(4)
        if any(start.startswith(magic) for magic, _ in _COMPRESSED):
            return None
        total += os.path.getsize(path)
    return total
