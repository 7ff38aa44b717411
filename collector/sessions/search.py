"""One query record as the sessionizer keeps it until it is evicted: a search once its decision
says it is one (docs/metrics.md, "When a search is counted"), and a result page of it.

The rules of the sessionizer (sessions/sessionizer.py) and of automated clients
(sessions/automated.py) read a search through these flags, so both modules import them from
here, below either.
"""

from __future__ import annotations

import msgspec

from collector.ingest.events import WireRecord
from collector.series.quality import QualitySeries
from collector.series.strata import QueryText
from collector.series.units import BucketCounts
from collector.store.query_stats import QueryRow

# Search.flags bits; the page size of the first result page is kept above them. The first
# eight are what happened (read by the rules as records arrive), the rest how it is counted.
ZERO_RESULT = 1
CLICKED = 2
CONVERTED = 4
ENGAGED = 8  # while it is its session's newest search: pagination, or a click or conversion
#              on an earlier search of the session, happened after it
DECIDED = 16  # decided: counted (the sweep passes it over)
PAGED = 32  # a next page of it was requested
EVENTED = 64  # it received an event or a next page (tracking health)
KEYSTROKE = 128  # a keystroke of the next query record of its session: no search
REFORMULATES = 256  # it reformulates ``before`` (judged at its arrival, counted at its decision)
CLICK_COUNTED = 512  # its first click is counted
CONVERSION_COUNTED = 1024  # its first conversion is counted
EARLY = 2048  # decided when the user acted on it, before its deadline (tracking reads it then)
UNTRACKED = 4096  # decided while its application's events were not arriving: outcome unknown
ACTED = CLICKED | CONVERTED | PAGED  # what the user did with it: never a keystroke
PAGE_SHIFT = 13

# An exposure applied before its search's decision, for its store row then: (the event, whether
# it is on the first page). Clicks, conversions and next pages decide their search at once.
Held = tuple[WireRecord, bool]


class Watch(msgspec.Struct, gc=False):
    """Shared by a client's state and its searches (sessions/automated.py): whether a rule may
    hold for the client — it has records enough, and never acted on one. A search reads it at
    its decision without a lookup; it points at nothing, so a search points back at no client
    (no cycle)."""

    on: bool = False  # records enough for a rule, or a reason already
    acted: bool = False  # it acted on one of its searches: no behaviour makes it automated


class Search(msgspec.Struct, gc=False):
    """One query record of a page absent or 1. A session is just ``sessions[session_key]``:
    its newest. gc=False keeps millions of open searches invisible to the cyclic GC; they hold
    no cycles (``before`` points back in time only, and is dropped at the decision)."""

    key: str
    session_key: str
    normalized: str
    ts: float
    flags: int  # ZERO_RESULT … CONVERSION_COUNTED, the first page's size above them
    text: QueryText  # its query text, normalized, and the stratum it fixes (strata.py)
    record: WireRecord | None = None  # its query record, until its decision counts it
    client: str | None = None  # who made it (client id, else session): automated.py
    watch: Watch | None = None  # whether its client's records are worth judging (automated.py)
    before: Search | None = None  # the intent before it in its session, until its decision
    held: list[Held] | None = None  # exposures before its decision (with a store)
    series: QualitySeries | None = None  # where it is counted, from its decision
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
