"""Every alert as one row of data; every threshold, window, `for:` and URL a named setting.

The monitoring-mixin `_config` habit: nothing a deployment needs to change is in code. Settings
are read like the collector's (`collector.config`): defaults < the `[alerts]` section of a TOML
file < `SEARCHPULSE_ALERTS_*` environment variables < `--set alerts.SECTION.NAME=VALUE`, and an
error names the key. The latency guardrail is not an alert setting: alerts read the collector's
`metrics.latency_guardrail_s`, the value its latency histogram has a bucket boundary at (and the
store alert its `store.flush_interval_s`, how long a store may take between flushes); nor are
the experiment settings (`experiments.*`: unit buckets, control variant, designed split,
guardrail margins), which `searchpulse experiments` reads too.

Change a default here, run `make generate`, commit the regenerated rules: the regenerate-and-diff
test fails if the committed rules and this file disagree. `Profile.fast()` is the same rule set
with windows short enough for the end-to-end test (event time runs faster there too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from alerts.selector import problem as selector_problem
from collector.config import Config, Setting, load_config
from collector.errors import ConfigError
from collector.series.experiment_stats import ExperimentDesign

OVERVIEW_DASHBOARD = "searchpulse-overview/search-quality-overview"
HEALTH_DASHBOARD = "searchpulse-collector/searchpulse-collector-health"
EXPERIMENTS_DASHBOARD = "searchpulse-experiments/search-quality-experiments"
_DURATION = re.compile(r"(\d+)([smhdw])")


def percentile(quantile: float) -> str:
    """A quantile as on-call names it: 0.99 → p99, 0.999 → p99.9."""
    return f"p{quantile * 100:g}"


def duration(seconds_: float) -> str:
    """Seconds as a Prometheus duration of one unit: 6h, 90m, 45s (the largest unit that
    divides it), the inverse of seconds(); how rules and panels name a seconds setting."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds_ >= size and not seconds_ % size:
            return f"{int(seconds_ // size)}{unit}"
    return f"{seconds_:g}s"


def seconds(duration: str) -> int:
    """A Prometheus duration of one unit (`5m`, `1h`) in seconds."""
    number, unit = _DURATION.fullmatch(duration).groups()
    return int(number) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[unit]


@dataclass(frozen=True)
class Windows:
    """Multiwindow pairs: an alert fires only when a short and a long window agree."""

    page_short: str = "5m"    # critical: fast reaction …
    page_long: str = "1h"     # … confirmed over an hour (no paging on a 5-minute blip)
    ticket_short: str = "30m"  # warning: slower, smaller regressions
    ticket_long: str = "6h"
    baseline_offsets: tuple[str, ...] = ("1w", "2w", "3w")  # baseline = median of these
    # The traffic-health baselines (event coverage, automated share): the same window a day
    # earlier too, so a new deployment is judged against its own history after one day, not
    # three weeks. Neither rate follows the weekly rhythm that the quality rates' baselines
    # leave out by reading whole weeks back; the median of four lets one bad day pass.
    health_baseline_offsets: tuple[str, ...] = ("1d", "1w", "2w", "3w")

    def pair(self, kind: str) -> tuple[str, str]:
        return (self.page_short, self.page_long) if kind == "page" else \
            (self.ticket_short, self.ticket_long)


@dataclass(frozen=True)
class Thresholds:
    # Zero-result rate: above an absolute objective AND above the baseline × factor.
    zero_result_rate_critical: float = 0.15
    zero_result_rate_warning: float = 0.10
    zero_result_baseline_factor: float = 1.5
    # Known-item searches that find nothing: a product or title that exists cannot be found.
    known_item_zero_result_rate_critical: float = 0.05
    # Relative to the baseline: CTR down by 20 %, reformulation or abandonment up by 25 %.
    ctr_drop_factor: float = 0.8
    reformulation_rise_factor: float = 1.25
    abandonment_rise_factor: float = 1.25
    latency_quantile: float = 0.99
    # Judged relevance: NDCG@10 of judged searches below ×factor of its baseline; the share of
    # the shown top 10 with a grade below the floor (the judgment set is going stale).
    judged_ndcg_drop_factor: float = 0.9
    judged_coverage_min: float = 0.6
    min_judged_searches_long_window: int = 200
    # Experiments (sample ratio, guardrails): the collector's experiments.* settings, which the
    # verdict report reads too — see Profile.experiments.
    # Tracking health (SearchTrackingBroken): event coverage below ×factor of its baseline; with
    # no baseline yet (a new deployment's first day), below the floor. A lost beacon takes
    # coverage to ~0; a relevance regression moves it (on a front end that sends no impressions,
    # coverage ≈ CTR + pagination) by tens of percent, not by half within the hour.
    event_coverage_drop_factor: float = 0.5
    event_coverage_floor: float = 0.05
    # Automated share (SearchAutomatedShareJump): above its baseline by this much (a share of
    # all searches, in points: a jump from 0 % and one from 50 % read alike).
    automated_share_rise: float = 0.1
    # Minimum traffic: fewer searches than this in the long window never page or ticket (the
    # tracking page counts searches with results, the automated-share ticket all searches).
    min_searches_long_window: int = 200
    min_known_item_searches_long_window: int = 50
    # Traffic cessation: no searches for `cessation_window` while an hour earlier the
    # application served at least this many searches per second.
    cessation_window: str = "10m"
    cessation_substantial_per_s: float = 0.5
    # Pipeline health.
    invalid_record_ratio_warning: float = 0.02
    min_records_for_invalid_ratio: int = 500
    consumer_lag_records_warning: int = 100_000
    consumer_lag_growing_from_records: int = 10_000
    event_staleness_s_critical: int = 600


