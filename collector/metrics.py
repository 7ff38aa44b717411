"""Metric names, help texts and the /metrics text of the engine's plain counts.

One table per metric group keeps each name next to its help and the attribute it reads, so a
reader goes from docs/metrics.md to the exposed number in one hop. Exposition only reads:
scrapes run in the HTTP threads while the engine thread counts.

The quality series (up to application cap × variant cap × 4 strata, each with 11 counters and
3 histograms) are written as text directly from their plain numbers: prometheus_client builds a
Sample object per value, which at the label caps cost 250 ms and held the GIL for that long at
every scrape. The bytes are prometheus_client's own (same names, label order, number format:
tests compare them byte for byte with its formatter); the few other families still go through
it (``SearchpulseCollector``).
"""

from __future__ import annotations

import platform
import threading
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from collector import __version__
from collector import accounting as acc
from collector.outcomes import REFORMULATION_KINDS
from collector.quality import Buckets, QualitySeries
from collector.units import BUCKET_COUNTS, ExperimentUnits
from collector.view import View

QUALITY_LABELS = ("application", "stratum", "variant")

# (metric name without _total, QualitySeries attribute, help)
QUALITY_COUNTERS = (
    ("searchpulse_searches", "searches", "Searches (query records with page absent or 1)."),
    ("searchpulse_zero_result_searches", "zero_result",
     "Searches with total_hits 0 or an empty hit id list."),
    ("searchpulse_unknown_result_count_searches", "unknown_result_count",
     "Searches without total_hits or hit ids; counted as searches with results."),
    ("searchpulse_clicked_searches", "clicked",
     "Searches with results that got at least one click within the attribution window."),
    ("searchpulse_clicks", "clicks", "Clicks attributed to searches with results."),
    ("searchpulse_converted_searches", "converted",
     "Searches with results that got an add_to_cart or purchase within the attribution window."),
    ("searchpulse_conversions", "conversions",
     "Conversion events attributed to searches with results."),
    ("searchpulse_abandoned_searches", "abandoned",
     "Searches with results and no click, conversion or later session activity by the deadline."),
    ("searchpulse_zero_result_exits", "zero_result_exits",
     "Zero-result searches after which the session did nothing by the deadline."),
    ("searchpulse_first_click_reciprocal_rank", "reciprocal_rank_sum",
     "Sum of 1/position of the first click of clicked searches with a known position (MRR)."),
)
QUALITY_HISTOGRAMS = (
    ("searchpulse_time_to_first_click_seconds", "time_to_first_click",
     "Event time from a search to its first click."),
    ("searchpulse_first_click_position", "first_click_position",
     "1-based position (across result pages) of the first click of a search."),
    ("searchpulse_search_latency_seconds", "latency",
     "Search latency reported in query_attributes.latency_ms."),
)
# Judged relevance of the rankings production showed (collector/judged_relevance.py): a summary
# without quantiles per metric, _sum over judged searches and _count = judged searches, written
# only for series with a judged search (nothing at all when no judgment set is loaded).
QUALITY_JUDGED = (
    ("searchpulse_judged_ndcg_at_10", "judged_ndcg_sum",
     "NDCG@10 (gain 2^grade-1) of the first page production showed, over searches of judged "
     "queries."),
    ("searchpulse_judged_err_at_10", "judged_err_sum",
     "ERR@10 of the first page production showed, over searches of judged queries."),
    ("searchpulse_judged_coverage_at_10", "judged_coverage_sum",
     "Share of the shown top 10 that has a grade, over searches of judged queries."),
)

# Clicks weighted by the inverse of their position's examination (collector/examination.py):
# written only for series with such a click (nothing without an identified curve).
DEBIASED_HELP = ("Clicks at a known position, each weighted min(1/examination of its position, "
                 "clicks.max_weight): inverse-propensity weighted.")

INTERLEAVING_HELP = {
    "wins": "Team-draft interleaved searches whose clicks favoured this team (configuration).",
    "interleaving_ties": "Team-draft interleaved searches whose teams got equal clicks.",
    "interleaving_unattributed": "Clicks without a team on team-draft interleaved searches.",
}

