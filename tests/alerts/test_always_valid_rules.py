"""The always-valid recording rules compute the Python functions' numbers: the promtool case of
alerts/tests/experiments-always-valid.test.yml (which promtool checks against the rules) holds
exactly what collector/series/confidence_sequence.py gives on its input series."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from collector.series.confidence_sequence import always_valid, always_valid_difference
from collector.series.experiment_stats import clustered_ratio

CASE = Path(__file__).parents[2] / "alerts" / "tests" / "experiments-always-valid.test.yml"
_SERIES = re.compile(r"searchpulse_experiment_(\w+)_total\{.*variant=\"(\w+)\","
                     r"unit_bucket=\"(\d+)\"\}")
_RECORDED = re.compile(r":(\w+)\{application=\"seq\",variant=\"(\w+)\"\}")


def test_the_promtool_case_holds_the_python_functions_numbers():
    test = yaml.safe_load(CASE.read_text())["tests"][0]
    counts: dict[tuple[str, int], dict[str, float]] = {}
    for series in test["input_series"]:
        metric, variant, bucket = _SERIES.fullmatch(series["series"]).groups()
        counts.setdefault((variant, int(bucket)), {})[metric] = float(
            series["values"].split("x")[0])  # constant series: VALUExN
    pairs = {variant: [(c["clicked_searches"], c["searches"] - c["zero_result_searches"])
                       for (v, _), c in sorted(counts.items()) if v == variant]
             for variant, _ in counts}
    estimates = {v: clustered_ratio(p, 32, 2.0) for v, p in pairs.items()}
    totals = {v: sum(n for _, n in p) for v, p in pairs.items()}
    rates = {v: always_valid(estimates[v], totals[v]) for v in estimates}
    diff = always_valid_difference(estimates["treatment"], estimates["control"],
                                   totals["treatment"], totals["control"])
    expected = {**{(kind, v): getattr(rates[v], field) for v in rates
                   for kind, field in (("ratio_sum", "value"), ("always_valid_low_sum", "low"),
                                       ("always_valid_high_sum", "high"))},
                **{(kind, "treatment"): getattr(diff, field)
                   for kind, field in (("difference_sum", "value"),
                                       ("difference_always_valid_low_sum", "low"),
                                       ("difference_always_valid_high_sum", "high"))}}
    found = {_RECORDED.search(sample["labels"]).groups(): sample["value"]
             for check in test["promql_expr_test"] for sample in check["exp_samples"]}
    assert found.keys() == expected.keys()
    assert found == pytest.approx(expected, rel=1e-15)
    # the hand-computed control of the file's comment: 0.28 ± 3.07866 · √(2.9729e-4)
    assert found["always_valid_low_sum", "control"] == pytest.approx(
        0.28 - 3.0786625 * 0.0172421, abs=1e-6)
