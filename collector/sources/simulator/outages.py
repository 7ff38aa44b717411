"""Tracking outages (``SimulationSpec.tracking_outages``): an application's front end that sends
no events for a while — a deploy that drops the click beacon, a consent banner — while its query
records go on.

A session's records are written and jittered as usual (every random draw, and so the plan, is
what it would have been), then its events in an outage's window are not sent: each counted
among the hidden events of its outage, and out of the truth's counts of the records sent (page
exits, orphan clicks, redeliveries). The plan keeps them: the truth is what people did;
``GroundTruth`` tallies what a collector can see apart (``observable``) and what each outage
hid (``OutageTally``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import msgspec

from collector.sources.simulator.intents import IntentRule, query_records
from collector.sources.simulator.plan import PlannedSearch
from collector.sources.simulator.records import ORPHAN_PREFIX, Line
from collector.sources.simulator.spec import TrackingOutage

if TYPE_CHECKING:  # a type only: the oracle is set by the simulator
    from collector.sources.simulator.oracle import GroundTruth

_decode = msgspec.json.Decoder().decode


def hidden_events(lines: list[Line], application: str, truth: GroundTruth,
                  start: float) -> set[int]:
    """The indexes in ``lines`` (a session of ``application``) of what its front end does not
    send: the events in an outage of it, and their redeliveries."""
    hidden: set[int] = set()
    dropped: set[int] = set()  # ids of the lines not sent: a redelivery is the same line
    for n, line in enumerate(lines):
        if id(line) in dropped:  # the redelivery of an event never sent
            truth.duplicates -= 1
            hidden.add(n)
            continue
        record = _event(line[1])
        if record is None or not truth.hid(application, line[0] - start,
                                           str(record["action_name"])):
            continue
        hidden.add(n)
        dropped.add(id(line))
        if record["action_name"] == "page_exit":
            truth.ignored -= 1
        elif str(record.get("query_id", "")).startswith(ORPHAN_PREFIX):
            truth.orphans -= 1
    return hidden


class OutageTally:
    """One tracking outage: its window, the intents of its application made in it, those that
    lost an event to it, and the events it hid by action."""

    def __init__(self, outage: TrackingOutage, start: float) -> None:
        self.outage = outage
        self.start = start
        self.searches = 0
        self.searches_with_hidden_events = 0
        self.events: dict[str, int] = {}

    def hidden(self, application: str, ts_ms: int) -> bool:
        return self.outage.hides(application, ts_ms / 1000 - self.start)

    def add(self, plan: list[PlannedSearch], rule: IntentRule) -> None:
        app = self.outage.application
        for search, _ in rule.split(query_records(plan))[0]:
            if search.application != app:
                continue
            self.searches += self.hidden(app, search.ts_ms)
            events = [ts for ts, _ in search.clicks] + search.conversions + search.impressions
            self.searches_with_hidden_events += any(self.hidden(app, ts) for ts in events)

    def as_dict(self) -> dict[str, object]:
        begin = self.start + self.outage.start_s
        return {"application": self.outage.application, "start": _iso(begin),
                "end": _iso(begin + self.outage.duration_s), "searches_in_window": self.searches,
                "searches_with_hidden_events": self.searches_with_hidden_events,
                "hidden_events": dict(sorted(self.events.items()))}


def observable(search: PlannedSearch, outages: list[OutageTally]) -> PlannedSearch:
    """The search as a collector sees it: without the events tracking outages dropped."""
    def seen(ts: int) -> bool:
        return not any(o.hidden(search.application, ts) for o in outages)

    return replace(search, clicks=[c for c in search.clicks if seen(c[0])],
                   conversions=[ts for ts in search.conversions if seen(ts)],
                   impressions=[ts for ts in search.impressions if seen(ts)])


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def _event(raw: bytes) -> dict[str, object] | None:
    """The record if it is an event (a malformed record is sent whatever the tracking)."""
    try:
        record = _decode(raw)
    except msgspec.DecodeError:
        return None
    return record if isinstance(record, dict) and "action_name" in record else None
