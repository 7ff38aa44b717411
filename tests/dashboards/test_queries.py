"""dashboards/queries.py: the panels' PromQL — Σ numerator / Σ denominator with a zero
denominator as no data, a derived count as the difference or sum of its counters, an optional
counter as 0 where a collector does not expose it, headline stats from the recording rules, and
the `$job`/`$instance` matchers on every collector selector — since a panel that averaged ratios
or divided by zero would show numbers the alerts never judge."""

from __future__ import annotations

import re

from collector import definitions as d
from collector.metric_rows import Rate
from dashboards import queries

SCOPE = 'job=~"$job",instance=~"$instance"'
FILTER = f'{SCOPE},application=~"$application",stratum=~"$stratum"'


def _rate(metric: str, by: str = "", selector: str = FILTER) -> str:
    grouping = f"sum by ({by}) " if by else "sum "
    return f"{grouping}(rate({metric}{{{selector}}}[$__rate_interval]))"


def test_a_rate_is_summed_over_the_filters_of_every_quality_board() -> None:
    assert queries.rate("searchpulse_searches_total") == (
        'sum (rate(searchpulse_searches_total{job=~"$job",instance=~"$instance",'
        'application=~"$application",stratum=~"$stratum"}[$__rate_interval]))')
    assert queries.rate("m", "application", 'job="a"') == \
        'sum by (application) (rate(m{job="a"}[$__rate_interval]))'


def test_a_ratio_divides_sums_and_a_zero_denominator_is_no_data() -> None:
    assert queries.ratio(d.ZERO_RESULT_RATE) == (
        f"{_rate('searchpulse_zero_result_searches_total')} / "
        f"({_rate('searchpulse_searches_total')} > 0)")


def test_derived_and_optional_counts() -> None:
    """Searches with results are searches − zero-result searches; untracked searches, which an
    older collector does not expose, are 0 there rather than no data."""
    of = Rate("test", "untracked_searches", "searches_with_results", "t", "d")
    by, selector = "application", 'job="a"'
    searches = _rate("searchpulse_searches_total", by, selector)
    assert queries.ratio(of, by, selector) == (
        f"({_rate('searchpulse_untracked_searches_total', by, selector)} or 0 * {searches}) / "
        f"(({searches} - {_rate('searchpulse_zero_result_searches_total', by, selector)}) > 0)")
    all_searches = Rate("test", "all_searches", "searches", "t", "d")
    assert queries.ratio(all_searches, by, selector).startswith(
        f"({searches} + {_rate('searchpulse_automated_searches_total', by, selector)}) / ")


def test_headline_stats_read_the_recording_rules_of_their_window() -> None:
    assert queries.recorded(d.ZERO_RESULT_RATE, "5m") == (
        'sum(application:searchpulse_zero_result_searches:rate5m{application=~"$application"})'
        ' / (sum(application:searchpulse_searches:rate5m{application=~"$application"}) > 0)')


def test_the_latency_quantile_is_over_the_filtered_buckets() -> None:
    assert queries.latency_quantile(0.95) == (
        "histogram_quantile(0.95, sum by (le) (rate(searchpulse_search_latency_seconds_bucket"
        f"{{{FILTER}}}[$__rate_interval])))")


def test_interleaving_and_variant_series_are_recorded_per_application() -> None:
    assert queries.preference("1h") == (
        "application_variant_team:searchpulse_interleaving_preference:ratio_increase1h"
        '{application=~"$application"}',
        "application_variant_team:searchpulse_interleaving_preference_interval:ratio_increase1h"
        '{application=~"$application"}')
    assert [legend for _, legend in queries.variant_interval("ctr")] == [
        "{{variant}} rate ({{application}})",
        "{{variant}} always-valid 95 % low ({{application}})",
        "{{variant}} always-valid 95 % high ({{application}})"]


def test_every_collector_selector_carries_the_job_and_instance_matchers() -> None:
    texts = {name: value for name, value in vars(queries).items()
             if name.isupper() and isinstance(value, str) and name not in ("SCOPE", "APP")}
    selectors = [(name, selector) for name, text in texts.items()
                 for selector in re.findall(r"\b(?:searchpulse_\w+|process_\w+|scrape_\w+)"
                                            r"\{([^}]*)\}", text)]
    assert len(selectors) > 20
    assert [name for name, selector in selectors if not selector.startswith(SCOPE)] == []
