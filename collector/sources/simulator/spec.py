"""What to simulate: the spec of a run, its incidents, lulls, automated clients and tracking
outages, and the diurnal profile its sessions start by."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

from collector.sources.simulator.applications import APPS

APPLICATIONS = tuple(app.name for app in APPS)


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


@dataclass(frozen=True)
class Bot:
    """``KIND@APP:[CLIENTSx]RATE/UNIT[:START+DURATION][:id=CLIENT_ID]``, e.g.
    ``crawler@web:25/m:0+3h``, ``monitor@web:1/m``, ``fleet@web:25x4/m:1h+1h``: automated
    clients of one kind searching one application (simulator/bots.py). ``rate_per_s`` is each
    client's; without a window they search as long as sessions start."""

    kind: str
    application: str
    clients: int
    rate_per_s: float
    start_s: float = 0.0
    duration_s: float | None = None
    client_id: str | None = None  # a declared-looking id (one client only), else random

    KINDS = ("crawler", "monitor", "fleet")
    FORMAT = ("KIND@APP:[CLIENTSx]RATE/UNIT[:START+DURATION][:id=CLIENT_ID], e.g. "
              "crawler@web:25/m:0+3h, monitor@web:1/m, fleet@web:25x4/m:1h+1h")
    _SYNTAX = re.compile(r"(\w+)@([\w.-]+):(?:(\d+)x)?(\d+(?:\.\d+)?)/(s|m|h)"
                         r"(?::([\w.]+)\+([\w.]+))?(?::id=([\w.:@-]+))?")

    @classmethod
    def parse(cls, text: str) -> Bot:
        match = cls._SYNTAX.fullmatch(text.strip())
        if not match:
            raise ValueError(f"{text!r}: expected {cls.FORMAT}")
        kind, app, clients, rate, unit, start, duration, client_id = match.groups()
        if kind not in cls.KINDS:
            raise ValueError(f"{text!r}: unknown kind {kind!r}, expected one of "
                             f"{', '.join(cls.KINDS)}")
        known_application(app, text)
        count = int(clients or 1)
        per_s = float(rate) / {"s": 1, "m": 60, "h": 3600}[unit]
        if count < 1 or per_s <= 0:
            raise ValueError(f"{text!r}: expected at least one client and a rate > 0")
        if client_id and count > 1:
            raise ValueError(f"{text!r}: id= names one client, not {count}")
        return cls(kind, app, count, per_s, parse_duration(start) if start else 0.0,
                   parse_duration(duration) if duration else None, client_id)

    def active(self, offset_s: float) -> bool:
        return self.start_s <= offset_s and (self.duration_s is None
                                             or offset_s < self.start_s + self.duration_s)


@dataclass(frozen=True)
class TrackingOutage:
    """``APP:START+DURATION``, e.g. ``web:30m+10m``: the application's front end sends no event
    (click, conversion, impression, any other) in that window of event time; its query
    records go on."""

    application: str
    start_s: float
    duration_s: float

    FORMAT = "APP:START+DURATION, e.g. web:30m+10m"

    @classmethod
    def parse(cls, text: str) -> TrackingOutage:
        app, colon, window = text.strip().partition(":")
        if not colon:
            raise ValueError(f"{text!r}: expected {cls.FORMAT}")
        known_application(app, text)
        try:
            start, duration = parse_lull(window)
        except ValueError:
            raise ValueError(f"{text!r}: expected {cls.FORMAT}") from None
        return cls(app, start, duration)

    def hides(self, application: str, offset_s: float) -> bool:
        """Whether an event of ``application`` at ``offset_s`` (from the start) is not sent."""
        return (application == self.application
                and self.start_s <= offset_s < self.start_s + self.duration_s)


def known_application(name: str, text: str) -> str:
    """``name`` if the simulator has such an application, else a ValueError naming them."""
    if name not in APPLICATIONS:
        raise ValueError(f"{text!r}: unknown application {name!r}, expected one of "
                         f"{', '.join(APPLICATIONS)}")
    return name


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
    # Applications whose front end searches as you type (simulator/type_ahead.py): each
    # search's query record comes after the keystroke records its typing sent.
    type_ahead: frozenset[str] = frozenset()
    # Automated clients (crawlers, monitors, load-test fleets: simulator/bots.py), and
    # windows in which an application's front end sends no events.
    bots: list[Bot] = field(default_factory=list)
    tracking_outages: list[TrackingOutage] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in ("users", "user_activity_sigma", "user_click_sigma"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name.replace('_', '-')} must be >= 0, got "
                                 f"{getattr(self, name)}")
        if not -1 < self.treatment_click_effect < 1:
            raise ValueError("treatment-click-effect must be between -1 and 1")
        for name in self.type_ahead:
            known_application(name, ",".join(sorted(self.type_ahead)))


def traffic_share(ts: float) -> float:
    """The diurnal profile: the share of the peak session rate at UTC time ``ts``."""
    hour = ts % 86400 / 3600
    return 0.02 + 0.98 * math.sin(math.pi * (hour - 6) / 18) if hour >= 6 else 0.02
