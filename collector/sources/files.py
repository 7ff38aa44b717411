"""JSON-lines input: files, ``.gz`` files or ``-`` (stdin), read as raw bytes per record."""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO


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


def read_records(paths: list[str]) -> Iterator[bytes]:
    """Every non-empty line of every input, in order; line endings are left to the decoder."""
    for path in paths:
        with _open(path) as handle:
            for line in handle:
                if line[0] == 0x7B or line.strip():  # a '{' line needs no strip copy
                    yield line


def input_size(paths: list[str]) -> int | None:
    """Total bytes of the plain-file inputs, for a progress bar; None when unknowable."""
    if any(p == "-" or p.endswith(".gz") for p in paths):
        return None
    return sum(os.path.getsize(p) for p in paths)
