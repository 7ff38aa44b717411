"""The PromQL of every panel, apart from the layout.

Headline stats read the short-window recording rules of `alerts/` (the numbers the paging alerts
judge; they aggregate over collectors, so only `$application` filters them: dashboards/generated/
.lint says so to dashboard-linter); time series read the counters with `$__rate_interval`, and
every selector of a collector series carries the `$job` and `$instance` matchers.
Every ratio is Σ numerator / Σ denominator, and `(… > 0)` turns a zero denominator into no data.
"""

from __future__ import annotations

from alerts.rules import count_name

SCOPE = 'job=~"$job",instance=~"$instance"'
APP = f'{SCOPE},application=~"$application"'
FILTER = f'{APP},stratum=~"$stratum"'
KNOWN_ITEM = f'{APP},stratum="known_item"'
WITH_RESULTS = "with_results"
RECORDED_APP = '{application=~"$application"}'


def rate(metric: str, by: str = "", selector: str = FILTER) -> str:
    grouping = f"sum by ({by}) " if by else "sum "
    return f"{grouping}(rate({metric}{{{selector}}}[$__rate_interval]))"


def ratio(numerator: str, denominator: str, by: str = "", selector: str = FILTER) -> str:
    if denominator == WITH_RESULTS:
        below = (f"({rate('searchpulse_searches_total', by, selector)} - "
                 f"{rate('searchpulse_zero_result_searches_total', by, selector)})")
    else:
        below = rate(denominator, by, selector)
    return f"{rate(numerator, by, selector)} / ({below} > 0)"


def recorded(numerator: str, denominator: str, window: str) -> str:
    """A rate of the headline row from the recording rules of ``window`` (the paging short
    window: the numbers the pages judge), over the selected applications."""
    return (f"sum({count_name('application', numerator, window)}{RECORDED_APP}) / "
            f"(sum({count_name('application', denominator, window)}{RECORDED_APP}) > 0)")


# (numerator counter, denominator counter or WITH_RESULTS) of each quality rate.
ZERO_RESULT = ("searchpulse_zero_result_searches_total", "searchpulse_searches_total")
CTR = ("searchpulse_clicked_searches_total", WITH_RESULTS)
REFORMULATION = ("searchpulse_reformulated_searches_total", "searchpulse_searches_total")
ABANDONMENT = ("searchpulse_abandoned_searches_total", WITH_RESULTS)
CONVERSION = ("searchpulse_converted_searches_total", WITH_RESULTS)
# Judged relevance: mean over judged searches (summary _sum / _count).
JUDGED_NDCG = ("searchpulse_judged_ndcg_at_10_sum", "searchpulse_judged_ndcg_at_10_count")
JUDGED_ERR = ("searchpulse_judged_err_at_10_sum", "searchpulse_judged_err_at_10_count")
JUDGED_COVERAGE = ("searchpulse_judged_coverage_at_10_sum",
                   "searchpulse_judged_coverage_at_10_count")
JUDGED_SHARE = ("searchpulse_judged_ndcg_at_10_count", "searchpulse_searches_total")
def preference(window: str) -> tuple[str, str]:
    """Team-draft interleaving: each team's Δ and the half-width of its 95 % interval
    (recording rules of the paging long window)."""
    return (f"application_variant_team:searchpulse_interleaving_preference:ratio_increase"
            f"{window}{RECORDED_APP}",
            f"application_variant_team:searchpulse_interleaving_preference_interval:"
            f"ratio_increase{window}{RECORDED_APP}")


def variant_interval(ratio: str, window: str) -> list[tuple[str, str]]:
    """A recorded per-variant rate and its 95 % interval clustered by client (alerts' recording
    rules, collector/experiment_stats.py)."""
    return _recorded_band(ratio, window, (("ratio_", "rate"), ("clustered_low_", "95 % low"),
                                          ("clustered_high_", "95 % high")))


def variant_difference(ratio: str, window: str) -> list[tuple[str, str]]:
    """Each variant's difference from the control with its clustered 95 % interval."""
    return _recorded_band(ratio, window, (("difference_", "Δ"), ("difference_low_", "95 % low"),
                                          ("difference_high_", "95 % high")))