GAUGE_HELP = {
    "last_event_timestamp_seconds": "Newest event time seen (Unix seconds); 0 before the first.",
    "watermark_timestamp_seconds": "Event time up to which outcomes are decided (Unix seconds).",
    "open_sessions": "Sessions with at least one search still attributable.",
    "pending_searches": "Searches whose abandonment / zero-result exit is not decided yet.",
    "tracked_searches": "Searches and result pages still attributable (in memory).",
    "buffered_records": "Records waiting in the event-time ordering buffer.",
}


class Exposition:
    """The /metrics body: the quality series written directly, then every other family
    (``registry``: process, store and consumer health) through prometheus_client — all from
    one ``View`` per scrape. The quality text of a view is written once (a Kafka collector
    exposes the same view until its next checkpoint)."""

    def __init__(self, view: Callable[[], View], registry: CollectorRegistry | None = None
                 ) -> None:
        self.view = view
        self.registry = registry or CollectorRegistry()
        self._current: View | None = None
        self.registry.register(SearchpulseCollector(lambda: self._current))
        self._lock = threading.Lock()
        self._written: tuple[View | None, bytes] = (None, b"")

    def render(self) -> bytes:
        with self._lock:  # one view per scrape, for both parts
            view = self._current = self.view()
            written, quality = self._written
            if written is not view:
                quality = quality_text(view.series) + experiment_text(view.experiments)
                self._written = (view, quality)
            return quality + generate_latest(self.registry)


class SearchpulseCollector(Collector):
    """Yields the pipeline and state families (a few dozen samples) of a ``View``."""

    def __init__(self, view: Callable[[], View | None]) -> None:
        self.view = view

    def collect(self) -> Iterator[Metric]:
        view = self.view()
        if view is not None:
            yield from _pipeline(view)
            yield from _state(view)


def quality_text(series: list[QualitySeries]) -> bytes:
    """The quality families in the text format 0.0.4, exactly as prometheus_client writes
    them (labels sorted by name, values as Go floats)."""
    base = [f'application="{_escape(s.application)}",stratum="{_escape(s.stratum)}",'
            f'variant="{_escape(s.variant)}"' for s in series]
    lines: list[str] = []
    add = lines.append
    for name, attribute, help_text in QUALITY_COUNTERS:
        _header(add, f"{name}_total", help_text, "counter")
        for s, labels in zip(series, base, strict=True):
            add(f"{name}_total{{{labels}}} {floatToGoString(getattr(s, attribute))}\n")
    _header(add, "searchpulse_reformulated_searches_total",
            "Searches reformulated by the next search of their session, by kind.", "counter")
    for s in series:
        head = f'application="{_escape(s.application)}",kind="'
        tail = f'",stratum="{_escape(s.stratum)}",variant="{_escape(s.variant)}"'
        for kind in REFORMULATION_KINDS:
            add(f"searchpulse_reformulated_searches_total{{{head}{kind}{tail}}} "
                f"{floatToGoString(s.reformulated[kind])}\n")
    for name, attribute, help_text in QUALITY_HISTOGRAMS:
        _header(add, name, help_text, "histogram")
        for s, labels in zip(series, base, strict=True):
            buckets = getattr(s, attribute)
            if not buckets.count:  # a never-observed histogram adds 15 samples and no data
                continue
            head = f'{name}_bucket{{application="{_escape(s.application)}",le="'
            tail = f'",stratum="{_escape(s.stratum)}",variant="{_escape(s.variant)}"}} '
            running = 0
            for bound, count in zip(buckets.bounds, buckets.counts, strict=False):
                running += count
                add(f"{head}{floatToGoString(bound)}{tail}{floatToGoString(running)}\n")
            running += buckets.counts[-1]
            add(f"{head}+Inf{tail}{floatToGoString(running)}\n")
            add(f"{name}_count{{{labels}}} {floatToGoString(running)}\n")
            add(f"{name}_sum{{{labels}}} {floatToGoString(buckets.sum)}\n")
    for name, attribute, help_text in QUALITY_JUDGED:
        _header(add, name, help_text, "summary")
        for s, labels in zip(series, base, strict=True):
            if s.judged_searches:
                add(f"{name}_count{{{labels}}} {floatToGoString(s.judged_searches)}\n")
                add(f"{name}_sum{{{labels}}} {floatToGoString(getattr(s, attribute))}\n")
    _header(add, "searchpulse_debiased_clicks_total", DEBIASED_HELP, "counter")
    for s, labels in zip(series, base, strict=True):
        if s.debiased_clicks:
            add(f"searchpulse_debiased_clicks_total{{{labels}}} "
                f"{floatToGoString(s.debiased_clicks)}\n")
    interleaved = [(s, labels) for s, labels in zip(series, base, strict=True)
                   if s.interleaving_wins is not None]
    _header(add, "searchpulse_interleaving_wins_total", INTERLEAVING_HELP["wins"], "counter")
    for s, _ in interleaved:
        head = f'application="{_escape(s.application)}",stratum="{_escape(s.stratum)}",team="'
        tail = f'",variant="{_escape(s.variant)}"'
        for team, wins in s.interleaving_wins.items():
            add(f"searchpulse_interleaving_wins_total{{{head}{_escape(team)}{tail}}} "
                f"{floatToGoString(wins)}\n")
    for name, attribute in (("searchpulse_interleaving_ties", "interleaving_ties"),
                            ("searchpulse_interleaving_unattributed_clicks",
                             "interleaving_unattributed")):
        _header(add, f"{name}_total", INTERLEAVING_HELP[attribute], "counter")
        for s, labels in interleaved:
            add(f"{name}_total{{{labels}}} {floatToGoString(getattr(s, attribute))}\n")
    return "".join(lines).encode()


