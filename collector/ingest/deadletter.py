"""Dead letters: records searchpulse could not use are kept with their reason, never dropped."""

from __future__ import annotations

import base64
import threading
from typing import IO, Protocol

import msgspec

from collector.output_files import unwritable


class DeadLetterSink(Protocol):
    def write(self, raw: bytes, reason: str, detail: str) -> None: ...

    def close(self) -> None: ...


class DeadLetterFile:
    """JSON lines ``{"reason", "detail", "record"}``; bytes that are not UTF-8 go in
    ``record_base64`` instead, so the original is always recoverable."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._handle: IO[bytes] = open(path, "ab")
        self._lock = threading.Lock()
        self._encoder = msgspec.json.Encoder()

    def write(self, raw: bytes, reason: str, detail: str) -> None:
        entry: dict[str, str] = {"reason": reason, "detail": detail}
        try:
            entry["record"] = raw.decode("utf-8")
        except UnicodeDecodeError:
            entry["record_base64"] = base64.b64encode(raw).decode("ascii")
        line = self._encoder.encode(entry) + b"\n"
        with self._lock:
            try:
                self._handle.write(line)
            except OSError as error:  # the disk filled up since --dlq was checked
                raise unwritable("--dlq", self.path, error) from None

    def close(self) -> None:
        with self._lock:
            try:
                self._handle.close()
            except OSError as error:
                raise unwritable("--dlq", self.path, error) from None


class DiscardWithCount:
    """No dead-letter destination configured: the reasons are still counted by the engine."""

    def write(self, raw: bytes, reason: str, detail: str) -> None:
        return None

    def close(self) -> None:
        return None
