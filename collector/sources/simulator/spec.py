"""What to simulate: the spec of a run, its incidents and lulls, and the diurnal profile its
sessions start by."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone


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
