"""JSON-lines input: files or ``-`` (stdin), plain or compressed (gzip, bzip2, zstd: told by
their first bytes, not their name), read as raw bytes per record.

A record is a line without its surrounding whitespace (so ``\\r\\n`` and ``\\n`` endings, and
trailing spaces, give the same record); blank lines are none; a UTF-8 byte-order mark at the
start of an input is skipped. Several inputs (per-host logs of the same hours) are merged by
event time, so replaying them equals replaying their union in time order. An input that cannot
be read to its end (a truncated or corrupt compressed file, an I/O error, a last line cut
mid-record) contributes every complete line before the break; the other inputs are read whole
(into a store: up to the break, ``stop_at_break``), and only then does an ``InputError`` name
it. A range that repeats an earlier range of the same input is given to no one
(collector/sources/repeats.py).

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
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from itertools import islice
from operator import itemgetter
from typing import IO, Any

import msgspec

from collector.errors import InputError, InputMismatch
from collector.sources.repeats import Repeats, Run
from collector.text_files import not_text_start

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
_READERS = (gzip.GzipFile, bz2.BZ2File, zstd.ZstdFile)  # what _decompressing reads through
_READ_ERRORS = (OSError, EOFError, zlib.error, zstd.ZstdError)
# What a file's name says it is compressed with: its first bytes must say so too.
_NAMED = {".gz": (b"\x1f\x8b", "gzip"), ".bz2": (b"BZh", "bzip2"),
          ".zst": (b"\x28\xb5\x2f\xfd", "zstd"), ".zstd": (b"\x28\xb5\x2f\xfd", "zstd")}




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

    Records of a range that repeats an earlier range of the same input (``repeats``,
    collector/sources/repeats.py) are given to no one: ``read`` leaves them out. They are
    still the input's records: counted in ``records`` and digested in their place (just
    before the next record given, or at the input's end), so positions and digests are those
    of the input's content whatever became of its records.

    ``read`` gives records without handing them on: the merge of several inputs reads a line
    ahead of what it hands on; ``hand_on`` counts and digests them, and checks them against
    the digests ``expect`` was given."""

    def __init__(self, path: str, digest: bool = False) -> None:
        self.path = path
        self.records = 0  # handed on (repeated ones included)
        self.error: InputError | None = None
        self._digest = hashlib.sha256() if digest else None
        self._expected: dict[int, str] = {}  # position → digest of the records before it
        self._read = 0  # records read (handed on or not)
        self.skipped: list[bytes] = []  # the last records skipped
        self.repeats = Repeats()
        self._source = self._batches()
        self._runs: deque[Run] = deque()  # decided, not yet read
        # Repeated records not handed on yet, each list before the given record of its index
        # (records given before it): counted with that record, or at the input's end.
        self._gaps: deque[tuple[int, list[bytes]]] = deque()
        self._given = 0  # records given and handed on
        self._given_read = 0  # records given by read (or skipped)
        self._exhausted = False
        first = next(self._source, [])
        self.head = (hashlib.sha256(first[0]).hexdigest() if first and digest
                     else None)  # what identifies the input: its first record
        if first:
            self._runs.extend(self.repeats.push(first))

    def read(self) -> list[bytes]:
        """The next records to give (an empty list at the end)."""
        while True:
            run = self._next_run()
            if run is None:
                return []
            repeated, records = run
            if not repeated:
                self._given_read += len(records)
                return records
            self._gaps.append((self._given_read, records))

    def _next_run(self) -> Run | None:
        """The next decided run; at the end, what waited is decided — unless the input broke
        off (a read error, a last line cut mid-record) and its positions are recorded (a
        replay into a store, ``digest``): then the records still waiting are not handed on
        (the intact input decides them, when the replay is finished with it), and neither are
        the repeated ones after the last record given."""
        while not self._runs:
            if self._exhausted:
                return None
            batch = next(self._source, None)
            if batch is not None:
                self._runs.extend(self.repeats.push(batch))
                continue
            self._exhausted = True
            if self.error is None or self._digest is None:
                self._runs.extend(self.repeats.end())
        return self._runs.popleft()

    def hand_on(self, records: list[bytes]) -> None:
        """``records`` (the next ones given) are handed on: counted and digested, with the
        repeated records before each; raises ``InputMismatch`` when a position ``expect``-ed
        falls among them with another digest."""
        gaps = self._gaps
        base = self._given
        end = base + len(records)
        done = 0
        while gaps and gaps[0][0] < end:
            at, repeated = gaps.popleft()
            self._count(records[done:at - base])
            self._count(repeated)
            done = at - base
        self._count(records[done:] if done else records)
        self._given = end

    def finish(self) -> None:
        """The input was read to its end: the repeated records after its last record given
        are handed on too (not after a break: the intact input may go on repeating)."""
        if (self._exhausted and not self._runs and self.error is None
                and self._given == self._given_read):
            while self._gaps:
                self._count(self._gaps.popleft()[1])

    @property
    def repeated_waiting(self) -> bool:
        """Repeated records read and not handed on yet (they go with the next one given)."""
        return bool(self._gaps)

    def records_after(self, given: int) -> int:
        """``records`` once the next ``given`` records given are handed on."""
        limit = self._given + given
        return self.records + given + sum(len(repeated) for at, repeated in self._gaps
                                          if at < limit)

    def given_until(self, position: int, available: int) -> int:
        """How many of the next ``available`` records given to hand on so that ``records``
        reaches ``position`` and not past it."""
        if not self._gaps:
            return min(available, position - self.records)
        return bisect_right(range(available + 1), position, key=self.records_after) - 1

    def _count(self, records: list[bytes]) -> None:
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
        """Hand on the next ``count`` records (repeated ones included) without giving them to
        anyone (a store holds them); the last records skipped are kept (a merge starts from
        the time they reached). Raises ``InputMismatch`` if the input ends before."""
        target = self.records + count
        while self.records < target:
            run = self._next_run()
            if run is None:
                raise InputMismatch(f"input {self.path}: ends after {self.records} records, "
                                    f"the store counted {target} of it")
            repeated, records = run
            taken = records[:target - self.records]
            if len(taken) < len(records):
                self._runs.appendleft((repeated, records[len(taken):]))
            self._count(taken)
            if not repeated:
                self._given += len(taken)
                self._given_read += len(taken)
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
                        skipped = len(_BOM) if chunk.startswith(_BOM) else 0
                        chunk = chunk[skipped:]
                        why = not_text_start(chunk, skipped)
                        if why:  # no record of it counted: it is no log of records
                            where = (" (the offset in its decompressed content)"
                                     if isinstance(handle, _READERS) else "")
                            self.error = InputError(f"input {self.path}: {why}{where}")
                            return
                    lines = chunk.split(b"\n")
                    if rest:  # the line the last chunk ended in (no copy of the chunk)
                        lines[0] = rest + lines[0]
                    rest = lines.pop()
                    yield from self._records(lines, b"\r" in chunk)
                rest, tail = b"", rest
                yield from self._last_line(tail)
        except _READ_ERRORS as error:
            self.error = InputError(f"input {self.path}: {error or type(error).__name__} "
                                    f"(after {self._read} complete records)")

    def _last_line(self, tail: bytes) -> Iterator[list[bytes]]:
        """The input's last line, which no newline ended: a record if it reads as JSON (a log
        written without a final newline), else the input ends mid-record — cut short, as a
        truncated file is (a record is a JSON object: cut anywhere, it does not read). The
        cut part is no record: the intact input has the whole one in its place."""
        if b"\r" in tail:  # what a bare CR ends is complete
            done, _, tail = tail.rpartition(b"\r")
            yield from self._records([done], True)
        record = tail.strip()
        if not record:
            return
        try:
            msgspec.json.decode(record)
        except (msgspec.DecodeError, RecursionError):
            self.error = InputError(f"input {self.path}: ends mid-record (its last "
                                    f"{len(record)} bytes are no complete record; after "
                                    f"{self._read} complete records)")
            return
        yield from self._records([record], False)

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



