"""collector/series/quality.py: quality series merge by their labels without changing their
inputs, survive a checkpoint's round trip (and one written before a count existed), reset in
place, carry a latency bucket at the guardrail, and the series table caps its labels, gives
each experiment variant its units and refuses experiments beyond its limit, since every
exposed quality number is summed from these series."""

from __future__ import annotations

import json

from collector.outcomes import AUTOMATED_REASONS, REFORMULATION_KINDS
from collector.series.quality import (
    KNOWN_ITEM,
    STRATA,
    TAIL,
    QualitySeries,
    SeriesTable,
    latency_buckets,
    merge_series,
    reset_series,
    series_from_dict,
    series_to_dict,
)

BOUNDS = latency_buckets(0.5)
REFORMULATION, REASON = REFORMULATION_KINDS[0], AUTOMATED_REASONS[0]


def _series(searches: int, clicks: int, latency: float, team: str | None = None,
            application: str = "web") -> QualitySeries:
    series = QualitySeries(application, "head", "none", BOUNDS)
    series.searches, series.clicks, series.debiased_clicks = searches, clicks, clicks * 1.5
    series.reformulated[REFORMULATION] = searches // 2
    series.automated[REASON] = 1
    series.latency.observe(latency)
    if team is not None:
        series.interleaving_wins = {team: 1}
    return series


def test_the_latency_buckets_have_a_boundary_at_the_guardrail() -> None:
    assert latency_buckets(0.5) == (0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0)
    assert latency_buckets(1.0) == (0.025, 0.05, 0.1, 0.2, 0.3, 0.75, 1.0, 2.0, 5.0, 10.0)


def test_series_of_the_same_labels_are_summed_into_new_ones() -> None:
    first, second = _series(4, 2, 0.04, "a"), _series(6, 1, 3.0, "b")
    other = _series(1, 0, 0.2, application="mobile")
    web, mobile = merge_series([first, second, other])
    assert (web.application, web.searches, web.clicks, web.debiased_clicks) == ("web", 10, 3, 4.5)
    assert web.reformulated[REFORMULATION] == 5 and web.automated[REASON] == 2
    assert web.interleaving_wins == {"a": 1, "b": 1}
    assert web.latency.count == 2 and web.latency.sum == 3.04
    assert web.latency.counts[BOUNDS.index(0.05)] == 1  # 0.04 s: the bucket up to 0.05
    assert web.latency.counts[BOUNDS.index(5.0)] == 1
    assert (mobile.application, mobile.searches, mobile.interleaving_wins) == ("mobile", 1, None)
    assert (first.searches, first.interleaving_wins) == (4, {"a": 1})  # inputs unchanged
    assert web is not first


def test_a_series_round_trips_through_a_checkpoint() -> None:
    series = _series(7, 3, 0.3, "ranker-b")
    data = json.loads(json.dumps(series_to_dict(series)))  # what a checkpoint stores
    again = series_from_dict(data)
    assert series_to_dict(again) == series_to_dict(series)
    assert again.latency.bounds == BOUNDS


def test_a_checkpoint_from_before_a_count_existed_reads_it_as_zero() -> None:
    data = series_to_dict(_series(7, 3, 0.3))
    del data["untracked"], data["automated"]
    old = series_from_dict(data)
    assert old.untracked == 0 and old.automated == dict.fromkeys(AUTOMATED_REASONS, 0)
    assert old.searches == 7


def test_a_reset_zeroes_every_count_in_place() -> None:
    series = _series(7, 3, 0.3, "ranker-b")
    series.reciprocal_rank_sum = 2.5
    reset_series(series)
    assert series_to_dict(series) == series_to_dict(
        QualitySeries("web", "head", "none", BOUNDS)) | {"interleaving_wins": {"ranker-b": 0}}


def test_the_table_gives_each_label_pair_one_series_per_stratum() -> None:
    table = SeriesTable(application_cap=2, variant_cap=2, latency_guardrail_s=0.5)
    tail = table.get("web", None, TAIL)
    assert (tail.application, tail.stratum, tail.variant) == ("web", "tail", "none")
    assert table.get("web", None, TAIL) is tail
    assert [s.stratum for s in table.series] == list(STRATA)
    assert tail.experiment is None  # no variant: no experiment units
    assert table.get("web", "treatment", KNOWN_ITEM).experiment is not None
    assert table.get("shop", None, TAIL).application == "shop"
    assert table.get("kiosk", None, TAIL).application == "other"  # beyond the cap
    assert table.application.folded == 1


def test_experiments_beyond_the_limit_are_counted_not_given_units() -> None:
    table = SeriesTable(application_cap=5, variant_cap=5, latency_guardrail_s=0.5,
                        max_experiments=2)
    for variant in ("a", "b", "c"):
        table.get("web", variant, TAIL)
    assert [(e.application, e.variant) for e in table.experiments] == [("web", "a"),
                                                                       ("web", "b")]
    assert table.experiments_refused == 1
    assert table.get("web", "c", TAIL).experiment is None
