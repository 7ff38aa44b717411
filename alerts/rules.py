"""Recording and alerting rules, built from `alerts.config` (one function per rule group).

Recording rules are named `level:metric:operations`; every ratio divides a summed numerator by a
summed denominator (never an average of ratios), and a zero denominator gives no sample (no data)
instead of NaN or 0.
"""

from __future__ import annotations

import re
from typing import Any

from alerts.config import HEALTH_DASHBOARD, OVERVIEW_DASHBOARD, Profile

Rule = dict[str, Any]

# (recorded name, counter) summed by level; `searches_with_results` is derived below.
COUNTS = (
    ("searches", "searchpulse_searches_total"),
    ("zero_result_searches", "searchpulse_zero_result_searches_total"),
    ("clicked_searches", "searchpulse_clicked_searches_total"),
    ("reformulated_searches", "searchpulse_reformulated_searches_total"),
    ("abandoned_searches", "searchpulse_abandoned_searches_total"),
)
# (ratio name, numerator, denominator): the rates of docs/metrics.md.
RATIOS = (
    ("zero_result_searches_per_searches", "zero_result_searches", "searches"),
    ("clicked_searches_per_searches_with_results", "clicked_searches", "searches_with_results"),
    ("reformulated_searches_per_searches", "reformulated_searches", "searches"),
    ("abandoned_searches_per_searches_with_results", "abandoned_searches",
     "searches_with_results"),
)
LEVELS = {"application": "application", "application_stratum": "application, stratum"}

# Panel ids of the dashboards (dashboards/ builds its panels with these ids).
PANELS = {
    "zero_result_rate": 2, "known_item_zero_result_rate": 3, "ctr": 4, "reformulation_rate": 5,
    "abandonment_rate": 6, "latency": 7, "traffic": 8,
    "throughput": 1, "consumer_lag": 2, "invalid_records": 3, "freshness": 4, "store": 9,
}


