"""Every alert threshold, window, `for:` and URL in one place (kubernetes-mixin style).

Change a number here, run `make generate`, commit the regenerated rules: the regenerate-and-diff
test fails if the committed rules and this file disagree. `Profile.fast()` is the same rule set
with windows short enough for the end-to-end test (event time runs faster there too).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

SELECTOR = 'job="searchpulse"'  # what identifies the collector's series in Prometheus
RUNBOOK_BASE = "https://github.com/searchpulse/searchpulse/blob/main/alerts/runbooks.md"
GRAFANA_BASE = "http://localhost:3000"
OVERVIEW_DASHBOARD = "searchpulse-overview/search-quality-overview"
HEALTH_DASHBOARD = "searchpulse-collector/searchpulse-collector-health"


@dataclass(frozen=True)
class Windows:
    """Multiwindow pairs: an alert fires only when a short and a long window agree."""

    page_short: str = "5m"    # critical: fast reaction …
    page_long: str = "1h"     # … confirmed over an hour (no paging on a 5-minute blip)
    ticket_short: str = "30m"  # warning: slower, smaller regressions
    ticket_long: str = "6h"
    baseline_offsets: tuple[str, ...] = ("1w", "2w", "3w")  # baseline = median of these


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
    latency_guardrail_s: float = 0.5  # = collector metrics.latency_guardrail_s
    latency_quantile: float = 0.99
    # Minimum traffic: fewer searches than this in the long window never page or ticket.
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


@dataclass(frozen=True)
class Routing:
    """Alertmanager notification timing."""

    group_wait: str = "30s"  # gather the first alerts of an incident into one notification
    group_interval: str = "5m"  # then at most one update per group every 5 minutes
    repeat_interval: str = "4h"  # remind while it still fires (warning: tickets)
    page_repeat_interval: str = "1h"  # remind on-call more often for pages


@dataclass(frozen=True)
class Profile:
    windows: Windows = field(default_factory=Windows)
    thresholds: Thresholds = field(default_factory=Thresholds)
    durations: Durations = field(default_factory=Durations)
    routing: Routing = field(default_factory=Routing)
    selector: str = SELECTOR
    runbook_base: str = RUNBOOK_BASE
    grafana_base: str = GRAFANA_BASE

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
