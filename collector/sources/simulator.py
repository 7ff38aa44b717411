"""Realistic synthetic UBI traffic, with the ground truth it generated.

Users follow a small behaviour model: Zipf query popularity (head / torso / tail), known-item SKU
searches, position-biased clicks (examination decays with rank), zero-result queries,
reformulation chains (typo fixes, refinements, broadening), pagination, conversions, latency, and
several applications that speak different UBI dialects. Incidents change the model for a while.

The ground truth is tallied from each session's *plan* (clean, structured, in time order) by
applying the written definitions directly: an oracle independent of decoding, ordering, windows
and state in the engine. Records are delivered with a bounded jitter (out of event-time order).
"""

from __future__ import annotations

import heapq
import json
import math
import random
import re
import time
import zlib
from bisect import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import accumulate

import msgspec

from collector.exposition.summary import summarize
from collector.outcomes import REFORMULATION_KINDS, normalize_query, reformulation_kind
from collector.series.quality import STRATA, TAIL

PAGE_SIZE = 10
_CHURN = 5000  # of 100,000: the share of result positions showing some other document
_Line = tuple[float, bytes, bool]  # (event time, record, may be redelivered as a duplicate)
REFORMULATION_S = 300.0
ABANDONMENT_S = 300.0

_PRODUCTS = ("shoes", "jacket", "laptop", "headphones", "watch", "backpack", "tent", "lamp",
             "desk", "chair", "camera", "kettle", "blender", "sofa", "mattress", "pillow",
             "blanket", "guitar", "bicycle", "helmet", "gloves", "scarf", "sunglasses", "wallet",
             "umbrella", "drill", "hammer", "router", "monitor", "keyboard", "mouse", "speaker",
             "charger", "printer", "toner", "vacuum", "heater", "fan", "mirror", "rug")
_MODIFIERS = ("running", "waterproof", "wireless", "leather", "kids", "mens", "womens", "red",
              "black", "white", "cheap", "small", "large", "organic", "portable", "gaming",
              "vintage", "electric", "folding", "outdoor", "winter", "summer", "cotton", "steel",
              "wooden", "smart", "compact", "ergonomic", "quiet", "heavy")
_BRANDS = ("acme", "northwind", "contoso", "fabrikam", "globex", "initech", "umbrella",
           "hooli", "vandelay", "wayne", "stark", "tyrell", "cyberdyne", "soylent", "wonka")


@dataclass(frozen=True)
class Incident:
    """``KIND[@APP]:xFACTOR:START+DURATION`` e.g. ``zero_results:x5:30m+10m``."""

    kind: str
    factor: float
    start_s: float
    duration_s: float
    application: str | None = None

    KINDS = ("zero_results", "known_item_zero_results", "clicks", "latency")

    @classmethod
    def parse(cls, text: str) -> Incident:
        match = re.fullmatch(r"(\w+)(?:@([\w.-]+))?:x([\d.]+):(\w+)\+(\w+)", text.strip())
        if not match or match.group(1) not in cls.KINDS:
            raise ValueError(f"incident {text!r}: expected KIND[@APP]:xFACTOR:START+DURATION "
                             f"with KIND one of {', '.join(cls.KINDS)}")
        kind, app, factor, start, duration = match.groups()
        return cls(kind, float(factor), parse_duration(start), parse_duration(duration), app)

    def active(self, offset_s: float, application: str) -> bool:
        return (self.start_s <= offset_s < self.start_s + self.duration_s
                and self.application in (None, application))


def parse_lull(text: str) -> tuple[float, float]:
    """``START+DURATION`` e.g. ``10m+20m``: (start offset, duration) in seconds."""
    start, plus, duration = text.strip().partition("+")
    if not plus:
        raise ValueError(f"lull {text!r}: expected START+DURATION, e.g. 10m+20m")
    return parse_duration(start), parse_duration(duration)


def parse_duration(text: str) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)?", text.strip())
    if not match:
        raise ValueError(f"duration {text!r}: expected a number with unit ms, s, m, h or d")
    unit = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2) or "s"]
    return float(match.group(1)) * unit


