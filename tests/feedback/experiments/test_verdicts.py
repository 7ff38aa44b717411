"""`searchpulse experiments`: exact values on hand-built experiments (each number against a
direct computation from the clients' own searches) and the command's outputs and exit codes.
The verdict rules, power and the sample-ratio p-value alone are tested with their module
(tests/collector/series/test_experiment_stats.py)."""

from __future__ import annotations

import json
import math
import re
import zlib

import pytest
from scipy import stats

from collector.config import load_config
from collector.engine import Engine
from collector.errors import ExperimentError
from collector.series.experiment_stats import t_quantile
from feedback.experiments.report import page
from feedback.experiments.verdicts import from_exposition, verdicts
from searchpulse import main
from tests.collector.series.test_experiment_stats import DESIGN
from tests.collector.sessions.test_interleaving import tagged
from tests.conftest import UBI

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


def _replayed(records: list[bytes], by_client: bool = True, **settings):
    engine = Engine(load_config(environ={}, overrides=settings), by_client=by_client)
    engine.process_all(records)
    engine.close()
    return engine.view().experiments


@pytest.fixture
def report():
    return verdicts(_replayed(_records()), DESIGN, by_client=True)


def _cluster_robust(variant: str) -> tuple[float, float]:
    """The mean of the variant's per-search clicks and statsmodels' cluster-robust (CR1)
    variance of it by client, from the searches themselves (statsmodels is not installed: its
    formula, OLS on a constant: G/(G−1) · (N−1)/(N−K) · Σ_g (Σ_{i∈g} u_i)² / N², K = 1)."""
    searches = [(client, clicked) for client, (v, clicks) in CLIENTS.items() if v == variant
                for clicked in clicks]
    mean = sum(c for _, c in searches) / len(searches)
    clients = {client for client, _ in searches}
    score = {client: sum(c - mean for g, c in searches if g == client) for client in clients}
    g, n = len(clients), len(searches)
    return mean, g / (g - 1) * (n - 1) / (n - 1) * sum(u * u for u in score.values()) / n ** 2


def _wilson(rate: float, n: float, t: float) -> tuple[float, float]:
    centre = (rate + t * t / (2 * n)) / (1 + t * t / n)
    half = t / (1 + t * t / n) * math.sqrt(rate * (1 - rate) / n + t * t / (4 * n * n))
    return centre - half, centre + half


def test_rates_intervals_and_differences_by_hand(report):
    web = report["applications"]["web"]["variants"]
    assert report["applications"]["web"]["control"] == {"variant": "control",
                                                         "chosen": "configured"}
    assert list(web) == ["control", "treatment"]
    assert (web["control"]["units"], web["control"]["searches"]) == (4, 10)
    assert (web["treatment"]["units"], web["treatment"]["searches"]) == (4, 8)
    assert (web["control"]["searches_without_client_id"],
            web["treatment"]["searches_without_client_id"]) == (0, 1)
    # clustered by client exactly: G = 4 clients each, t for 3 degrees of freedom
    t = t_quantile(3)
    assert t == pytest.approx(3.182446305284263)
    control, treatment = _cluster_robust("control"), _cluster_robust("treatment")
    # by hand: residuals 1.4, −0.4, 0.2, −1.2 → 4/3 · 3.6 / 10²; 0.25, 0.375, −0.75, 0.125
    assert control == pytest.approx((0.4, 0.048))
    assert treatment == pytest.approx((7 / 8, 4 / 3 * 0.78125 / 64))
    ctr_name = "clicked_searches_per_tracked_searches_with_results"
    for variant, (rate, variance) in (("control", control), ("treatment", treatment)):
        ctr = web[variant]["rates"][ctr_name]
        assert ctr["clusters"] == 4
        assert (ctr["value"], ctr["stderr"] ** 2) == pytest.approx((rate, variance))
        # Wilson at n_eff = R(1 − R)/Var: the control's n_eff is exactly 5
        low, high = _wilson(rate, rate * (1 - rate) / variance, t)
        assert (ctr["low"], ctr["high"]) == pytest.approx((low, high))
        assert 0 <= ctr["low"] < rate < ctr["high"] <= 1
    assert web["control"]["rates"][ctr_name]["low"] == pytest.approx(0.060551, abs=1e-6)
    rates = web["treatment"]["rates"]
    diff = rates[ctr_name]["difference"]
    stderr = math.sqrt(control[1] + treatment[1])
    assert diff["value"] == pytest.approx(7 / 8 - 0.4)
    assert (diff["low"], diff["high"]) == pytest.approx((0.475 - t * stderr,
                                                         0.475 + t * stderr))
    assert diff["p_value"] == pytest.approx(2 * stats.t.sf(0.475 / stderr, 3))
    assert diff["p_value"] == pytest.approx(0.15770, abs=1e-5)
    assert diff["verdict"] == "inconclusive" and diff["p_holm"] >= diff["p_value"]
    assert diff["power"] == pytest.approx(stats.norm.cdf(0.475 / stderr - t)
                                          + stats.norm.cdf(-0.475 / stderr - t))
    relative = rates[ctr_name]["ratio"]
    log_se = math.sqrt(control[1] / 0.4 ** 2 + treatment[1] / (7 / 8) ** 2)
    assert (relative["value"], relative["low"], relative["high"]) == pytest.approx(
        (7 / 8 / 0.4, 7 / 8 / 0.4 * math.exp(-t * log_se), 7 / 8 / 0.4 * math.exp(t * log_se)))
    assert relative["p_value"] == pytest.approx(
        2 * stats.t.sf(math.log(7 / 8 / 0.4) / log_se, 3))
    # every search has results: the zero-result rate is 0 of 8, its interval Wilson's at
    # n = 8 searches (design effect 1): [0, t² / (8 + t²)], not [0, 0]
    zero = web["treatment"]["rates"]["zero_result_searches_per_searches"]
    assert (zero["value"], zero["low"]) == (0.0, 0.0)
    assert zero["high"] == pytest.approx(t * t / (8 + t * t))
    assert "ratio" not in zero  # a ratio of zeros
    assert web["treatment"]["rates"]["slow_searches_per_timed_searches"]["value"] is None
    srm = report["applications"]["web"]["sample_ratio"]
    assert (srm["chi2"], srm["df"], srm["p_value"], srm["units"], srm["mismatch"]) == \
        (0.0, 1, 1.0, 8, False)
    # Holm over every difference of the report: 5 rates with data in both variants
    assert report["design"]["multiplicity"] == {"method": "holm", "comparisons": 5}
    assert report["design"]["clusters"] == "client"


