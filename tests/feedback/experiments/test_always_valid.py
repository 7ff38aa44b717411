"""`experiments --metrics` prints the always-valid intervals the dashboards show (the recording
rules' *_always_valid_*_sum), computed from the same exposition."""

from __future__ import annotations

import json
import zlib

import pytest

from collector.replay import exposition
from collector.series.confidence_sequence import always_valid, always_valid_difference
from collector.series.experiment_stats import Estimate
from searchpulse import main
from tests.feedback.experiments.test_verdicts import CLIENTS, _records

CTR = "clicked_searches_per_tracked_searches_with_results"


def _by_hand(variant: str) -> tuple[float, float]:
    """CTR and its clustered variance from the clients' searches grouped by their hashed
    bucket, as the exposition (and the live rules) cluster them."""
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


def test_the_command_prints_the_dashboards_always_valid_intervals(engine, tmp_path, capsys):
    scrape = tmp_path / "metrics.txt"
    scrape.write_bytes(exposition(engine(_records())))
    assert main(["experiments", "--metrics", str(scrape), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["always_valid"]["applications"]["web"][CTR]
    (control, control_var), (treatment, treatment_var) = map(_by_hand, ("control", "treatment"))
    mine = always_valid(Estimate(control, control_var, 0, 0), 10)  # 10 searches with results
    assert shown["control"] == pytest.approx({"value": 0.4, "low": mine.low, "high": mine.high})
    diff = always_valid_difference(Estimate(treatment, treatment_var, 0, 0), mine, 8, 10)
    assert shown["treatment"]["difference"] == pytest.approx(
        {"value": 0.475, "low": diff.low, "high": diff.high})
    # 18 searches say nothing at any look: z(10) = 85.5 standard errors, cut to the range
    assert (mine.low, mine.high, diff.low, diff.high) == (0.0, 1.0, -1.0, 1.0)
    assert main(["experiments", "--metrics", str(scrape)]) == 0
    out = capsys.readouterr().out
    assert "always-valid 95 % intervals (confidence sequence, normal mixture ρ = 12,177" in out
    assert "    treatment     87.50% [0.00%, 100.00%]" in out
    assert "Δ +47.50 [-100.00, +100.00] pts" in out


def test_a_report_from_logs_has_no_always_valid_section(engine, tmp_path, capsys):
    """A log's report is read once, at its end: the fixed-horizon intervals are the valid ones."""
    log = tmp_path / "ubi.jsonl"
    log.write_bytes(b"\n".join(_records()) + b"\n")
    assert main(["experiments", str(log), "--json"]) == 0
    assert "always_valid" not in json.loads(capsys.readouterr().out)
