"""Alerts on the search-quality rates (promtool tests: alerts/tests/quality.test.yml,
quality-baseline.test.yml): zero results, known items, the baseline drifts, latency."""

from __future__ import annotations

from alerts.config import (
    AlertRow,
    Profile,
    percentile,
    seconds,
)
from alerts.rules.recordings import (
    BUILDERS,
    Builder,
    Built,
    Recordings,
    baseline_text,
    builds,
    guarded,
    weeks_ago,
)
from collector import definitions as d
from collector.metric_rows import Rate

TOP_QUERIES = ('{{ range printf "topk(5, searchpulse_top_zero_result_queries{application=%q})" '
               '$labels.application | query }}"{{ .Labels.query }}" ({{ .Value }}) {{ end }}')
ZERO = d.ZERO_RESULT_RATE.ratio


@builds("SearchZeroResultRateHigh")
def _zero_result(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t = profile.thresholds
    short, long = profile.windows.pair(row.windows)
    threshold = (t.zero_result_rate_critical if row.severity == "critical"
                 else t.zero_result_rate_warning)
    r_short, r_long = rec.ratio("application", ZERO, short), rec.ratio("application", ZERO, long)
    base = rec.baseline(r_long)
    condition = (f"{r_short} > {threshold}\nand {r_long} > {threshold}\n"
                 f"and (\n  {r_long} > {t.zero_result_baseline_factor} * {base}\n"
                 f"  or {r_long} unless {base}\n)")
    return Built(
        guarded(rec, condition, long, t.min_searches_long_window),
        "Searches of {{ $labels.application }} return nothing far more often than usual.",
        f"Zero-result rate of {{{{ $labels.application }}}} is {{{{ $value | humanizePercentage "
        f"}}}} over {short} (objective {threshold:.0%}, baseline over {long}: "
        f"{baseline_text(r_long)}). Top zero-result queries now: {TOP_QUERIES}",
        "zero_result_rate", needs_tracking=False)


@builds("SearchKnownItemZeroResultRateHigh")
def _known_item(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t = profile.thresholds
    short, long = profile.windows.pair(row.windows)
    known_item = '{stratum="known_item"}'
    r_short = rec.ratio("application_stratum", ZERO, short) + known_item
    r_long = rec.ratio("application_stratum", ZERO, long) + known_item
    searches = rec.count("application_stratum", "searches", long) + known_item
    threshold = t.known_item_zero_result_rate_critical
    return Built(
        f"{r_short} > {threshold}\nand {r_long} > {threshold}\n"
        f"and {searches} * {seconds(long)} >= {t.min_known_item_searches_long_window}",
        "Known-item searches of {{ $labels.application }} find nothing: products or titles that "
        "exist cannot be found.",
        f"{{{{ $value | humanizePercentage }}}} of known-item searches (SKUs, model numbers, "
        f"ISBNs, exact titles) of {{{{ $labels.application }}}} returned zero results over "
        f"{short} (objective {threshold:.0%}). Top zero-result queries now: {TOP_QUERIES}",
        "known_item_zero_result_rate", needs_tracking=False)


def _baseline_drift(rate: Rate, factor_setting: str, direction: str, noun: str) -> Builder:
    """An online rate of what people did after their searches that moved away from its own
    baseline by a factor, in both windows: events make it (a click ends an abandonment and
    forestalls a reformulation), so broken tracking mutes it."""
    ratio, panel = rate.ratio, rate.key

    def build(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
        factor = getattr(profile.thresholds, factor_setting)
        short, long = profile.windows.pair(row.windows)
        r_short, r_long = rec.ratio("application", ratio, short), rec.ratio("application", ratio,
                                                                            long)
        base = rec.baseline(r_long)
        condition = (f"{r_short} {direction} {factor} * {base}\n"
                     f"and {r_long} {direction} {factor} * {base}")
        return Built(
            guarded(rec, condition, long, profile.thresholds.min_searches_long_window,
                     baseline_minimum=True),
            f"{noun} of {{{{ $labels.application }}}} moved away from its baseline.",
            f"{noun} of {{{{ $labels.application }}}} is {{{{ $value | humanizePercentage }}}} "
            f"over {short} and beyond ×{factor} of its baseline over {long} too; baseline "
            f"(median of the same {long} window {weeks_ago(profile)}): {baseline_text(r_long)}.",
            panel, needs_tracking=True)

    return build



BUILDERS["SearchClickThroughRateDrop"] = _baseline_drift(
    d.CTR, "ctr_drop_factor", "<", "Click-through rate")
BUILDERS["SearchReformulationRateHigh"] = _baseline_drift(
    d.REFORMULATION_RATE, "reformulation_rise_factor", ">", d.REFORMULATION_RATE.title)
BUILDERS["SearchAbandonmentRateHigh"] = _baseline_drift(
    d.ABANDONMENT_RATE, "abandonment_rise_factor", ">", d.ABANDONMENT_RATE.title)


@builds("SearchLatencyHigh")
def _latency(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    short, long = profile.windows.pair(row.windows)
    guardrail = profile.latency_guardrail_s
    quantile = percentile(profile.thresholds.latency_quantile)
    return Built(
        guarded(rec, f"{rec.latency_quantile(short)} > {guardrail}\n"
                      f"and {rec.latency_quantile(long)} > {guardrail}",
                 long, profile.thresholds.min_searches_long_window),
        f"Search latency {quantile} of {{{{ $labels.application }}}} is above the guardrail.",
        f"{quantile} latency of {{{{ $labels.application }}}} is {{{{ $value | humanizeDuration "
        f"}}}} over {short} and above the guardrail ({guardrail}s) over {long} too.",
        "latency", needs_tracking=False)