@dataclass
class SimulationSpec:
    seed: int = 1
    sessions: int = 1000
    start: float = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc).timestamp()
    sessions_per_second: float = 5.0
    vocabulary: int = 3000
    known_item_share: float = 0.08
    zipf_exponent: float = 1.05
    jitter_s: float = 5.0
    duplicate_rate: float = 0.002
    invalid_rate: float = 0.0
    orphan_rate: float = 0.001
    incidents: list[Incident] = field(default_factory=list)
    # Team-draft interleaving (off when None): a third of the experiment's sessions are
    # interleaved (variant "interleaved"), each click's team is "ranker-b" with probability
    # 0.5 + this preference, else "ranker-a" (the known truth for Δ_AB).
    interleaving_preference: float | None = None
    # Quiet nights: session starts follow a daily profile (UTC), from 2 % of the peak rate
    # (sessions_per_second) between 00:00 and 06:00 up to the peak at 15:00.
    diurnal: bool = False
    # Lulls (event-time offset from the start, duration): traffic stops, sessions already
    # started run to their end, and every later session starts that much later.
    lulls: list[tuple[float, float]] = field(default_factory=list)
    # Keep each session's plan and client in the ground truth (tests: truth per client).
    keep_sessions: bool = False
    # Returning users (off when 0: every session is a new client). Sessions are drawn from this
    # many users in proportion to an activity weight ~ log-normal(0, user_activity_sigma), so
    # searches per user are heavy-tailed; each user keeps one application and one variant (the
    # unit of randomization) and shifts every click probability by a propensity ~ N(0,
    # user_click_sigma) on the logit scale: clustered traffic, as experiments see it. Every
    # application then sends its session id (keyed by the client, a user's sessions would
    # merge into one and the ground truth, tallied per session, would not hold).
    users: int = 0
    user_activity_sigma: float = 1.0
    user_click_sigma: float = 0.8
    # A known effect: the treatment variant's click probabilities plus this (absolute, clipped
    # to [0, 1]), for power checks; 0 leaves every output as it was.
    treatment_click_effect: float = 0.0

    def __post_init__(self) -> None:
        for name in ("users", "user_activity_sigma", "user_click_sigma"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name.replace('_', '-')} must be >= 0, got "
                                 f"{getattr(self, name)}")
        if not -1 < self.treatment_click_effect < 1:
            raise ValueError("treatment-click-effect must be between -1 and 1")


def traffic_share(ts: float) -> float:
    """The diurnal profile: the share of the peak session rate at UTC time ``ts``."""
    hour = ts % 86400 / 3600
    return 0.02 + 0.98 * math.sin(math.pi * (hour - 6) / 18) if hour >= 6 else 0.02


INTERLEAVED = "interleaved"
TEAMS = ("ranker-a", "ranker-b")


@dataclass
class _Search:
    ts_ms: int
    query: str
    normalized: str
    stratum: int
    application: str
    variant: str | None
    zero: bool
    hits: bool  # the record lists hit ids (page size known)
    count_known: bool
    query_id: str = ""
    page_query_id: str = ""
    clicks: list[tuple[int, int]] = field(default_factory=list)  # (ts_ms, position or 0)
    conversions: list[int] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)  # ts_ms of page > 1 records
    click_shift: float = 0.0  # its user's click propensity (logit scale), SimulationSpec.users


@dataclass
class _App:
    name: str
    weight: float
    session_in_query: bool
    hit_ids: bool
    legacy_ids: bool
    ordinal: bool
    impressions: bool
    experiment: bool


APPS = (
    _App("web", 0.55, True, True, False, True, False, True),
    _App("mobile", 0.25, False, True, False, False, False, True),
    _App("legacy", 0.10, True, False, True, True, False, False),
    _App("opensearch", 0.10, True, False, False, True, True, False),
)


def _ranked(normalized: str, index: int) -> str:
    """The document a query's ranking puts at 0-based ``index``: the same for every search of
    the query, as a search engine's ranking is."""
    return f"doc-{(zlib.crc32(normalized.encode()) * 7919 + index * 104729) % 100000}"


