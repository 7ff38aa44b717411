"""`searchpulse experiments`: exact values on hand-built experiments (each number against a
direct computation from the clients' own searches), the verdict rules, power, the
sample-ratio p-value against scipy's χ² distribution, and the command's outputs and exit
codes."""

from __future__ import annotations

import json
import math
import zlib

import pytest
from scipy import stats

from collector.cli import main
from collector.config import load_config
from collector.series.experiment_stats import (
    RATES,
    Estimate,
    ExperimentDesign,
    power,
    sample_ratio,
    still_needed,
    t_quantile,
    verdict,
)
from feedback.experiments.verdicts import from_exposition, verdicts
from tests.conftest import UBI

DESIGN = ExperimentDesign.from_config(load_config(environ={}))  # the default settings'


# client → (variant, [clicked?] per search): CTR per client differs (clustered behaviour)
CLIENTS = {"c1": ("control", [1, 1, 1, 0]), "c2": ("control", [0]),
           "c3": ("control", [1, 0]), "c4": ("control", [0, 0, 0]),
           "c5": ("treatment", [1, 1]), "c6": ("treatment", [1, 1, 1]),
           "c7": ("treatment", [0, 1]), "c8": ("treatment", [1])}


def _records() -> list[bytes]:
    ubi, records, at = UBI(), [], 0.0
    for client, (variant, clicks) in CLIENTS.items():
        for i, clicked in enumerate(clicks):
            qid = f"{client}-{i}"
            # 400 s apart: never a reformulation; the same query text so never a new query
            records.append(ubi.query(qid, f"tent {client}", at, client=client, variant=variant))
            if clicked:
                records.append(ubi.click(qid, at + 2, client=client))
            at += 400
    # a clicked treatment search without a client_id: no unit, so in no number below but its
    # own count (docs/metrics.md, "Unit")
    anonymous = json.loads(ubi.query("anonymous", "tent", at, variant="treatment",
                                     session_id="s-anonymous"))
    del anonymous["client_id"]
    records += [json.dumps(anonymous).encode(), ubi.click("anonymous", at + 2,
                                                            client="s-anonymous")]
    return records


@pytest.fixture
def report(engine):
    e = engine(_records())
    return verdicts(e.view().experiments, DESIGN)


def _by_hand(variant: str) -> tuple[float, float]:
    """CTR and its clustered variance from the clients' searches, grouped by their bucket."""
    buckets: dict[int, list[int]] = {}
    for client, (v, clicks) in CLIENTS.items():
        if v == variant:
            y_n = buckets.setdefault(zlib.crc32(client.encode()) % 32, [0, 0])
            y_n[0] += sum(clicks)
            y_n[1] += len(clicks)
    total_y = sum(y for y, _ in buckets.values())
    total_n = sum(n for _, n in buckets.values())
    rate = total_y / total_n
    variance = 32 / 31 * sum((y - rate * n) ** 2 for y, n in buckets.values()) / total_n ** 2
    return rate, variance


def test_rates_intervals_and_differences_by_hand(report):
    web = report["applications"]["web"]["variants"]
    assert list(web) == ["control", "treatment"]
    assert (web["control"]["units"], web["control"]["searches"]) == (4, 10)
    assert (web["treatment"]["units"], web["treatment"]["searches"]) == (4, 8)
    assert (web["control"]["searches_without_client_id"],
            web["treatment"]["searches_without_client_id"]) == (0, 1)
    t = t_quantile(31)
    control, treatment = _by_hand("control"), _by_hand("treatment")
    assert control[0] == 0.4 and treatment[0] == 7 / 8
    for variant, (rate, variance) in (("control", control), ("treatment", treatment)):
        ctr = web[variant]["rates"]["clicked_searches_per_tracked_searches_with_results"]
        assert ctr["value"] == pytest.approx(rate)
        assert ctr["high"] - ctr["value"] == pytest.approx(t * math.sqrt(variance))
    rates = web["treatment"]["rates"]
    diff = rates["clicked_searches_per_tracked_searches_with_results"]["difference"]
    assert diff["value"] == pytest.approx(7 / 8 - 0.4)
    half = t * math.sqrt(control[1] + treatment[1])
    assert (diff["low"], diff["high"]) == pytest.approx((0.475 - half, 0.475 + half))
    assert diff["verdict"] == ("better" if diff["low"] > 0 else "inconclusive")
    assert diff["power"] == pytest.approx(stats.norm.cdf(0.475 / (half / t) - t)
                                          + stats.norm.cdf(-0.475 / (half / t) - t))
    # every search has results and none was reformulated: those rates are exact zeros
    zero = web["treatment"]["rates"]["zero_result_searches_per_searches"]
    assert (zero["value"], zero["low"], zero["high"]) == (0.0, 0.0, 0.0)
    assert web["treatment"]["rates"]["slow_searches_per_timed_searches"]["value"] is None
    srm = report["applications"]["web"]["sample_ratio"]
    assert (srm["chi2"], srm["df"], srm["p_value"], srm["units"], srm["mismatch"]) == \
        (0.0, 1, 1.0, 8, False)


