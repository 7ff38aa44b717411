"""What happened to every record read: one outcome each, and reasons for the ones not used.

Every record read lands in exactly one ``records[kind][outcome]`` cell, so the sum over outcomes
equals the records read: nothing vanishes without a count.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from collector.histogram import Buckets

# |client clock offset| buckets, seconds: 1 s … 1 week.
OFFSET_BUCKETS = (1.0, 10.0, 60.0, 300.0, 900.0, 3600.0, 21600.0, 86400.0, 604800.0)

KINDS = ("query", "event", "unknown")
QUERY, EVENT, UNKNOWN = range(3)
OUTCOMES = ("accepted", "invalid", "duplicate", "orphan", "late", "ignored")
ACCEPTED, INVALID, DUPLICATE, ORPHAN, LATE, IGNORED = range(6)

# Ignored-record reasons (valid records searchpulse does not use).
NO_QUERY_ID = "event_without_query_id"
UNUSED_ACTION = "unused_action"

# Data-quality issues (records used, but something in them is off).
UNKNOWN_RESULT_COUNT = "unknown_result_count"
UNKNOWN_CLICK_POSITION = "unknown_click_position"
CLICK_ON_ZERO_RESULT_SEARCH = "click_on_zero_result_search"
PAGINATION_WITHOUT_SEARCH = "pagination_without_search"
EVENT_BEFORE_SEARCH = "event_before_search"
LATE_NOT_APPLIED = "late_record_not_applied"
INVALID_LATENCY = "invalid_latency"

# Why a record's time was corrected (label values of searchpulse_retimed_records_total).
CLIENT_OFFSET = "client_clock_offset"  # its client's clock offset against the stream
BEFORE_SEARCH = "before_its_search"  # an event stamped before the search it names
ARRIVAL_CLOCK = "arrival_clock"  # off by its own arrival (Kafka record timestamp)
APPLICATION_CLOCK = "application_clock"  # its application's clock against the stream's

_UNEXPECTED = re.compile(r"[^a-z0-9]+")


def unexpected_reason(error: BaseException) -> str:
    """``unexpected_<exception type>``: a bounded label value (the code's exception classes)."""
    return "unexpected_" + _UNEXPECTED.sub("_", type(error).__name__.lower())[:40]


class PipelineStats:
    """Plain counters of the record pipeline; exposed by ``metrics.SearchpulseCollector``."""

    __slots__ = ("records", "invalid", "ignored", "data_quality", "dead_lettered", "retimed",
                 "future", "clock_clients", "clock_offsets", "events_without_search")
    COUNTERS = ("invalid", "ignored", "data_quality", "dead_lettered", "retimed", "future",
                "clock_clients", "events_without_search")

    def __init__(self) -> None:
        self.records = [[0] * len(OUTCOMES) for _ in KINDS]
        self.invalid: Counter[str] = Counter()
        self.ignored: Counter[str] = Counter()
        self.data_quality: Counter[str] = Counter()
        self.dead_lettered: Counter[str] = Counter()
        self.retimed: Counter[str] = Counter()  # records whose time was corrected, by reason
        # records stamped past the wall clock while the stream was not, by kind (all retimed)
        self.future: Counter[str] = Counter()
        self.clock_clients: Counter[str] = Counter()  # clients with an offset, by reason
        self.clock_offsets = Buckets(OFFSET_BUCKETS)  # |offset| of every (client, kind) judged
        # orphan events by their (capped) application label: tracking health per front end
        self.events_without_search: Counter[str] = Counter()

    def reset(self) -> None:
        """Zero every count in place (the sessionizer holds a reference)."""
        for row in self.records:
            row[:] = [0] * len(row)
        for name in self.COUNTERS:
            getattr(self, name).clear()
        self.clock_offsets.counts[:] = [0] * len(self.clock_offsets.counts)
        self.clock_offsets.sum = 0.0

    @classmethod
    def merge(cls, many: Iterable[PipelineStats]) -> PipelineStats:
        merged = cls()
        for stats in list(many):
            for row, other in zip(merged.records, stats.records, strict=True):
                for i, value in enumerate(other):
                    row[i] += value
            for name in cls.COUNTERS:
                getattr(merged, name).update(dict(getattr(stats, name)))
            offsets = merged.clock_offsets
            offsets.counts = [a + b for a, b in zip(offsets.counts, stats.clock_offsets.counts,
                                                     strict=True)]
            offsets.sum += stats.clock_offsets.sum
        return merged

    def total(self, outcome: int | None = None, kind: int | None = None) -> int:
        rows = self.records if kind is None else [self.records[kind]]
        if outcome is None:
            return sum(sum(row) for row in rows)
        return sum(row[outcome] for row in rows)