def _hashed_report(engine) -> dict:
    return verdicts(engine(_records()).view().experiments, DESIGN)


def test_the_hashed_buckets_of_a_collector_keep_their_definition(engine):
    """The live path (and --metrics) keeps the 32 hashed buckets: G = 32, t for 31 df."""
    web = _hashed_report(engine)["applications"]["web"]["variants"]
    buckets: dict[int, list[int]] = {}
    for client, (v, clicks) in CLIENTS.items():
        if v == "control":
            y_n = buckets.setdefault(zlib.crc32(client.encode()) % 32, [0, 0])
            y_n[0] += sum(clicks)
            y_n[1] += len(clicks)
    variance = 32 / 31 * sum((y - 0.4 * n) ** 2 for y, n in buckets.values()) / 10 ** 2
    ctr = web["control"]["rates"]["clicked_searches_per_tracked_searches_with_results"]
    assert ctr["clusters"] == 32 and ctr["stderr"] ** 2 == pytest.approx(variance)


def test_the_report_reads_an_exposition_like_the_engine(engine):
    from collector.replay import exposition

    text = exposition(engine(_records())).decode()
    assert verdicts(from_exposition(text, 32), DESIGN) == _hashed_report(engine)


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
    assert "clustered by client exactly (one cluster per client)" in out
    assert "web: control: control\n  sample ratio chi² 0.00 (1 df), p = 1 over 8 units" in out
    assert "treatment     87.50% [" in out
    assert "p = 0.158 (Holm 0.788)  inconclusive  ×2.188 [" in out


def test_the_command_exit_codes(tmp_path, capsys):
    assert main(["experiments", str(tmp_path / "missing.jsonl")]) == 3
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(UBI().query("q1", "tent", 0) + b"\n")
    assert main(["experiments", str(plain)]) == 3  # no experiment in it
    assert main(["experiments", str(plain), "--set", "experiments.split=a=0.7"]) == 2
    assert main(["experiments", str(plain), "--set", "experiments.split=a b=0.5,c=0.5"]) == 2


def _two_variants(control: str, other: str) -> list[bytes]:
    ubi, records = UBI(), []
    for i, variant in enumerate([control, other] * 3):
        records.append(ubi.query(f"q{i}", "tent", 400.0 * i, client=f"c{i}", variant=variant))
    return records


def test_a_conventional_control_is_taken_and_said(capsys, tmp_path):
    report = verdicts(_replayed(_two_variants("A", "B")), DESIGN, by_client=True)
    web = report["applications"]["web"]
    assert web["control"] == {"variant": "A", "chosen": "conventional"}
    assert "difference" in web["variants"]["B"]["rates"]["zero_result_searches_per_searches"]
    log = tmp_path / "ab.jsonl"
    log.write_bytes(b"\n".join(_two_variants("baseline", "new")) + b"\n")
    assert main(["experiments", str(log)]) == 0
    assert ("web: control: baseline (the one conventional control name among the variants; "
            "'control' is not one)") in capsys.readouterr().out


@pytest.mark.parametrize("names", [("X", "Y"), ("A", "a")])
def test_a_control_that_matches_no_variant_is_an_error_naming_them(names, tmp_path, caplog):
    with pytest.raises(ExperimentError, match=f"not among the variants seen: {names[0]}, "
                                              f"{names[1]}"):
        verdicts(_replayed(_two_variants(*names)), DESIGN, by_client=True)
    log = tmp_path / "xy.jsonl"
    log.write_bytes(b"\n".join(_two_variants(*names)) + b"\n")
    assert main(["experiments", str(log)]) == 3
    assert "web: the control variant 'control' (experiments.control_variant)" in caplog.text
    assert main(["experiments", str(log), "--set",
                 f"experiments.control_variant={names[1]}"]) == 0


