"""collector/judgments/measures.py: each measure scores the same whether asked alone or together
with another, since ir_measures can swap two measures of one family asked together."""

from __future__ import annotations


def test_ndcg_with_and_without_gains_together_each_as_alone():
    """ir_measures 0.4.3 can swap the two when asked together (collector/judgments/measures.py)."""
    from collector.judgments.measures import Ranked, defaults, parse, score

    rankings = [Ranked(["a", "b", "c"], {"a": 0, "b": 3, "c": 1}),
                Ranked(["c", "a"], {"a": 2, "c": 0, "d": 3})]
    exponential, linear = defaults(5, 3)[0], parse(["nDCG@5"], "test")[0]
    alone = {m: score([m], rankings, 3)[m] for m in (exponential, linear)}
    for together in ([exponential, linear], [linear, exponential]):
        assert score(together, rankings, 3) == alone
    assert alone[exponential] != alone[linear]
