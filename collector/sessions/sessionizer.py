"""Searches grouped by session, their pending outcomes and deadlines, in event-time order.

Records arrive here in event-time order (the engine's buffer, on the stream clock, each time
corrected by its client's clock offset). An event stamped before the search it names is applied
at the search's time: it cannot have preceded it. Searches are created in time order, so both
deadline queues are FIFO deques, not heaps.

A search is **counted at its decision** (docs/metrics.md, "When a search is counted"), its
deadline ``S.ts + abandonment_s``: only then is it known whether its query record was a
keystroke of the next one (search as you type), whether its client is automated
(sessions/automated.py), and what became of it. Until then a query record is tracked but
counts nothing: what it needs for its counts stays on it (its record, the events it received,
whether it reformulates the intent before it), and the rules that read other searches (the
next record of the session, a click on it) read only its flags. At its decision it is counted
once: as a keystroke record, as an automated search, or as a search with everything that
happened to it so far and its outcome; a click or conversion after that counts when it comes.

Deadlines are swept in batches (``expire_before(t)``: every deadline ``D < t``, once per
buffer bucket, not before every record), and a decision taken late is still the decision at its
deadline: only records of the same session can change it (a newer search, a click or conversion
in the session), and before one of those is applied at time ``t`` its session's newest search is
decided if ``D < t``; a search whose attribution window closed before ``t`` counts as gone.

Record R is a keystroke of the next query record R′ of its session when R′ comes within
``intents.keystroke_gap_s``, its normalized query continues R's (outcomes.continues) and R had no
click, conversion or next page before it. Outcome of search S (an intent):
  * reformulated when the next intent of its session comes within ``reformulation_s``, with a
    different normalized query, and S had no click before it;
  * abandoned (with results) / zero-result exit (no results) when at the deadline S is still the
    session's newest search, nothing engaged the session after it, and S had no click or
    conversion.
A session is nothing but its newest search (``sessions[key]``): what the rules above look at.
S stays attributable (clicks, conversions) until ``S.ts + attribution_s``, then it is evicted.
"""

from __future__ import annotations

from collections import deque
from math import inf

from collector.ingest import accounting as acc
from collector.ingest.events import QueryAttributes, WireRecord
from collector.outcomes import continues, reformulation_kind
from collector.series.judged_relevance import JudgedQuery, JudgedRankings, of_application
from collector.series.quality import TAIL, QualitySeries, SeriesTable
from collector.series.strata import StrataClassifier
from collector.series.units import UnitTracker
from collector.series.zero_result_queries import TopZeroResultQueries
from collector.sessions.automated import AutomatedClients
from collector.sessions.event_outcomes import EventOutcomes
from collector.sessions.search import (
    ACTED,
    CLICKED,
    CONVERTED,
    DECIDED,
    EARLY,
    ENGAGED,
    EVENTED,
    KEYSTROKE,
    PAGE_SHIFT,
    PAGED,
    REFORMULATES,
    UNTRACKED,
    ZERO_RESULT,
    PageAlias,
    Search,
)
from collector.sessions.tracking import TrackingHealth
from collector.store.query_stats import QueryStats