def misnamed(path: str) -> str | None:
    """Why a file whose name says it is compressed (``.gz``, ``.bz2``, ``.zst``) is not, or
    None. Its content is told by its first bytes, but a ``.gz`` that holds plain text is a
    mistake upstream (a log renamed, a download a client decompressed on the way, the wrong
    file copied): refused by name, rather than read as if it were the archive."""
    if path == "-":
        return None
    named = _NAMED.get(os.path.splitext(path)[1].lower())
    if named is None:
        return None
    magic, kind = named
    with open(path, "rb") as handle:
        start = handle.read(len(magic))
    if start == magic:
        return None
    what = "is empty" if not start else f"does not start as {kind} does ({start!r})"
    return (f"named {kind} but {what}: compress it, or name it without "
            f"{os.path.splitext(path)[1]}")


@contextmanager
def _opened(path: str) -> Iterator[IO[bytes]]:
    """The input's records' bytes (standard input is read, never closed); a file whose name
    says it is compressed must be (:func:`misnamed`)."""
    if path == "-":
        if sys.stdin is None:  # started with standard input closed (<&-)
            raise InputError("standard input is closed")
        yield _decompressing(sys.stdin.buffer)
        return
    wrong = misnamed(path)
    if wrong:
        raise InputError(wrong)
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


