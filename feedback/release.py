"""Which queries may leave the system in a feedback file or the report: the same two rules as
/metrics (collector/personal_data.py) — no personal-data detector fires on the query, and at
least ``feedback.min_distinct_clients`` distinct clients typed it in the period (from the client
marks the store keeps per row) — with every refusal counted by reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from collector.personal_data import FEW_CLIENTS, PersonalData

# Normalized queries lose leading punctuation (- @) and whitespace, not = or +: a query that
# would start a spreadsheet formula is not handed out at all.
SPREADSHEET_FORMULA = "spreadsheet_formula"
# (application, query) → the distinct client marks of the period (at most CLIENT_MARKS)
MarksOf = Callable[[str, str], set[str]]


class FeedbackRelease:
    """``known``: (application, query) → a lower bound of its distinct clients (the store's
    daily client marks, at their maximum): when it reaches k, no lookup is needed."""

    def __init__(self, detectors: PersonalData, min_clients: int, marks_of: MarksOf,
                 known: dict[tuple[str, str], int] | None = None) -> None:
        self.detectors = detectors
        self.min_clients = min_clients
        self.marks_of = marks_of
        self.known = known or {}
        self._refused: dict[str, set[str]] = {}  # reason → the queries refused for it
        self._decided: dict[tuple[str, ...], str | None] = {}

    @property
    def withheld(self) -> Counter[str]:
        """Reason → distinct queries refused (each query once, whatever it was asked for)."""
        return Counter({reason: len(queries) for reason, queries in self._refused.items()})

    def personal(self, query: str) -> bool:
        """Rule 1 alone (no store lookup), for every query of the period."""
        reason = self._rule_one(query)
        if reason:
            self._refused.setdefault(reason, set()).add(query)
        return reason is not None

    def allows(self, application: str, query: str) -> bool:
        return self.reason(query, (application,)) is None

    def reason(self, query: str, applications: Iterable[str]) -> str | None:
        """Why ``query`` (counted over ``applications``) may not be written, or None."""
        applications = tuple(applications)
        key = (query, *applications)
        if key in self._decided:
            return self._decided[key]
        reason = self._rule_one(query)
        if reason is None and not self._known_enough(query, applications):
            marks = set().union(*(self.marks_of(a, query) for a in applications))
            if len(marks) < self.min_clients:
                reason = FEW_CLIENTS
        self._decided[key] = reason
        if reason:
            self._refused.setdefault(reason, set()).add(query)
        return reason

    def listable(self, query: str, applications: Iterable[str]) -> bool:
        """Both rules from what is known without a lookup (for lists of a million queries:
        strata.csv): rule 2 by the lower bound only, so a query whose clients are spread over
        days and applications may be left out; never one that fails."""
        reason = self._rule_one(query)
        if reason is None and not self._known_enough(query, applications):
            reason = FEW_CLIENTS
        if reason:
            self._refused.setdefault(reason, set()).add(query)
        return reason is None

    def _known_enough(self, query: str, applications: Iterable[str]) -> bool:
        return any(self.known.get((a, query), 0) >= self.min_clients for a in applications)

    def _rule_one(self, query: str) -> str | None:
        if query.startswith(("=", "+")):
            return SPREADSHEET_FORMULA
        return self.detectors.reason(query)
