"""What a simulated user does: the first query, the searches it makes, clicks by position,
next pages, conversions, reformulations (typo fixes, refinements, broadening), leaving; incidents
change the chances while they last."""

from __future__ import annotations

import random

from collector.outcomes import normalize_query
from collector.series.quality import TAIL
from collector.sources.simulator.applications import App
from collector.sources.simulator.plan import PlannedSearch
from collector.sources.simulator.rankings import PAGE_SIZE
from collector.sources.simulator.records import Line, RecordWriter
from collector.sources.simulator.users import personal
from collector.sources.simulator.vocabulary import MODIFIERS, Vocabulary


class UserBehaviour(RecordWriter):
    """A session's searches and what the user does after each, drawn from the simulator's
    random stream, its vocabulary and incidents."""

    vocab: Vocabulary

    def _first_query(self) -> str:
        rng = self.rng
        if rng.random() < self.spec.known_item_share:
            return rng.choice(self.vocab.skus)
        query = self.vocab.draw(rng)
        if rng.random() < 0.06:
            query = _typo(rng, query)
        if rng.random() < 0.1:
            query = query.title()
        return query

    def _planned(self, app: App, variant: str | None, query: str, t: int,
                 zero_p: float | None = None) -> PlannedSearch:
        """A search of ``query`` at ``t``: its stratum, whether it finds nothing (with
        ``zero_p``, else the chance its query has) and what its record reports."""
        rng = self.rng
        normalized = normalize_query(query)
        known_item = normalized.upper() in self._sku_set
        stratum = 3 if known_item else self.vocab.strata.get(normalized, TAIL)
        if zero_p is None:
            zero_p = self._zero_result_probability(normalized, known_item, app, t)
        search = PlannedSearch(t, query, normalized, stratum, app.name, variant,
                         zero=rng.random() < zero_p, hits=app.hit_ids or app.legacy_ids,
                         count_known=not app.legacy_ids or rng.random() < 0.5)
        if not search.count_known:
            search.hits = search.hits and rng.random() < 0.5
        if not search.hits and not search.count_known and search.zero:
            search.count_known = True  # a zero-result search always says so
        return search

    def _zero_result_probability(self, normalized: str, known_item: bool, app: App,
                                 t: int) -> float:
        """Vocabulary queries rarely find nothing, unknown ones (typos, the tail) half the time,
        broken ones always; a zero-results incident active at ``t`` multiplies it (a known-item
        one only for SKU searches, from a floor so that it shows)."""
        zero_p = 0.03 if normalized in self.vocab.strata else 0.5
        if normalized in self.vocab.broken:
            zero_p = 1.0
        for incident in self._active_incidents(app, t):
            if incident.kind == "zero_results":
                zero_p = min(1.0, zero_p * incident.factor)
            elif incident.kind == "known_item_zero_results" and known_item:
                zero_p = min(1.0, max(zero_p, 0.05) * incident.factor)
        return zero_p

    @property
    def _sku_set(self) -> set[str]:
        skus = getattr(self, "_skus", None)
        if skus is None:
            skus = self._skus = {s.upper() for s in self.vocab.skus}
        return skus

    def _behave(self, search: PlannedSearch, app: App, client: str, session: str,
                out: list[Line]) -> tuple[int, str | None]:
        """What the user does after a search; returns (time, next query or None to leave)."""
        rng = self.rng
        t = search.ts_ms
        if search.zero:
            if rng.random() < 0.55:
                return t + rng.randrange(3000, 60000), self._reformulate(search.normalized)
            return t, None
        effect = self.spec.treatment_click_effect if search.variant == "treatment" else 0.0
        click_p = personal(self._click_probability(search, app, t), search.click_shift, effect)
        page = 1
        if rng.random() >= click_p and search.hits and rng.random() < 0.15:
            page = 2
            t += rng.randrange(4000, 30000)
            search.pages.append(t)
            search.page_query_id = self._query_id()
            self._query(search, app, client, session, search.page_query_id, 2, t, out)
            click_p = personal(0.4, search.click_shift, effect)
        if rng.random() < click_p:
            return self._engage(search, app, client, session, t, page, out)
        roll = rng.random()
        if roll < 0.45:
            return t + rng.randrange(3000, 90000), self._reformulate(search.normalized)
        if roll < 0.52:
            return t + rng.randrange(3000, 60000), search.query  # the same query again
        return t, None

    def _click_probability(self, search: PlannedSearch, app: App, t: int) -> float:
        """The population's chance of a click on the first page, before the user's own
        propensity: low for poor queries, high for known items, divided by a clicks incident
        active at ``t``."""
        click_p = 0.15 if search.normalized in self.vocab.poor else 0.6
        if search.stratum == 3:
            click_p = 0.75
        for incident in self._active_incidents(app, t):
            if incident.kind == "clicks":
                click_p /= incident.factor
        return click_p

    def _engage(self, search: PlannedSearch, app: App, client: str, session: str, t: int, page: int,
                out: list[Line]) -> tuple[int, str | None]:
        """A user who clicks: one or two clicks on ``page``, perhaps an add-to-cart, then
        perhaps a new query; returns (time, next query or None to leave)."""
        rng = self.rng
        t += int(rng.lognormvariate(2.0, 0.8) * 1000) + 500
        position = examined_position(rng)
        self._click(search, app, client, session, t, position, page, out)
        if rng.random() < 0.25:
            t += rng.randrange(5000, 90000)
            self._click(search, app, client, session, t, examined_position(rng), page, out)
        if rng.random() < 0.12:
            t += rng.randrange(10000, 120000)
            search.conversions.append(t)
            out.append((t / 1000, self._event("add_to_cart", search, app, client, session,
                                              t, None), True))
        if rng.random() < 0.3:
            return t + rng.randrange(5000, 200000), self.vocab.draw(rng)
        return t, None

    def _reformulate(self, normalized: str) -> str:
        rng = self.rng
        terms = normalized.split()
        roll = rng.random()
        if roll < 0.3 and normalized not in self.vocab.strata and normalized.upper() not in \
                self._sku_set:
            return self.vocab.draw(rng)  # a typo fixed (or given up on)
        if roll < 0.6:
            return f"{rng.choice(MODIFIERS)} {normalized}"
        if roll < 0.8 and len(terms) > 1:
            return " ".join(terms[1:])
        return self.vocab.draw(rng)

    def _click(self, search: PlannedSearch, app: App, client: str, session: str, t: int,
               position: int, page: int, out: list[Line]) -> None:
        known = not (app.impressions and self.rng.random() < 0.1)
        absolute = position + (page - 1) * PAGE_SIZE
        if page > 1 and not search.hits:
            absolute = 0
        search.clicks.append((t, absolute if known else 0))
        out.append((t / 1000, self._event("click", search, app, client, session, t,
                                          position if known else None, page), True))


def examined_position(rng: random.Random) -> int:
    """Position-biased click: examination decays with rank (P(examine r) ∝ 1 / r)."""
    weights = [1.0 / r for r in range(1, PAGE_SIZE + 1)]
    return rng.choices(range(1, PAGE_SIZE + 1), weights=weights)[0]


def _typo(rng: random.Random, query: str) -> str:
    chars = list(query)
    i = rng.randrange(len(chars) - 1)
    if chars[i] != " " and chars[i + 1] != " ":
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    else:
        del chars[i]
    return "".join(chars)
