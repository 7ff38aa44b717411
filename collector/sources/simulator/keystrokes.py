"""The records a search-as-you-type box sends while a simulated user types a query: its
keystroke records, and now and then a search clicked mid-typing (simulator/type_ahead.py types
it). Drawn from the typing stream only, so a session's own random stream, and so its plan, is
the same with and without type-ahead: only its times move by the typing."""

from __future__ import annotations

import random

from collector.outcomes import normalize_query
from collector.sources.simulator.applications import App
from collector.sources.simulator.behaviour import UserBehaviour, examined_position
from collector.sources.simulator.plan import PlannedSearch
from collector.sources.simulator.records import Line
from collector.sources.simulator.type_ahead import Keystroke, style_of, typing_of

MID_TYPING_CLICK = 0.05  # chance that a user clicks a result of a whole word typed so far
PREFIX_ZERO = 0.04  # a prefix of the query finds nothing now and then (a partial word)
TYPO_ZERO = 0.5  # a text with a typo in it, as often as an unknown query


class TypingUser(UserBehaviour):
    """Types each search of a type-ahead application (``SimulationSpec.type_ahead``)."""

    typing_rng: random.Random

    def _typed(self, plan: list[PlannedSearch], app: App, client: str, session: str,
               variant: str | None, query: str, t: int, out: list[Line]
               ) -> tuple[int, list[PlannedSearch]]:
        """Types ``query`` from ``t``: writes the records the box sends before the search's
        own (a search clicked mid-typing joins ``plan``); returns the time of the search's
        record and the keystroke records right before it (its chain)."""
        rng = self.typing_rng
        clicks = rng.random() < MID_TYPING_CLICK
        typing = typing_of(rng, query, style_of(client, app.debounce_ms), t,
                           int(rng.lognormvariate(0.5, 0.5) * 1000) + 400 if clicks else None,
                           rng.randrange(3000, 30000))
        final = normalize_query(query)
        chain: list[PlannedSearch] = []
        with self._drawing_from(rng):
            for index, record in enumerate(typing.records[:-1]):
                if typing.click is not None and index == typing.click[0]:
                    plan.append(self._clicked_midway(app, client, session, variant, record,
                                                     typing.click[1], chain, out))
                    chain = []
                else:
                    chain.append(self._keystroke(app, client, session, variant, record, final,
                                                 out))
        return typing.records[-1].ts_ms, chain

    def _keystroke(self, app: App, client: str, session: str, variant: str | None,
                   record: Keystroke, final: str, out: list[Line]) -> PlannedSearch:
        """A keystroke record: its own query id, results (a prefix of the query seldom finds
        nothing, a typo often does), latency and impressions; never a click."""
        normalized = normalize_query(record.text)
        zero_p = PREFIX_ZERO if final.startswith(normalized) else TYPO_ZERO
        keystroke = self._planned(app, variant, record.text, record.ts_ms, zero_p)
        keystroke.query_id = self._query_id()
        self._query(keystroke, app, client, session, keystroke.query_id, 1, record.ts_ms, out)
        return keystroke

    def _clicked_midway(self, app: App, client: str, session: str, variant: str | None,
                        record: Keystroke, click_ts: int, chain: list[PlannedSearch],
                        out: list[Line]) -> PlannedSearch:
        """A record the user clicked a result of while typing: a search of its own (with
        results: the user clicked one), its chain before it."""
        search = self._planned(app, variant, record.text, record.ts_ms, 0.0)
        search.typed = chain
        search.query_id = self._query_id()
        self._query(search, app, client, session, search.query_id, 1, record.ts_ms, out)
        self._click(search, app, client, session, click_ts, examined_position(self.rng), 1,
                    out)
        return search
