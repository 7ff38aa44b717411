"""Tracking outages (``SimulationSpec.tracking_outages``): an application's front end that sends
no events for a while — a deploy that drops the click beacon, a consent banner — while its query
records go on.

A session's records are written and jittered as usual (every random draw, and so the plan, is
what it would have been), then its events in an outage's window are not sent: each counted
among the hidden events of its outage, and out of the truth's counts of the records sent (page
exits, orphan clicks, redeliveries). The plan keeps them: the truth is what people did;
``GroundTruth`` tallies what a collector can see apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from collector.sources.simulator.records import ORPHAN_PREFIX, Line

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


def _event(raw: bytes) -> dict[str, object] | None:
    """The record if it is an event (a malformed record is sent whatever the tracking)."""
    try:
        record = _decode(raw)
    except msgspec.DecodeError:
        return None
    return record if isinstance(record, dict) and "action_name" in record else None
