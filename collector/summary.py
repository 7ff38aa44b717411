"""The replay summary: headline totals and rates of an engine, overall and per application.

Rates are ``None`` (JSON ``null``) when their denominator is 0: no data is not a rate of 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from collector import accounting as acc
from collector.engine import Engine
from collector.outcomes import REFORMULATION_KINDS
from collector.quality import QualitySeries


def ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def quality_summary(series: Iterable[QualitySeries]) -> dict[str, Any]:
    searches = zero = clicked = clicks = converted = abandoned = exits = 0
    ttfc_sum = rr_sum = 0.0
    ttfc_count = position_count = judged = 0
    judged_sums = [0.0, 0.0, 0.0]  # NDCG@10, ERR@10, coverage@10
    by_kind = dict.fromkeys(REFORMULATION_KINDS, 0)
    for s in series:
        judged += s.judged_searches
        judged_sums[0] += s.judged_ndcg_sum
        judged_sums[1] += s.judged_err_sum
        judged_sums[2] += s.judged_coverage_sum
        searches += s.searches
        zero += s.zero_result
        clicked += s.clicked
        clicks += s.clicks
        converted += s.converted
        abandoned += s.abandoned
        exits += s.zero_result_exits
        ttfc_sum += s.time_to_first_click.sum
        ttfc_count += s.time_to_first_click.count
        rr_sum += s.reciprocal_rank_sum
        position_count += s.first_click_position.count
        for kind, value in s.reformulated.items():
            by_kind[kind] += value
    with_results = searches - zero
    reformulated = sum(by_kind.values())
    summary: dict[str, Any] = {
        "searches": searches,
        "searches_with_results": with_results,
        "zero_result_searches": zero,
        "zero_result_rate": ratio(zero, searches),
        "clicked_searches": clicked,
        "clicks": clicks,
        "ctr": ratio(clicked, with_results),
        "converted_searches": converted,
        "conversion_rate": ratio(converted, with_results),
        "reformulated_searches": reformulated,
        "reformulation_rate": ratio(reformulated, searches),
        "reformulations_by_kind": by_kind,
        "abandoned_searches": abandoned,
        "abandonment_rate": ratio(abandoned, with_results),
        "zero_result_exits": exits,
        "mean_time_to_first_click_s": ratio(ttfc_sum, ttfc_count),
        "mrr_first_click": ratio(rr_sum, position_count),
    }
    if judged:  # only with a judgment set loaded (judgments.file)
        summary.update(judged_searches=judged,
                       judged_ndcg_at_10=ratio(judged_sums[0], judged),
                       judged_err_at_10=ratio(judged_sums[1], judged),
                       judged_coverage_at_10=ratio(judged_sums[2], judged))
    return summary


def replay_summary(engine: Engine) -> dict[str, Any]:
    stats = engine.stats
    summary = quality_summary(engine.table.series)
    summary.update(
        records=stats.total(),
        invalid_records=stats.total(acc.INVALID),
        orphan_events=stats.total(acc.ORPHAN, acc.EVENT),
        late_events=stats.total(acc.LATE, acc.EVENT),
        late_queries=stats.total(acc.LATE, acc.QUERY),
        retimed_records=sum(stats.retimed.values()),
        duplicates=stats.total(acc.DUPLICATE),
        ignored_records=stats.total(acc.IGNORED),
    )
    applications = sorted({s.application for s in engine.table.series})
    summary["by_application"] = {
        app: quality_summary(s for s in engine.table.series if s.application == app)
        for app in applications
    }
    return summary