def test_a_variant_named_in_another_script_is_a_variant():
    # 緑 has no label-safe character: it was scrubbed to none, the treatment vanished silently
    report = verdicts(_replayed(_two_variants("control", "緑")), DESIGN, by_client=True)
    web = report["applications"]["web"]["variants"]
    assert list(web) == ["control", "xe7b791"]
    assert "difference" in web["xe7b791"]["rates"]["zero_result_searches_per_searches"]
    with pytest.raises(ExperimentError, match="variants seen: xe7b791, xe99d92"):
        verdicts(_replayed(_two_variants("青", "緑")), DESIGN, by_client=True)


def test_a_control_with_nothing_to_compare_is_said_and_alone_is_an_error(tmp_path, caplog):
    # a producer's own "other" is the label cap's overflow: never compared
    log = tmp_path / "other.jsonl"
    log.write_bytes(b"\n".join(_two_variants("control", "other")) + b"\n")
    assert main(["experiments", str(log)]) == 3
    assert "web: only the control variant 'control' has searches" in caplog.text
    assert "no application has a variant to compare with its control" in caplog.text


# client → its interleaved searches, each the teams of its clicks: A's score per client y =
# wins + ties / 2 of n contests: (2, 2), (0, 1), (1.5, 2), (1, 1)
INTERLEAVED = {"i1": [["A"], ["A", "A"]], "i2": [["B"]], "i3": [["A"], ["A", "B"]],
               "i4": [["A", "A", "B"]]}


def _interleaved() -> list[bytes]:
    ubi, records, at = UBI(), [], 0.0
    for client, searches in INTERLEAVED.items():
        for i, teams in enumerate(searches):
            qid = f"{client}-{i}"
            records.append(ubi.query(qid, f"tent {client}", at, client=client))
            records += [tagged(ubi, qid, at + 1 + k, team, obj=f"d{k + 1}", client=client)
                        for k, team in enumerate(teams)]
            at += 400
    return records


def test_an_interleaved_log_without_variants_has_its_delta(tmp_path, capsys):
    report = verdicts(_replayed(_interleaved()), DESIGN, by_client=True)
    web = report["applications"]["web"]
    assert (web["control"], web["variants"], web["sample_ratio"]) == (None, {}, None)
    inter = web["interleaving"]["none"]
    assert (inter["wins"], inter["ties"], inter["clusters"]) == ({"A": 4, "B": 1}, 1, 4)
    share, variance = 4.5 / 6, 4 / 3 * (0.5 ** 2 + 0.75 ** 2 + 0 + 0.25 ** 2) / 6 ** 2
    n = share * (1 - share) / variance
    t = t_quantile(3)
    low, high = _wilson(share, n, t)
    delta = inter["delta"]["A"]
    assert (delta["value"], delta["low"], delta["high"]) == pytest.approx(
        (0.25, low - 0.5, high - 0.5))
    # the score test of a share of ½ the Wilson interval inverts
    assert delta["p_value"] == pytest.approx(2 * stats.t.sf(0.25 / (0.5 / math.sqrt(n)), 3))
    assert (delta["low"] > 0) == (delta["p_value"] < 0.05)
    log = tmp_path / "interleaved.jsonl"
    log.write_bytes(b"\n".join(_interleaved()) + b"\n")
    assert main(["experiments", str(log)]) == 0
    out = capsys.readouterr().out
    assert "web: no variant: interleaving only" in out
    assert "interleaving (none): wins A 4, B 1, ties 1" in out


def test_holm_adjusts_the_family_and_the_verdict_reads_it():
    from feedback.experiments.intervals import holm

    # sorted 0.01 · 3, 0.03 · 2, 0.04 · 1 → 0.03, 0.06, max(0.06, 0.04)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


def test_the_forest_plot_puts_better_to_the_right(tmp_path):
    ubi, records, at = UBI(), [], 0.0
    for i in range(40):  # treatment: every search clicked; control: none — CTR up, abandonment down
        variant = ("control", "treatment")[i % 2]
        records.append(ubi.query(f"q{i}", f"tent {i}", at, client=f"c{i}", variant=variant))
        if variant == "treatment":
            records.append(ubi.click(f"q{i}", at + 2, client=f"c{i}"))
        at += 400
    report = verdicts(_replayed(records), DESIGN, by_client=True)
    rates = report["applications"]["web"]["variants"]["treatment"]["rates"]
    assert rates["abandoned_searches_per_tracked_searches_with_results"]["difference"][
        "verdict"] == "better"
    html = page(report)
    assert "better →" in html and "oriented so that better is to the right" in html
    # abandonment fell: drawn as −Δ, to the right of 0, in green
    found = re.search(r'<circle cx="([\d.]+)"[^>]*fill="#1e8449"><title>abandonment rate '
                      r"\(treatment, lower is better: −Δ\): Δ \+1\.0000", html)
    zero = re.search(r'<line x1="([\d.]+)" y1="10"', html)
    assert found and zero and float(found.group(1)) > float(zero.group(1))
