"""What happened to every record read: one outcome each, and reasons for the ones not used.

Every record read lands in exactly one ``records[kind][outcome]`` cell, so the sum over outcomes
equals the records read: nothing vanishes without a count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

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


class PipelineStats:
    """Plain counters of the record pipeline; exposed by ``metrics.SearchpulseCollector``."""

    __slots__ = ("records", "invalid", "ignored", "data_quality", "dead_lettered")

    def __init__(self) -> None:
        self.records = [[0] * len(OUTCOMES) for _ in KINDS]
        self.invalid: Counter[str] = Counter()
        self.ignored: Counter[str] = Counter()
        self.data_quality: Counter[str] = Counter()
        self.dead_lettered: Counter[str] = Counter()

    def reset(self) -> None:
        """Zero every count in place (the sessionizer holds a reference)."""
        for row in self.records:
            row[:] = [0] * len(row)
        for counts in (self.invalid, self.ignored, self.data_quality, self.dead_lettered):
            counts.clear()

    @classmethod
    def merge(cls, many: Iterable[PipelineStats]) -> PipelineStats:
        merged = cls()
        for stats in list(many):
            for row, other in zip(merged.records, stats.records, strict=True):
                for i, value in enumerate(other):
                    row[i] += value
            for name in ("invalid", "ignored", "data_quality", "dead_lettered"):
                getattr(merged, name).update(dict(getattr(stats, name)))
        return merged

    def total(self, outcome: int | None = None, kind: int | None = None) -> int:
        rows = self.records if kind is None else [self.records[kind]]
        if outcome is None:
            return sum(sum(row) for row in rows)
        return sum(row[outcome] for row in rows)
