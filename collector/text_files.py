"""Why a file a command reads as text (settings, strata, judgments, topics, runs, an
exposition) is not text: the first byte that is not UTF-8, at its offset in the file.

A decoder that reads in chunks (``open(path, encoding=…)``) reports a position in its chunk, so
the offset is found again from the file's own bytes: the line the CLI prints must say where to
look (``hexdump -C -s OFFSET``) and hint at what went wrong (a binary file, a Latin-1 export).
"""

from __future__ import annotations

import codecs
from pathlib import Path

_CHUNK = 1 << 20


def not_text(path: str | Path, error: UnicodeDecodeError | None = None) -> str:
    """``not UTF-8 text: byte 0xF8 at offset 3 (invalid start byte)…`` for ``path``; ``error``
    (what a reader raised) when the file decodes now (it changed since)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # bytes handed to the decoder before the chunk at hand
    try:
        with open(path, "rb") as handle:
            while True:
                chunk = handle.read(_CHUNK)
                pending = len(decoder.getstate()[0])
                try:
                    decoder.decode(chunk, final=not chunk)
                except UnicodeDecodeError as found:
                    at = offset - pending + found.start
                    return _described(at, found.object[found.start], found.reason)
                if not chunk:
                    break
                offset += len(chunk)
    except OSError as unreadable:
        return f"cannot be read ({unreadable.strerror})"
    if error is not None:
        return f"not UTF-8 text ({error.reason} at byte {error.start})"
    return "not UTF-8 text"


def _described(offset: int, byte: int, reason: str) -> str:
    hint = ("a binary file, or text in another encoding: export it as UTF-8"
            if offset < 1024 else "text in another encoding from there on: export it as UTF-8")
    return f"not UTF-8 text: byte 0x{byte:02X} at offset {offset} ({reason}); {hint}"