def _recorded_band(ratio: str, window: str, kinds: tuple[tuple[str, str], ...]
                   ) -> list[tuple[str, str]]:
    return [(f"application_variant:searchpulse_{ratio}:{kind}increase{window}{RECORDED_APP}",
             f"{{{{variant}}}} {legend} ({{{{application}}}})") for kind, legend in kinds]


def variant_ratio(ratio: str, window: str) -> str:
    """A recorded per-variant ratio (alerts' recording rules) of the selected applications."""
    return f"application_variant:searchpulse_{ratio}:ratio_increase{window}{RECORDED_APP}"


UNITS = f"sum by (variant) (searchpulse_experiment_units{{{APP}}})"
SAMPLE_RATIO_CHI2 = f"application:searchpulse_experiment_sample_ratio_chi2:sum{RECORDED_APP}"

EXAMINATION = (f"max by (application, position) (searchpulse_examination_probability"
               f'{{{APP},identified="true"}})')

RATES = {"Zero-result rate": ZERO_RESULT, "CTR": CTR, "Reformulation rate": REFORMULATION,
         "Abandonment rate": ABANDONMENT, "Conversion rate": CONVERSION}


def latency_quantile(q: float, by: str = "le") -> str:
    return (f"histogram_quantile({q}, sum by ({by}) (rate("
            f"searchpulse_search_latency_seconds_bucket{{{FILTER}}}[$__rate_interval])))")


SEARCHES_PER_S = rate("searchpulse_searches_total")
KNOWN_ITEM_ZERO_RESULT = ratio(*ZERO_RESULT, by="application", selector=KNOWN_ITEM)
FIRING_ALERTS = 'count(ALERTS{alertstate="firing",service="searchpulse"}) or vector(0)'
ALERT_ANNOTATIONS = 'ALERTS{alertstate="firing",service="searchpulse"}'
TOP_ZERO_RESULT_QUERIES = f"topk(10, searchpulse_top_zero_result_queries{{{APP}}})"
WITHHELD_QUERIES = f"sum by (reason) (searchpulse_top_zero_result_queries_withheld{{{SCOPE}}})"
FIRST_CLICK_POSITION = ("sum by (le) (rate(searchpulse_first_click_position_bucket"
                        f"{{{FILTER}}}[$__rate_interval]))")
TIME_TO_FIRST_CLICK = ("histogram_quantile(0.5, sum by (le) (rate("
                       f"searchpulse_time_to_first_click_seconds_bucket{{{FILTER}}}"
                       "[$__rate_interval])))")
MRR = ratio("searchpulse_first_click_reciprocal_rank_total",
            "searchpulse_first_click_position_count")

# Collector health (no application filter: these describe the pipeline).
RECORDS_BY_OUTCOME = rate("searchpulse_records_total", "outcome", SCOPE)
CONSUMED = rate("searchpulse_kafka_records_consumed_total", "topic", SCOPE)
LAG = f"sum by (topic, partition) (searchpulse_kafka_consumer_lag_records{{{SCOPE}}})"
INVALID_BY_REASON = rate("searchpulse_invalid_records_total", "reason", SCOPE)
DEAD_LETTERED_BY_REASON = rate("searchpulse_dead_lettered_records_total", "reason", SCOPE)
FRESHNESS = f"time() - max(searchpulse_last_event_timestamp_seconds{{{SCOPE}}})"
OPEN_SESSIONS = f"sum(searchpulse_open_sessions{{{SCOPE}}})"
PENDING = f"sum(searchpulse_pending_searches{{{SCOPE}}})"
MEMORY = f"process_resident_memory_bytes{{{SCOPE}}}"
SCRAPE_DURATION = f"scrape_duration_seconds{{{SCOPE}}}"
COMMITS = rate("searchpulse_kafka_commits_total", selector=SCOPE)
STORE_FLUSHES = rate("searchpulse_store_flushes_total", selector=SCOPE)
STORE_FLUSH_FAILURES = rate("searchpulse_store_flush_failures_total", selector=SCOPE)
