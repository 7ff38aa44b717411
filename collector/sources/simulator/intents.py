"""The written definition of search intents (docs/metrics.md, "Search intents") applied to a
session's plan: which of its query records are keystrokes of the next one, which are intents.

The plan's searches are what the simulated user meant, but the definition decides, not the
simulator: a "same query again" 3 s after a search nobody clicked continues its typing (equal
text), so by definition the first was a keystroke of the second, as the engine will count it.
"""

from __future__ import annotations

from dataclasses import dataclass

from collector.outcomes import continues
from collector.sources.simulator.plan import PlannedSearch

KEYSTROKE_GAP_S = 5.0  # intents.keystroke_gap_s
MAX_EDIT = 2  # intents.max_edit

# (an intent, the query record of its session after it: a keystroke, a search or None)
Intent = tuple[PlannedSearch, PlannedSearch | None]


@dataclass(frozen=True)
class IntentRule:
    """The keystroke rule with the settings' defaults; ``decision_s`` is
    ``windows.abandonment_s``, when a record is decided."""

    keystroke_gap_s: float = KEYSTROKE_GAP_S
    max_edit: int = MAX_EDIT
    off_applications: frozenset[str] = frozenset()  # intents.off_applications
    decision_s: float = 300.0

    def keystroke(self, record: PlannedSearch, following: PlannedSearch | None) -> bool:
        """Whether ``record`` is a keystroke of ``following``, the next query record (page
        absent or 1) of its session: within the gap, its normalized text continued, no next
        page before it, and no click or conversion on ``record`` by its decision (before
        ``following``, the written rule; after it, a click still makes it a search)."""
        if following is None or record.application in self.off_applications:
            return False
        if following.ts_ms - record.ts_ms > self.keystroke_gap_s * 1000:
            return False
        if not continues(record.normalized, following.normalized, self.max_edit):
            return False
        decision = record.ts_ms + self.decision_s * 1000
        return not (any(ts < following.ts_ms for ts in record.pages)
                    or any(ts <= decision for ts, _ in record.clicks)
                    or any(ts <= decision for ts in record.conversions))

    def split(self, records: list[PlannedSearch]) -> tuple[list[Intent], list[PlannedSearch]]:
        """A session's query records in time order → its intents (each with the record after
        it) and its keystroke records."""
        intents: list[Intent] = []
        keystrokes: list[PlannedSearch] = []
        for i, record in enumerate(records):
            following = records[i + 1] if i + 1 < len(records) else None
            if self.keystroke(record, following):
                keystrokes.append(record)
            else:
                intents.append((record, following))
        return intents, keystrokes


def query_records(plan: list[PlannedSearch]) -> list[PlannedSearch]:
    """Every query record of a page absent or 1 a session's plan sent, in time order: each
    search after the records its typing sent."""
    return [record for search in plan for record in (*search.typed, search)]
