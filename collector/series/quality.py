"""Search-quality counts as plain Python numbers, one ``QualitySeries`` per label combination.

The hot path increments slot attributes (~40 ns) instead of calling ``Counter.labels().inc()``
(1.2–1.8 µs); ``metrics.quality_text`` writes these numbers as exposition text at scrape.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from collector.histogram import Buckets
from collector.outcomes import AUTOMATED_REASONS, REFORMULATION_KINDS
from collector.series.labels import NONE, OTHER, CappedLabel
from collector.series.units import ExperimentUnits

STRATA = ("head", "torso", "tail", "known_item")
HEAD, TORSO, TAIL, KNOWN_ITEM = range(4)

TIME_TO_FIRST_CLICK_BUCKETS = (1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
FIRST_CLICK_POSITION_BUCKETS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 50.0)
_LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.2, 0.3, 0.75, 1.0, 2.0, 5.0, 10.0)


def latency_buckets(guardrail_s: float) -> tuple[float, ...]:
    """The latency histogram's bounds, with one boundary exactly at the guardrail."""
    return tuple(sorted({*_LATENCY_BUCKETS, guardrail_s}))


class QualitySeries:
    """All quality counts of one (application, stratum, variant)."""

    __slots__ = (
        "application", "stratum", "variant", "searches", "zero_result", "unknown_result_count",
        "clicked", "clicks", "converted", "conversions", "reformulated", "abandoned",
        "zero_result_exits", "reciprocal_rank_sum", "judged_searches", "judged_ndcg_sum",
        "judged_err_sum", "judged_coverage_sum", "debiased_clicks", "interleaving_wins",
        "interleaving_ties",
        "interleaving_unattributed", "time_to_first_click", "first_click_position", "latency",
        "experiment", "keystrokes", "automated", "with_events", "clicks_beyond_results",
        "untracked",
    )

    def __init__(self, application: str, stratum: str, variant: str,
                 latency_bounds: tuple[float, ...]) -> None:
        self.application = application
        self.stratum = stratum
        self.variant = variant
        self.searches = 0
        self.zero_result = 0
        self.unknown_result_count = 0
        self.clicked = 0
        self.clicks = 0
        self.converted = 0
        self.conversions = 0
        self.reformulated = dict.fromkeys(REFORMULATION_KINDS, 0)
        self.abandoned = 0
        self.zero_result_exits = 0
        self.reciprocal_rank_sum = 0.0
        self.judged_searches = 0  # searches scored against the judgment set (judged_relevance)
        self.judged_ndcg_sum = 0.0
        self.judged_err_sum = 0.0
        self.judged_coverage_sum = 0.0
        # clicks weighted by 1/examination of their position (collector/series/examination.py)
        self.debiased_clicks = 0.0
        # team-draft interleaving (collector/sessions/interleaving.py): wins per team, ties,
        # unattributed clicks; None until an interleaved search of this series is credited
        self.interleaving_wins: dict[str, int] | None = None
        self.interleaving_ties = 0
        self.interleaving_unattributed = 0
        self.time_to_first_click = Buckets(TIME_TO_FIRST_CLICK_BUCKETS)
        self.first_click_position = Buckets(FIRST_CLICK_POSITION_BUCKETS)
        self.latency = Buckets(latency_bounds)
        # an experiment variant's units and unit buckets (shared by its strata), else None
        self.experiment: ExperimentUnits | None = None
        # what was not a search people meant, and tracking health (docs/metrics.md)
        self.keystrokes = 0  # query records that were keystrokes of the search after them
        self.automated = dict.fromkeys(AUTOMATED_REASONS, 0)  # automated searches by reason
        self.with_events = 0  # searches with results that received any event by their decision
        self.clicks_beyond_results = 0  # clicks past the results their page listed
        self.untracked = 0  # searches with results decided while their tracking was broken


_COUNTS = ("searches", "zero_result", "unknown_result_count", "clicked", "clicks", "converted",
           "conversions", "abandoned", "zero_result_exits", "reciprocal_rank_sum",
           "judged_searches", "judged_ndcg_sum", "judged_err_sum", "judged_coverage_sum",
           "debiased_clicks", "interleaving_ties", "interleaving_unattributed", "keystrokes",
           "with_events", "clicks_beyond_results", "untracked")
_BY_LABEL = ("reformulated", "automated")  # counts by kind, by reason
_HISTOGRAMS = ("time_to_first_click", "first_click_position", "latency")


def merge_series(series: Iterable[QualitySeries]) -> list[QualitySeries]:
    """Sum series with the same labels into new objects (the inputs are not changed)."""
    merged: dict[tuple[str, str, str], QualitySeries] = {}
    for s in list(series):
        key = (s.application, s.stratum, s.variant)
        total = merged.get(key)
        if total is None:
            total = merged[key] = QualitySeries(*key, s.latency.bounds)
        for name in _COUNTS:
            setattr(total, name, getattr(total, name) + getattr(s, name))
        for name in _BY_LABEL:
            counts = getattr(total, name)
            for key, value in getattr(s, name).items():
                counts[key] += value
        if s.interleaving_wins is not None:
            wins = total.interleaving_wins = total.interleaving_wins or {}
            for team, value in s.interleaving_wins.items():
                wins[team] = wins.get(team, 0) + value
        for name in _HISTOGRAMS:
            mine, theirs = getattr(total, name), getattr(s, name)
            mine.counts = [a + b for a, b in zip(mine.counts, theirs.counts, strict=True)]
            mine.sum += theirs.sum
    return list(merged.values())


