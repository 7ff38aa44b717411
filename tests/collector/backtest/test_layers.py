"""Recording rules in layers: each reads only raw series and the layers below it."""

from __future__ import annotations

import pytest
import yaml

from alerts.build import GENERATED
from collector.backtest.layers import layers, names_read


def rule(record: str, expr: str) -> dict:
    return {"record": record, "expr": expr}


def test_a_rule_comes_after_the_rules_it_reads():
    a = rule("app:a:rate5m", 'sum by (app) (rate(a_total{job="x"}[5m]))')
    b = rule("app:b:rate5m", "sum by (app) (rate(b_total[5m]))")
    ratio = rule("app:a_per_b:ratio", "app:a:rate5m / app:b:rate5m")
    baseline = rule("app:a_per_b:baseline", 'quantile(0.5, app:a_per_b:ratio offset 1d) '
                                            'or label_replace(app:a:rate5m, "x", "1d", "", "")')
    assert [[r["record"] for r in layer] for layer in layers([baseline, ratio, a, b])] == [
        ["app:a:rate5m", "app:b:rate5m"], ["app:a_per_b:ratio"], ["app:a_per_b:baseline"]]


def test_quoted_strings_are_not_names():
    assert names_read('label_replace(x, "app:a:rate5m", "v", "", "")') == {
        "label_replace", "x"}


def test_a_cycle_is_named():
    with pytest.raises(ValueError, match=r"in a cycle: \['a:x', 'b:x'\]"):
        layers([rule("a:x", "b:x"), rule("b:x", "a:x"), rule("c:x", "raw")])


def test_the_generated_rules_layer_in_six():
    groups = yaml.safe_load((GENERATED / "searchpulse-rules.yml").read_text())["groups"]
    recording = [r for g in groups for r in g["rules"] if "record" in r]
    found = layers(recording)
    assert [len(layer) for layer in found] == [54, 40, 24, 25, 27, 12]
    below: set[str] = set()
    recorded = {r["record"] for r in recording}
    for layer in found:
        for r in layer:
            assert names_read(r["expr"]) & recorded <= below
        below |= {r["record"] for r in layer}


def test_the_scrapes_hold_the_families_the_rules_read():
    from collector.backtest.run import families_read

    groups = {"groups": [{"rules": [
        rule("a:x", 'sum(rate(searchpulse_searches_total{job="x"}[5m]))'),
        {"alert": "Slow", "expr": "histogram_quantile(0.99, rate(lat_seconds_bucket[5m])) > 1"},
    ]}]}
    found = families_read(groups)
    assert {"searchpulse_searches_total", "lat_seconds", "lat_seconds_bucket"} <= found
    assert "searchpulse_clicks_total" not in found
