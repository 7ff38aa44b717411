"""The ground truth: the written definitions of docs/metrics.md applied directly to each
session's plan, an oracle independent of decoding, ordering, windows and state in the engine."""

from __future__ import annotations

from collector.exposition.summary import summarize
from collector.outcomes import REFORMULATION_KINDS, reformulation_kind
from collector.sources.simulator.plan import PlannedSearch

REFORMULATION_S = 300.0
ABANDONMENT_S = 300.0


class GroundTruth:
    """Totals in the exact shape of ``searchpulse replay --json``."""

    def __init__(self) -> None:
        self.by_app: dict[str, _Totals] = {}
        self.records = 0
        self.invalid = 0
        self.orphans = 0
        self.duplicates = 0
        self.ignored = 0
        self.sessions: list[tuple[str, list[PlannedSearch]]] = []  # (client, plan), if kept

    def add_session(self, plan: list[PlannedSearch], client: str | None = None) -> None:
        _tally(self.by_app, plan)
        if client is not None:
            self.sessions.append((client, plan))

    def by_application(self, without: set[str]) -> dict[str, dict[str, object]]:
        """Per application, the totals of the kept sessions of every client but ``without``."""
        by_app: dict[str, _Totals] = {}
        for client, plan in self.sessions:
            if client not in without:
                _tally(by_app, plan)
        return {app: totals.as_dict() for app, totals in sorted(by_app.items())}

    def searches_by_day(self, without: set[str]) -> dict[tuple[int, str], int]:
        """(UTC day number, application) → searches, of the kept sessions but ``without``'s."""
        days: dict[tuple[int, str], int] = {}
        for client, plan in self.sessions:
            if client not in without:
                for search in plan:
                    key = (search.ts_ms // 86_400_000, search.application)
                    days[key] = days.get(key, 0) + 1
        return days

    def summary(self) -> dict[str, object]:
        overall = _Totals()
        for totals in self.by_app.values():
            overall.merge(totals)
        result = overall.as_dict()
        result.update(records=self.records, invalid_records=self.invalid,
                      orphan_events=self.orphans, late_events=0, late_queries=0,
                      retimed_records=0, future_records=0, duplicates=self.duplicates,
                      ignored_records=self.ignored)
        result["by_application"] = {app: t.as_dict() for app, t in sorted(self.by_app.items())}
        return result


def _tally(by_app: dict[str, _Totals], plan: list[PlannedSearch]) -> None:
    for i, search in enumerate(plan):
        totals = by_app.setdefault(search.application, _Totals())
        nxt = plan[i + 1] if i + 1 < len(plan) else None
        totals.add(search, nxt, plan)


def _reformulated_by(s: PlannedSearch, nxt: PlannedSearch | None) -> bool:
    """Whether ``nxt`` reformulates ``s``: a different query within the reformulation window,
    with no click on ``s`` before it."""
    return (nxt is not None and (nxt.ts_ms - s.ts_ms) / 1000 <= REFORMULATION_S
            and nxt.normalized != s.normalized
            and not any(c_ts < nxt.ts_ms for c_ts, _ in s.clicks))


def _engaged(s: PlannedSearch, nxt: PlannedSearch | None, plan: list[PlannedSearch]) -> bool:
    """Whether anything followed ``s`` within the abandonment window: its own click,
    conversion or next page, the next search, or any click or conversion of the session."""
    deadline = s.ts_ms + ABANDONMENT_S * 1000
    return (any(ts <= deadline for ts, _ in s.clicks)
            or any(ts <= deadline for ts in s.conversions)
            or any(s.ts_ms <= ts <= deadline for ts in s.pages)
            or (nxt is not None and nxt.ts_ms <= deadline)
            or any(s.ts_ms <= ts <= deadline for o in plan if o is not s
                   for ts in [*(c for c, _ in o.clicks), *o.conversions]))


class _Totals:
    # the attributes of collector/definitions.py COUNTS, so the summary is computed by the
    # same rows as the engine's (collector/exposition/summary.py)
    FIELDS = ("searches", "zero_result", "clicked", "clicks", "converted", "abandoned",
              "zero_result_exits", "time_to_first_click_sum", "first_clicks",
              "reciprocal_rank_sum", "ranked_clicked")

    def __init__(self) -> None:
        for name in self.FIELDS:
            setattr(self, name, 0)
        self.kinds = dict.fromkeys(REFORMULATION_KINDS, 0)

    def add(self, s: PlannedSearch, nxt: PlannedSearch | None, plan: list[PlannedSearch]) -> None:
        """The definitions of docs/metrics.md, applied to one search of a clean session plan."""
        self.searches += 1
        self.zero_result += s.zero
        if _reformulated_by(s, nxt):
            self.kinds[reformulation_kind(s.normalized, nxt.normalized)] += 1
        if not s.zero and s.clicks:
            self._add_clicks(s)
        if not s.zero and s.conversions:
            self.converted += 1
        if not _engaged(s, nxt, plan):
            if s.zero:
                self.zero_result_exits += 1
            else:
                self.abandoned += 1

    def _add_clicks(self, s: PlannedSearch) -> None:
        """A clicked search's clicks, its time to first click and, when the first click's
        position is known, its reciprocal rank."""
        self.clicked += 1
        self.clicks += len(s.clicks)
        first_ts, position = min(s.clicks)
        self.time_to_first_click_sum += first_ts / 1000 - s.ts_ms / 1000
        self.first_clicks += 1
        if position:
            self.reciprocal_rank_sum += 1.0 / position
            self.ranked_clicked += 1

    def merge(self, other: _Totals) -> None:
        for name in self.FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for kind, value in other.kinds.items():
            self.kinds[kind] += value

    def as_dict(self) -> dict[str, object]:
        totals = {name: getattr(self, name) for name in self.FIELDS}
        totals["reformulated"] = sum(self.kinds.values())
        return summarize(totals, dict(self.kinds))
