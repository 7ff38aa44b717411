"""alerts/rules/recordings.py: recording rules are named for what they record and one name never
stands for two expressions, since every alert and dashboard panel reads the recorded series by
name."""

from __future__ import annotations

import pytest

from alerts.config import load_profile


def test_all_searches_are_recorded_as_a_sum_wherever_a_difference_is():
    """Count.total (all searches = searches + automated searches) at every level a count is
    recorded, as Count.difference (searches with results) is."""
    from alerts.rules import Recordings

    rec = Recordings(load_profile(environ={}))
    assert rec.count("application", "all_searches", "5m") == \
        "application:searchpulse_all_searches:rate5m"
    assert rec.rules["application:searchpulse_all_searches:rate5m"]["expr"] == (
        "application:searchpulse_searches:rate5m + "
        "application:searchpulse_automated_searches:rate5m")
    assert rec.rules["application:searchpulse_automated_searches:rate5m"]["expr"] == (
        "sum by (application) "
        '(rate(searchpulse_automated_searches_total{job="searchpulse"}[5m]))')
    variant = rec.variant_count("all_searches", "1h")
    assert rec.rules[variant]["expr"] == ("application_variant:searchpulse_searches:increase1h + "
                                          "application_variant:searchpulse_automated_searches:"
                                          "increase1h")
    with_results = rec.variant_count("searches_with_results", "1h")
    assert " - " in rec.rules[with_results]["expr"]


def test_one_recorded_name_never_stands_for_two_expressions():
    """A baseline asked for with other offsets under a name already recorded is refused, not
    silently given the first one's offsets."""
    from alerts.rules import Recordings

    rec = Recordings(load_profile(environ={}))
    ratio = rec.ratio("application", "clicked_searches_per_tracked_searches_with_results", "6h")
    rec.baseline(ratio)
    assert rec.baseline(ratio) == ratio + "_baseline"  # the same rule again: one rule
    with pytest.raises(ValueError, match="ratio_rate6h_baseline"):
        rec.baseline(ratio, ("1d", "1w"))