UNITS_HELP = ("Distinct clients (client_id) with a search of this experiment variant within the "
              "last experiments.unit_window_s of event time.")
WITHOUT_CLIENT_ID_HELP = ("Searches of this experiment variant without a client_id: counted in "
                          "searchpulse_searches_total, in no unit, unit bucket or experiment "
                          "statistic.")
EXPERIMENT_INTERLEAVING_HELP = {
    "wins": "Team-draft interleaved searches won by this team, per unit bucket.",
    "ties": "Team-draft interleaved searches whose teams tied, per unit bucket.",
}


def experiment_text(experiments: list[ExperimentUnits]) -> bytes:
    """The experiment families: units per (application, variant), and per unit bucket the
    sums the clustered variance is computed from (collector/units.py); a bucket no client
    fell into yet is not written."""
    lines: list[str] = []
    add = lines.append
    _header(add, "searchpulse_experiment_units", UNITS_HELP, "gauge")
    for e in experiments:
        add(f'searchpulse_experiment_units{{application="{_escape(e.application)}",'
            f'variant="{_escape(e.variant)}"}} {floatToGoString(e.units)}\n')
    _header(add, "searchpulse_experiment_searches_without_client_id_total",
            WITHOUT_CLIENT_ID_HELP, "counter")
    for e in experiments:
        add(f'searchpulse_experiment_searches_without_client_id_total{{application='
            f'"{_escape(e.application)}",variant="{_escape(e.variant)}"}} '
            f'{floatToGoString(e.without_client_id)}\n')
    filled = [(e, b, f'application="{_escape(e.application)}",unit_bucket="{b.index}",'
                     f'variant="{_escape(e.variant)}"') for e in experiments for b in e.filled()]
    for attribute, name, help_text in BUCKET_COUNTS:
        _header(add, f"searchpulse_experiment_{name}_total", help_text, "counter")
        for _, b, labels in filled:
            add(f"searchpulse_experiment_{name}_total{{{labels}}} "
                f"{floatToGoString(getattr(b, attribute))}\n")
    interleaved = [(e, b, labels) for e, b, labels in filled if b.interleaving_wins is not None]
    _header(add, "searchpulse_experiment_interleaving_wins_total",
            EXPERIMENT_INTERLEAVING_HELP["wins"], "counter")
    for e, b, _ in interleaved:
        head = f'application="{_escape(e.application)}",team="'
        tail = f'",unit_bucket="{b.index}",variant="{_escape(e.variant)}"'
        for team, wins in b.interleaving_wins.items():
            add(f"searchpulse_experiment_interleaving_wins_total{{{head}{_escape(team)}{tail}}} "
                f"{floatToGoString(wins)}\n")
    _header(add, "searchpulse_experiment_interleaving_ties_total",
            EXPERIMENT_INTERLEAVING_HELP["ties"], "counter")
    for _, b, labels in interleaved:
        add(f"searchpulse_experiment_interleaving_ties_total{{{labels}}} "
            f"{floatToGoString(b.interleaving_ties)}\n")
    return "".join(lines).encode()


