"""Judged queries the judgment set should hear about again: where the judgments and the users
disagree ("when offline and online disagree … mine the disagreeing queries"), and where the
judgment set no longer covers what production shows.

Each judged (application, query) of the period is scored on what it showed: the collector,
running with the judgment set (``judgments.file``), scores every search of a judged query on the
ranking production returned (collector/series/judged_relevance.py) and keeps the sums per query and
day in the store; here judged NDCG@10 and coverage@10 are their means over the period. A query the
collector did not score (it ran without that judgment set) is not mined. Then:

* **judged good, users fail** — judged NDCG@10 ≥ ``feedback.judged_good_ndcg`` and the query
  fails online (failure ≥ ``feedback.failure_threshold``): the rubric or the grades are wrong, or
  the intent is one the judges did not see; highest impact first;
* **judged poor, users succeed** — judged NDCG@10 ≤ ``feedback.judged_poor_ndcg`` and the query
  does not fail: the grades are stale or the intent changed; most searched first;
* **judged query, coverage low** — coverage@10 < ``feedback.judged_coverage_min``: re-pool it
  (its new documents join the pool); most searched first.

Disagreement needs coverage: a query below the coverage floor is only re-pooled (its NDCG
counts unjudged documents as irrelevant and says little). The two disagreement kinds share
``feedback.quota_disagreement`` (each gets at least half of it when it has enough queries);
re-pooling has ``feedback.quota_repool``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

JUDGED_GOOD = "judged good, users fail"
JUDGED_POOR = "judged poor, users succeed"
COVERAGE_LOW = "judged query, coverage low"
DISAGREEMENT, REPOOL = "disagreement", "repool"


@dataclass(frozen=True)
class DisagreementRules:
    good_ndcg: float
    poor_ndcg: float
    coverage_min: float
    failure_threshold: float
    quota: int
    repool_quota: int


def score_judged(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``judged_ndcg`` and ``judged_coverage``: the means over the judged searches
    the collector scored (NaN: none)."""
    judged = rows["judged_searches"].where(rows["judged_searches"] > 0)
    return rows.assign(judged_ndcg=rows["judged_ndcg_sum"] / judged,
                       judged_coverage=rows["judged_coverage_sum"] / judged)


def _take(rows: pd.DataFrame, order: str, wanted: int,
          admits: Callable[[str, str], bool]) -> pd.DataFrame:
    rows = rows.sort_values(order, ascending=False, kind="stable")
    keep = [i for i, a, q in zip(rows.index, rows["application"], rows["query"], strict=True)
            if admits(a, q)][:max(wanted, 0)]
    return rows.loc[keep]


def mine(scored: pd.DataFrame, rules: DisagreementRules,
         admits: Callable[[str, str], bool]) -> pd.DataFrame:
    """The chosen judged queries, with ``selected_as`` and ``reason`` set."""
    failing = scored["failure"] >= rules.failure_threshold
    covered = scored["judged_coverage"] >= rules.coverage_min  # else NDCG says little
    good = scored[(scored["judged_ndcg"] >= rules.good_ndcg) & failing & covered]
    poor = scored[(scored["judged_ndcg"] <= rules.poor_ndcg) & ~failing & covered]
    low = scored[scored["judged_coverage"] < rules.coverage_min]
    half = rules.quota // 2
    poor_taken = _take(poor, "searches", rules.quota - min(len(good), rules.quota - half),
                       admits)
    good_taken = _take(good, "impact", rules.quota - len(poor_taken), admits)
    chosen = pd.concat([good_taken.assign(selected_as=DISAGREEMENT, reason=JUDGED_GOOD),
                        poor_taken.assign(selected_as=DISAGREEMENT, reason=JUDGED_POOR)])
    low = low[~low.index.isin(chosen.index)]
    low_taken = _take(low, "searches", rules.repool_quota, admits)
    return pd.concat([chosen, low_taken.assign(selected_as=REPOOL, reason=COVERAGE_LOW)])
