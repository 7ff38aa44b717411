"""The PromQL of every panel, apart from the layout.

Headline stats read the short-window recording rules of `alerts/` (the numbers the paging alerts
judge; they aggregate over collectors, so only `$application` filters them: dashboards/generated/
.lint says so to dashboard-linter); time series read the counters with `$__rate_interval`, and
every selector of a collector series carries the `$job` and `$instance` matchers.
Every ratio is Σ numerator / Σ denominator, and `(… > 0)` turns a zero denominator into no data.
"""

from __future__ import annotations

from alerts.rules import count_name, derivation, names
from alerts.rules.traffic import EVENTS_WITHOUT_SEARCH
from collector import definitions as d
from collector.definitions import COUNTS
from collector.metric_rows import Rate

SCOPE = 'job=~"$job",instance=~"$instance"'
APP = f'{SCOPE},application=~"$application"'
FILTER = f'{APP},stratum=~"$stratum"'
KNOWN_ITEM = f'{APP},stratum="known_item"'
RECORDED_APP = '{application=~"$application"}'


def rate(metric: str, by: str = "", selector: str = FILTER) -> str:
    grouping = f"sum by ({by}) " if by else "sum "
    return f"{grouping}(rate({metric}{{{selector}}}[$__rate_interval]))"


def _count_rate(count: str, by: str, selector: str) -> str:
    """The per-second rate of a count of collector/definitions.py (a derived one, searches
    with results or all searches, as the difference or sum of its two counters)."""
    derived = derivation(count)
    if derived:
        operator, parts = derived
        one, other = (_count_rate(c, by, selector) for c in parts)
        return f"({one} {operator} {other})"
    if COUNTS[count].optional:  # 0 where a collector (of an older version) does not expose it
        return (f"({rate(COUNTS[count].sample, by, selector)} or 0 * "
                f"{_count_rate('searches', by, selector)})")
    return rate(COUNTS[count].sample, by, selector)


def ratio(of: Rate, by: str = "", selector: str = FILTER) -> str:
    """``of`` over the scraped counters: Σ numerator / Σ denominator, no data at 0."""
    return (f"{_count_rate(of.numerator, by, selector)} / "
            f"({_count_rate(of.denominator, by, selector)} > 0)")


def recorded(of: Rate, window: str) -> str:
    """A rate of the headline row from the recording rules of ``window`` (the paging short
    window: the numbers the pages judge), over the selected applications."""
    return (f"sum({count_name('application', of.numerator, window)}{RECORDED_APP}) / "
            f"(sum({count_name('application', of.denominator, window)}{RECORDED_APP}) > 0)")


def preference(window: str) -> tuple[str, str]:
    """Team-draft interleaving: each team's Δ and the half-width of its 95 % interval
    (recording rules of the paging long window)."""
    value, interval = names.interleaving_preference(window)
    return f"{value}{RECORDED_APP}", f"{interval}{RECORDED_APP}"


def variant_interval(ratio: str) -> list[tuple[str, str]]:
    """A recorded per-variant rate since the collector started and its always-valid 95 %
    interval (alerts' recording rules, collector/series/confidence_sequence.py)."""
    return _recorded_band(ratio, (("ratio_sum", "rate"),
                                  ("always_valid_low_sum", "always-valid 95 % low"),
                                  ("always_valid_high_sum", "always-valid 95 % high")))


def variant_difference(ratio: str) -> list[tuple[str, str]]:
    """Each variant's difference from the control since the collector started with its
    always-valid 95 % interval."""
    return _recorded_band(ratio, (("difference_sum", "Δ"),
                                  ("difference_always_valid_low_sum", "always-valid 95 % low"),
                                  ("difference_always_valid_high_sum",
                                   "always-valid 95 % high")))


def ticket_difference(ratio: str, window: str) -> list[tuple[str, str]]:
    """A guardrail's difference from the control over its ticket's window with the
    fixed-horizon 95 % interval the ticket judges."""
    return _recorded_band(ratio, ((f"difference_low_increase{window}",
                                   f"ticket's 95 % low, last {window}"),
                                  (f"difference_high_increase{window}",
                                   f"ticket's 95 % high, last {window}")))


