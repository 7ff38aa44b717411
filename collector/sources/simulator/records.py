"""A session's UBI records as each application's dialect writes them, and the noise that must
be counted but not applied (page exits, orphan clicks, malformed records, redeliveries)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import msgspec

from collector.sources.simulator.applications import INTERLEAVED, TEAMS, App
from collector.sources.simulator.plan import PlannedSearch
from collector.sources.simulator.rankings import PAGE_SIZE, ranked, shown
from collector.sources.simulator.spec import Incident, SimulationSpec
from collector.sources.simulator.users import Users

if TYPE_CHECKING:  # a type only: the oracle reads the plans, records write to its counts
    from collector.sources.simulator.oracle import GroundTruth

Line = tuple[float, bytes, bool]  # (event time, record, may be redelivered as a duplicate)
ORPHAN_PREFIX = "lost-"  # the query ids of orphan clicks: no query record names them


class RecordWriter:
    """The records of a session and its noise, written from the simulator's state (its spec,
    random stream, ground truth and users; set by ``Simulator``)."""

    spec: SimulationSpec
    rng: random.Random
    truth: GroundTruth
    users: Users | None
    _encoder: msgspec.json.Encoder

    @contextmanager
    def _drawing_from(self, rng: random.Random) -> Iterator[None]:
        """The records written inside draw from ``rng``: the options that add records (typing,
        mid-typing clicks) have random streams of their own, so a session's own stream — and
        every output without them — stays what it was."""
        saved, self.rng = self.rng, rng
        try:
            yield
        finally:
            self.rng = saved

    def _active_incidents(self, app: App, t: int) -> Iterator[Incident]:
        """The incidents under way for ``app`` at ``t`` (ms), in the order they were given."""
        offset = t / 1000 - self.spec.start
        return (incident for incident in self.spec.incidents
                if incident.active(offset, app.name))

    # -- noise: things that must be counted but not applied ----------------------------------
    def _noise(self, out: list[Line], client: str, session: str, t: int) -> None:
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
                "action_name": "click", "query_id": f"{ORPHAN_PREFIX}{rng.getrandbits(40):010x}",
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

    def _query(self, search: PlannedSearch,
               app: App, client: str, session: str, qid: str, page: int,
               t: int, out: list[Line], rendered: bool = True) -> None:
        """The query record of ``search`` (its page ``page``), and the impressions of its
        results when the application sends them and a front end ``rendered`` the page (an
        automated client renders nothing)."""
        rng = self.rng
        record: dict[str, object] = {
            "query_id": qid, "client_id": client, "user_query": search.query,
            "timestamp": t if app.name == "mobile" else _iso(t), "application": app.name,
            "query_attributes": self._query_attributes(search, app, session, page, t),
        }
        if search.hits:
            ids = [] if search.zero else [shown(search.normalized, page, i, rng.randrange(100000))
                                          for i in range(PAGE_SIZE)]
            record["query_response_objects_ids" if app.legacy_ids else
                   "query_response_hit_ids"] = ids
        out.append((t / 1000, self._encode(record), True))
        if rendered and app.impressions and not search.zero:
            self._impressions(search, app, client, session, qid, t, out)

    def _query_attributes(self, search: PlannedSearch, app: App, session: str, page: int, t: int
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

    def _impressions(self, search: PlannedSearch, app: App, client: str, session: str, qid: str,
                     t: int, out: list[Line]) -> None:
        """One impression event per result shown: the OpenSearch generator's way of listing
        results (not counted, so not kept as a candidate for redelivery)."""
        for i in range(PAGE_SIZE):
            search.impressions.append(t + 200 + i)
            out.append(((t + 200 + i) / 1000, self._encode({
                "action_name": "impression", "query_id": qid, "session_id": session,
                "client_id": client, "timestamp": _iso(t + 200 + i), "message_type": None,
                "user_query": search.query, "application": app.name,
                "event_attributes": {"object": {"object_id": ranked(search.normalized, i)},
                                     "position": {"ordinal": i + 1}}}), False))

    def _event(self, action: str, search: PlannedSearch,
               app: App, client: str, session: str, t: int,
               position: int | None, page: int = 1) -> bytes:
        qid = search.page_query_id if page > 1 else search.query_id
        drawn = self.rng.randrange(10**5)
        document = (ranked(search.normalized, (page - 1) * PAGE_SIZE + position - 1)
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
