"""The checks of one setting's value (``Setting.check``): each returns what is wrong, or None.
The checks that need a slow import (RE2, numpy, ir_measures, pandas) make it on use."""

from __future__ import annotations

from collector.errors import MeasureError
from collector.ingest.events import TEAM_ATTRIBUTE
from collector.series.labels import scrub
from collector.store.query_stats import CLIENT_MARKS


def positive(value: float) -> str | None:
    """A duration, a rate, a size: ``inf`` would switch the mechanism off unannounced (an
    idle partition never released)."""
    return None if 0 < value < float("inf") else "must be a finite number > 0"


MAX_RANK = 10_000


def rank(value: int) -> str | None:
    """A cut-off in a ranking: no ranker returns more, and trec_eval's cut-offs stop at int64
    (a huge one failed as a KeyError deep inside the measures)."""
    return None if 0 < value <= MAX_RANK else f"must be a rank between 1 and {MAX_RANK:,}"


def non_negative(value: float) -> str | None:
    """A count, a margin, a timeout where 0 is a choice (none, off, for ever); ``inf`` is
    refused as in :func:`positive` (an infinite margin is a gate that never fails)."""
    return None if 0 <= value < float("inf") else "must be a finite number >= 0"


def share(value: float) -> str | None:
    return None if 0 < value < 1 else "must be between 0 and 1 (exclusive)"


def fraction(value: float) -> str | None:
    return None if 0 <= value < 1 else "must be between 0 (inclusive: off) and 1"


def percent(value: float) -> str | None:
    return None if 0 < value <= 100 else "must be in (0, 100]"


def attribute_name(value: str) -> str | None:
    return (None if not value or TEAM_ATTRIBUTE.fullmatch(value) else
            "must be a plain JSON key: a letter or _, then letters, digits, _ or - (≤ 64)")


def port(value: int) -> str | None:
    return None if 0 <= value <= 65535 else "must be a TCP port (0-65535)"


def linear_patterns(value: list[str]) -> str | None:
    import re2  # the detectors' engine: a pattern must run on it, in linear time

    for pattern in value:
        try:
            re2.compile(pattern)
        except re2.error as error:
            return f"{pattern!r} is not a linear-time (RE2) pattern: {error}"
    return None


def client_marks(value: int) -> str | None:
    if 1 <= value <= CLIENT_MARKS:
        return None
    return f"must be between 1 and {CLIENT_MARKS} (the client marks a store keeps per row)"


def store_url(value: str) -> str | None:
    if value.startswith("sqlite:///") and not value.removeprefix("sqlite:///").strip():
        # sqlite3 opens "" as a private temporary database: the aggregates would go nowhere
        return "names no database file: sqlite:///PATH (e.g. sqlite:///searchpulse.db)"
    if not value or value.startswith(("sqlite:///", "postgresql://", "postgres://")):
        return None
    return "must be sqlite:///PATH or postgresql://…"


def record_timestamps(value: str) -> str | None:
    return None if value in ("arrival", "ignore") else "must be arrival or ignore"


def bucket_count(value: int) -> str | None:
    return None if 2 <= value <= 1024 else "must be between 2 and 1024"


def split(value: list[str]) -> str | None:
    # on use: the statistics' imports (numpy) would add 91 modules to every command's start
    from collector.series.experiment_stats import parse_split

    try:
        parse_split(value)
    except ValueError as error:
        return str(error)
    return None


def variant(value: str) -> str | None:
    if value in ("none", "other") or scrub(value) != value:
        return ("must be a variant label value (letters, digits, _ . : / - only, at most 64; "
                "not none or other)")
    return None


def measures(value: list[str]) -> str | None:
    if not value:
        return None
    from collector.judgments.measures import parse  # on use: ir_measures parses them (slow)

    try:
        parse(value, "measure")
    except MeasureError as error:
        return str(error)
    return None


def gate_rules(value: list[str]) -> str | None:
    # on use: the gate's imports (ir_measures, pandas) would add 76 modules to every start
    from collector.judgments.gate import problem

    return problem(value) if value else None


def base(value: int) -> str | None:
    return None if value in (0, 1) else "must be 0 or 1"


def bootstrap_servers(value: str) -> str | None:
    """One host:port or more: an empty entry is no broker, and kafka-python would retry a
    bootstrap of '' until the connect timeout (exit 3) instead of a usage error."""
    if not value.strip() or any(not part.strip() for part in value.split(",")):
        return "must be a comma-separated list of host:port"
    return None