def test_the_report_reads_an_exposition_like_the_engine(engine, report):
    from collector.replay import exposition

    text = exposition(engine(_records())).decode()
    assert verdicts(from_exposition(text, 32), DESIGN) == report


@pytest.mark.parametrize(("low", "high", "higher_is_better", "expected"), [
    (0.01, 0.03, True, "better"), (0.01, 0.03, False, "worse"),
    (-0.03, -0.01, True, "worse"), (-0.03, -0.01, False, "better"),
    (-0.01, 0.01, True, "inconclusive")])
def test_verdicts_read_the_difference_interval(low, high, higher_is_better, expected):
    rate = next(r for r in RATES if r.higher_is_better == higher_is_better and not r.guardrail)
    diff = Estimate((low + high) / 2, 1e-4, low, high)
    assert verdict(rate, diff, 10_000, DESIGN) == expected


def test_a_guardrail_is_breached_only_beyond_its_margin_with_enough_searches():
    zero = next(r for r in RATES if r.guardrail == "guardrail_zero_result_margin")
    design = DESIGN
    assert verdict(zero, Estimate(0.03, 1e-5, 0.011, 0.05), 1000, design) == \
        "guardrail breached"
    assert verdict(zero, Estimate(0.03, 1e-5, 0.011, 0.05), 999, design) == "worse"
    assert verdict(zero, Estimate(0.02, 1e-5, 0.009, 0.03), 5000, design) == "worse"


def test_sample_ratio_against_scipy():
    chi2, df, p = sample_ratio({"control": 720, "treatment": 480}, {})
    assert (chi2, df) == (48.0, 1)
    assert p == pytest.approx(stats.chi2.sf(48.0, 1))
    designed = sample_ratio({"control": 400, "treatment": 400, "interleaved": 400, "x": 9},
                            {"control": 0.5, "treatment": 0.25, "interleaved": 0.25})
    assert designed[:2] == (pytest.approx(400 / 3), 2)
    assert designed[2] == pytest.approx(stats.chi2.sf(400 / 3, 2))
    assert sample_ratio({"control": 10}, {}) is None


def test_power_and_traffic_needed():
    t = t_quantile(31)
    z = stats.norm.ppf(0.8)
    # at the stderr that gives exactly 80 %, nothing more is needed
    stderr = 0.02 / (t + z)
    assert still_needed(10_000, 0.02, stderr, t) == 0
    assert power(0.02, stderr, t) == pytest.approx(0.8, abs=1e-4)
    # twice the stderr: four times the traffic, three times more than now
    assert still_needed(10_000, 0.02, 2 * stderr, t) == 30_000
    assert still_needed(10_000, 0.0, stderr, t) is None


def test_the_command_prints_text_json_and_html(engine, tmp_path, capsys):
    log = tmp_path / "ubi.jsonl"
    log.write_bytes(b"\n".join(_records()) + b"\n")
    assert main(["experiments", str(log), "--json", "--html", str(tmp_path / "r.html")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["applications"]["web"]["variants"]["treatment"]["units"] == 4
    html = (tmp_path / "r.html").read_text()
    assert "<h2>web</h2>" in html and "Experiment verdicts" in html
    assert main(["experiments", str(log)]) == 0
    out = capsys.readouterr().out
    assert "web: sample ratio chi² 0.00 (1 df), p = 1 over 8 units" in out
    assert "treatment     87.50% [" in out


def test_the_command_exit_codes(tmp_path, capsys):
    assert main(["experiments", str(tmp_path / "missing.jsonl")]) == 3
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(UBI().query("q1", "tent", 0) + b"\n")
    assert main(["experiments", str(plain)]) == 3  # no experiment in it
    assert main(["experiments", str(plain), "--set", "experiments.split=a=0.7"]) == 2
    assert main(["experiments", str(plain), "--set", "experiments.split=a b=0.5,c=0.5"]) == 2
