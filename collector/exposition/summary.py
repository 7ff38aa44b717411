"""The replay summary: headline totals and rates of an engine, overall and per application.

Each total and rate is a row of collector/definitions.py, computed by the same two functions
there (``count_of``, ``rate_of``) as the simulator's oracle computes its own: rates are ``None``
(JSON ``null``) when their denominator is 0: no data is not a rate of 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from collector import definitions as d
from collector.definitions import count_of, rate_of
from collector.ingest import accounting as acc
from collector.ingest.accounting import PipelineStats
from collector.metric_rows import Rate
from collector.outcomes import REFORMULATION_KINDS
from collector.series.quality import QualitySeries

if TYPE_CHECKING:  # a type only: the stage below it imports nothing above
    from collector.engine import Engine

# The summary's keys in order: a COUNTS name (its total) or a rate (its ratio); the judged
# ones only with a judgment set loaded (judgments.file).
LAYOUT: tuple[str | Rate, ...] = (
    "searches", d.WITH_RESULTS, "zero_result_searches", d.ZERO_RESULT_RATE, "clicked_searches",
    "clicks", d.CTR, "converted_searches", d.CONVERSION_RATE, "reformulated_searches",
    d.REFORMULATION_RATE, "abandoned_searches", d.ABANDONMENT_RATE, "zero_result_exits",
    d.MEAN_TIME_TO_FIRST_CLICK, d.MRR,
    # what was not a search people meant, and whether the front ends' events arrive
    "keystroke_records", d.KEYSTROKES_PER_SEARCH, "automated_searches", d.AUTOMATED_SHARE,
    "searches_with_events", d.EVENT_COVERAGE, "untracked_searches")
JUDGED_LAYOUT: tuple[str | Rate, ...] = (
    "judged_searches", d.JUDGED_NDCG_MEAN, d.JUDGED_ERR_MEAN, d.JUDGED_COVERAGE_MEAN)
# QualitySeries attributes that are plain per-search totals (collector/definitions.py COUNTS)
_PLAIN = ("searches", "zero_result", "clicked", "clicks", "converted", "abandoned",
          "zero_result_exits", "reciprocal_rank_sum", "judged_searches", "judged_ndcg_sum",
          "judged_err_sum", "judged_coverage_sum", "keystrokes", "with_events", "untracked")


def summarize(totals: Mapping[str, Any], by_kind: dict[str, int]) -> dict[str, Any]:
    """The summary of totals keyed by their COUNTS attributes, reformulations by kind."""
    summary: dict[str, Any] = {}
    layout = LAYOUT + (JUDGED_LAYOUT if totals.get("judged_searches") else ())
    for item in layout:
        if isinstance(item, Rate):
            summary[item.key] = rate_of(totals, item)
        else:
            summary[item] = count_of(totals, item)
        if item is d.REFORMULATION_RATE:
            summary["reformulations_by_kind"] = by_kind
    return summary


def quality_summary(series: Iterable[QualitySeries]) -> dict[str, Any]:
    totals = dict.fromkeys((*_PLAIN, "time_to_first_click_sum", "first_clicks",
                            "ranked_clicked", "automated_searches"), 0)
    by_kind = dict.fromkeys(REFORMULATION_KINDS, 0)
    for s in series:
        for attribute in _PLAIN:
            totals[attribute] += getattr(s, attribute)
        totals["time_to_first_click_sum"] += s.time_to_first_click.sum
        totals["first_clicks"] += s.time_to_first_click.count
        totals["ranked_clicked"] += s.first_click_position.count
        totals["automated_searches"] += sum(s.automated.values())
        for kind, value in s.reformulated.items():
            by_kind[kind] += value
    totals["reformulated"] = sum(by_kind.values())
    return summarize(totals, by_kind)


def replay_summary(engine: Engine) -> dict[str, Any]:
    return counts_summary(engine.table.series, engine.stats)


def counts_summary(series: Iterable[QualitySeries], stats: PipelineStats) -> dict[str, Any]:
    """The summary of one engine's series and stats, or of several engines' merged (a
    ``View`` of them: replay --workers)."""
    series = list(series)
    summary = quality_summary(series)
    summary.update(
        records=stats.total(),
        invalid_records=stats.total(acc.INVALID),
        orphan_events=stats.total(acc.ORPHAN, acc.EVENT),
        late_events=stats.total(acc.LATE, acc.EVENT),
        late_queries=stats.total(acc.LATE, acc.QUERY),
        retimed_records=sum(stats.retimed.values()),
        future_records=sum(stats.future.values()),
        duplicates=stats.total(acc.DUPLICATE),
        ignored_records=stats.total(acc.IGNORED),
    )
    applications = sorted({s.application for s in series})
    summary["by_application"] = {
        app: quality_summary(s for s in series if s.application == app)
        for app in applications
    }
    return summary
