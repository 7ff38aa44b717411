"""A read-only view of an engine's counts and state: what /metrics exposes.

One engine exposes its live objects (no copy). Several engines (one per Kafka partition) are
merged into a new view whose numbers are sums, so exposition never needs to know the source.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from collector.ingest.accounting import PipelineStats
from collector.series.quality import QualitySeries, merge_series, series_from_dict, series_to_dict
from collector.series.units import (
    ExperimentUnits,
    experiment_from_dict,
    experiment_to_dict,
    merge_experiments,
)
from collector.series.zero_result_queries import Candidate, QueryRelease, Released, merge_candidates

GAUGES = ("last_event_timestamp_seconds", "watermark_timestamp_seconds", "open_sessions",
          "pending_searches", "tracked_searches", "buffered_records")


@dataclass
class View:
    series: list[QualitySeries]
    stats: PipelineStats
    folded: dict[str, int]  # label name → searches folded into `other`
    gauges: dict[str, float] = field(default_factory=dict)
    # experiment variants: unit-bucket counts and (state) units, collector/series/units.py
    experiments: list[ExperimentUnits] = field(default_factory=list)
    # Unfiltered (never exposed): what a merge of several engines' views releases from.
    top_candidates: dict[str, list[Candidate]] = field(default_factory=dict)
    released: Released = field(default_factory=lambda: Released({}, {}))


def merge_views(views: Iterable[View], release: QueryRelease | None = None) -> View:
    """Sum counts; add state gauges except the timestamps, which take the newest / oldest;
    the top queries released (``release``) from all the views' candidates together."""
    views = list(views)
    gauges: dict[str, float] = {}
    for name in GAUGES:
        values = [v.gauges.get(name, 0.0) for v in views]
        if name == "last_event_timestamp_seconds":
            gauges[name] = max(values, default=0.0)
        elif name == "watermark_timestamp_seconds":
            gauges[name] = min((x for x in values if x > 0), default=0.0)
        else:
            gauges[name] = sum(values)
    folded: Counter[str] = Counter()
    for view in views:
        folded.update(view.folded)
    candidates = merge_candidates([v.top_candidates for v in views])
    return View(
        series=merge_series(s for v in views for s in v.series),
        stats=PipelineStats.merge(v.stats for v in views),
        folded=dict(folded),
        gauges=gauges,
        experiments=merge_experiments(e for v in views for e in v.experiments),
        top_candidates=candidates,
        released=release.release(candidates) if release else Released({}, {}),
    )


def view_to_dict(view: View) -> dict[str, Any]:
    """JSON-able counts of a view (the checkpoint of a collector's exposed counters)."""
    return {
        "series": [series_to_dict(s) for s in view.series],
        "records": view.stats.records,
        **{name: dict(getattr(view.stats, name)) for name in PipelineStats.COUNTERS},
        "clock_offsets": {"counts": view.stats.clock_offsets.counts,
                          "sum": view.stats.clock_offsets.sum},
        "folded": view.folded,
        "experiments": [experiment_to_dict(e) for e in view.experiments],
    }


def view_from_dict(data: dict[str, Any]) -> View:
    stats = PipelineStats()
    stats.records = [list(row) for row in data["records"]]
    for name in PipelineStats.COUNTERS:
        getattr(stats, name).update(data.get(name, {}))  # checkpoints of older versions lack some
    if "clock_offsets" in data:
        stats.clock_offsets.counts = list(data["clock_offsets"]["counts"])
        stats.clock_offsets.sum = data["clock_offsets"]["sum"]
    return View(series=[series_from_dict(s) for s in data["series"]], stats=stats,
                folded=dict(data["folded"]),
                experiments=[experiment_from_dict(e) for e in data.get("experiments", ())])
