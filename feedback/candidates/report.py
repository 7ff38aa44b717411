"""``report.html``: one self-contained page (inline SVG, nothing fetched) that says in sentences
what the period looked like, what was selected and why and what was withheld, then the
pictures, the candidates and the queries that fail worst, and the job's numbers last."""

from __future__ import annotations

from typing import Any

import pandas as pd

from collector import definitions as d
from collector.definitions import count_of
from collector.metric_rows import Rate
from collector.series.quality import STRATA
from feedback.candidates.report_narrative import narrative, worded_facts
from feedback.pages.charts import bar_chart
from feedback.pages.page import document, facts, table


def stratum_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Traffic-weighted failure rates per stratum (NaN where a stratum has no searches)."""
    sums = frame.groupby("stratum")[["searches", "zero_result", "reformulated", "abandoned",
                                     "clicked"]].sum().reindex(list(STRATA)).fillna(0)

    def rate(of: Rate) -> pd.Series:
        denominator = count_of(sums, of.denominator)
        return count_of(sums, of.numerator) / denominator.where(denominator > 0)

    return pd.DataFrame({of.noun: rate(of) for of in (
        d.ZERO_RESULT_RATE, d.REFORMULATION_RATE, d.ABANDONMENT_RATE, d.CTR)})


def render(summary: dict[str, Any], frame: pd.DataFrame, chosen: pd.DataFrame,
           top_failing: pd.DataFrame, agreement: str = "") -> str:
    """The page; ``agreement``: the judges' agreement section (HTML), when there are raters."""
    rates = stratum_rates(frame)
    counts = chosen.groupby(["stratum", "selected_as"]).size().unstack(fill_value=0).reindex(
        list(STRATA), fill_value=0)
    selected_series = {kind: [float(counts[kind].get(s, 0)) if kind in counts else 0.0
                              for s in STRATA] for kind in ("failing", "calibration")}
    signals = {"query": "query", "application": "application", "stratum": "stratum",
               "searches": "searches", "reason": "reason", "failure": "failure (lower bound)",
               "zero_result_rate": "zero-result", "reformulation_rate": "reformulation",
               "abandonment_rate": "abandonment", "impact": "impact"}
    body = f"""<h1>Judgment-set candidates</h1>{narrative(summary, chosen)}
<h2>Failure rates per stratum</h2>
{bar_chart(list(STRATA), {k: list(v) for k, v in rates.items()}, unit="percent",
           title="failure rates per stratum")}
<h2>What was selected, and why</h2>
<p>Per stratum: the highest-impact failing queries (impact = searches × failure, the largest
excess of a Wilson lower bound — zero results, reformulated, abandoned, not clicked — over the
application's own rate), plus traffic-weighted random non-failing queries for calibration.</p>
{bar_chart(list(STRATA), selected_series, unit="count", title="queries selected per stratum")}
{table(chosen, {"topic": "topic", **signals, "selected_as": "selected as",
                "pooled_documents": "documents to judge"}, sortable=True)}
<h2>Top failing queries of the period</h2>
{table(top_failing, signals, sortable=True)}
{agreement}
<h2>The job's numbers</h2>{facts(worded_facts(summary))}"""
    return document("searchpulse feedback — judgment candidates", body, script=True)
