"""The ground truth: the written definitions of docs/metrics.md applied directly to each
session's plan, an oracle independent of decoding, ordering, windows and state in the engine."""

from __future__ import annotations

from collector.exposition.summary import summarize
from collector.outcomes import REFORMULATION_KINDS, reformulation_kind
from collector.sources.simulator.intents import IntentRule, query_records
from collector.sources.simulator.outages import OutageTally, observable
from collector.sources.simulator.plan import PlannedSearch
from collector.sources.simulator.spec import TrackingOutage

REFORMULATION_S = 300.0
ABANDONMENT_S = 300.0
# Keys of the truth that ``replay --json`` has not: what only the simulator knows (which bot
# kind made an automated search; what people did in a tracking outage beside what a collector
# can see of it). Each only when its option is on.
INFORMATIONAL = ("automated_by_kind", "observable", "tracking_outages")
DEFINED = IntentRule(decision_s=ABANDONMENT_S)  # the keystroke rule, the settings' defaults


class GroundTruth:
    """Totals in the exact shape of ``searchpulse replay --json``: what people did (their
    intents, by ``rule``), automated clients' searches apart (by kind in
    ``automated_by_kind``), and with tracking outages what a perfect collector can see of it
    (``observable``: the plans without the events the outages dropped) and what each hid."""

    def __init__(self, rule: IntentRule = DEFINED, bot_kinds: tuple[str, ...] = (),
                 outages: tuple[TrackingOutage, ...] = (), start: float = 0.0) -> None:
        self.rule = rule
        self.by_app: dict[str, _Totals] = {}
        self.records = 0
        self.invalid = 0
        self.orphans = 0
        self.duplicates = 0
        self.ignored = 0
        self.sessions: list[tuple[str, list[PlannedSearch]]] = []  # (client, plan), if kept
        self.automated_by_kind = dict.fromkeys(bot_kinds, 0)
        self.outages = [OutageTally(outage, start) for outage in outages]
        self.observed_by_app: dict[str, _Totals] = {}

    def add_session(self, plan: list[PlannedSearch], client: str | None = None) -> None:
        self._tally(self.by_app, plan)
        if self.outages:
            self._tally(self.observed_by_app, [observable(s, self.outages) for s in plan])
            for outage in self.outages:
                outage.add(plan, self.rule)
        if client is not None:
            self.sessions.append((client, plan))

    def add_automated(self, kind: str, search: PlannedSearch,
                      following: PlannedSearch | None) -> None:
        """An automated client's query record, once the next one it sent (or None: its last)
        is known: a keystroke by the written rule, else an automated search of ``kind``."""
        keystroke = self.rule.keystroke(search, following)
        for by_app in (self.by_app, self.observed_by_app) if self.outages else (self.by_app,):
            totals = by_app.setdefault(search.application, _Totals())
            if keystroke:
                totals.keystrokes += 1
            else:
                totals.automated_searches += 1
        if not keystroke:
            self.automated_by_kind[kind] += 1

    def hid(self, application: str, offset_s: float, action: str) -> bool:
        """Whether an event of ``application`` at ``offset_s`` falls in a tracking outage (and
        so is not sent): counted in that outage's hidden events."""
        for outage in self.outages:
            if outage.outage.hides(application, offset_s):
                outage.events[action] = outage.events.get(action, 0) + 1
                return True
        return False

    def by_application(self, without: set[str]) -> dict[str, dict[str, object]]:
        """Per application, the totals of the kept sessions of every client but ``without``."""
        by_app: dict[str, _Totals] = {}
        for client, plan in self.sessions:
            if client not in without:
                self._tally(by_app, plan)
        return {app: totals.as_dict() for app, totals in sorted(by_app.items())}

    def searches_by_day(self, without: set[str]) -> dict[tuple[int, str], int]:
        """(UTC day number, application) → searches (intents), of the kept sessions but
        ``without``'s."""
        days: dict[tuple[int, str], int] = {}
        for client, plan in self.sessions:
            if client not in without:
                for search, _ in self.rule.split(query_records(plan))[0]:
                    key = (search.ts_ms // 86_400_000, search.application)
                    days[key] = days.get(key, 0) + 1
        return days

    def summary(self) -> dict[str, object]:
        result = self._summary(self.by_app)
        if self.automated_by_kind:
            result["automated_by_kind"] = dict(self.automated_by_kind)
        if self.outages:
            result["observable"] = self._summary(self.observed_by_app)
            result["tracking_outages"] = [outage.as_dict() for outage in self.outages]
        return result

    def _summary(self, by_app: dict[str, _Totals]) -> dict[str, object]:
        overall = _Totals()
        for totals in by_app.values():
            overall.merge(totals)
        result = overall.as_dict()
        result.update(records=self.records, invalid_records=self.invalid,
                      orphan_events=self.orphans, late_events=0, late_queries=0,
                      retimed_records=0, future_records=0, duplicates=self.duplicates,
                      ignored_records=self.ignored)
        result["by_application"] = {app: t.as_dict() for app, t in sorted(by_app.items())}
        return result

    def _tally(self, by_app: dict[str, _Totals], plan: list[PlannedSearch]) -> None:
        """A session's plan, by the written definitions: its keystroke records counted as
        such, its intents as searches, each reformulated by the next intent and engaged by
        the next query record."""
        intents, keystrokes = self.rule.split(query_records(plan))
        for record in keystrokes:
            by_app.setdefault(record.application, _Totals()).keystrokes += 1
        for n, (search, following) in enumerate(intents):
            nxt = intents[n + 1][0] if n + 1 < len(intents) else None
            by_app.setdefault(search.application, _Totals()).add(search, nxt, following, plan)



def _reformulated_by(s: PlannedSearch, nxt: PlannedSearch | None) -> bool:
    """Whether ``nxt``, the next intent, reformulates ``s``: a different query within the
    reformulation window, with no click on ``s`` before it."""
    return (nxt is not None and (nxt.ts_ms - s.ts_ms) / 1000 <= REFORMULATION_S
            and nxt.normalized != s.normalized
            and not any(c_ts < nxt.ts_ms for c_ts, _ in s.clicks))


def _engaged(s: PlannedSearch, following: PlannedSearch | None,
             plan: list[PlannedSearch]) -> bool:
    """Whether anything followed ``s`` within the abandonment window: its own click,
    conversion or next page, the session's next query record (a keystroke or a search), or
    any click or conversion of the session."""
    deadline = s.ts_ms + ABANDONMENT_S * 1000
    return (any(ts <= deadline for ts, _ in s.clicks)
            or any(ts <= deadline for ts in s.conversions)
            or any(s.ts_ms <= ts <= deadline for ts in s.pages)
            or (following is not None and following.ts_ms <= deadline)
            or any(s.ts_ms <= ts <= deadline for o in plan if o is not s
                   for ts in [*(c for c, _ in o.clicks), *o.conversions]))


def _evented(s: PlannedSearch) -> bool:
    """Whether ``s`` received any event by its decision: a click, a conversion, a next page
    or an impression (tracking health)."""
    deadline = s.ts_ms + ABANDONMENT_S * 1000
    return (any(ts <= deadline for ts, _ in s.clicks)
            or any(ts <= deadline for ts in s.conversions)
            or any(s.ts_ms <= ts <= deadline for ts in s.pages)
            or any(ts <= deadline for ts in s.impressions))


class _Totals:
    # the attributes of collector/definitions.py COUNTS, so the summary is computed by the
    # same rows as the engine's (collector/exposition/summary.py)
    FIELDS = ("searches", "zero_result", "clicked", "clicks", "converted", "abandoned",
              "zero_result_exits", "time_to_first_click_sum", "first_clicks",
              "reciprocal_rank_sum", "ranked_clicked", "keystrokes", "automated_searches",
              "with_events", "untracked")  # untracked: 0, people's truth: what they did

    def __init__(self) -> None:
        for name in self.FIELDS:
            setattr(self, name, 0)
        self.kinds = dict.fromkeys(REFORMULATION_KINDS, 0)

    def add(self, s: PlannedSearch, nxt: PlannedSearch | None,
            following: PlannedSearch | None, plan: list[PlannedSearch]) -> None:
        """The definitions of docs/metrics.md, applied to one intent of a clean session plan
        (``nxt``: the next intent, ``following``: the next query record)."""
        self.searches += 1
        self.zero_result += s.zero
        if _reformulated_by(s, nxt):
            self.kinds[reformulation_kind(s.normalized, nxt.normalized)] += 1
        if not s.zero and s.clicks:
            self._add_clicks(s)
        if not s.zero and s.conversions:
            self.converted += 1
        if not s.zero and _evented(s):
            self.with_events += 1
        if not _engaged(s, following, plan):
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