def _recorded_band(ratio: str, kinds: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    return [(f"{names.variant_series(ratio, kind)}{RECORDED_APP}",
             f"{{{{variant}}}} {legend} ({{{{application}}}})") for kind, legend in kinds]


def variant_ratio(ratio: str, window: str) -> str:
    """A recorded per-variant ratio (alerts' recording rules) of the selected applications."""
    return f"{names.variant_series(ratio, f'ratio_increase{window}')}{RECORDED_APP}"


UNITS = f"sum by (variant) ({d.EXPERIMENT_UNITS.name}{{{APP}}})"
SAMPLE_RATIO_CHI2 = f"{names.SAMPLE_RATIO_CHI2}{RECORDED_APP}"

EXAMINATION = (f"max by (application, position) ({d.EXAMINATION_PROBABILITY.name}"
               f'{{{APP},identified="true"}})')

def latency_quantile(q: float, by: str = "le") -> str:
    return (f"histogram_quantile({q}, sum by ({by}) (rate("
            f"{d.SEARCH_LATENCY.name}_bucket{{{FILTER}}}[$__rate_interval])))")


SEARCHES_PER_S = rate(d.SEARCHES.name)
KNOWN_ITEM_ZERO_RESULT = ratio(d.ZERO_RESULT_RATE, by="application", selector=KNOWN_ITEM)
FIRING_ALERTS = 'count(ALERTS{alertstate="firing",service="searchpulse"}) or vector(0)'
ALERT_ANNOTATIONS = 'ALERTS{alertstate="firing",service="searchpulse"}'
TOP_ZERO_RESULT_QUERIES = f"topk(10, {d.TOP_ZERO_RESULT_QUERIES.name}{{{APP}}})"
WITHHELD_QUERIES = (f"sum by (reason) ({d.TOP_ZERO_RESULT_QUERIES_WITHHELD.name}"
                    f"{{{SCOPE}}})")
FIRST_CLICK_POSITION = (f"sum by (le) (rate({d.FIRST_CLICK_POSITION.name}_bucket"
                        f"{{{FILTER}}}[$__rate_interval]))")
TIME_TO_FIRST_CLICK = ("histogram_quantile(0.5, sum by (le) (rate("
                       f"{d.TIME_TO_FIRST_CLICK.name}_bucket{{{FILTER}}}"
                       "[$__rate_interval])))")
MRR = ratio(d.MRR)
# Traffic health per application: automated searches by the rule that found them; events for
# queries never seen (no series until the collector counts one: 0 for an application that
# searches) and clicks past the results shown.
AUTOMATED_BY_REASON = rate(d.AUTOMATED_SEARCHES.name, "application, reason")
EVENTS_WITHOUT_SEARCH_PER_S = (f"{rate(EVENTS_WITHOUT_SEARCH.name, 'application', APP)} or "
                               f"0 * {rate(d.SEARCHES.name, 'application', APP)}")
CLICKS_BEYOND_RESULTS_PER_S = rate(d.CLICKS_BEYOND_RESULTS.name, "application", APP)

# Collector health (no application filter: these describe the pipeline).
RECORDS_BY_OUTCOME = rate(d.RECORDS.name, "outcome", SCOPE)
CONSUMED = rate(d.KAFKA_CONSUMED.name, "topic", SCOPE)
LAG = f"sum by (topic, partition) ({d.KAFKA_LAG.name}{{{SCOPE}}})"
INVALID_BY_REASON = rate(d.INVALID_RECORDS.name, "reason", SCOPE)
DEAD_LETTERED_BY_REASON = rate(d.DEAD_LETTERED_RECORDS.name, "reason", SCOPE)
FRESHNESS = f"time() - max({d.LAST_EVENT_TIMESTAMP.name}{{{SCOPE}}})"
OPEN_SESSIONS = f"sum({d.PREFIX}open_sessions{{{SCOPE}}})"
PENDING = f"sum({d.PREFIX}pending_searches{{{SCOPE}}})"
MEMORY = f"process_resident_memory_bytes{{{SCOPE}}}"
SCRAPE_DURATION = f"scrape_duration_seconds{{{SCOPE}}}"
COMMITS = rate(d.KAFKA_COMMITS.name, selector=SCOPE)
STORE_FLUSHES = rate(d.STORE_FLUSHES.name, selector=SCOPE)
STORE_FLUSH_FAILURES = rate(d.STORE_FLUSH_FAILURES.name, selector=SCOPE)