def series_to_dict(s: QualitySeries) -> dict[str, Any]:
    data: dict[str, Any] = {"labels": [s.application, s.stratum, s.variant]}
    data.update((name, dict(getattr(s, name))) for name in _BY_LABEL)
    data.update((name, getattr(s, name)) for name in _COUNTS)
    if s.interleaving_wins is not None:
        data["interleaving_wins"] = dict(s.interleaving_wins)
    data.update((name, {"bounds": list(getattr(s, name).bounds), "counts": getattr(s, name).counts,
                        "sum": getattr(s, name).sum}) for name in _HISTOGRAMS)
    return data


def series_from_dict(data: dict[str, Any]) -> QualitySeries:
    s = QualitySeries(*data["labels"], tuple(data["latency"]["bounds"]))
    for name in _COUNTS:
        setattr(s, name, data.get(name, 0))  # a checkpoint from before a count existed
    for name in _BY_LABEL:  # a checkpoint from before automated searches were counted
        getattr(s, name).update(data.get(name, {}))
    if "interleaving_wins" in data:
        s.interleaving_wins = dict(data["interleaving_wins"])
    for name in _HISTOGRAMS:
        buckets = getattr(s, name)
        buckets.counts = list(data[name]["counts"])
        buckets.sum = data[name]["sum"]
    return s


def reset_series(s: QualitySeries) -> None:
    """Zero every count in place (the series objects stay referenced by open searches)."""
    for name in _COUNTS:
        setattr(s, name, 0)
    for name in ("reciprocal_rank_sum", "judged_ndcg_sum", "judged_err_sum",
                 "judged_coverage_sum", "debiased_clicks"):
        setattr(s, name, 0.0)
    for name in _BY_LABEL:
        counts = getattr(s, name)
        for key in counts:
            counts[key] = 0
    if s.interleaving_wins is not None:
        s.interleaving_wins = dict.fromkeys(s.interleaving_wins, 0)
    for name in _HISTOGRAMS:
        buckets = getattr(s, name)
        buckets.counts = [0] * len(buckets.counts)
        buckets.sum = 0.0


class SeriesTable:
    """Resolves raw (application, variant, stratum) to its series; labels are capped. Every
    experiment variant (a variant but ``none`` and ``other``) also gets its ``ExperimentUnits``
    with ``unit_buckets`` buckets (collector/series/units.py), the first ``max_experiments`` of
    them: at most that many × buckets × 10 series; later ones are counted in ``experiments_refused``
    (exposed as ``searchpulse_label_values_folded_total{label="experiment"}``). ``by_client``
    (offline reports only): one bucket per client, and ``none`` gets its units too
    (collector/series/units.py)."""

    def __init__(self, application_cap: int, variant_cap: int, latency_guardrail_s: float,
                 unit_buckets: int = 32, max_experiments: int = 40,
                 by_client: bool = False) -> None:
        self.application = CappedLabel("application", application_cap)
        self.variant = CappedLabel("variant", variant_cap)
        self.latency_bounds = latency_buckets(latency_guardrail_s)
        self.unit_buckets = unit_buckets
        self.max_experiments = max_experiments  # bounds the unit-bucket series
        self.by_client = by_client
        self.experiments_refused = 0  # experiment variants beyond it: no unit statistics
        self.series: list[QualitySeries] = []  # append-only: safe to iterate during a scrape
        self.experiments: list[ExperimentUnits] = []  # append-only, like ``series``
        self._by_raw: dict[object, dict[object, list[QualitySeries]]] = {}
        self._by_value: dict[tuple[str, str], list[QualitySeries]] = {}

    def get(self, application: object, variant: object, stratum: int) -> QualitySeries:
        by_variant = self._by_raw.get(application)
        if by_variant is not None:
            row = by_variant.get(variant)
            if row is not None:
                return row[stratum]
        return self._resolve(application, variant)[stratum]

    def _resolve(self, application: object, variant: object) -> list[QualitySeries]:
        values = (self.application.resolve(application), self.variant.resolve(variant))
        row = self._by_value.get(values)
        if row is None:
            row = [QualitySeries(values[0], name, values[1], self.latency_bounds)
                   for name in STRATA]
            if values[1] == OTHER or (values[1] == NONE and not self.by_client):
                pass
            elif len(self.experiments) >= self.max_experiments:
                self.experiments_refused += 1
            else:
                experiment = ExperimentUnits(*values, self.unit_buckets, self.by_client)
                for series in row:
                    series.experiment = experiment
                self.experiments.append(experiment)
            self._by_value[values] = row
            self.series.extend(row)
        if "other" not in values and len(self._by_raw) < 4 * self.application.cap:
            by_variant = self._by_raw.setdefault(application, {})
            if len(by_variant) < 4 * self.variant.cap:
                by_variant[variant] = row
        return row
