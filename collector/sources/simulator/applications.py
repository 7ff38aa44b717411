"""The applications sending traffic, each with its UBI dialect and whether it runs the
experiment, and the experiment's interleaving variant and teams."""

from __future__ import annotations

from dataclasses import dataclass

INTERLEAVED = "interleaved"
TEAMS = ("ranker-a", "ranker-b")


@dataclass
class App:
    name: str
    weight: float
    session_in_query: bool
    hit_ids: bool
    legacy_ids: bool
    ordinal: bool
    impressions: bool
    experiment: bool


APPS = (
    App("web", 0.55, True, True, False, True, False, True),
    App("mobile", 0.25, False, True, False, False, False, True),
    App("legacy", 0.10, True, False, True, True, False, False),
    App("opensearch", 0.10, True, False, False, True, True, False),
)