def _shown(normalized: str, page: int, i: int, drawn: int) -> str:
    """Position ``i`` of a result page: the query's ranked document, or now and then (5 %,
    decided by ``drawn``, a draw in [0, 100000)) another one, as fresh content and
    personalization do."""
    if drawn < _CHURN:
        return f"doc-{drawn}"
    return _ranked(normalized, (page - 1) * PAGE_SIZE + i)


@dataclass(frozen=True)
class _User:
    client: str
    app: _App
    variant: str | None
    click_shift: float


class Users:
    """The returning users of ``SimulationSpec.users``, drawn from their own random stream (the
    sessions' stream is the same with and without them until a session picks a user)."""

    def __init__(self, spec: SimulationSpec) -> None:
        rng = random.Random(f"users-{spec.seed}")
        app_weights = list(accumulate(app.weight for app in APPS))
        self.users: list[_User] = []
        for _ in range(spec.users):
            app = APPS[bisect(app_weights, rng.random() * app_weights[-1])]
            variant = rng.choice(("control", "treatment")) if app.experiment else None
            if (variant is not None and spec.interleaving_preference is not None
                    and rng.random() < 1 / 3):
                variant = INTERLEAVED
            self.users.append(_User(f"u-{rng.getrandbits(48):012x}", app, variant,
                                    rng.gauss(0.0, spec.user_click_sigma)))
        self.cumulative = list(accumulate(
            rng.lognormvariate(0.0, spec.user_activity_sigma) for _ in self.users))

    def draw(self, rng: random.Random) -> _User:
        return self.users[bisect(self.cumulative, rng.random() * self.cumulative[-1])]


def personal(click_p: float, shift: float, effect: float) -> float:
    """A click probability for one user: its logit shifted by the user's propensity, plus the
    treatment's known effect; unchanged (exactly) for a user without either."""
    if shift:
        click_p = 1.0 / (1.0 + math.exp(-(math.log(click_p / (1.0 - click_p)) + shift)))
    return min(1.0, max(0.0, click_p + effect)) if effect else click_p