class Sessionizer(EventOutcomes):
    """Applies ordered query and event records to session state and the quality counts: the
    query side and the deadlines here, the event side in ``EventOutcomes``
    (event_outcomes.py), whose rules read this state as their own."""

    def __init__(
        self,
        table: SeriesTable,
        strata: StrataClassifier,
        stats: acc.PipelineStats,
        units: UnitTracker,
        reformulation_s: float = 300.0,
        abandonment_s: float = 300.0,
        attribution_s: float = 1800.0,
        position_base: int = 1,
        zero_result_queries: TopZeroResultQueries | None = None,
        query_stats: QueryStats | None = None,
        team_attribute: bool = False,
        keystroke_gap_s: float = 5.0,
        max_edit: int = 2,
        typed_whole: frozenset[object] = frozenset(),
        automated: AutomatedClients | None = None,
        tracking: TrackingHealth | None = None,
    ) -> None:
        """``units``: the experiments' unit tracker (collector/series/units.py);
        ``keystroke_gap_s``, ``max_edit``: the keystroke rule (docs/metrics.md, "Search
        intents"), off for the applications in ``typed_whole``; ``automated``: the clients'
        behaviour (sessions/automated.py); ``tracking``: the applications' event coverage
        (sessions/tracking.py)."""
        self.table = table
        self.strata = strata
        self.stats = stats
        self.reformulation_s = reformulation_s
        self.abandonment_s = abandonment_s
        self.attribution_s = attribution_s
        self.position_base = position_base
        self.zero_result_queries = zero_result_queries or TopZeroResultQueries()
        self.query_stats = query_stats  # per-query aggregates, when a store is configured
        self.team_attribute = team_attribute  # events.team_attribute is set
        self.units = units
        self.keystroke_gap_s = keystroke_gap_s
        self.max_edit = max_edit
        self.typed_whole = typed_whole  # applications whose every query record is a search
        self.automated = automated or AutomatedClients()
        self.tracking = tracking or TrackingHealth()
        self.judged: JudgedRankings | None = None  # the judgment set, when one is loaded
        # application → IPS weight per position (collector/series/examination.py), when loaded
        self.click_weights: dict[str, tuple[float, ...]] | None = None
        self.sessions: dict[str, Search] = {}  # session key → its newest tracked search
        self.searches: dict[str, Search | PageAlias] = {}
        self.outcome_due: deque[Search] = deque()
        self.expiry_due: deque[Search | PageAlias] = deque()
        self.next_deadline = inf  # earliest deadline of either queue: callers skip expiry before
        # query ids of searches still in the engine's buffer that already received an exposure
        # (applied ahead of them: collector/engine.py _expose), for their tracking health
        self.exposed_early: set[str] = set()

    # -- queries ---------------------------------------------------------------------------
    def on_query(self, rec: WireRecord, ts: float) -> int:
        """A query record, in the order docs/metrics.md decides it: a duplicate, or a page of
        its session's search (_on_page), or a query record tracked until its
        decision counts it (_decide): whether it continues the typing of the session's newest,
        which it then makes a keystroke, or follows it as the next intent (_after)."""
        key = rec.query_id
        known = self.searches.get(key)
        if known is not None and known.ts >= ts - self.attribution_s:
            return acc.DUPLICATE
        attrs = rec.query_attributes
        # its session: its session id, else its client's id; with neither, a session of its
        # own (its query id, marked so it meets no real id)
        session_key = (attrs.session_id if attrs is not None else None) or rec.client_id
        if session_key is None:
            session_key = "\x00" + key
        previous = self.sessions.get(session_key)
        if previous is not None and previous.ts < ts - self.abandonment_s:
            previous = self._newest(previous, ts)
        text = self.strata.text(rec.user_query)
        if attrs is not None and attrs.page is not None and attrs.page > 1:
            self._on_page(key, previous, text.normalized, attrs.page, ts)
            return acc.ACCEPTED
        hits = rec.query_response_hit_ids
        if hits is None:
            hits = rec.query_response_objects_ids
        if (attrs is not None and attrs.total_hits == 0) or (hits is not None and not hits):
            flags = ZERO_RESULT
        else:
            flags = len(hits) << PAGE_SHIFT if hits else 0
        client = rec.client_id or (attrs.session_id if attrs is not None else None)
        search = Search(key, session_key, text.normalized, ts, flags, text, rec, client)
        early = self.exposed_early
        if early and key in early:  # an exposure was applied before it (engine._expose)
            early.discard(key)
            search.flags |= EVENTED
        if previous is not None:
            self._after(search, previous)
        if client is not None:
            self.automated.searched(client, search)
        self.searches[key] = search  # tracked until its deadlines, its session's newest
        self.sessions[session_key] = search
        if ts + self.abandonment_s < self.next_deadline:
            self.next_deadline = ts + self.abandonment_s
        self.outcome_due.append(search)
        self.expiry_due.append(search)
        return acc.ACCEPTED

    def _after(self, search: Search, previous: Search) -> None:
        """``search`` is its session's next query record after ``previous``: a keystroke's
        successor when it continues its typing within the gap (``previous`` untouched by the
        user), which it then follows as the intent after the one before the chain; else
        simply the next intent after it."""
        if (previous.flags & (ACTED | DECIDED | KEYSTROKE)
                or search.ts - previous.ts > self.keystroke_gap_s
                or previous.record.application in self.typed_whole
                or not continues(previous.normalized, search.normalized, self.max_edit)):
            self._follows(search, previous)
            return
        previous.flags |= KEYSTROKE
        if previous.client is not None:
            self.automated.retract(previous.client, previous)
        before, previous.before = previous.before, None
        if before is not None:
            self._follows(search, before)

    def _follows(self, search: Search, before: Search) -> None:
        """``search`` is the next intent after ``before`` (unless a later record makes it a
        keystroke): it reformulates it when it comes within the window, with another query and
        no click on ``before`` yet; counted at its decision."""
        search.before = before
        if (search.ts - before.ts <= self.reformulation_s and not before.flags & CLICKED
                and before.normalized != search.normalized):
            search.flags |= REFORMULATES
        else:
            search.flags &= ~REFORMULATES

    def _on_page(self, key: str, parent: Search | None, normalized: str, page: int,
                 ts: float) -> None:
        """Pagination engages the session; its clicks belong to the search it continues, which
        the user acted on (never a keystroke)."""
        if parent is not None and ts >= parent.ts:
            parent.flags |= ENGAGED
        if parent is None or parent.normalized != normalized:
            self.stats.data_quality[acc.PAGINATION_WITHOUT_SEARCH] += 1
            return
        if not parent.flags & DECIDED:
            self._acted(parent, parent.flags & ~KEYSTROKE | PAGED | EVENTED)
        alias = PageAlias(key, parent, (page - 1) * (parent.flags >> PAGE_SHIFT), ts)
        self.searches[key] = alias
        self.expiry_due.append(alias)  # its parent is tracked, so next_deadline is set already

    # -- a search counted, at its decision ---------------------------------------------------
    def _count(self, search: Search, record: WireRecord, flags: int) -> None:
        """An intent of a person, counted at its decision: in its series with what it returned
        (_results) and its latency; unless it is untracked (its application's events stopped:
        sessions/tracking.py), in its client's unit bucket and its store row (_stored)
        with the exposures it received before (_exposure), and with its outcome (_abandoned);
        and its reformulation of the intent before it. The hot path: one call per search,
        the steps only a few searches take left to their own methods."""
        attrs = record.query_attributes
        series = search.series = self.table.get(
            record.application, attrs.variant if attrs is not None else None,
            self.strata.stratum(search.text))
        series.searches += 1
        hits = record.query_response_hit_ids
        if hits is None:
            hits = record.query_response_objects_ids
        scored = None
        if flags & ZERO_RESULT or hits is None or self.judged is not None:
            scored = self._results(record, attrs, series, search, hits)
        latency = attrs.latency_ms if attrs is not None else None
        if latency is not None:
            if latency < 0:  # events.INVALID_LATENCY_MS: not a latency, no timing for units
                self.stats.data_quality[acc.INVALID_LATENCY] += 1
                latency = None
            else:
                series.latency.observe(latency / 1000.0)
        if not flags & (ZERO_RESULT | EARLY) and self.tracking.observe(series.application,
                                                                         flags & EVENTED != 0):
            series.untracked += 1
            search.flags |= UNTRACKED
            search.held = None
        else:  # its events could arrive: its unit, store row, exposures and outcome
            experiment = series.experiment
            if experiment is not None:  # its client's unit bucket; without a client id, in no
                client_id = record.client_id  # unit (docs/metrics.md, "Unit"), counted as such
                if client_id is None:
                    experiment.without_client_id += 1
                else:
                    unit = search.unit = self.units.counts(experiment, client_id, search.ts)
                    unit.searches += 1
                    unit.zero_result += flags & ZERO_RESULT
                    if latency is not None:
                        unit.timed += 1
                        if latency / 1000.0 > self.units.guardrail_s:
                            unit.slow += 1
            if self.query_stats is not None:
                self._stored(search, record.client_id, hits, scored)
            held = search.held
            if held is not None:  # exposures, for its store row; from now on they count as
                search.held = None  # they come
                for rec, first_page in held:
                    self._exposure(rec.event_attributes, search, first_page)
            if flags & EVENTED and not flags & ZERO_RESULT:
                series.with_events += 1
            if (not flags & (CLICKED | CONVERTED | ENGAGED)
                    and self.sessions.get(search.session_key) is search):
                self._abandoned(search, series, flags)
        before = search.before
        if before is not None:
            search.before = None
            if flags & REFORMULATES:
                if not before.flags & DECIDED:  # this one was acted on before its deadline:
                    self._decide(before)  # its session is a person's, decided as it stands
                self._reformulated(before, search.normalized)

    def _reformulated(self, before: Search, normalized: str) -> None:
        """``before`` was reformulated by the next intent, of query ``normalized``: counted by
        kind (``before`` is a person's intent decided earlier: it has its series)."""
        series = before.series
        if series is None or before.flags & UNTRACKED:  # a keystroke revived by a click,
            return  # decided out of its chain; or untracked: whether it was clicked is unknown
        series.reformulated[reformulation_kind(before.normalized, normalized)] += 1
        if before.unit is not None:
            before.unit.reformulated += 1
        if self.query_stats is not None:
            row = self._row(before)
            row.reformulated += 1
            row.reformulations[normalized] = row.reformulations.get(normalized, 0) + 1

    def _apart(self, search: Search, record: WireRecord, reason: str | None) -> None:
        """A keystroke record (``reason`` None) or a search of an automated client: counted
        only as such, in the series of its application and variant (the stratum its text
        fixes, else tail: it does not feed the live strata sketch of people's queries); what
        it received is dropped, and so is the intent before it (no chain of a bot's searches
        stays in memory)."""
        search.held = search.before = None
        attrs = record.query_attributes
        fixed = search.text.fixed_stratum
        series = self.table.get(record.application,
                                attrs.variant if attrs is not None else None,
                                fixed if fixed >= 0 else TAIL)
        if reason is None:
            series.keystrokes += 1
        else:
            series.automated[reason] += 1

    def _results(self, rec: WireRecord, attrs: QueryAttributes | None, series: QualitySeries,
                 search: Search, hits: tuple[str | int, ...] | None
                 ) -> tuple[float, float] | None:
        """A search counted by what it returned: zero results (counted, and in the top
        zero-result queries), a result list (scored when its query is judged: returns the
        judged scores), or an unknown result count (counted as with results). _count takes a
        result list without a judgment set loaded as it stands, without this call."""
        if search.flags & ZERO_RESULT:
            series.zero_result += 1
            self.zero_result_queries.add(series.application, search.normalized, search.ts,
                                         rec.client_id)
            return None
        if hits is not None:
            judged = self.judged
            if judged is not None:
                by_application = judged.queries.get(search.normalized)
                if by_application is not None:
                    return self._score(series, by_application, rec.application, hits)
            return None
        if (attrs.total_hits if attrs is not None else None) is None:
            series.unknown_result_count += 1
            self.stats.data_quality[acc.UNKNOWN_RESULT_COUNT] += 1
        return None

    def _stored(self, search: Search, client_id: str | None,
                hits: tuple[str | int, ...] | None, scored: tuple[float, float] | None) -> None:
        """The search in its per-query store row: counted, its results shown, its client
        marked, its judged scores."""
        row = search.row = self.query_stats.row(search.ts, search.series.application,
                                                search.normalized)
        row.searches += 1
        row.zero_result += search.flags & ZERO_RESULT
        self.query_stats.show(row, hits)
        self.query_stats.mark(row, client_id)
        if scored is not None:
            row.judged_searches += 1
            row.judged_ndcg_sum += scored[0]
            row.judged_coverage_sum += scored[1]

    def _score(self, series: QualitySeries, by_application: dict[str, JudgedQuery],
               application: str | None, hits: tuple[str | int, ...]
               ) -> tuple[float, float] | None:
        """Judged NDCG@10, ERR@10 and coverage@10 of the ranking a judged query returned;
        (NDCG, coverage) for its per-query row, None when not judged for this application."""
        judged_rankings = self.judged
        assert judged_rankings is not None
        judged = of_application(by_application, application or "")
        if judged is None:
            return None
        ndcg, err, coverage = judged_rankings.score(judged, hits)
        series.judged_searches += 1
        series.judged_ndcg_sum += ndcg
        series.judged_err_sum += err
        series.judged_coverage_sum += coverage
        return ndcg, coverage

    # -- deadlines -------------------------------------------------------------------------
    def _newest(self, search: Search, ts: float) -> Search | None:
        """A session's newest search whose deadline passed before ``ts``, as a record at
        ``ts`` finds it: decided, and None once its attribution window closed."""
        if not search.flags & DECIDED:
            self._decide(search)
        return None if search.ts < ts - self.attribution_s else search

    def _decide(self, search: Search) -> None:
        """A query record's decision, at its deadline or when the user acted on it: a
        keystroke, an automated client's search, or a person's search counted with everything
        that happened to it so far and its outcome (_count)."""
        flags = search.flags
        search.flags = flags | DECIDED
        record = search.record
        if flags & KEYSTROKE:
            self._apart(search, record, None)
        elif search.watch is not None and search.watch.on and (
                reason := self.automated.verdict(search.client,
                                                 search.ts + self.abandonment_s)) is not None:
            self._apart(search, record, reason)
        else:
            self._count(search, record, flags)
        search.record = None  # kept until now, for its counts

    def _abandoned(self, search: Search, series: QualitySeries, flags: int) -> None:
        """Nothing followed the search by its decision: a zero-result exit, or abandoned."""
        if flags & ZERO_RESULT:
            series.zero_result_exits += 1
            return
        series.abandoned += 1
        if search.unit is not None:
            search.unit.abandoned += 1
        if self.query_stats is not None:
            self._row(search).abandoned += 1

    def expire_before(self, t: float) -> None:
        """Decide every query record and evict every search whose deadline is before ``t``;
        forget the experiments' and the automated-client rules' clients not seen for their
        window (not at the end of input, ``t`` infinite: the count then stays that of the
        newest time)."""
        due = self.outcome_due
        if due and due[0].ts < t - self.abandonment_s:  # deadline < t ⇔ search.ts < t − window
            self._decide_abandoned(t - self.abandonment_s)
        if t < inf:  # after the decisions: they count units and read the clients' windows
            self.units.expire_before(t)
            if t > self.automated.next_expiry:
                self.automated.expire_before(t)
        expiring = self.expiry_due
        if expiring and expiring[0].ts < t - self.attribution_s:
            self._evict_attributed(t - self.attribution_s)
        self.next_deadline = min(due[0].ts + self.abandonment_s if due else inf,
                                 expiring[0].ts + self.attribution_s if expiring else inf)

    def _decide_abandoned(self, horizon: float) -> None:
        """Every query record made before ``horizon`` has had its abandonment window: it is
        decided now, once."""
        due = self.outcome_due
        while due and due[0].ts < horizon:
            search = due.popleft()
            if not search.flags & DECIDED:
                self._decide(search)
            elif search.flags & (EARLY | ZERO_RESULT) == EARLY and search.series is not None:
                # acted on, counted at once: its event coverage is read here, in the order of
                # the searches' times (the others' at their decision), so a burst of decisions
                # (the end of input, a lull) never looks like events that stopped
                self.tracking.observe(search.series.application, True)

    def _evict_attributed(self, horizon: float) -> None:
        """Every search and page made before ``horizon`` has had its attribution window: it
        is forgotten (an event for it is an orphan from now on), an interleaved search's
        teams credited first."""
        expiring = self.expiry_due
        searches, sessions = self.searches, self.sessions
        while expiring and expiring[0].ts < horizon:
            item = expiring.popleft()
            if searches.get(item.key) is item:  # a gone search's id may be reused
                del searches[item.key]
            if item.__class__ is Search and item.teams is not None:
                self._credit(item)
            # Searches expire in creation order, so a session's newest goes last.
            if item.__class__ is Search and sessions.get(item.session_key) is item:
                del sessions[item.session_key]

    @property
    def pending(self) -> int:
        """Query records not decided yet (the gauge ``pending_searches``)."""
        return len(self.outcome_due)
