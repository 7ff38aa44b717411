"""The /metrics text of the engine's plain counts.

Each family's name, help, labels and the attribute it reads are a row of
collector/definitions.py (the one place docs/metrics.md is checked against); this module only
writes them. Exposition only reads: scrapes run in the HTTP threads while the engine thread
counts.

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
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from collector import __version__
from collector import definitions as d
from collector.exposition.view import View
from collector.histogram import Buckets
from collector.ingest import accounting as acc
from collector.metric_rows import Family
from collector.outcomes import AUTOMATED_REASONS, REFORMULATION_KINDS
from collector.series.quality import QualitySeries
from collector.series.units import ExperimentUnits


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
    labelled = list(zip(series, base, strict=True))
    lines: list[str] = []
    add = lines.append
    _counter_lines(add, labelled)
    _by_label_lines(add, d.REFORMULATED_SEARCHES, "kind", REFORMULATION_KINDS, series)
    _by_label_lines(add, d.AUTOMATED_SEARCHES, "reason", AUTOMATED_REASONS, series)
    for family in d.QUALITY_HISTOGRAMS:
        _histogram_lines(add, family, labelled)
    _judged_lines(add, labelled)
    _interleaving_lines(add, labelled)
    return "".join(lines).encode()


_Labelled = list[tuple[QualitySeries, str]]
"""Each series with its application, stratum and variant labels, written once per scrape."""


def _counter_lines(add: Callable[[str], None], labelled: _Labelled) -> None:
    """One sample per series of each plain quality counter, zeros included."""
    for family in d.QUALITY_COUNTERS:
        name, attribute = _header(add, family)
        for s, labels in labelled:
            add(f"{name}{{{labels}}} {floatToGoString(getattr(s, attribute))}\n")


def _by_label_lines(add: Callable[[str], None], family: Family, label: str,
                    values: tuple[str, ...], series: list[QualitySeries]) -> None:
    """A counter kept per series by one more label (reformulations by ``kind``, automated
    searches by ``reason``), one sample per series and value, zeros included (the label sorts
    between ``application`` and ``stratum``, so the labels are written around it)."""
    name, attribute = _header(add, family)
    for s in series:
        counts = getattr(s, attribute)
        head = f'application="{_escape(s.application)}",{label}="'
        tail = f'",stratum="{_escape(s.stratum)}",variant="{_escape(s.variant)}"'
        for value in values:
            add(f"{name}{{{head}{value}{tail}}} {floatToGoString(counts[value])}\n")


def _histogram_lines(add: Callable[[str], None], family: Family, labelled: _Labelled) -> None:
    """A histogram's cumulative buckets, count and sum per series that observed anything."""
    name, attribute = _header(add, family)
    for s, labels in labelled:
        buckets: Buckets = getattr(s, attribute)
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


def _judged_lines(add: Callable[[str], None], labelled: _Labelled) -> None:
    """The judged-relevance summaries and the debiased clicks, only for series that have any
    (most applications have no judgment set, and most searches no judged click)."""
    for family in d.QUALITY_JUDGED:
        name, attribute = _header(add, family)
        for s, labels in labelled:
            if s.judged_searches:
                add(f"{name}_count{{{labels}}} {floatToGoString(s.judged_searches)}\n")
                add(f"{name}_sum{{{labels}}} {floatToGoString(getattr(s, attribute))}\n")
    name, _ = _header(add, d.DEBIASED_CLICKS)
    for s, labels in labelled:
        if s.debiased_clicks:
            add(f"{name}{{{labels}}} {floatToGoString(s.debiased_clicks)}\n")


def _interleaving_lines(add: Callable[[str], None], labelled: _Labelled) -> None:
    """Wins per team, ties and unattributed clicks, only for series that run an interleaving
    experiment (``interleaving_wins`` is None elsewhere)."""
    interleaved = [(s, labels) for s, labels in labelled if s.interleaving_wins is not None]
    name, _ = _header(add, d.INTERLEAVING_WINS)
    for s, _ in interleaved:
        head = f'application="{_escape(s.application)}",stratum="{_escape(s.stratum)}",team="'
        tail = f'",variant="{_escape(s.variant)}"'
        for team, wins in s.interleaving_wins.items():
            add(f"{name}{{{head}{_escape(team)}{tail}}} {floatToGoString(wins)}\n")
    for family in (d.INTERLEAVING_TIES, d.INTERLEAVING_UNATTRIBUTED):
        name, attribute = _header(add, family)
        for s, labels in interleaved:
            add(f"{name}{{{labels}}} {floatToGoString(getattr(s, attribute))}\n")


