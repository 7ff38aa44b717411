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


def not_text_start(start: bytes, base: int = 0) -> str | None:
    """Why ``start``, an input's first bytes read (a JSON-lines log, once decompressed), is no
    UTF-8 text, or None: a UTF-16 byte-order mark, or most of its lines holding a NUL (UTF-16
    without a mark: every other byte of ASCII is NUL; a binary file) or bytes that are not
    UTF-8. A few such lines among text lines are poison records, each dead-lettered with its
    reason: only an input that is mostly not text is refused, at its first bad byte."""
    if start.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _described(base, start[0], "a UTF-16 byte-order mark")
    if b"\0" not in start:
        try:
            codecs.getincrementaldecoder("utf-8")().decode(start, final=False)
            return None
        except UnicodeDecodeError:
            pass
    lines = start.split(b"\n")
    bad, first, offset = 0, None, base
    for index, line in enumerate(lines):
        found = _first_bad_byte(line, final=index < len(lines) - 1)  # the last may be cut
        if found is not None:
            bad += 1
            if first is None:
                at, reason = found
                first = (offset + at, line[at], reason)
        offset += len(line) + 1
    if first is None or 2 * bad < len(lines):
        return None
    return _described(*first)


def _first_bad_byte(line: bytes, final: bool) -> tuple[int, str] | None:
    """Where ``line`` first holds a NUL or a byte that is not UTF-8, and which."""
    nul = line.find(b"\0")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(line, final=final)
        invalid = None
    except UnicodeDecodeError as error:
        invalid = (error.start, error.reason)
    if nul >= 0 and (invalid is None or nul < invalid[0]):
        return nul, "a NUL: UTF-16 text, or a binary file"
    return invalid