@dataclass(frozen=True)
class Durations:
    """`for:` (how long a condition must hold) and `keep_firing_for:` (anti-flapping)."""

    page_for: str = "2m"
    ticket_for: str = "15m"
    keep_firing_for: str = "10m"
    down_for: str = "5m"
    absent_for: str = "15m"
    lag_for: str = "15m"
    # the store alert's condition is a duration already (away longer than a flush interval)
    store_away_for: str = "0s"


@dataclass(frozen=True)
class Routing:
    """Alertmanager notification timing."""

    group_wait: str = "30s"  # gather the first alerts of an incident into one notification
    group_interval: str = "5m"  # then at most one update per group every 5 minutes
    repeat_interval: str = "4h"  # remind while it still fires (warning: tickets)
    page_repeat_interval: str = "1h"  # remind on-call more often for pages


@dataclass(frozen=True)
class Deployment:
    """Where links point, which series are the collector's, where notifications go."""

    selector: str = 'job="searchpulse"'
    runbook_base: str = "https://github.com/searchpulse/searchpulse/blob/main/alerts/runbooks.md"
    grafana_base: str = "http://localhost:3000"
    pager_url: str = "http://pager.invalid/searchpulse"
    ticket_url: str = "http://tickets.invalid/searchpulse"


WindowKind = Literal["page", "ticket", "none"]


@dataclass(frozen=True)
class AlertRow:
    """One alert rule: its expression (built in `alerts.rules` under `name`), the window pair it
    reads, how long it must hold, how long it keeps firing, and who is woken."""

    name: str
    severity: Literal["critical", "warning"]
    windows: WindowKind  # the multiwindow pair, or "none" for single-window expressions
    for_: str  # a `Durations` field
    keep_firing_for: str = "keep_firing_for"  # a `Durations` field
    # A ticket (warning) reading the paging windows must say why; so must a page on tickets'.
    windows_because: str = ""


ALERTS: tuple[AlertRow, ...] = (
    AlertRow("SearchZeroResultRateHigh", "critical", "page", "page_for"),
    AlertRow("SearchZeroResultRateHigh", "warning", "ticket", "ticket_for"),
    AlertRow("SearchKnownItemZeroResultRateHigh", "critical", "page", "page_for"),
    AlertRow("SearchClickThroughRateDrop", "warning", "ticket", "ticket_for"),
    AlertRow("SearchReformulationRateHigh", "warning", "ticket", "ticket_for"),
    AlertRow("SearchAbandonmentRateHigh", "warning", "ticket", "ticket_for"),
    AlertRow("SearchJudgedRelevanceDrop", "warning", "ticket", "ticket_for"),
    AlertRow("SearchExperimentSampleRatioMismatch", "warning", "ticket", "ticket_for"),
    AlertRow("SearchExperimentGuardrailWorse", "warning", "ticket", "ticket_for"),
    AlertRow("SearchExperimentLatencyGuardrailWorse", "warning", "ticket", "ticket_for"),
    AlertRow("SearchJudgmentSetStale", "warning", "ticket", "ticket_for"),
    AlertRow("SearchLatencyHigh", "warning", "page", "page_for",
             windows_because="a latency guardrail breach is user-visible at once: the ticket "
                             "opens within the hour, not after six"),
    AlertRow("SearchTrafficCessation", "critical", "none", "page_for"),
    AlertRow("SearchTrafficAbsent", "critical", "none", "absent_for"),
    AlertRow("SearchTrackingBroken", "critical", "page", "page_for"),
    AlertRow("SearchAutomatedShareJump", "warning", "ticket", "ticket_for"),
    AlertRow("SearchpulseCollectorDown", "critical", "none", "down_for"),
    AlertRow("SearchpulseCollectorAbsent", "critical", "none", "absent_for"),
    AlertRow("SearchpulseEventsStale", "critical", "none", "down_for"),
    AlertRow("SearchpulseInvalidRecordRateHigh", "warning", "ticket", "ticket_for"),
    AlertRow("SearchpulseConsumerLagHigh", "warning", "none", "lag_for"),
    AlertRow("SearchpulseConsumerLagGrowing", "warning", "ticket", "lag_for"),
    AlertRow("SearchpulseStoreFlushFailing", "warning", "none", "store_away_for"),
)
_SEVERITY_WINDOWS = {"critical": "page", "warning": "ticket"}
# While the tracking page fires for an application, Alertmanager mutes that application's
# alerts whose rules carry this label (alerts/rules/ sets it where a builder's Built says
# needs_tracking: the alerts whose numbers rest on the front end's events).
TRACKING_ALERT = "SearchTrackingBroken"
NEEDS_TRACKING = ("needs", "tracking")


