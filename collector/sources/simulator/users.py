"""Returning users (``SimulationSpec.users``): their application, variant, activity and
click propensity."""

from __future__ import annotations

import math
import random
from bisect import bisect
from dataclasses import dataclass
from itertools import accumulate

from collector.sources.simulator.applications import APPS, App, draw_variant
from collector.sources.simulator.spec import SimulationSpec


@dataclass(frozen=True)
class _User:
    client: str
    app: App
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
            variant = draw_variant(rng, app, spec.interleaving_preference is not None)
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
