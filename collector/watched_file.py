"""A file a running collector reads at start and again whenever it changes (the judgment set,
the examination curves): checked at most every ``RELOAD_CHECK_S`` seconds of wall time, so the
hot path pays one clock read per release; a broken new version keeps the last good one."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from collector.errors import ConfigError

RELOAD_CHECK_S = 10.0
log = logging.getLogger(__name__)
T = TypeVar("T")


class WatchedFile(Generic[T]):
    """``load(path)`` → the file's content; ``setting`` names the file in errors."""

    def __init__(self, path: str, setting: str, load: Callable[[str], T]) -> None:
        self.path = path
        self.setting = setting
        self.load = load
        self._stamp = self._stat()
        try:
            self.content = load(path)
        except (OSError, ValueError) as error:  # a broken file at start is a setting's error
            reason = str(error) if path in str(error) else f"{path}: {error}"
            raise ConfigError(f"{setting}: {reason}") from None
        self._checked = time.monotonic()

    def _stat(self) -> tuple[float, int] | None:
        try:
            status = os.stat(self.path)
        except OSError:
            return None
        return status.st_mtime, status.st_size

    def current(self) -> T:
        now = time.monotonic()
        if now - self._checked >= RELOAD_CHECK_S:
            self._checked = now
            stamp = self._stat()
            if stamp is not None and stamp != self._stamp:
                self._stamp = stamp
                try:
                    self.content = self.load(self.path)
                    log.info("%s %s reloaded", self.setting, self.path)
                except (OSError, ValueError) as error:
                    log.error("%s %s: %s; keeping the previous version", self.setting,
                              self.path, error)
        return self.content
