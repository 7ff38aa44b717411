from __future__ import annotations

import pytest

from collector.series.quality import HEAD, KNOWN_ITEM, TAIL, TORSO
from collector.series.strata import HeavyHitters, StrataClassifier, StrataError, load_strata_csv


@pytest.mark.parametrize("query", ["B07XLFYN6S", "wh-1000xm4", "K1234567-A12", "RTX4090",
                                   "978-3-16-148410-0", "ISBN 0-061-96436-0", "4006381333931"])
def test_known_item_patterns(query):
    classifier = StrataClassifier()
    assert classifier.stratum(classifier.text(query)) == KNOWN_ITEM


@pytest.mark.parametrize("query", ["running shoes", "ps5", "4k tv", "headphones", "mp3 player"])
def test_ordinary_queries_are_not_known_items(query):
    assert StrataClassifier().text(query).fixed_stratum != KNOWN_ITEM


def test_titles_and_extra_patterns():
    classifier = StrataClassifier(patterns=[r"order \d+"], titles=["the hobbit"])
    assert classifier.text("The Hobbit!").fixed_stratum == KNOWN_ITEM
    assert classifier.text("order 12").fixed_stratum == KNOWN_ITEM


def test_strata_csv_normalizes_and_unknown_queries_are_tail(tmp_path):
    path = tmp_path / "strata.csv"
    path.write_text("query,stratum\nRunning Shoes,head\ntent,torso\n")
    table = load_strata_csv(path)
    classifier = StrataClassifier(table=table)
    assert classifier.stratum(classifier.text("running shoes")) == HEAD
    assert classifier.stratum(classifier.text("TENT")) == TORSO
    assert classifier.stratum(classifier.text("never seen")) == TAIL


def test_strata_csv_errors_name_file_and_line(tmp_path):
    path = tmp_path / "strata.csv"
    path.write_text("query,stratum\nshoes,middle\n")
    with pytest.raises(StrataError, match=r"strata.csv:2: unknown stratum 'middle'"):
        load_strata_csv(path)
    path.write_text("q,s\n")
    with pytest.raises(StrataError, match="header"):
        load_strata_csv(path)


def test_heavy_hitters_split_traffic_by_cumulative_share():
    sketch = HeavyHitters(capacity=1000, head_share=0.5, torso_share=0.8)
    # 1000 searches: "a" 500 (50 %), "b" 300 (→ 80 %), 200 singletons.
    stream = ["a"] * 500 + ["b"] * 300 + [f"t{i}" for i in range(200)]
    for query in stream:
        sketch.observe(query)
    sketch._refresh_thresholds()
    assert sketch.observe("a") == HEAD
    assert sketch.observe("b") == TORSO
    assert sketch.observe("t1") == TAIL


def test_a_query_counted_once_is_tail_when_the_shares_never_reach_the_single_queries():
    # 100 searches: "a" 40, then 60 queries once each. By share alone, head would take the
    # first ten singletons too (40 + 10 = 50 %) and every query would be head: no tail at all.
    sketch = HeavyHitters(capacity=1000, head_share=0.5, torso_share=0.8)
    strata = [sketch.observe(q) for q in ["a"] * 40 + [f"s{i}" for i in range(60)]]
    assert set(strata[:99]) == {HEAD}  # before the first thresholds: all head
    assert strata[99] == TAIL  # the 100th search sets them
    assert (sketch.head_min, sketch.torso_min) == (2, 2)
    assert sketch.observe("s100") == TAIL  # counted once
    assert sketch.observe("s1") == HEAD  # counted twice: as frequent as any but "a"
    assert sketch.observe("a") == HEAD


def test_heavy_hitters_memory_is_bounded():
    sketch = HeavyHitters(capacity=50, head_share=0.5, torso_share=0.8)
    for i in range(10_000):
        sketch.observe(f"q{i}")
        assert len(sketch.counts) <= 2 * 50


def test_known_item_rules_are_linear_on_hostile_queries():
    import time

    classifier = StrataClassifier()
    for hostile in ("a1" * 500_000, "1-" * 500_000, "isbn " * 200_000):
        started = time.perf_counter()
        classifier.is_known_item(hostile)
        assert time.perf_counter() - started < 0.5
    with pytest.raises(Exception, match="linear-time"):
        from collector.config import load_config

        load_config(environ={}, overrides={"strata.known_item_patterns": "(?=a)b"})


def test_the_sku_rule_is_the_lookahead_pattern_it_replaces():
    """The SKU shape was a backtracking pattern with lookaheads; its str-operation form must
    decide every string the same way (200,000 random strings over the characters that
    matter)."""
    import random
    import re

    from collector.series.strata import is_sku

    reference = re.compile(
        r"(?=[a-z0-9._/-]{5,20}$)(?=[^ ]*\d)(?=[^ ]*[a-z])[a-z0-9]+(?:[-._/][a-z0-9]+)*")
    rng = random.Random(1)
    for _ in range(200_000):
        text = "".join(rng.choice("ab19-._/ x") for _ in range(rng.randint(0, 24)))
        assert is_sku(text) == (reference.fullmatch(text) is not None), text