def experiment_text(experiments: list[ExperimentUnits]) -> bytes:
    """The experiment families: units per (application, variant), and per unit bucket the
    sums the clustered variance is computed from (collector/series/units.py); a bucket no client
    fell into yet is not written."""
    lines: list[str] = []
    add = lines.append
    for family in (d.EXPERIMENT_UNITS, d.EXPERIMENT_WITHOUT_CLIENT_ID):
        name, attribute = _header(add, family)
        for e in experiments:
            add(f'{name}{{application="{_escape(e.application)}",'
                f'variant="{_escape(e.variant)}"}} {floatToGoString(getattr(e, attribute))}\n')
    filled = [(e, b, f'application="{_escape(e.application)}",unit_bucket="{b.index}",'
                     f'variant="{_escape(e.variant)}"') for e in experiments for b in e.filled()]
    for family in d.BUCKET_COUNTS:
        name, attribute = _header(add, family)
        for _, b, labels in filled:
            add(f"{name}{{{labels}}} {floatToGoString(getattr(b, attribute))}\n")
    interleaved = [(e, b, labels) for e, b, labels in filled if b.interleaving_wins is not None]
    name, _ = _header(add, d.EXPERIMENT_INTERLEAVING_WINS)
    for e, b, _ in interleaved:
        head = f'application="{_escape(e.application)}",team="'
        tail = f'",unit_bucket="{b.index}",variant="{_escape(e.variant)}"'
        for team, wins in b.interleaving_wins.items():
            add(f"{name}{{{head}{_escape(team)}{tail}}} {floatToGoString(wins)}\n")
    name, _ = _header(add, d.EXPERIMENT_INTERLEAVING_TIES)
    for _, b, labels in interleaved:
        add(f"{name}{{{labels}}} {floatToGoString(b.interleaving_ties)}\n")
    return "".join(lines).encode()


def _header(add: Callable[[str], None], family: Family) -> tuple[str, str]:
    """Writes ``family``'s HELP and TYPE lines; its (name, attribute), for the samples."""
    escaped = family.help.replace("\\", r"\\").replace("\n", r"\n")
    add(f"# HELP {family.name} {escaped}\n# TYPE {family.name} {family.type}\n")
    return family.name, family.attribute


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _pipeline(view: View) -> Iterator[Metric]:
    stats = view.stats
    family = d.RECORDS.metric()
    for k, kind in enumerate(acc.KINDS):
        for o, outcome in enumerate(acc.OUTCOMES):
            family.add_metric((kind, outcome), stats.records[k][o])
    yield family
    for definition, attribute in d.PIPELINE_REASONS:
        family = definition.metric()
        for key, value in sorted(dict(getattr(stats, attribute)).items()):
            family.add_metric((key,), value)
        yield family
    offsets = d.CLIENT_CLOCK_OFFSET.metric()
    if stats.clock_offsets.count:
        offsets.add_metric((), *_cumulative(stats.clock_offsets))
    yield offsets
    family = d.LABEL_VALUES_FOLDED.metric()
    for label in ("application", "variant", "experiment"):
        family.add_metric((label,), view.folded.get(label, 0))
    yield family


def _state(view: View) -> Iterator[Metric]:
    for definition, key in d.STATE_GAUGES:
        yield definition.metric(view.gauges.get(key, 0))
    top = d.TOP_ZERO_RESULT_QUERIES.metric()
    withheld = d.TOP_ZERO_RESULT_QUERIES_WITHHELD.metric()
    for application, queries in view.released.shown.items():
        for query, count in queries:
            top.add_metric((application, query), count)
    for application, reasons in view.released.withheld.items():
        for reason, count in reasons.items():
            withheld.add_metric((application, reason), count)
    yield top
    yield withheld
    info = d.BUILD_INFO.metric()
    info.add_metric((__version__, platform.python_version()), 1)
    yield info


def _cumulative(buckets: Buckets) -> tuple[list[tuple[str, float]], float]:
    running = 0
    points: list[tuple[str, float]] = []
    for bound, count in zip((*buckets.bounds, float("inf")), buckets.counts, strict=True):
        running += count
        points.append(("+Inf" if bound == float("inf") else repr(bound), running))
    return points, buckets.sum
