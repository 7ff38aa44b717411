"""Which queries may leave the system in a feedback file or the report: the same two rules as
/metrics (collector/privacy/personal_data.py) — no personal-data detector fires on the query, and at
least ``feedback.min_distinct_clients`` distinct clients typed it in the period (from the client
marks the store keeps per row: client ids only, a search without one makes no client) — with
every refusal counted by reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from collector.privacy.canonical import canonical
from collector.privacy.personal_data import FEW_CLIENTS, PersonalData, too_few_clients

# Normalized queries lose leading punctuation (- @) and whitespace, not = or +: a query that
# would start a spreadsheet formula is not handed out at all.
SPREADSHEET_FORMULA = "spreadsheet_formula"
# (application, query) → the distinct client marks of the period (at most CLIENT_MARKS) and
# its searches without a client id (QueryStore.clients_of)
ClientsOf = Callable[[str, str], tuple[set[str], int]]


class FeedbackRelease:
    """``known``: (application, query) → bounds of its distinct clients over the period:
    (the store's daily client marks at their maximum, its searches). Only a pair between the
    two bounds needs a lookup."""

    def __init__(self, detectors: PersonalData, min_clients: int, clients_of: ClientsOf,
                 known: dict[tuple[str, str], tuple[int, int]] | None = None) -> None:
        self.detectors = detectors
        self.min_clients = min_clients
        self.clients_of = clients_of
        self.known = known or {}
        self._refused: dict[str, set[str]] = {}  # reason → the queries refused for it
        self._clean: set[str] = set()  # queries rule 1 passed (the period's, checked once)
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
        else:
            self._clean.add(query)
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
            bounds = [self.known.get((a, query)) for a in applications]
            if None not in bounds and sum(b[1] for b in bounds) < self.min_clients:
                reason = FEW_CLIENTS  # fewer searches than k: fewer clients, no lookup
            else:
                found = [self.clients_of(a, query) for a in applications]
                reason = too_few_clients(len(set().union(*(marks for marks, _ in found))),
                                         sum(without for _, without in found),
                                         self.min_clients)
        self._decided[key] = reason
        if reason:
            self._refused.setdefault(reason, set()).add(query)
        return reason

    def listable(self, queries: pd.Index, marks: pd.Series) -> np.ndarray:
        """Which of ``queries`` (a list of a million: strata.csv) may be written, from what is
        known without a lookup: rule 1 as decided for the period's queries, rule 2 by
        ``marks`` (query → the largest day's distinct clients in one application), a lower
        bound — a query whose clients are spread thinner is left out, never one that fails."""
        enough = marks.reindex(queries).fillna(0).to_numpy() >= self.min_clients
        refused = queries.isin(set().union(*self._refused.values()))
        self._refused.setdefault(FEW_CLIENTS, set()).update(queries[~enough & ~refused])
        return enough & ~refused

    def _known_enough(self, query: str, applications: Iterable[str]) -> bool:
        return any(self.known.get((a, query), (0, 0))[0] >= self.min_clients
                   for a in applications)

    def _rule_one(self, query: str) -> str | None:
        if query in self._clean:
            return None
        if canonical(query).startswith(("=", "+")):  # a zero-width space first is no shield
            return SPREADSHEET_FORMULA
        return self.detectors.reason(query)