@dataclass(frozen=True)
class Profile:
    windows: Windows = field(default_factory=Windows)
    thresholds: Thresholds = field(default_factory=Thresholds)
    durations: Durations = field(default_factory=Durations)
    routing: Routing = field(default_factory=Routing)
    deployment: Deployment = field(default_factory=Deployment)
    alerts: tuple[AlertRow, ...] = ALERTS
    latency_guardrail_s: float = 0.5  # the collector's metrics.latency_guardrail_s
    store_flush_interval_s: float = 60.0  # the collector's store.flush_interval_s
    # the collector's experiments.* settings: unit buckets, control, split, margins, minimums
    experiments: ExperimentDesign = field(default_factory=lambda: ExperimentDesign.from_config(
        load_config(environ={})))  # the default settings' design

    def __post_init__(self) -> None:
        check(self)

    def duration(self, name: str) -> str:
        return getattr(self.durations, name)

    @classmethod
    def fast(cls) -> Profile:
        """For the end-to-end test: seconds instead of hours, same structure and names."""
        return cls(
            windows=Windows("10s", "20s", "15s", "30s"),
            thresholds=replace(Thresholds(), zero_result_rate_critical=0.35,
                               zero_result_rate_warning=0.30, min_searches_long_window=50,
                               cessation_window="20s", min_records_for_invalid_ratio=50,
                               event_staleness_s_critical=3600),
            durations=Durations(page_for="3s", ticket_for="5s", keep_firing_for="3s",
                                down_for="3s", absent_for="10s", lag_for="10s"),
            routing=Routing(group_wait="1s", group_interval="2s", repeat_interval="1m",
                            page_repeat_interval="1m"),
        )


# What each threshold must be, by field: a share of searches strictly between 0 and 1, a factor
# that is a drop (below 1) or a rise (above 1), a count, a duration.
_BOUNDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    **dict.fromkeys(("zero_result_rate_critical", "zero_result_rate_warning",
                     "known_item_zero_result_rate_critical", "latency_quantile",
                     "judged_coverage_min", "invalid_record_ratio_warning",
                     "event_coverage_floor", "automated_share_rise"),
                    (lambda v: 0 < v < 1, "a share between 0 and 1 (exclusive)")),
    **dict.fromkeys(("ctr_drop_factor", "judged_ndcg_drop_factor", "event_coverage_drop_factor"),
                    (lambda v: 0 < v < 1, "a drop factor between 0 and 1 (exclusive)")),
    **dict.fromkeys(("zero_result_baseline_factor", "reformulation_rise_factor",
                     "abandonment_rise_factor"),
                    (lambda v: v > 1, "a rise factor above 1")),
    **dict.fromkeys(("min_judged_searches_long_window", "min_searches_long_window",
                     "min_known_item_searches_long_window", "min_records_for_invalid_ratio",
                     "consumer_lag_growing_from_records"),
                    (lambda v: v >= 0, "a count >= 0")),
    **dict.fromkeys(("consumer_lag_records_warning", "event_staleness_s_critical",
                     "cessation_substantial_per_s"), (lambda v: v > 0, "> 0")),
    "cessation_window": (lambda v: bool(_DURATION.fullmatch(v)), "a duration like 10m"),
}


def check(profile: Profile) -> None:
    """Rejects a profile whose rows, windows or thresholds are impossible or contradict each
    other; names the culprit."""
    _check_thresholds(profile.thresholds)
    for name in ("baseline_offsets", "health_baseline_offsets"):
        offsets = getattr(profile.windows, name)
        if not offsets:
            raise ConfigError(f"alerts.windows.{name}: needs at least one duration like 1w")
        for offset in offsets:
            if not _DURATION.fullmatch(offset):
                raise ConfigError(f"alerts.windows.{name}: {offset!r} is not a duration like 1w")
    _check_durations("routing", profile.routing)
    for item in ("runbook_base", "grafana_base", "pager_url", "ticket_url"):
        url = getattr(profile.deployment, item)
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"alerts.deployment.{item}: expected an http(s):// URL, got "
                              f"{url!r}")
    why = selector_problem(profile.deployment.selector)
    if why:
        raise ConfigError(f"alerts.deployment.selector (generate --selector): not a list of "
                          f"Prometheus label matchers like job=\"searchpulse\": {why}; got "
                          f"{profile.deployment.selector!r}")
    _check_window_pairs(profile.windows)
    _check_durations("durations", profile.durations)
    for row in profile.alerts:
        _check_row(row, profile.durations)


