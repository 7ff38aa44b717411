"""Searches grouped by session, their pending outcomes and deadlines, in event-time order.

Records arrive here in event-time order (the engine's buffer, on the stream clock, each time
corrected by its client's clock offset). An event stamped before the search it names is applied
at the search's time: it cannot have preceded it. Searches are created in time order, so both
deadline queues are FIFO deques, not heaps.

Deadlines are swept in batches (``expire_before(t)``: every deadline ``D < t``, once per
buffer bucket, not before every record), and a decision taken late is still the decision at its
deadline: only records of the same session can change it (a newer search, a click or conversion
in the session), and before one of those is applied at time ``t`` its session's newest search is
decided if ``D < t``; a search whose attribution window closed before ``t`` counts as gone.

Outcome of search S (deadline ``S.ts + abandonment_s``):
  * reformulated when the next search of its session comes within ``reformulation_s``, with a
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

import msgspec

from collector.ingest import accounting as acc
from collector.ingest.events import EventAttributes, EventObject, QueryAttributes, WireRecord
from collector.outcomes import reformulation_kind
from collector.series.judged_relevance import JudgedQuery, JudgedRankings, of_application
from collector.series.quality import QualitySeries, SeriesTable
from collector.series.strata import StrataClassifier
from collector.series.units import BucketCounts, ExperimentUnits, UnitTracker
from collector.series.zero_result_queries import TopZeroResultQueries
from collector.sessions.interleaving import UNTAGGED, credit, team_of
from collector.store.query_stats import QueryRow, QueryStats

# Search.flags bits; the page size of the first result page is kept above them.
ZERO_RESULT = 1
CLICKED = 2
CONVERTED = 4
ENGAGED = 8  # while it is its session's newest search: pagination, or a click or conversion
#              on an earlier search of the session, happened after it
DECIDED = 16  # its abandonment / zero-result exit is decided (the sweep passes it over)
_PAGE_SHIFT = 5

CLICK = 1
CONVERSION = 2
EXPOSURE = 3
ACTIONS = {"click": CLICK, "click_through": CLICK, "add_to_cart": CONVERSION,
           "purchase": CONVERSION, "impression": EXPOSURE, "view": EXPOSURE}


def _position(rank: int, offset: int, first_page: bool) -> int:
    """A click's 1-based position across result pages (``offset``: the results on the pages
    before its own); 0 when unknown: no rank, or a later page whose page size is not known."""
    return rank + offset if rank > 0 and (offset or first_page) else 0


class Search(msgspec.Struct, gc=False):
    """One search. A session is just ``sessions[session_key]``: its newest search. gc=False
    keeps millions of open searches invisible to the cyclic GC; they hold no cycles."""

    key: str
    session_key: str
    normalized: str
    ts: float
    series: QualitySeries
    flags: int  # ZERO_RESULT … DECIDED, the first page's size above them
    seen: set[tuple] | None = None  # fingerprints of clicks/conversions, for duplicates
    row: QueryRow | None = None  # its per-query aggregate row, while that row is live
    teams: dict[str, int] | None = None  # interleaving: clicks per team, from the first tagged
    unit: BucketCounts | None = None  # in an experiment: its client's unit bucket (units.py)


class PageAlias(msgspec.Struct, gc=False):
    """A result page > 1: its query_id attributes clicks to the search, positions offset."""

    key: str
    search: Search
    offset: int  # 0: page size unknown, positions on this page are unknown
    ts: float


class Sessionizer:
    """Applies ordered query and event records to session state and the quality counts."""

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
    ) -> None:
        """``units``: the experiments' unit tracker (collector/series/units.py)."""
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
        self.judged: JudgedRankings | None = None  # the judgment set, when one is loaded
        # application → IPS weight per position (collector/series/examination.py), when loaded
        self.click_weights: dict[str, tuple[float, ...]] | None = None
        self.sessions: dict[str, Search] = {}  # session key → its newest tracked search
        self.searches: dict[str, Search | PageAlias] = {}
        self.outcome_due: deque[Search] = deque()
        self.expiry_due: deque[Search | PageAlias] = deque()
        self.next_deadline = inf  # earliest deadline of either queue: callers skip expiry before

    # -- queries ---------------------------------------------------------------------------
    def on_query(self, rec: WireRecord, ts: float) -> int:
        """A query record, in the order docs/metrics.md decides it: a duplicate, or a page of
        its session's (_session_key) search (_on_page), or a search — which may reformulate
        the session's previous one (_reformulates) — counted in its series with its result
        count (_results), latency (_latency), unit bucket (_unit) and store row (_stored),
        then tracked."""
        key = rec.query_id
        known = self.searches.get(key)
        if known is not None and known.ts >= ts - self.attribution_s:
            return acc.DUPLICATE
        attrs = rec.query_attributes
        session_key = self._session_key(rec, attrs, key)
        previous = self.sessions.get(session_key)
        if previous is not None and previous.ts < ts - self.abandonment_s:
            previous = self._newest(previous, ts)
        text = self.strata.text(rec.user_query)
        page = attrs.page if attrs is not None else None
        if page is not None and page > 1:
            self._on_page(key, previous, text.normalized, page, ts)
            return acc.ACCEPTED
        if previous is not None:
            self._reformulates(previous, text.normalized, ts)
        series = self.table.get(rec.application,
                                attrs.variant if attrs is not None else None,
                                self.strata.stratum(text))
        series.searches += 1
        hits = rec.query_response_hit_ids
        if hits is None:
            hits = rec.query_response_objects_ids
        flags, scored = self._results(rec, attrs, series, text.normalized, hits, ts)
        latency = self._latency(attrs, series)
        experiment = series.experiment
        unit = (None if experiment is None  # an experiment variant: its client's bucket
                else self._unit(experiment, rec.client_id, flags, latency, ts))
        search = Search(key, session_key, text.normalized, ts, series, flags, unit=unit)
        if self.query_stats is not None:
            self._stored(search, rec.client_id, hits, scored)
        self.searches[key] = search  # tracked until its deadlines, its session's newest
        self.sessions[session_key] = search
        if ts + self.abandonment_s < self.next_deadline:
            self.next_deadline = ts + self.abandonment_s
        self.outcome_due.append(search)
        self.expiry_due.append(search)
        return acc.ACCEPTED

    @staticmethod
    def _session_key(rec: WireRecord, attrs: QueryAttributes | None, key: str) -> str:
        """The session a search belongs to: its session id, else its client's id; with
        neither, a session of its own (its query id, marked so it meets no real id)."""
        session_key = (attrs.session_id if attrs is not None else None) or rec.client_id
        return "\x00" + key if session_key is None else session_key

    def _latency(self, attrs: QueryAttributes | None, series: QualitySeries) -> float | None:
        """The search's latency in milliseconds, observed in its series; None when not sent,
        or sent as events.INVALID_LATENCY_MS (not a latency: counted as a data-quality issue,
        and no timing, for units either)."""
        latency = attrs.latency_ms if attrs is not None else None
        if latency is None:
            return None
        if latency < 0:
            self.stats.data_quality[acc.INVALID_LATENCY] += 1
            return None
        series.latency.observe(latency / 1000.0)
        return latency

    def _reformulates(self, previous: Search, normalized: str, ts: float) -> None:
        """A next search of the session within the window, of another query and with no click
        before it, reformulates the previous one: counted by kind."""
        if (ts - previous.ts <= self.reformulation_s and not previous.flags & CLICKED
                and previous.normalized != normalized):
            previous.series.reformulated[reformulation_kind(previous.normalized,
                                                           normalized)] += 1
            if previous.unit is not None:
                previous.unit.reformulated += 1
            if self.query_stats is not None:
                row = self._row(previous)
                row.reformulated += 1
                row.reformulations[normalized] = row.reformulations.get(normalized, 0) + 1

    def _results(self, rec: WireRecord, attrs: QueryAttributes | None, series: QualitySeries,
                 normalized: str, hits: tuple[str | int, ...] | None, ts: float
                 ) -> tuple[int, tuple[float, float] | None]:
        """(flags, judged scores) of a search by what it returned: zero results (counted,
        and in the top zero-result queries), a result list (its page size; scored when its
        query is judged), or an unknown result count (counted as with results)."""
        total_hits = attrs.total_hits if attrs is not None else None
        if total_hits == 0 or (hits is not None and not hits):
            series.zero_result += 1
            self.zero_result_queries.add(series.application, normalized, ts, rec.client_id)
            return ZERO_RESULT, None
        if hits is not None:
            scored = None
            judged = self.judged
            if judged is not None:
                by_application = judged.queries.get(normalized)
                if by_application is not None:
                    scored = self._score(series, by_application, rec.application, hits)
            return len(hits) << _PAGE_SHIFT, scored
        if total_hits is None:
            series.unknown_result_count += 1
            self.stats.data_quality[acc.UNKNOWN_RESULT_COUNT] += 1
        return 0, None

    def _unit(self, experiment: ExperimentUnits, client_id: str | None, flags: int,
              latency: float | None, ts: float) -> BucketCounts | None:
        """The search in its client's unit bucket; without a client id, in no unit
        (docs/metrics.md, "Unit"), counted as such."""
        if client_id is None:
            experiment.without_client_id += 1
            return None
        unit = self.units.counts(experiment, client_id, ts)
        unit.searches += 1
        unit.zero_result += flags & ZERO_RESULT
        if latency is not None:
            unit.timed += 1
            if latency / 1000.0 > self.units.guardrail_s:
                unit.slow += 1
        return unit

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

    def _on_page(self, key: str, parent: Search | None, normalized: str, page: int,
                 ts: float) -> None:
        """Pagination engages the session; its clicks belong to the search it continues."""
        if parent is not None and ts >= parent.ts:
            parent.flags |= ENGAGED
        if parent is None or parent.normalized != normalized:
            self.stats.data_quality[acc.PAGINATION_WITHOUT_SEARCH] += 1
            return
        alias = PageAlias(key, parent, (page - 1) * (parent.flags >> _PAGE_SHIFT), ts)
        self.searches[key] = alias
        self.expiry_due.append(alias)  # its parent is tracked, so next_deadline is set already

    # -- events ----------------------------------------------------------------------------
    def on_event(self, rec: WireRecord, ts: float) -> int:
        """An event, in the order docs/metrics.md decides it: its search (or ignored, or an
        orphan), then an exposure (_exposure), a redelivery (_repeated), engagement of the
        session (_engage), and its outcome: on a zero-result search only a data-quality issue
        (_on_zero_result), else a conversion (_conversion) or a click (_click) at its position
        across result pages (_position). Hot path: the steps are methods only where they
        keep the complexity of each within reach, one call each."""
        action = ACTIONS.get(rec.action_name)
        if action is None:
            self.stats.ignored[acc.UNUSED_ACTION] += 1
            return acc.IGNORED
        key = rec.query_id
        if key is None:
            self.stats.ignored[acc.NO_QUERY_ID] += 1
            return acc.IGNORED
        target = self.searches.get(key)
        if target is None or target.ts < ts - self.attribution_s:  # never seen, or gone
            return acc.ORPHAN
        if target.__class__ is PageAlias:
            search, offset = target.search, target.offset
        else:
            search, offset = target, 0
        if ts < search.ts:  # its device clock is behind the server's: it followed the search
            self.stats.data_quality[acc.EVENT_BEFORE_SEARCH] += 1
            ts = search.ts
        if action == EXPOSURE:
            if self.query_stats is not None:
                self._exposure(rec.event_attributes, search, target is search)
            return acc.ACCEPTED
        attrs = rec.event_attributes
        obj = attrs.object if attrs is not None else None
        rank = self._rank(attrs)
        if self._repeated(search, action, rec, obj, rank):
            return acc.DUPLICATE
        self._engage(search, ts)
        flags = search.flags
        if flags & ZERO_RESULT:
            self._on_zero_result(search, action, flags)
        elif action == CONVERSION:
            self._conversion(search, flags)
        else:
            self._click(search, obj, _position(rank, offset, target is search), ts, flags)
        return acc.ACCEPTED

    def _on_zero_result(self, search: Search, action: int, flags: int) -> None:
        """A click or conversion on a search that returned nothing is not an outcome of the
        search's results: only a data-quality issue, and the search no longer abandoned."""
        self.stats.data_quality[acc.CLICK_ON_ZERO_RESULT_SEARCH] += 1
        search.flags = flags | (CLICKED if action == CLICK else CONVERTED)

    def _exposure(self, attrs: EventAttributes | None, search: Search, first_page: bool
                  ) -> None:
        """An impression or view: the document shown, in the search's store row (and its
        position, when no result list gave positions)."""
        if attrs is not None and attrs.object is not None and attrs.object.object_id:
            row = self._row(search)
            document = attrs.object.object_id
            row.shown[document] = row.shown.get(document, 0) + 1
            # positions from impressions only when no result list gave them
            if first_page and not search.flags >> _PAGE_SHIFT:
                rank = self._rank(attrs)
                if rank > 0:
                    self.query_stats.shown_at(row, rank, document)

    @staticmethod
    def _repeated(search: Search, action: int, rec: WireRecord, obj: EventObject | None,
                  rank: int) -> bool:
        """A redelivery of an event already applied to the search (counted once)."""
        # A redelivery repeats the stamp as sent; a corrected time may be shared by two clicks.
        fingerprint = (action, rec.session_id, obj.object_id if obj is not None else None,
                       rank, rec.timestamp)
        seen = search.seen
        if seen is None:
            search.seen = {fingerprint}
        elif fingerprint in seen:
            return True
        else:
            seen.add(fingerprint)
        return False

    def _engage(self, search: Search, ts: float) -> None:
        """An event at ``ts`` is activity of the session: its newest search, if another one
        and not yet decided, is not abandoned."""
        last = self.sessions.get(search.session_key)
        if last is not None and last.ts < ts - self.abandonment_s:
            last = self._newest(last, ts)
        if last is not search and last is not None and ts >= last.ts:
            last.flags |= ENGAGED

    def _conversion(self, search: Search, flags: int) -> None:
        """A conversion on a search with results: counted, and the search converted once."""
        series = search.series
        row = self._row(search) if self.query_stats is not None else None
        series.conversions += 1
        if not flags & CONVERTED:
            search.flags = flags | CONVERTED
            series.converted += 1
            if search.unit is not None:
                search.unit.converted += 1
            if row is not None:
                row.converted += 1

    def _click(self, search: Search, obj: EventObject | None, position: int, ts: float,
               flags: int) -> None:
        """A click on a search with results at ``position`` (0: unknown): its team, its IPS
        weight; the first one makes the search clicked, with its time and position."""
        series = search.series
        series.clicks += 1
        if obj is not None:
            team = team_of(obj, self.team_attribute)
            if team is not None or search.teams is not None:
                self._team_click(search, UNTAGGED if team is None else team)
        elif search.teams is not None:
            self._team_click(search, UNTAGGED)
        if position == 0:
            self.stats.data_quality[acc.UNKNOWN_CLICK_POSITION] += 1
        elif self.click_weights is not None:
            weights = self.click_weights.get(series.application)
            if weights is not None and position <= len(weights):
                series.debiased_clicks += weights[position - 1]
        if not flags & CLICKED:
            search.flags = flags | CLICKED
            series.clicked += 1
            if search.unit is not None:
                search.unit.clicked += 1
            series.time_to_first_click.observe(ts - search.ts)
            if position:
                series.first_click_position.observe(position)
                series.reciprocal_rank_sum += 1.0 / position
        if self.query_stats is not None:
            self._click_row(self._row(search), obj, position, flags)

    def _click_row(self, row: QueryRow, obj: EventObject | None, position: int, flags: int) -> None:
        """The click in the search's store row: the document clicked, at which position."""
        row.clicks += 1
        if obj is not None and obj.object_id is not None:
            clicked = row.clicked_documents
            clicked[obj.object_id] = clicked.get(obj.object_id, 0) + 1
            if position:
                self.query_stats.click_at(row, position, obj.object_id)
        if not flags & CLICKED:
            row.clicked += 1
            if position:
                row.ranked_clicked += 1
                row.reciprocal_rank_sum += 1.0 / position

    @staticmethod
    def _team_click(search: Search, team: str) -> None:
        teams = search.teams
        if teams is None:
            search.teams = {team: 1}
        else:
            teams[team] = teams.get(team, 0) + 1

    @staticmethod
    def _credit(search: Search) -> None:
        """An interleaved search's outcome, once its attribution window closed: in its series
        and, in an experiment, in its client's unit bucket."""
        teams = search.teams
        assert teams is not None
        search.series.interleaving_unattributed += teams.get(UNTAGGED, 0)
        credit(search.series, teams)
        if search.unit is not None:
            credit(search.unit, teams)

    def _row(self, search: Search) -> QueryRow:
        row = search.row
        if row is None or not row.live:  # drained since: its outcomes start a new row
            row = search.row = self.query_stats.row(search.ts, search.series.application,
                                                    search.normalized)
        return row

    def _rank(self, attrs: EventAttributes | None) -> int:
        """1-based rank on its result page; 0 or less when missing or below the base."""
        if attrs is None:
            return 0
        position = attrs.position
        if position is not None and position.ordinal is not None:
            return position.ordinal - self.position_base + 1
        return 0 if attrs.rank is None else attrs.rank + 1

    # -- deadlines -------------------------------------------------------------------------
    def _newest(self, search: Search, ts: float) -> Search | None:
        """A session's newest search whose deadline passed before ``ts``, as a record at
        ``ts`` finds it: its outcome decided, and None once its attribution window closed."""
        if not search.flags & DECIDED:
            self._decide(search)
        return None if search.ts < ts - self.attribution_s else search

    def _decide(self, search: Search) -> None:
        flags = search.flags
        search.flags = flags | DECIDED
        if (not flags & (CLICKED | CONVERTED | ENGAGED)
                and self.sessions.get(search.session_key) is search):
            if flags & ZERO_RESULT:
                search.series.zero_result_exits += 1
            else:
                search.series.abandoned += 1
                if search.unit is not None:
                    search.unit.abandoned += 1
                if self.query_stats is not None:
                    self._row(search).abandoned += 1

    def expire_before(self, t: float) -> None:
        """Decide every outcome and evict every search whose deadline is before ``t``; forget
        the experiments' clients not seen for their window (not at the end of input, ``t``
        infinite: the count then stays that of the newest time)."""
        if t < inf:
            self.units.expire_before(t)
        due = self.outcome_due
        if due and due[0].ts < t - self.abandonment_s:  # deadline < t ⇔ search.ts < t − window
            self._decide_abandoned(t - self.abandonment_s)
        expiring = self.expiry_due
        if expiring and expiring[0].ts < t - self.attribution_s:
            self._evict_attributed(t - self.attribution_s)
        self.next_deadline = min(due[0].ts + self.abandonment_s if due else inf,
                                 expiring[0].ts + self.attribution_s if expiring else inf)

    def _decide_abandoned(self, horizon: float) -> None:
        """Every search made before ``horizon`` has had its abandonment window: its outcome
        (abandoned, a zero-result exit, or neither) is decided now, once."""
        due = self.outcome_due
        while due and due[0].ts < horizon:
            search = due.popleft()
            if not search.flags & DECIDED:
                self._decide(search)

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
        """Searches whose abandonment / zero-result exit is not decided yet."""
        return len(self.outcome_due)

