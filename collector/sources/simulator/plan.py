"""A session's plan: its searches as the simulated user made them, clean, structured and in
time order (what the ground truth is tallied from), each with the keystroke records its typing
sent before it (applications that search as you type)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PlannedSearch:
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
    impressions: list[int] = field(default_factory=list)  # ts_ms of its impression events
    # the query records typing it sent before it, in time order (search as you type)
    typed: list[PlannedSearch] = field(default_factory=list)
    click_shift: float = 0.0  # its user's click propensity (logit scale), SimulationSpec.users
