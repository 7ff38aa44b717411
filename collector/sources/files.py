"""JSON-lines input: files, ``.gz`` files or ``-`` (stdin), read as raw bytes per record.

Several inputs (per-host logs of the same hours) are merged by event time, so replaying them
equals replaying their union in time order. A file that cannot be read to its end (truncated
``.gz``, I/O error) contributes what could be read; the other files are read whole, and only
then does an ``InputError`` name it.
"""

from __future__ import annotations

import gzip
import heapq
import os
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from itertools import chain, islice
from operator import itemgetter
from typing import IO

import msgspec

_BATCH = 1 << 20  # bytes of lines read at a time
_MERGED_BATCH = 4096  # lines of merged inputs handed on at a time


class InputError(OSError):
    """An input file could not be read to its end; the message names it."""


class _Stamp(msgspec.Struct):
    timestamp: datetime | float | None = None


_stamp = msgspec.json.Decoder(_Stamp)


@contextmanager
def _open(path: str) -> Iterator[IO[bytes]]:
    if path == "-":
        yield sys.stdin.buffer
    elif path.endswith(".gz"):
        with gzip.open(path, "rb") as handle:
            yield handle
    else:
        with open(path, "rb", buffering=1 << 20) as handle:
            yield handle


def _batches(path: str, errors: list[InputError]) -> Iterator[list[bytes]]:
    """Every non-empty line of one input, about ``_BATCH`` bytes of them at a time (read and
    split in C: no per-line Python step but the blank-line filter). A line holding bare CRs
    (old Mac line endings) is split at them; line endings are left to the decoder. A read
    error ends this input."""
    try:
        with _open(path) as handle:
            while lines := handle.readlines(_BATCH):
                if b"\r" in b"".join(lines):  # one C copy and scan, not a loop
                    yield _split_carriage_returns(lines)
                else:  # a '{' line needs no strip copy
                    yield [line for line in lines if line[0] == 0x7B or line.strip()]
    except (OSError, EOFError, zlib.error) as error:
        errors.append(InputError(f"input {path}: {error or type(error).__name__}"))


def _split_carriage_returns(lines: list[bytes]) -> list[bytes]:
    kept: list[bytes] = []
    for line in lines:
        if b"\r" in line.rstrip(b"\r\n"):
            kept += (part for part in line.split(b"\r") if part.strip())
        elif line.strip():
            kept.append(line)
    return kept


def read_batches(paths: list[str]) -> Iterator[list[bytes]]:
    """The records of the inputs in lists: one input as it is; several merged by event time
    (stable: ties keep file order). Raises the first ``InputError`` after the last line that
    could be read."""
    errors: list[InputError] = []
    if len(paths) == 1:
        yield from _batches(paths[0], errors)
    else:
        merged = heapq.merge(*(_timed(path, errors) for path in paths), key=itemgetter(0))
        while batch := [line for _, line in islice(merged, _MERGED_BATCH)]:
            yield batch
    if errors:
        raise errors[0]


def _timed(path: str, errors: list[InputError]) -> Iterator[tuple[float, bytes]]:
    """(event time, line); a line without a readable time keeps its predecessor's, so it stays
    where it was in its file (the engine rejects it with its reason)."""
    last = float("-inf")
    for line in chain.from_iterable(_batches(path, errors)):
        try:
            stamp = _stamp.decode(line).timestamp
        except (msgspec.DecodeError, RecursionError):
            stamp = None
        if stamp.__class__ is datetime:
            last = (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()
        elif stamp is not None and abs(stamp) < 1e16:  # NaN fails too: it would break the merge
            last = stamp / 1000.0
        yield last, line


def input_size(paths: list[str]) -> int | None:
    """Total bytes of the plain-file inputs, for a progress bar; None when unknowable."""
    if any(p == "-" or p.endswith(".gz") for p in paths):
        return None
    return sum(os.path.getsize(p) for p in paths)
