"""The applications sending traffic, each with its UBI dialect, whether it runs the experiment
and how long its search box waits for typing to stop (when it searches as you type), and the
experiment's interleaving variant and teams."""

from __future__ import annotations

import random
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
    debounce_ms: int  # a search-as-you-type box sends a record once no key came for this long


APPS = (
    App("web", 0.55, True, True, False, True, False, True, 250),
    App("mobile", 0.25, False, True, False, False, False, True, 250),
    App("legacy", 0.10, True, False, True, True, False, False, 300),
    App("opensearch", 0.10, True, False, False, True, True, False, 80),
)


def draw_variant(rng: random.Random, app: App, interleaving: bool) -> str | None:
    """A new client's experiment variant in ``app`` (None where it runs none); with
    ``interleaving`` on, a third of them interleaved."""
    variant = rng.choice(("control", "treatment")) if app.experiment else None
    if variant is not None and interleaving and rng.random() < 1 / 3:
        variant = INTERLEAVED
    return variant