def _check_thresholds(thresholds: Thresholds) -> None:
    """Each threshold within its bounds (``_BOUNDS``), and the zero-result ticket below its
    page."""
    for item in fields(Thresholds):
        valid, needs = _BOUNDS[item.name]
        value = getattr(thresholds, item.name)
        if not valid(value):
            raise ConfigError(f"alerts.thresholds.{item.name}: must be {needs}, got {value!r}")
    if thresholds.zero_result_rate_warning > thresholds.zero_result_rate_critical:
        raise ConfigError("alerts.thresholds.zero_result_rate_warning must not exceed "
                          "alerts.thresholds.zero_result_rate_critical (the ticket is the "
                          "slow burn below the page)")


def _check_durations(section: str, settings: Routing | Durations) -> None:
    """Every field of a section made only of durations is one Prometheus reads."""
    for item in fields(settings):
        if not _DURATION.fullmatch(getattr(settings, item.name)):
            raise ConfigError(f"alerts.{section}.{item.name}: not a duration like 5m, got "
                              f"{getattr(settings, item.name)!r}")


def _check_window_pairs(windows: Windows) -> None:
    """The page's and the ticket's windows are durations, the short one shorter than the
    long one (a multiwindow alert whose short window is not shorter reads the same range
    twice)."""
    for key in ("page", "ticket"):
        short, long = windows.pair(key)
        for name, value in ((f"{key}_short", short), (f"{key}_long", long)):
            if not _DURATION.fullmatch(value):
                raise ConfigError(f"alerts.windows.{name}: not a duration like 5m, got {value!r}")
        if seconds(short) >= seconds(long):
            raise ConfigError(f"alerts.windows.{key}_short ({short}) must be shorter than "
                              f"alerts.windows.{key}_long ({long})")


def _check_row(row: AlertRow, durations: Durations) -> None:
    """An alert row's durations name settings, and it reads its severity's windows unless it
    says why not."""
    where = f"alert {row.name} ({row.severity})"
    for attribute in ("for_", "keep_firing_for"):
        if not hasattr(durations, getattr(row, attribute)):
            raise ConfigError(f"{where}: {attribute} names no alerts.durations setting, got "
                              f"{getattr(row, attribute)!r}")
    expected = _SEVERITY_WINDOWS[row.severity]
    if row.windows not in ("none", expected) and not row.windows_because:
        raise ConfigError(f"{where}: a {row.severity} alert reads the {expected} windows, "
                          f"not the {row.windows} windows, unless windows_because says why")


# ----------------------------------------------------------------------------- settings
SECTIONS = {"windows": Windows, "thresholds": Thresholds, "durations": Durations,
            "routing": Routing, "deployment": Deployment}
SETTINGS: tuple[Setting, ...] = tuple(
    Setting(f"alerts.{section}.{item.name}",
            list if isinstance(item.default, tuple) else type(item.default), item.default,
            f"{section} of the generated alerts (alerts/config.py)")
    for section, kind in SECTIONS.items() for item in fields(kind)
)


def from_config(config: Config) -> Profile:
    """The profile a (collector) configuration with the alert settings describes."""
    parts: dict[str, Any] = {}
    for section, kind in SECTIONS.items():
        values = {item.name: config[f"alerts.{section}.{item.name}"] for item in fields(kind)}
        parts[section] = kind(**{k: tuple(v) if isinstance(v, list) else v
                                 for k, v in values.items()})
    try:
        return Profile(**parts, latency_guardrail_s=config["metrics.latency_guardrail_s"],
                       store_flush_interval_s=config["store.flush_interval_s"],
                       experiments=ExperimentDesign.from_config(config))
    except ConfigError as error:  # say where the offending value came from, as the
        key = re.match(r"[\w.]+", str(error)).group()  # collector's settings do
        if key not in config.sources:
            raise
        raise ConfigError(f"{error} (from {config.sources[key]})") from None


def load_profile(path: str | None = None, overrides: Mapping[str, Any] | None = None,
                 environ: Mapping[str, str] | None = None) -> Profile:
    """Defaults < TOML file < environment < overrides, validated like the collector's config."""
    return from_config(load_config(path, overrides, environ, extra=SETTINGS))
