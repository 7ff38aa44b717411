"""Realistic synthetic UBI traffic, with the ground truth it generated.

Users follow a small behaviour model: Zipf query popularity (head / torso / tail), known-item SKU
searches, position-biased clicks (examination decays with rank), zero-result queries,
reformulation chains (typo fixes, refinements, broadening), pagination, conversions, latency, and
several applications that speak different UBI dialects. Incidents change the model for a while.

The ground truth is tallied from each session's *plan* (clean, structured, in time order) by
applying the written definitions directly: an oracle independent of decoding, ordering, windows
and state in the engine. Records are delivered with a bounded jitter (out of event-time order).

Real front ends too: applications that search as you type (keystroke records before every
search), automated clients (crawlers, monitors, load-test fleets) and tracking outages (a front
end that stops sending events), each on a random stream of its own, so that with them off every
output is what it was.

One module per job: ``spec`` (what to simulate), ``vocabulary`` (the queries), ``applications``
(their dialects), ``rankings`` (what a result page shows), ``users`` (returning users),
``behaviour`` (what a user does), ``type_ahead`` (how people type into a search-as-you-type box,
pure), ``keystrokes`` (the records typing sends), ``bots`` (automated clients), ``outages``
(events not sent), ``records`` (the records written and the noise), ``plan`` (a session's
searches), ``intents`` (the keystroke rule on a plan), ``oracle`` (the ground truth) and
``traffic`` (the ``Simulator``: sessions in event time, jittered delivery, pacing).
"""

from collector.sources.simulator.oracle import GroundTruth
from collector.sources.simulator.rankings import ranked
from collector.sources.simulator.spec import (
    Bot,
    Incident,
    SimulationSpec,
    TrackingOutage,
    parse_duration,
    parse_lull,
)
from collector.sources.simulator.traffic import Simulator
from collector.sources.simulator.type_ahead import TypingStyle, typed
from collector.sources.simulator.users import personal

__all__ = ["Bot", "GroundTruth", "Incident", "SimulationSpec", "Simulator", "TrackingOutage",
           "TypingStyle", "ranked", "parse_duration", "parse_lull", "personal", "typed"]
