"""The event side of the sessionizer: what a click, a conversion or an exposure does to the
search it names, in the order docs/metrics.md decides it.

``Sessionizer`` (sessionizer.py) is the query side and the deadlines, and is this class: the two
halves share the session state the sessionizer sets up (its searches and sessions, the series,
units and store rows they count into) and its decisions (``_decide``, ``_newest``), so an event
reads them as attributes, with no call between objects on the hot path. Apart here are the
rules an event applies: which actions count, a click's position across result pages, the
redelivery fingerprint, engagement of the session, a click's team, weight and store row.
"""

from __future__ import annotations

from collector.ingest import accounting as acc
from collector.ingest.events import EventAttributes, EventObject, WireRecord
from collector.sessions.interleaving import UNTAGGED, credit, team_of
from collector.sessions.search import (
    CLICK_COUNTED,
    CLICKED,
    CONVERSION_COUNTED,
    CONVERTED,
    DECIDED,
    EARLY,
    ENGAGED,
    EVENTED,
    KEYSTROKE,
    PAGE_SHIFT,
    ZERO_RESULT,
    PageAlias,
    Search,
)
from collector.store.query_stats import QueryRow, QueryStats

CLICK = 1
CONVERSION = 2
EXPOSURE = 3
ACTIONS = {"click": CLICK, "click_through": CLICK, "add_to_cart": CONVERSION,
           "purchase": CONVERSION, "impression": EXPOSURE, "view": EXPOSURE}


def _position(rank: int, offset: int, first_page: bool) -> int:
    """A click's 1-based position across result pages (``offset``: the results on the pages
    before its own); 0 when unknown: no rank, or a later page whose page size is not known."""
    return rank + offset if rank > 0 and (offset or first_page) else 0


class EventOutcomes:
    """Events applied to their searches: the half of ``Sessionizer`` that events drive."""

    # set up by Sessionizer.__init__
    stats: acc.PipelineStats
    abandonment_s: float
    attribution_s: float
    position_base: int
    query_stats: QueryStats | None
    team_attribute: bool
    click_weights: dict[str, tuple[float, ...]] | None
    sessions: dict[str, Search]
    searches: dict[str, Search | PageAlias]

    def on_event(self, rec: WireRecord, ts: float) -> int:
        """An event, in the order docs/metrics.md decides it: its search (or ignored, or an
        orphan), then an exposure, a redelivery (_repeated), engagement of the session
        (_engage), and what it did to its search: on a zero-result search only a data-quality
        issue (_on_zero_result), else a conversion or a click at its position across result
        pages (_position). A click or conversion decides its search at once (_acted: acted on,
        it is a person's), so it counts as it comes; an exposure, for a store row, waits for
        the decision (_exposed); nothing counts for a keystroke or an automated client's search.
        Hot path: the steps are methods only where they keep the complexity of each within
        reach."""
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
        if search.ts < ts - self.abandonment_s and not search.flags & DECIDED:
            self._decide(search)  # decided before this event: it comes after its decision
        search.flags |= EVENTED
        if action == EXPOSURE:
            if self.query_stats is not None:  # an exposure counts for a store row only
                self._exposed(search, rec, target is search)
            return acc.ACCEPTED
        attrs = rec.event_attributes
        rank = self._rank(attrs)
        if self._repeated(search, action, rec, attrs.object if attrs is not None else None,
                          rank):
            return acc.DUPLICATE
        self._engage(search, ts)  # may decide the search itself: its flags read after
        flags = search.flags
        done = CLICKED if action == CLICK else CONVERTED
        if flags & DECIDED:
            search.flags = flags | done
        else:  # acted on: a person's search (automated.py), counted now
            self._acted(search, flags & ~KEYSTROKE | done)
        if search.series is None:  # counted apart (a keystroke, an automated client's)
            return acc.ACCEPTED
        if flags & ZERO_RESULT:
            self._on_zero_result()
        elif action == CONVERSION:
            self._conversion(search)
        else:
            position = _position(rank, offset, target is search)
            if position == 0:
                self.stats.data_quality[acc.UNKNOWN_CLICK_POSITION] += 1
            elif rank > flags >> PAGE_SHIFT > 0:  # past the results its page listed
                search.series.clicks_beyond_results += 1
            self._click(search, attrs.object if attrs is not None else None, position, ts)
        return acc.ACCEPTED

    def _acted(self, search: Search, flags: int) -> None:
        """The user acted on a search not yet decided (a click, a conversion, a next page): it
        is no keystroke, and its client no crawler, monitor or fleet (sessions/automated.py):
        it is decided now — counted with what it received so far — and what comes after it
        counts as it comes."""
        search.flags = flags | EARLY
        if search.watch is not None:
            search.watch.acted = True
        self._decide(search)

    def _exposed(self, search: Search, rec: WireRecord, first_page: bool) -> None:
        """An exposure, for the search's store row: held until its decision, counted after (a
        search counted apart has no row)."""
        held = search.held
        if held is not None:  # a list until the decision, None after
            held.append((rec, first_page))
        elif not search.flags & DECIDED:
            search.held = [(rec, first_page)]
        elif search.series is not None:
            self._exposure(rec.event_attributes, search, first_page)

    def _on_zero_result(self) -> None:
        """A click or conversion on a search that returned nothing is not an outcome of the
        search's results: only a data-quality issue (and the search, acted on, no exit)."""
        self.stats.data_quality[acc.CLICK_ON_ZERO_RESULT_SEARCH] += 1

    def _exposure(self, attrs: EventAttributes | None, search: Search, first_page: bool
                  ) -> None:
        """An impression or view: the document shown, in the search's store row (and its
        position, when no result list gave positions)."""
        if attrs is not None and attrs.object is not None and attrs.object.object_id:
            row = self._row(search)
            document = attrs.object.object_id
            row.shown[document] = row.shown.get(document, 0) + 1
            # positions from impressions only when no result list gave them
            if first_page and not search.flags >> PAGE_SHIFT:
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

    def _conversion(self, search: Search) -> None:
        """A conversion on a search with results: counted, and the search converted once."""
        series = search.series
        row = self._row(search) if self.query_stats is not None else None
        series.conversions += 1
        if not search.flags & CONVERSION_COUNTED:
            search.flags |= CONVERSION_COUNTED
            series.converted += 1
            if search.unit is not None:
                search.unit.converted += 1
            if row is not None:
                row.converted += 1

    def _click(self, search: Search, obj: EventObject | None, position: int, ts: float
               ) -> None:
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
        if position and self.click_weights is not None:
            weights = self.click_weights.get(series.application)
            if weights is not None and position <= len(weights):
                series.debiased_clicks += weights[position - 1]
        first = not search.flags & CLICK_COUNTED
        if first:
            search.flags |= CLICK_COUNTED
            series.clicked += 1
            if search.unit is not None:
                search.unit.clicked += 1
            series.time_to_first_click.observe(ts - search.ts)
            if position:
                series.first_click_position.observe(position)
                series.reciprocal_rank_sum += 1.0 / position
        if self.query_stats is not None:
            self._click_row(self._row(search), obj, position, first)

    def _click_row(self, row: QueryRow, obj: EventObject | None, position: int, first: bool
                   ) -> None:
        """The click in the search's store row: the document clicked, at which position."""
        row.clicks += 1
        if obj is not None and obj.object_id is not None:
            clicked = row.clicked_documents
            clicked[obj.object_id] = clicked.get(obj.object_id, 0) + 1
            if position:
                self.query_stats.click_at(row, position, obj.object_id)
        if first:
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
