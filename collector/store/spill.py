"""Where per-query rows go while the store is away and memory is full: anonymous local files.

The writer (collector/store/store_writer.py) keeps at most ``store.max_waiting_rows`` rows in
memory while the store does not accept its flushes; beyond that it writes them here, one
**segment** per spill, and streams every segment into the transaction that finally lands (with
the offsets or input positions covering them all). A segment is an unlinked temporary file in
``store.spill_dir``: it holds nothing the store's own positions do not cover again, so it is
scratch — a process that dies (SIGKILL included) leaves no file behind, and the next start
re-reads what the store lacks from Kafka or the inputs (docs/delivery.md, "Store outages").

A segment is frames of up to ``_FRAME_ROWS`` rows, each a 4-byte length and a msgpack array of
``(source, day, application, query, row)``: reading one back holds one frame in memory.
"""

from __future__ import annotations

import struct
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO

import msgspec

from collector.store.query_stats import Key, QueryRow

_FRAME_ROWS = 2000
_LENGTH = struct.Struct("<I")
Spilled = tuple[int, int, str, str, QueryRow]  # source id, day, application, query, row
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(list[Spilled]).decode


class Segment:
    """One spill: rows of one or more sources, read back as often as a write is tried."""

    def __init__(self, directory: str | None, rows: Iterable[tuple[int, Key, QueryRow]]) -> None:
        """Writes ``rows`` (source id, key, row) to a new unlinked file in ``directory`` (None:
        the system's temporary directory); raises OSError when it cannot."""
        self.per_source: dict[int, int] = {}  # rows written, by source id
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="searchpulse-spill-",
                                                       dir=directory)
        try:
            frame: list[Spilled] = []
            per_source = self.per_source
            for source, (day, application, query), row in rows:
                frame.append((source, day, application, query, row))
                per_source[source] = per_source.get(source, 0) + 1
                if len(frame) == _FRAME_ROWS:
                    self._write(frame)
                    frame = []
            if frame:
                self._write(frame)
            self._file.flush()
        except BaseException:
            self._file.close()
            raise

    def _write(self, frame: list[Spilled]) -> None:
        payload = _encode(frame)
        self._file.write(_LENGTH.pack(len(payload)))
        self._file.write(payload)

    def read(self, sources: frozenset[int]) -> Iterator[tuple[Key, QueryRow]]:
        """Every row of the ``sources`` still live, in the order written; raises OSError (or
        msgspec.DecodeError: a file changed under it)."""
        file = self._file
        file.seek(0)
        while header := file.read(_LENGTH.size):
            payload = file.read(_LENGTH.unpack(header)[0])
            for source, day, application, query, row in _decode(payload):
                if source in sources:
                    yield (day, application, query), row

    def close(self) -> None:
        self._file.close()  # unlinked already: closing frees the space
