"""feedback/evaluate/report.py: the `evaluate --html` page puts the verdict first, then the
gate's intervals (a regressing slice drawn as worse), the queries that got worse and better
(at most ``top`` each way, filterable by stratum), and each run's measures; with one run it is
the measures alone, with no script. Run names are escaped. The page is what a reviewer opens
from CI, so what failed must come first and be right."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import pytest

from collector.judgments.gate import Rule
from collector.judgments.measures import parse
from feedback.evaluate import report
from feedback.evaluate.scoring import Rankings, evaluate

NAMES = ["a.run", "b<.run"]
SEARCHES = [f"s{i}" for i in range(12)]
# tent's relevant document is first in A and second in B, lamp's the other way round
A = Rankings({**{("web", "tent", s): ["d1", "d2"] for s in SEARCHES},
              **{("web", "lamp", s): ["d2", "d1"] for s in SEARCHES[:3]}})
B = Rankings({**{("web", "tent", s): ["d2", "d1"] for s in SEARCHES},
              **{("web", "lamp", s): ["d1", "d2"] for s in SEARCHES[:3]}})


def _evaluated(runs: list[Rankings]) -> dict[str, Any]:
    final = pd.DataFrame({"application": ["web"] * 4, "query": ["tent", "tent", "lamp", "lamp"],
                          "doc_id": ["d1", "d2", "d1", "d2"], "grade": [3, 0, 3, 0]})
    strata = pd.Series(["head", "tail"], index=["tent", "lamp"]).groupby(level=0).first()
    rules = [Rule("nDCG@10", 0.0, 0.05, ("all", "stratum"))] if len(runs) > 1 else []
    return evaluate(runs, final, strata, parse(["nDCG@10"], "test"), rules, 10, 3)


@pytest.fixture(scope="module")
def compared() -> str:
    return report.page(_evaluated([A, B]), NAMES, top=5)


def test_the_verdict_comes_first_naming_each_failing_slice(compared: str) -> None:
    headings = re.findall(r"<h[12]>(.*?)</h[12]>", compared)
    assert headings == ["Offline evaluation", "b&lt;.run − a.run: the gate",
                        "Queries that got worse and better", "nDCG@10 per stratum",
                        "Every measure and slice", "a.run: 15 judged of 15 rankings",
                        "b&lt;.run: 15 judged of 15 rankings"]
    (verdict,) = re.findall(r'<p class="verdict (\w+)">(.*?)</p>', compared)
    assert verdict == ("fail", "The gate fails: b&lt;.run regresses against a.run on nDCG@10 on "
                       "all (Δ -0.2214, p 0.034); nDCG@10 on stratum=head (Δ -0.3691, "
                       "p &lt; 0.001).")
    assert compared.index('class="verdict fail"') < compared.index("<h2>")


def test_the_gates_intervals_mark_the_regressing_slices(compared: str) -> None:
    # nDCG@10 of tent in B: 3 / log2(3) over an ideal of 3 = 0.6309
    points = re.findall(r'<circle[^>]*fill="([^"]+)"><title>([^<]*)</title>', compared)
    assert points == [
        ("#c0392b", "all: Δ -0.2214, 95 % interval [-0.3691, -0.0527]"),
        ("#c0392b", "stratum=head: Δ -0.3691, 95 % interval [-0.3691, -0.3691]"),
        ("#2c3e50", "stratum=tail: Δ +0.3691, 95 % interval [+0.3691, +0.3691]")]


def test_at_most_top_queries_each_way_filterable_by_stratum(compared: str) -> None:
    (queries,) = re.findall(r'<table class="sortable" id="queries">.*?</table>', compared)
    assert queries.count('data-stratum="head"') == 5  # the top 5 of 12 worse
    assert queries.count('data-stratum="tail"') == 3  # all 3 better
    assert ('<td class="n" data-v="0.6309297535714574">0.6309</td>'
            '<td class="n" data-v="-0.3690702464285426">-0.3691</td>'
            "<td>same documents, new order</td>") in queries
    assert ('<select class="stratum-filter" data-target="#queries"><option value="">all'
            '</option><option value="head">head</option><option value="tail">tail</option>'
            "</select>") in compared
    assert "<script>" in compared  # sorting and the filter


def test_one_run_is_its_measures_alone() -> None:
    page = report.page(_evaluated([A]), NAMES[:1], top=5)
    assert re.findall(r"<h[12]>(.*?)</h[12]>", page) == [
        "Offline evaluation", "nDCG@10 per stratum", "a.run: 15 judged of 15 rankings"]
    assert 'class="verdict' not in page and "<script>" not in page