class Vocabulary:
    """Queries with Zipf popularity; their strata follow from cumulative expected share."""

    def __init__(self, rng: random.Random, size: int, exponent: float, head: float = 0.5,
                 torso: float = 0.8) -> None:
        candidates = sorted({*_PRODUCTS, *(f"{m} {p}" for m in _MODIFIERS for p in _PRODUCTS),
                             *(f"{b} {p}" for b in _BRANDS for p in _PRODUCTS),
                             *(f"{b} {m} {p}" for b in _BRANDS[:6] for m in _MODIFIERS[:12]
                               for p in _PRODUCTS)})
        rng.shuffle(candidates)
        self.queries = candidates[:size]
        weights = [1.0 / (rank + 1) ** exponent for rank in range(len(self.queries))]
        total = sum(weights)
        self.cumulative = list(accumulate(weights))
        self.strata: dict[str, int] = {}
        running = 0.0
        for query, weight in zip(self.queries, weights, strict=True):
            share_before = running / total
            running += weight
            self.strata[query] = 0 if share_before < head else 1 if share_before < torso else 2
        self.skus = [f"{rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{rng.randrange(10**6, 10**7)}"
                     f"-{rng.choice('ABCDEFGHJK')}{rng.randrange(10, 99)}" for _ in range(500)]
        # Failing by construction: some queries always find nothing, some rank badly.
        self.broken = set(rng.sample(self.queries[50:], k=max(1, size // 40)))
        self.poor = set(rng.sample(self.queries[20:], k=max(1, size // 25))) - self.broken

    def draw(self, rng: random.Random) -> str:
        return self.queries[bisect(self.cumulative, rng.random() * self.cumulative[-1])]


class Simulator:
    def __init__(self, spec: SimulationSpec) -> None:
        self.spec = spec
        self.rng = random.Random(spec.seed)
        self.vocab = Vocabulary(self.rng, spec.vocabulary, spec.zipf_exponent)
        self.truth = GroundTruth()
        self._app_weights = list(accumulate(app.weight for app in APPS))
        self._encoder = msgspec.json.Encoder()
        self.users = Users(spec) if spec.users else None

    # -- public ------------------------------------------------------------------------------
    def records(self) -> Iterator[bytes]:
        """All records as JSON lines, delivered in jittered event-time order."""
        for _, line in self.timed_records():
            yield line

    def timed_records(self) -> Iterator[tuple[float, bytes]]:
        """(delivery time, record): event time plus up to ``jitter_s`` of delivery delay."""
        pending: list[tuple[float, int, bytes]] = []
        ts = self.spec.start
        serial = 0
        lulls = sorted(self.spec.lulls)
        for _ in range(self.spec.sessions):
            ts = self._next_start(ts, lulls)
            for delivery, line in self._session(ts):
                serial += 1
                heapq.heappush(pending, (delivery, serial, line))
            while pending and pending[0][0] < ts - self.spec.jitter_s:
                self.truth.records += 1
                delivery, _, line = heapq.heappop(pending)
                yield delivery, line
        while pending:
            self.truth.records += 1
            delivery, _, line = heapq.heappop(pending)
            yield delivery, line

    def _next_start(self, ts: float, lulls: list[tuple[float, float]]) -> float:
        """The next session's start: a Poisson arrival, thinned by the diurnal profile,
        moved past every lull it reached (``lulls`` is consumed)."""
        rng, spec = self.rng, self.spec
        while True:
            ts += rng.expovariate(spec.sessions_per_second)
            while lulls and ts - spec.start >= lulls[0][0]:
                ts += lulls.pop(0)[1]
            if not spec.diurnal or rng.random() < traffic_share(ts):
                return ts

    def paced(self, speed: float, duration_s: float | None = None,
              tick_s: float | None = None) -> Iterator[bytes | None]:
        """Records in real time: event time runs `speed` times faster than the clock. With
        ``tick_s``, a None every ``tick_s`` of wall time spent waiting for the next record (a
        lull, a quiet night): the caller's chance to see its source idle."""
        started = time.monotonic()
        for ts, raw in self.timed_records():
            due = (ts - self.spec.start) / speed
            while True:
                elapsed = time.monotonic() - started
                if duration_s is not None and elapsed >= duration_s:
                    return
                wait = due - elapsed
                if wait <= 0:
                    break
                time.sleep(min(wait, tick_s or 0.5))
                if tick_s is not None and wait >= tick_s:
                    yield None
            yield raw

    def judgments_csv(self, depth: int = 20, share: float = 0.8) -> str:
        """A judgment set of the vocabulary (``judgments.csv``): ``share`` of the queries
        judged, their first ``depth`` ranked documents graded 3, 2, 1, 0 by rank (first 2, next
        3, next 5, rest); the queries users click rarely are graded the other way round (their
        best documents rank last), so judged NDCG agrees with the users."""
        rows = ["application,query,doc_id,rater,grade"]
        for query in self.vocab.queries:
            if zlib.crc32(query.encode()) % 1000 >= share * 1000:
                continue
            for index in range(depth):
                grade = 3 if index < 2 else 2 if index < 5 else 1 if index < 10 else 0
                if query in self.vocab.poor:
                    grade = 3 - grade
                rows.append(f",{query},{_ranked(query, index)},simulator,{grade}")
        return "\n".join(rows) + "\n"

    @staticmethod
    def examination_json() -> str:
        """The simulated users' examination curve (clicks fall on position r with weight 1/r,
        whatever the document) as `searchpulse clicks` writes it: every application's,
        identified (the simulator knows it; its rankings barely move, so a fit would not)."""
        curve = [round(1.0 / r, 6) for r in range(1, PAGE_SIZE + 1)]
        return json.dumps({"model": "position-based", "source": "simulator", "applications": {
            app.name: {"examination": curve, "identified": True, "impressions": 0}
            for app in APPS}}, indent=2) + "\n"

    def strata_csv(self) -> str:
        rows = ["query,stratum"] + [f"{q},{STRATA[s]}" for q, s in self.vocab.strata.items()]
        return "\n".join(rows) + "\n"

    # -- one session ------------------------------------------------------------------------
    def _session(self, start: float) -> list[tuple[float, bytes]]:
        rng = self.rng
        shift = 0.0
        if self.users is not None:  # a returning user: its application, variant, propensity
            user = self.users.draw(rng)
            app, client, variant, shift = user.app, user.client, user.variant, user.click_shift
            session = f"s-{rng.getrandbits(48):012x}"
        else:
            app = APPS[bisect(self._app_weights, rng.random() * self._app_weights[-1])]
            client = f"c-{rng.getrandbits(48):012x}"
            session = f"s-{rng.getrandbits(48):012x}"
            variant = rng.choice(("control", "treatment")) if app.experiment else None
            if (variant is not None and self.spec.interleaving_preference is not None
                    and rng.random() < 1 / 3):
                variant = INTERLEAVED
        plan: list[_Search] = []
        out: list[_Line] = []
        t = int(start * 1000)
        query = self._first_query()
        while True:
            search = self._search(plan, app, variant, query, t)
            search.click_shift = shift
            search.query_id = self._query_id()
            self._query(search, app, client, session, search.query_id, 1, search.ts_ms, out)
            t, query = self._behave(search, app, client, session, out)
            if query is None:
                break
        self.truth.add_session(plan, client if self.spec.keep_sessions else None)
        self._noise(out, client, session, t)
        jitter = self.spec.jitter_s
        return [(ts + rng.random() * jitter, line) for ts, line, _ in out]

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

    def _search(self, plan: list[_Search], app: _App, variant: str | None, query: str,
                t: int) -> _Search:
        rng = self.rng
        normalized = normalize_query(query)
        known_item = normalized.upper() in self._sku_set
        stratum = 3 if known_item else self.vocab.strata.get(normalized, TAIL)
        zero_p = self._zero_result_probability(normalized, known_item, app, t)
        search = _Search(t, query, normalized, stratum, app.name, variant,
                         zero=rng.random() < zero_p, hits=app.hit_ids or app.legacy_ids,
                         count_known=not app.legacy_ids or rng.random() < 0.5)
        if not search.count_known:
            search.hits = search.hits and rng.random() < 0.5
        if not search.hits and not search.count_known and search.zero:
            search.count_known = True  # a zero-result search always says so
        plan.append(search)
        return search

    def _zero_result_probability(self, normalized: str, known_item: bool, app: _App,
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

    def _active_incidents(self, app: _App, t: int) -> Iterator[Incident]:
        """The incidents under way for ``app`` at ``t`` (ms), in the order they were given."""
        offset = t / 1000 - self.spec.start
        return (incident for incident in self.spec.incidents
                if incident.active(offset, app.name))

    @property
    def _sku_set(self) -> set[str]:
        skus = getattr(self, "_skus", None)
        if skus is None:
            skus = self._skus = {s.upper() for s in self.vocab.skus}
        return skus

    def _behave(self, search: _Search, app: _App, client: str, session: str,
                out: list[_Line]) -> tuple[int, str | None]:
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

    def _click_probability(self, search: _Search, app: _App, t: int) -> float:
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

    def _engage(self, search: _Search, app: _App, client: str, session: str, t: int, page: int,
                out: list[_Line]) -> tuple[int, str | None]:
        """A user who clicks: one or two clicks on ``page``, perhaps an add-to-cart, then
        perhaps a new query; returns (time, next query or None to leave)."""
        rng = self.rng
        t += int(rng.lognormvariate(2.0, 0.8) * 1000) + 500
        position = _examined_position(rng)
        self._click(search, app, client, session, t, position, page, out)
        if rng.random() < 0.25:
            t += rng.randrange(5000, 90000)
            self._click(search, app, client, session, t, _examined_position(rng), page, out)
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
            return f"{rng.choice(_MODIFIERS)} {normalized}"
        if roll < 0.8 and len(terms) > 1:
            return " ".join(terms[1:])
        return self.vocab.draw(rng)

    def _click(self, search: _Search, app: _App, client: str, session: str, t: int,
               position: int, page: int, out: list[_Line]) -> None:
        known = not (app.impressions and self.rng.random() < 0.1)
        absolute = position + (page - 1) * PAGE_SIZE
        if page > 1 and not search.hits:
            absolute = 0
        search.clicks.append((t, absolute if known else 0))
        out.append((t / 1000, self._event("click", search, app, client, session, t,
                                          position if known else None, page), True))

    # -- noise: things that must be counted but not applied ----------------------------------
    def _noise(self, out: list[_Line], client: str, session: str, t: int) -> None:
        rng = self.rng
        spec = self.spec
        if rng.random() < 0.2:
            out.append((t / 1000 + 1, self._encode({
                "action_name": "page_exit", "query_id": f"q-{rng.getrandbits(40):010x}",
                "session_id": session, "client_id": client, "timestamp": _iso(t + 1000),
                "message_type": None, "event_attributes": {"position": {}}}), False))
            self.truth.ignored += 1
        if rng.random() < spec.orphan_rate:
            out.append((t / 1000 + 2, self._encode({
                "action_name": "click", "query_id": f"lost-{rng.getrandbits(40):010x}",
                "session_id": session, "client_id": client, "timestamp": _iso(t + 2000),
                "event_attributes": {"position": {"ordinal": 1}}}), False))
            self.truth.orphans += 1
        if rng.random() < spec.invalid_rate:
            out.append((t / 1000, rng.choice(_INVALID), False))
            self.truth.invalid += 1
        if rng.random() < spec.duplicate_rate * len(out):
            # Redelivery of a query, click or conversion: the engine must count it once.
            candidates = [entry for entry in out if entry[2]]
            if candidates:
                out.append(rng.choice(candidates))
                self.truth.duplicates += 1

    # -- record encoding ---------------------------------------------------------------------
    def _query_id(self) -> str:
        return f"q-{self.rng.getrandbits(64):016x}"

    def _query(self, search: _Search, app: _App, client: str, session: str, qid: str, page: int,
               t: int, out: list[_Line]) -> None:
        rng = self.rng
        record: dict[str, object] = {
            "query_id": qid, "client_id": client, "user_query": search.query,
            "timestamp": t if app.name == "mobile" else _iso(t), "application": app.name,
            "query_attributes": self._query_attributes(search, app, session, page, t),
        }
        if search.hits:
            ids = [] if search.zero else [_shown(search.normalized, page, i, rng.randrange(100000))
                                          for i in range(PAGE_SIZE)]
            record["query_response_objects_ids" if app.legacy_ids else
                   "query_response_hit_ids"] = ids
        out.append((t / 1000, self._encode(record), True))
        if app.impressions and not search.zero:
            self._impressions(search, app, client, session, qid, t, out)

    def _query_attributes(self, search: _Search, app: _App, session: str, page: int, t: int
                          ) -> dict[str, object]:
        """The query's attributes: its latency (multiplied by a latency incident active at
        ``t``), page, session, experiment and variant, and its total hits when the application
        reports them."""
        rng = self.rng
        latency = rng.lognormvariate(4.8, 0.5)
        for incident in self._active_incidents(app, t):
            if incident.kind == "latency":
                latency *= incident.factor
        attrs: dict[str, object] = {"latency_ms": round(latency, 1)}
        if page > 1:
            attrs["page"] = page
        if app.session_in_query or self.users is not None:
            # a returning user's sessions keyed by its client would merge into one
            attrs["session_id"] = session
        if search.variant:
            attrs["experiment"] = "ranker-v2"
            attrs["variant"] = search.variant
        if search.count_known:
            attrs["total_hits"] = 0 if search.zero else rng.randrange(PAGE_SIZE + 1, 5000)
        return attrs

    def _impressions(self, search: _Search, app: _App, client: str, session: str, qid: str,
                     t: int, out: list[_Line]) -> None:
        """One impression event per result shown: the OpenSearch generator's way of listing
        results (not counted, so not kept as a candidate for redelivery)."""
        for i in range(PAGE_SIZE):
            out.append(((t + 200 + i) / 1000, self._encode({
                "action_name": "impression", "query_id": qid, "session_id": session,
                "client_id": client, "timestamp": _iso(t + 200 + i), "message_type": None,
                "user_query": search.query, "application": app.name,
                "event_attributes": {"object": {"object_id": _ranked(search.normalized, i)},
                                     "position": {"ordinal": i + 1}}}), False))

    def _event(self, action: str, search: _Search, app: _App, client: str, session: str, t: int,
               position: int | None, page: int = 1) -> bytes:
        qid = search.page_query_id if page > 1 else search.query_id
        drawn = self.rng.randrange(10**5)
        document = (_ranked(search.normalized, (page - 1) * PAGE_SIZE + position - 1)
                    if position else f"doc-{drawn}")
        attributes: dict[str, object] = {"object": {"object_id": document,
                                                    "object_id_type": "product"}}
        if search.variant == INTERLEAVED and action == "click":
            preference = self.spec.interleaving_preference or 0.0
            attributes["object"]["search_config"] = TEAMS[self.rng.random() < 0.5 + preference]
        if position is None:
            attributes["position"] = {}
        elif app.ordinal:
            attributes["position"] = {"ordinal": position}
        else:
            attributes["rank"] = position - 1
        return self._encode({
            "action_name": action, "query_id": qid, "session_id": session, "client_id": client,
            "user_id": None, "timestamp": t if app.name == "mobile" else _iso(t),
            "application": app.name, "event_attributes": attributes,
        })

    def _encode(self, record: dict[str, object]) -> bytes:
        return self._encoder.encode(record) + b"\n"


def _examined_position(rng: random.Random) -> int:
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


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


_INVALID = (
    b'{"query_id": "broken", "user_query": "tent", "timestamp": "yesterday"}\n',
    b'{"action_name": "click", "query_id": \n',
    b'["not", "an", "object"]\n',
    b'{"user_query": "lamp", "timestamp": "2026-01-05T09:00:00Z"}\n',
    b'{"query_id": "x", "user_query": "desk", "timestamp": "2026-01-05T09:00:00Z", '
    b'"query_attributes": {"page": "two"}}\n',
)


class GroundTruth:
    """Totals in the exact shape of ``searchpulse replay --json``."""

    def __init__(self) -> None:
        self.by_app: dict[str, _Totals] = {}
        self.records = 0
        self.invalid = 0
        self.orphans = 0
        self.duplicates = 0
        self.ignored = 0
        self.sessions: list[tuple[str, list[_Search]]] = []  # (client, plan), if kept

    def add_session(self, plan: list[_Search], client: str | None = None) -> None:
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
                      retimed_records=0, duplicates=self.duplicates,
                      ignored_records=self.ignored)
        result["by_application"] = {app: t.as_dict() for app, t in sorted(self.by_app.items())}
        return result


def _tally(by_app: dict[str, _Totals], plan: list[_Search]) -> None:
    for i, search in enumerate(plan):
        totals = by_app.setdefault(search.application, _Totals())
        nxt = plan[i + 1] if i + 1 < len(plan) else None
        totals.add(search, nxt, plan)


def _reformulated_by(s: _Search, nxt: _Search | None) -> bool:
    """Whether ``nxt`` reformulates ``s``: a different query within the reformulation window,
    with no click on ``s`` before it."""
    return (nxt is not None and (nxt.ts_ms - s.ts_ms) / 1000 <= REFORMULATION_S
            and nxt.normalized != s.normalized
            and not any(c_ts < nxt.ts_ms for c_ts, _ in s.clicks))


def _engaged(s: _Search, nxt: _Search | None, plan: list[_Search]) -> bool:
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

    def add(self, s: _Search, nxt: _Search | None, plan: list[_Search]) -> None:
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

    def _add_clicks(self, s: _Search) -> None:
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