def _header(add: Callable[[str], None], name: str, help_text: str, kind: str) -> None:
    escaped = help_text.replace("\\", r"\\").replace("\n", r"\n")
    add(f"# HELP {name} {escaped}\n# TYPE {name} {kind}\n")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _pipeline(view: View) -> Iterator[Metric]:
    stats = view.stats
    family = CounterMetricFamily(
        "searchpulse_records", "Records read, by kind and by what became of them.",
        labels=("kind", "outcome"))
    for k, kind in enumerate(acc.KINDS):
        for o, outcome in enumerate(acc.OUTCOMES):
            family.add_metric((kind, outcome), stats.records[k][o])
    yield family
    for name, counts, label, help_text in (
        ("searchpulse_invalid_records", stats.invalid, "reason",
         "Records rejected as invalid, by reason."),
        ("searchpulse_ignored_records", stats.ignored, "reason",
         "Valid records searchpulse does not use, by reason."),
        ("searchpulse_data_quality_issues", stats.data_quality, "issue",
         "Records used despite a data-quality issue, by issue."),
        ("searchpulse_dead_lettered_records", stats.dead_lettered, "reason",
         "Records written to the dead-letter destination, by reason."),
        ("searchpulse_retimed_records", stats.retimed, "reason",
         "Records whose event time was corrected, by reason: their client's clock offset, or "
         "an event stamped before the search it names."),
        ("searchpulse_clock_corrected_clients", stats.clock_clients, "reason",
         "Clients (per record kind) whose clock was found off and corrected, by how it was "
         "found: behind the stream, ahead of it, or an event far from its search."),
    ):
        family = CounterMetricFamily(name, help_text, labels=(label,))
        for key, value in sorted(dict(counts).items()):
            family.add_metric((key,), value)
        yield family
    offsets = HistogramMetricFamily(
        "searchpulse_client_clock_offset_seconds",
        "Estimated clock offset (absolute) of each client and record kind against the stream "
        "clock, observed once when first judged; offsets within the tolerance count as 0.")
    if stats.clock_offsets.count:
        offsets.add_metric((), *_cumulative(stats.clock_offsets))
    yield offsets
    family = CounterMetricFamily(
        "searchpulse_label_values_folded",
        "Searches whose label value was folded into `other` by the cardinality cap; "
        "label=experiment: experiment variants beyond experiments.max_variants (no unit "
        "statistics).",
        labels=("label",))
    for label in ("application", "variant", "experiment"):
        family.add_metric((label,), view.folded.get(label, 0))
    yield family


def _state(view: View) -> Iterator[Metric]:
    for name, help_text in GAUGE_HELP.items():
        yield GaugeMetricFamily(f"searchpulse_{name}", help_text, value=view.gauges.get(name, 0))
    top = GaugeMetricFamily(
        "searchpulse_top_zero_result_queries",
        "Zero-result searches of the most frequent zero-result queries per application over "
        "the top_queries window; only queries no personal-data detector fires on and that "
        "privacy.min_distinct_clients distinct clients typed (length-capped).",
        labels=("application", "query"))
    withheld = GaugeMetricFamily(
        "searchpulse_top_zero_result_queries_withheld",
        "Queries among the 20 x top_queries.size most frequent zero-result queries of the "
        "window not shown, by reason (a personal-data detector, too long, too few clients, "
        "enough only with searches that carried no client id, not yet read by the "
        "detectors).",
        labels=("application", "reason"))
    for application, queries in view.released.shown.items():
        for query, count in queries:
            top.add_metric((application, query), count)
    for application, reasons in view.released.withheld.items():
        for reason, count in reasons.items():
            withheld.add_metric((application, reason), count)
    yield top
    yield withheld
    info = GaugeMetricFamily("searchpulse_build_info", "searchpulse build information.",
                             labels=("version", "python"))
    info.add_metric((__version__, platform.python_version()), 1)
    yield info


def _cumulative(buckets: Buckets) -> tuple[list[tuple[str, float]], float]:
    running = 0
    points: list[tuple[str, float]] = []
    for bound, count in zip((*buckets.bounds, float("inf")), buckets.counts, strict=True):
        running += count
        points.append(("+Inf" if bound == float("inf") else repr(bound), running))
    return points, buckets.sum