def seconds(window: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([smhdw])", window).groups()
    return int(number) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[unit]


def count_name(level: str, count: str, window: str) -> str:
    return f"{level}:searchpulse_{count}:rate{window}"


def ratio_name(level: str, ratio: str, window: str) -> str:
    return f"{level}:searchpulse_{ratio}:ratio_rate{window}"


def baseline_name(name: str) -> str:
    return f"{name}_baseline"


def _windows(profile: Profile) -> list[str]:
    w = profile.windows
    return list(dict.fromkeys((w.page_short, w.page_long, w.ticket_short, w.ticket_long)))


def recording_rules(profile: Profile) -> list[Rule]:
    sel = profile.selector
    rules: list[Rule] = []
    long_windows = (profile.windows.page_long, profile.windows.ticket_long)
    for window in _windows(profile):
        for level, by in LEVELS.items():
            for count, metric in COUNTS:
                rules.append({"record": count_name(level, count, window),
                              "expr": f"sum by ({by}) (rate({metric}{{{sel}}}[{window}]))"})
            rules.append({
                "record": count_name(level, "searches_with_results", window),
                "expr": f"{count_name(level, 'searches', window)} - "
                        f"{count_name(level, 'zero_result_searches', window)}",
            })
            for ratio, numerator, denominator in RATIOS:
                rules.append({
                    "record": ratio_name(level, ratio, window),
                    "expr": f"{count_name(level, numerator, window)} / "
                            f"({count_name(level, denominator, window)} > 0)",
                })
        rules.append({
            "record": f"application:searchpulse_search_latency_seconds:p99_rate{window}",
            "expr": f"histogram_quantile({profile.thresholds.latency_quantile}, sum by "
                    f"(application, le) (rate(searchpulse_search_latency_seconds_bucket{{{sel}}}"
                    f"[{window}])))",
        })
        if window in long_windows:
            rules.extend(_baselines(profile, window))
    return rules


def _baselines(profile: Profile, window: str) -> list[Rule]:
    """The median of the same window 1, 2 and 3 weeks ago (of those that exist)."""
    names = [count_name("application", "searches", window)]
    names += [ratio_name("application", ratio, window) for ratio, _, _ in RATIOS]
    rules = []
    for name in names:
        offsets = " or ".join(
            f'label_replace({name} offset {offset}, "baseline_offset", "{offset}", "", "")'
            for offset in profile.windows.baseline_offsets)
        rules.append({"record": baseline_name(name),
                      "expr": f"quantile by (application) (0.5, {offsets})"})
    return rules


def _alert(profile: Profile, name: str, expr: str, severity: str, duration: str, summary: str,
           description: str, panel: str, dashboard: str = OVERVIEW_DASHBOARD,
           kind: str = "quality", per_application: bool = True) -> Rule:
    rule: Rule = {
        "alert": name,
        "expr": expr,
        "for": duration,
        "keep_firing_for": profile.durations.keep_firing_for,
        "labels": {"severity": severity, "service": "searchpulse", "kind": kind},
        "annotations": {
            "summary": summary,
            "description": description,
            "runbook_url": f"{profile.runbook_base}#{name.lower()}",
            "dashboard_url": f"{profile.grafana_base}/d/{dashboard}?viewPanel={PANELS[panel]}"
                             + ("&var-application={{ $labels.application }}"
                                if per_application else ""),
        },
    }
    return rule


def _guarded(profile: Profile, condition: str, window: str, minimum: int,
             baseline_minimum: bool = False) -> str:
    """Adds the minimum-traffic guard (and for baseline alerts: enough baseline traffic)."""
    searches = count_name("application", "searches", window)
    expr = f"({condition})\nand on (application) {searches} * {seconds(window)} >= {minimum}"
    if baseline_minimum:
        expr += f"\nand on (application) {baseline_name(searches)} * {seconds(window)} >= {minimum}"
    return expr


def _baseline_text(name: str, fmt: str = "humanizePercentage") -> str:
    return (f'{{{{ with printf "{baseline_name(name)}{{application=%q}}" $labels.application '
            f"| query }}}}{{{{ . | first | value | {fmt} }}}}{{{{ else }}}}none yet{{{{ end }}}}")


def quality_alerts(profile: Profile) -> list[Rule]:
    w, t, d = profile.windows, profile.thresholds, profile.durations
    rules = []
    zero = "zero_result_searches_per_searches"
    top = ('{{ range printf "topk(5, searchpulse_top_zero_result_queries{application=%q})" '
           '$labels.application | query }}"{{ .Labels.query }}" ({{ .Value }}) {{ end }}')
    for severity, short, long, threshold, duration in (
        ("critical", w.page_short, w.page_long, t.zero_result_rate_critical, d.page_for),
        ("warning", w.ticket_short, w.ticket_long, t.zero_result_rate_warning, d.ticket_for),
    ):
        r_short, r_long = ratio_name("application", zero, short), ratio_name("application", zero,
                                                                              long)
        base = baseline_name(r_long)
        condition = (
            f"{r_short} > {threshold}\nand {r_long} > {threshold}\n"
            f"and (\n  {r_long} > {t.zero_result_baseline_factor} * {base}\n"
            f"  or {r_long} unless {base}\n)")
        rules.append(_alert(
            profile, "SearchZeroResultRateHigh",
            _guarded(profile, condition, long, t.min_searches_long_window), severity, duration,
            "Searches of {{ $labels.application }} return nothing far more often than usual.",
            f"Zero-result rate of {{{{ $labels.application }}}} is {{{{ $value | "
            f"humanizePercentage }}}} over {short} (objective {threshold:.0%}, baseline over "
            f"{long}: {_baseline_text(r_long)}). Top zero-result queries now: {top}",
            "zero_result_rate"))

    ki_short = ratio_name("application_stratum", zero, w.page_short) + '{stratum="known_item"}'
    ki_long = ratio_name("application_stratum", zero, w.page_long) + '{stratum="known_item"}'
    ki_searches = count_name("application_stratum", "searches", w.page_long) + \
        '{stratum="known_item"}'
    threshold = t.known_item_zero_result_rate_critical
    rules.append(_alert(
        profile, "SearchKnownItemZeroResultRateHigh",
        f"{ki_short} > {threshold}\nand {ki_long} > {threshold}\n"
        f"and {ki_searches} * {seconds(w.page_long)} >= {t.min_known_item_searches_long_window}",
        "critical", d.page_for,
        "Known-item searches of {{ $labels.application }} find nothing: products or titles that "
        "exist cannot be found.",
        f"{{{{ $value | humanizePercentage }}}} of known-item searches (SKUs, model numbers, "
        f"ISBNs, exact titles) of {{{{ $labels.application }}}} returned zero results over "
        f"{w.page_short} (objective {threshold:.0%}). Top zero-result queries now: {top}",
        "known_item_zero_result_rate"))

    for name, ratio, factor, direction, panel, noun in (
        ("SearchClickThroughRateDrop", "clicked_searches_per_searches_with_results",
         t.ctr_drop_factor, "<", "ctr", "Click-through rate"),
        ("SearchReformulationRateHigh", "reformulated_searches_per_searches",
         t.reformulation_rise_factor, ">", "reformulation_rate", "Reformulation rate"),
        ("SearchAbandonmentRateHigh", "abandoned_searches_per_searches_with_results",
         t.abandonment_rise_factor, ">", "abandonment_rate", "Abandonment rate"),
    ):
        r_short = ratio_name("application", ratio, w.page_short)
        r_long = ratio_name("application", ratio, w.page_long)
        base = baseline_name(r_long)
        condition = (f"{r_short} {direction} {factor} * {base}\n"
                     f"and {r_long} {direction} {factor} * {base}")
        rules.append(_alert(
            profile, name,
            _guarded(profile, condition, w.page_long, t.min_searches_long_window,
                     baseline_minimum=True),
            "warning", d.ticket_for,
            f"{noun} of {{{{ $labels.application }}}} moved away from its baseline.",
            f"{noun} of {{{{ $labels.application }}}} is {{{{ $value | humanizePercentage }}}} "
            f"over {w.page_short}; baseline (median of the same hour 1, 2, 3 weeks ago): "
            f"{_baseline_text(r_long)} (alert at ×{factor}).",
            panel))

    p_short = f"application:searchpulse_search_latency_seconds:p99_rate{w.page_short}"
    p_long = f"application:searchpulse_search_latency_seconds:p99_rate{w.page_long}"
    rules.append(_alert(
        profile, "SearchLatencyP99High",
        _guarded(profile, f"{p_short} > {t.latency_guardrail_s}\n"
                          f"and {p_long} > {t.latency_guardrail_s}",
                 w.page_long, t.min_searches_long_window),
        "warning", d.page_for,
        "Search latency p99 of {{ $labels.application }} is above the guardrail.",
        f"p99 latency of {{{{ $labels.application }}}} is {{{{ $value | humanizeDuration }}}} "
        f"over {w.page_short} (guardrail {t.latency_guardrail_s}s).",
        "latency"))
    return rules


def traffic_alerts(profile: Profile) -> list[Rule]:
    t, d, sel = profile.thresholds, profile.durations, profile.selector
    window = t.cessation_window
    return [
        _alert(
            profile, "SearchTrafficCessation",
            f"sum by (application) (rate(searchpulse_searches_total{{{sel}}}[{window}])) == 0\n"
            f"and on (application) sum by (application) (rate(searchpulse_searches_total{{{sel}}}"
            f"[1h] offset 1h)) > {t.cessation_substantial_per_s}",
            "critical", d.page_for,
            "{{ $labels.application }} stopped sending searches.",
            f"No search of {{{{ $labels.application }}}} for {window}, while an hour earlier it "
            f"served more than {t.cessation_substantial_per_s} searches/s: the search front end, "
            f"its UBI tracking or the pipeline to Kafka is broken.",
            "traffic", kind="traffic"),
        _alert(
            profile, "SearchTrafficAbsent",
            f"absent(searchpulse_searches_total{{{sel}}})",
            "critical", d.absent_for,
            "No search-quality series at all.",
            f"searchpulse_searches_total has no series for {d.absent_for}: the collector sees no "
            f"searches (no producer, wrong topic) or its series are not scraped.",
            "traffic", kind="traffic", per_application=False),
    ]


def pipeline_alerts(profile: Profile) -> list[Rule]:
    w, t, d, sel = profile.windows, profile.thresholds, profile.durations, profile.selector
    records = f"searchpulse_records_total{{{sel}}}"
    invalid = f'searchpulse_records_total{{{sel},outcome="invalid"}}'
    lag = f"searchpulse_kafka_consumer_lag_records{{{sel}}}"
    last = f"searchpulse_last_event_timestamp_seconds{{{sel}}}"
    flushes = f"searchpulse_store_flushes_total{{{sel}}}"
    flush_failures = f"searchpulse_store_flush_failures_total{{{sel}}}"
    return [
        _alert(
            profile, "SearchpulseCollectorDown",
            f"up{{{sel}}} == 0 or absent(up{{{sel}}})",
            "critical", d.down_for,
            "The searchpulse collector is down or not scraped.",
            "Prometheus cannot scrape the collector ({{ $labels.instance }}): search-quality "
            "metrics are missing and quality alerts are muted until it is back.",
            "throughput", HEALTH_DASHBOARD, kind="pipeline", per_application=False),
        _alert(
            profile, "SearchpulseEventsStale",
            f"time() - max({last}) > {t.event_staleness_s_critical}\nand max({last}) > 0",
            "critical", d.down_for,
            "The newest search event the collector saw is too old.",
            f"The newest event is {{{{ $value | humanizeDuration }}}} old (limit "
            f"{t.event_staleness_s_critical}s): events stopped arriving or the collector is "
            f"stuck; quality alerts are muted while this fires.",
            "freshness", HEALTH_DASHBOARD, kind="pipeline", per_application=False),
        _alert(
            profile, "SearchpulseInvalidRecordRateHigh",
            f"sum(rate({invalid}[{w.ticket_short}])) / sum(rate({records}[{w.ticket_short}])) "
            f"> {t.invalid_record_ratio_warning}\n"
            f"and sum(increase({records}[{w.ticket_short}])) >= {t.min_records_for_invalid_ratio}",
            "warning", d.ticket_for,
            "Many search events are rejected as invalid.",
            f"{{{{ $value | humanizePercentage }}}} of records were invalid over "
            f"{w.ticket_short} (limit {t.invalid_record_ratio_warning:.0%}): a producer changed "
            f"its format. The reasons are in searchpulse_invalid_records_total and the records "
            f"in the dead-letter topic.",
            "invalid_records", HEALTH_DASHBOARD, kind="pipeline", per_application=False),
        _alert(
            profile, "SearchpulseConsumerLagHigh",
            f"sum by (topic) ({lag}) > {t.consumer_lag_records_warning}",
            "warning", d.lag_for,
            "The collector is behind on {{ $labels.topic }}.",
            f"Consumer lag on {{{{ $labels.topic }}}} is {{{{ $value }}}} records (limit "
            f"{t.consumer_lag_records_warning}): metrics are late.",
            "consumer_lag", HEALTH_DASHBOARD, kind="pipeline", per_application=False),
        _alert(
            profile, "SearchpulseConsumerLagGrowing",
            f"sum by (topic) (deriv({lag}[{w.ticket_short}])) > 0\n"
            f"and sum by (topic) ({lag}) > {t.consumer_lag_records_warning // 10}",
            "warning", d.lag_for,
            "The collector falls further behind on {{ $labels.topic }}.",
            f"Consumer lag on {{{{ $labels.topic }}}} has grown for {d.lag_for} and is "
            f"{{{{ $value }}}} records/s up: the collector cannot keep up.",
            "consumer_lag", HEALTH_DASHBOARD, kind="pipeline", per_application=False),
        _alert(
            profile, "SearchpulseStoreFlushFailing",
            f"sum(increase({flush_failures}[{w.ticket_short}])) > 0\n"
            f"unless sum(increase({flushes}[{w.ticket_short}])) > 0",
            "warning", d.ticket_for,
            "The per-query aggregate store rejects every flush.",
            f"{{{{ $value }}}} flushes of per-query aggregates failed over {w.ticket_short} and "
            f"none succeeded: the store is down or full. Metrics are unaffected; the rows wait "
            f"in memory and the store falls behind the topic's retention.",
            "store", HEALTH_DASHBOARD, kind="pipeline", per_application=False),
    ]


def rule_groups(profile: Profile) -> dict[str, Any]:
    return {"groups": [
        {"name": "searchpulse-recording", "rules": recording_rules(profile)},
        {"name": "searchpulse-quality", "rules": quality_alerts(profile)},
        {"name": "searchpulse-traffic", "rules": traffic_alerts(profile)},
        {"name": "searchpulse-pipeline", "rules": pipeline_alerts(profile)},
    ]}
