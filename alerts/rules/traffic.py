"""Alerts on the traffic itself (alerts/tests/traffic.test.yml, traffic-health.test.yml):
cessation, absence, and what the front ends send beside their searches — events (tracking
health) and automated clients.

The two traffic-health alerts judge a rate against the application's own baseline over
``alerts.windows.health_baseline_offsets`` (the same window a day and 1, 2, 3 weeks earlier):
a new deployment has one after a day.
"""

from __future__ import annotations

from alerts.config import (
    AlertRow,
    Profile,
)
from alerts.rules.recordings import (
    Built,
    Recordings,
    baseline_text,
    builds,
    enough_baseline,
    guarded,
    weeks_ago,
)
from collector import definitions as d
from collector.metric_rows import Family

COVERAGE, AUTOMATED = d.EVENT_COVERAGE.ratio, d.AUTOMATED_SHARE.ratio
EVENTS_WITHOUT_SEARCH = next(family for family, attribute in d.PIPELINE_REASONS
                             if attribute == "events_without_search")


@builds("SearchTrafficCessation")
def _cessation(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t, sel = profile.thresholds, profile.deployment.selector
    window = t.cessation_window
    return Built(
        f"sum by (application) (rate({d.SEARCHES.name}{{{sel}}}[{window}])) == 0\n"
        f"and on (application) sum by (application) (rate({d.SEARCHES.name}{{{sel}}}"
        f"[1h] offset 1h)) > {t.cessation_substantial_per_s}",
        "{{ $labels.application }} stopped sending searches.",
        f"No search of {{{{ $labels.application }}}} for {window}, while an hour earlier it "
        f"served more than {t.cessation_substantial_per_s} searches/s: the search front end, "
        f"its UBI tracking or the pipeline to Kafka is broken.",
        "traffic", kind="traffic", needs_tracking=False)


@builds("SearchTrafficAbsent")
def _traffic_absent(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    duration = profile.duration(row.for_)
    return Built(
        f"absent({d.SEARCHES.name}{{{profile.deployment.selector}}})",
        "No search-quality series at all.",
        f"{d.SEARCHES.name} has no series for {duration}: the collector sees no "
        f"searches (no producer, wrong topic) or its series are not scraped.",
        "traffic", kind="traffic", per_application=False, needs_tracking=False)


def _in_window(family: Family, window: str, by: str = "") -> str:
    """A template query: ``family``'s increase over ``window`` for the alert's application."""
    grouping = f"sum by ({by})" if by else "sum"
    return (f'printf "{grouping} (increase({family.name}{{application=%q}}[{window}]))" '
            f"$labels.application")


def _count_text(family: Family, window: str) -> str:
    """How many ``family`` counted for the alert's application over ``window`` (0 without a
    series: the collector counted none)."""
    return (f"{{{{ with {_in_window(family, window)} | query }}}}{{{{ . | first | value | "
            f'printf "%.0f" }}}}{{{{ else }}}}0{{{{ end }}}}')


@builds("SearchTrackingBroken")
def _tracking_broken(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    """Event coverage collapsed while searches with results go on: below ×factor of its
    baseline (one of enough traffic: ``min_searches_long_window`` searches with results in the
    baseline's window), or below the floor while it has none (a new deployment's first day),
    in both windows. Traffic that stops gives no coverage at all (no data): the cessation page's
    job, not this one's."""
    t, offsets = profile.thresholds, profile.windows.health_baseline_offsets
    short, long = profile.windows.pair(row.windows)
    r_short, r_long = (rec.ratio("application", COVERAGE, w) for w in (short, long))
    base = rec.baseline(r_long, offsets)
    minimum = t.min_searches_long_window
    known = enough_baseline(rec, d.WITH_RESULTS, long, minimum, offsets)
    factor, floor = t.event_coverage_drop_factor, t.event_coverage_floor
    condition = (f"(\n  {r_short} < {factor} * {base}\n  and {r_long} < {factor} * {base}\n"
                 f"  and on (application) {known}\n)\nor (\n  {r_short} < {floor}\n"
                 f"  and {r_long} < {floor}\n  unless on (application) {known}\n)")
    orphans, beyond = EVENTS_WITHOUT_SEARCH, d.CLICKS_BEYOND_RESULTS
    return Built(
        guarded(rec, condition, long, minimum, traffic=d.WITH_RESULTS),
        "The front end of {{ $labels.application }} stopped sending its events: tracking is "
        "broken, not relevance.",
        f"Event coverage of {{{{ $labels.application }}}} — searches with results that received "
        f"any event (impression, click, conversion, next page) — is {{{{ $value | "
        f"humanizePercentage }}}} over {short}, and over {long} too it is below ×{factor} of its "
        f"baseline (median of the same {long} window {weeks_ago(profile, offsets)}: "
        f"{baseline_text(r_long)}) or, with no baseline yet, below {floor:.0%}; "
        f"{{{{ $labels.application }}}} still served at least {minimum} searches with results "
        f"in {long}. An instrumentation incident, not a relevance one: its alerts on what people "
        f"do after a search, on judged relevance and on experiment guardrails are muted while "
        f"this fires. Over {long}: {_count_text(orphans, long)} events named a query never "
        f"seen, {_count_text(beyond, long)} clicks fell beyond the results shown.",
        "tracking", kind="traffic", needs_tracking=False)


@builds("SearchAutomatedShareJump")
def _automated_share_jump(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    """The automated share rose by ``automated_share_rise`` (points of all searches) above its
    baseline in both windows, with ``min_searches_long_window`` searches in the long window
    now and in the baseline: a jump needs a before. Its `silent` and `repetitive` rules read
    "no interaction", so broken tracking raises it too: the tracking page mutes it."""
    t, offsets = profile.thresholds, profile.windows.health_baseline_offsets
    short, long = profile.windows.pair(row.windows)
    r_short, r_long = (rec.ratio("application", AUTOMATED, w) for w in (short, long))
    base = rec.baseline(r_long, offsets)
    rise = t.automated_share_rise
    condition = f"{r_short} > {base} + {rise}\nand {r_long} > {base} + {rise}"
    reasons = _in_window(d.AUTOMATED_SEARCHES, short, by="reason")
    return Built(
        guarded(rec, condition, long, t.min_searches_long_window, baseline_minimum=True,
                traffic=d.ALL_SEARCHES, offsets=offsets),
        "Much more of the traffic of {{ $labels.application }} is automated than usual.",
        f"{{{{ $value | humanizePercentage }}}} of the searches of {{{{ $labels.application }}}} "
        f"over {short} came from clients found automated, and over {long} too the share is more "
        f"than {rise * 100:g} points above its baseline (median of the same {long} window "
        f"{weeks_ago(profile, offsets)}: {baseline_text(r_long)}). Automated searches are in no "
        f"quality rate: a new crawler, monitor or load test, or people taken for automated "
        f"clients (the rates then lose them). Over {short} by reason: {{{{ range {reasons} | "
        f'query | sortByLabel "reason" }}}}{{{{ .Labels.reason }}}} ({{{{ .Value | printf '
        f'"%.0f" }}}}) {{{{ end }}}}',
        "automated_traffic", kind="traffic", needs_tracking=True)
