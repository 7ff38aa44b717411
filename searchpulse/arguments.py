"""Argument types of the ``searchpulse`` command: every flag value is checked when it is parsed,
so a bad one is a usage error (exit 2) with one line that names the flag and says what it needs
— before a replay has run for minutes, and never as a traceback.

Each type raises :class:`argparse.ArgumentTypeError` with the fix; argparse prefixes the flag
(``argument --since: …``) and :class:`Parser` prints that one line. Output paths are probed by
creating a file where the command would (removed again): the operating system, not a permission
guess, says whether it can be written.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import tempfile
from datetime import date
from pathlib import Path
from typing import NoReturn

EXIT_USAGE = 2
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_DAYS = re.compile(r"(\d+)d")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line (which flag, what it needs, where help is)
    instead of the usage block followed by the message."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


MAX_DAYS = 36_500  # a century back: further, a date is the way to say "everything"


def period(text: str) -> str:
    """``--since``: days back from the newest day (``90d``) or a real calendar date."""
    days = _DAYS.fullmatch(text.strip())
    if days and int(days.group(1)) > MAX_DAYS:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_DAYS}d back, got {text!r}: for everything, a date like 2000-01-01")
    if days:
        return text.strip()
    if _DATE.fullmatch(text):
        try:
            date.fromisoformat(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{text!r} is not a calendar date ({error})") \
                from None
        return text
    raise argparse.ArgumentTypeError(
        f"expected a number of days like 90d or a date like 2026-09-01, got {text!r}")


DEFAULT_SCRAPE_LABELS = (("job", "searchpulse"), ("instance", "replay"))
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)?")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def duration(text: str) -> float:
    """A duration in seconds: a number, or one with ms, s, m or h (``15s``, ``1m``)."""
    found = _DURATION.fullmatch(text.strip())
    seconds = float(found.group(1)) * _UNIT_S[found.group(2)] if found else 0.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(
            f"expected a duration > 0 like 15s, 1m or 30 (seconds), got {text!r}")
    return seconds


def label_pair(text: str) -> tuple[str, str]:
    """``NAME=VALUE``: a Prometheus label name (not __-prefixed, which Prometheus keeps for
    itself) and any value."""
    name, sep, value = text.partition("=")
    if not sep or not _LABEL.fullmatch(name) or name.startswith("__"):
        raise argparse.ArgumentTypeError(
            f"expected NAME=VALUE with a label name like job or instance, got {text!r}")
    return name, value


def log_level(text: str) -> str:
    """``--log-level`` (default SEARCHPULSE_LOG_LEVEL): one of Python's level names."""
    level = text.strip().upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(LOG_LEVELS)} (also SEARCHPULSE_LOG_LEVEL), got {text!r}")
    return level


def _parsed(kind: type[int] | type[float], text: str) -> float:
    try:
        value = kind(text)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None
    if value != value:  # NaN passes no bound
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    return value


def _bounded(value: float, text: str, ok: bool, bounds: str) -> float:
    if not ok:
        raise argparse.ArgumentTypeError(f"must be {bounds}, got {text!r}")
    return value


def bootstrap(text: str) -> str:
    """``--kafka``'s brokers, checked as ``kafka.bootstrap_servers`` is (an empty value was
    taken for no --kafka at all: records went to stdout, exit 0)."""
    from collector.config.value_checks import bootstrap_servers

    problem = bootstrap_servers(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{problem}, got {text!r}")
    return text


def positive_int(text: str) -> int:
    value = int(_parsed(int, text))
    return int(_bounded(value, text, value > 0, "an integer > 0"))


def count(text: str) -> int:
    """A number of things where none is a choice (``--users 0``: a new client per session)."""
    value = int(_parsed(int, text))
    return int(_bounded(value, text, value >= 0, "an integer >= 0"))


MAX_SIGMA = 10.0  # e^10 ≈ 22,000 times the median: beyond it a draw overflows a float
MAX_USERS = 10_000_000  # drawn up front, each with its state: beyond it memory runs out first


def spread(text: str) -> float:
    """A σ (``--user-click-sigma``): 0 is none."""
    value = _parsed(float, text)
    return _bounded(value, text, 0 <= value <= MAX_SIGMA, f"a number from 0 to {MAX_SIGMA:g}")


def users(text: str) -> int:
    """``--users``: returning users, drawn when the simulation starts (0: none)."""
    value = int(_parsed(int, text))
    return int(_bounded(value, text, 0 <= value <= MAX_USERS,
                        f"an integer from 0 to {MAX_USERS:,}"))


def positive(text: str) -> float:
    value = _parsed(float, text)
    return _bounded(value, text, 0 < value < float("inf"), "a finite number > 0")


def share(text: str) -> float:
    """A proportion (``--invalid-rate``)."""
    value = _parsed(float, text)
    return _bounded(value, text, 0 <= value <= 1, "between 0 and 1")


def preference(text: str) -> float:
    """``--interleaving``: the preference for ranker-b, P(click goes to b) − 0.5."""
    value = _parsed(float, text)
    return _bounded(value, text, -0.5 <= value <= 0.5, "between -0.5 and 0.5")


def click_effect(text: str) -> float:
    """``--treatment-click-effect``: added to a click probability, so strictly inside ±1."""
    value = _parsed(float, text)
    return _bounded(value, text, -1 < value < 1, "between -1 and 1 (exclusive)")


def _unwritable(path: Path, error: OSError) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(
        f"cannot write {str(path)!r} ({error.strerror}): choose a path in a directory that "
        "exists and that this user may write")


def output_file(text: str) -> str:
    """A file the command writes (``-``: standard output)."""
    if text == "-":
        return text
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory: name a file in it")
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
    except OSError as error:
        raise _unwritable(path, error) from None
    if not existed:
        path.unlink()
    return text


def output_directory(text: str) -> str:
    """A directory the command writes files into: it, or the nearest directory above it that
    exists (the command creates the rest), must take a new file. Nothing is left behind."""
    path = Path(text)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        if not existing.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise _unwritable(path, error) from None
    return text


def unreadable(path: str) -> str | None:
    """Why an input file (``-``: standard input) cannot be read, or None."""
    if path == "-":
        return None
    if os.path.isdir(path):
        return "is a directory: name the log files in it (a shell glob: DIR/*.jsonl)"
    if not os.path.exists(path):
        return "no such file"
    if not os.access(path, os.R_OK):
        return "not readable by this user"
    from collector.sources.files import misnamed

    return misnamed(path)