def read_batches(inputs: list[Input], until: int | None = None,
                 stop_at_break: bool = False) -> Iterator[list[bytes]]:
    """The records of the inputs in lists, handed on as they are given: one input as it is;
    several merged by event time (stable: ties keep input order). With ``until``, a list ends
    exactly where the inputs have handed on ``until`` records in all (where a resumed replay
    has caught up). Raises the first ``InputError`` after the last line that could be read.

    ``stop_at_break`` (a replay into a store): an input that breaks off ends the merge where
    its next record would have come — what the other inputs hold after that point would
    be merged with the broken input's missing records in one clean replay, so the replay stops
    where a crash there would have left it, to be finished with the intact input."""
    if len(inputs) == 1:
        yield from _single(inputs[0], until)
    else:
        yield from _merged(inputs, until, stop_at_break)
    for source in inputs:
        source.finish()
    errors = [i.error for i in inputs if i.error is not None]
    if errors:
        raise errors[0]


def _single(source: Input, until: int | None) -> Iterator[list[bytes]]:
    while batch := source.read():
        if until is not None and source.records < until:
            split = source.given_until(until, len(batch))
            if 0 < split < len(batch):
                source.hand_on(batch[:split])
                yield batch[:split]
                batch = batch[split:]
        source.hand_on(batch)
        yield batch


_Line = tuple[float, int, bytes]  # (event time, input, record)
_BREAK = b""  # the record of a line that marks an input's break (no record is empty)


def _merged(inputs: list[Input], until: int | None,
            stop_at_break: bool) -> Iterator[list[bytes]]:
    broken: list[int] = []  # inputs whose break the merge has taken in
    merged = heapq.merge(*(_timed(index, source, broken if stop_at_break else None)
                           for index, source in enumerate(inputs)), key=itemgetter(0))
    handed = sum(source.records for source in inputs)
    carry: list[_Line] = []  # taken from the merge, not handed on yet
    while True:
        size = _MERGED_BATCH
        if until is not None and handed < until:
            size = min(size, until - handed)  # every line hands on one record or more
        chunk, carry = carry[:size], carry[size:]
        if len(chunk) < size:
            chunk += islice(merged, size - len(chunk))
        if not chunk:
            return
        stop = None
        if broken:  # the break was taken in: it is in this chunk or a later one
            stop = next((n for n, line in enumerate(chunk) if line[2] is _BREAK), None)
            if stop is not None:
                chunk = chunk[:stop]
        if until is not None and handed < until and any(s.repeated_waiting for s in inputs):
            fit = _lines_until(inputs, chunk, until - handed)
            chunk, carry = chunk[:fit], chunk[fit:] + carry
        per_input: list[list[bytes]] = [[] for _ in inputs]
        for _, index, line in chunk:
            per_input[index].append(line)
        for source, lines in zip(inputs, per_input, strict=True):
            source.hand_on(lines)
        handed = sum(source.records for source in inputs)
        if chunk:
            yield [line for _, _, line in chunk]
        if stop is not None:
            return


def _lines_until(inputs: list[Input], chunk: list[_Line], records: int) -> int:
    """How many lines of ``chunk`` hand on at most ``records`` records in all, counting the
    repeated records each line's input hands on with it."""
    taken = [0] * len(inputs)
    total = 0
    for n, (_, index, _) in enumerate(chunk):
        source = inputs[index]
        step = source.records_after(taken[index] + 1) - source.records_after(taken[index])
        if total + step > records:
            return n
        total += step
        taken[index] += 1
    return len(chunk)


def _timed(index: int, source: Input, broken: list[int] | None
           ) -> Iterator[_Line]:
    """(event time, input, line); a line without a readable time keeps its predecessor's, so
    it stays where it was in its input (the engine rejects it with its reason). With
    ``broken``: an input that broke off ends with a line ``_BREAK`` at the time it reached."""
    last = next((t for t in map(_time_of, reversed(source.skipped)) if t is not None),
                float("-inf"))
    while batch := source.read():
        for line in batch:
            stamp = _time_of(line)
            if stamp is not None:
                last = stamp
            yield last, index, line
    if broken is not None and source.error is not None:
        broken.append(index)
        yield last, index, _BREAK


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
