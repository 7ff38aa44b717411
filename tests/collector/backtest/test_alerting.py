"""Alert states: ``for`` and ``keep_firing_for`` as Prometheus applies them, by hand and against
promtool's own rule evaluation of generated series read back through a real Prometheus."""

from __future__ import annotations

import random
import subprocess

import pytest
import yaml

from collector.backtest.alerting import firing
from collector.backtest.tools import find_tools
from collector.backtest.tsdb import Server, backfill_openmetrics

STEP = 15.0


def at(*flags: int) -> dict[float, float]:
    """A value of 1 at each step whose flag is 1 (absent elsewhere)."""
    return {i * STEP: 1.0 for i, flag in enumerate(flags) if flag}


def intervals(values: dict[float, float], steps: int, hold: float, keep: float) -> list:
    times = [i * STEP for i in range(steps)]
    return [(f.start, f.end) for f in firing(values, times, hold, keep)]


def test_for_holds_the_alert_pending_then_it_fires():
    assert intervals(at(1, 1, 1, 1, 0), 5, 30, 0) == [(30.0, 60.0)]


def test_pending_alerts_are_dropped_when_the_condition_goes():
    assert intervals(at(1, 1, 0, 1, 1, 1), 6, 30, 0) == [(75.0, None)]


def test_for_zero_fires_at_once_and_resolves_at_the_first_absence():
    assert intervals(at(0, 1, 0, 1), 4, 0, 0) == [(15.0, 30.0), (45.0, None)]


def test_keep_firing_for_bridges_gaps_shorter_than_it():
    # absent at 30 and 45: kept (0 s and 15 s < 30 s); present at 60 restarts its clock;
    # absent from 75: kept at 75 and 90, resolved at 105 (30 s after 75)
    assert intervals(at(1, 1, 0, 0, 1, 0, 0, 0, 0), 9, 0, 30) == [(0.0, 105.0)]


def test_a_pending_alert_is_never_kept():
    assert intervals(at(1, 0, 1, 1), 4, 15, 60) == [(45.0, None)]


def test_values_while_firing_are_kept_for_the_peak():
    values = {0.0: 2.0, 15.0: 5.0, 30.0: 3.0}
    (found,) = firing(values, [0.0, 15.0, 30.0, 45.0, 60.0], 15, 15)
    assert (found.start, found.end, found.values) == (15.0, 60.0, [5.0, 3.0])


# -- against promtool ------------------------------------------------------------------------

BASE = 1_767_600_000  # the TSDB's series start here; promtool's test series start at 0
RULE = {"alert": "Flapping", "expr": "flag > 0", "for": "1m", "keep_firing_for": "2m",
        "labels": {"severity": "critical"}}
STEPS = 120


def generated(seed: int) -> dict[str, list[int]]:
    """Per application a 0/1 series that flaps: runs of random length, so every path is taken
    (pending dropped, fired, kept through short gaps, resolved after long ones)."""
    rng = random.Random(seed)
    series = {}
    for app in ("a", "b", "c", "d"):
        flags: list[int] = []
        while len(flags) < STEPS:
            flags += [rng.random() < 0.5] * rng.choice((1, 2, 3, 5, 8, 12))
        series[app] = [int(f) for f in flags[:STEPS]]
    return series


def openmetrics(series: dict[str, list[int]]) -> str:
    lines = ["# TYPE flag gauge"]
    for app, flags in series.items():
        lines += [f'flag{{application="{app}"}} {v} {BASE + i * int(STEP)}'
                  for i, v in enumerate(flags)]
    return "\n".join([*lines, "# EOF", ""])


def promtool_test(series: dict[str, list[int]], expected: dict[float, list[str]]) -> dict:
    """A promtool unit test of RULE over ``series`` asserting, at every evaluation, that
    exactly the applications of ``expected`` fire."""
    return {
        "rule_files": ["rules.yml"],
        "evaluation_interval": "15s",
        "tests": [{
            "interval": "15s",
            "input_series": [{"series": f'flag{{application="{app}"}}',
                              "values": " ".join(map(str, flags))}
                             for app, flags in series.items()],
            "alert_rule_test": [
                {"eval_time": f"{int(t)}s", "alertname": "Flapping",
                 "exp_alerts": [{"exp_labels": {"severity": "critical", "application": app}}
                                for app in sorted(expected.get(t, []))]}
                for t in (i * STEP for i in range(STEPS))],
        }],
    }


@pytest.mark.integration
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_firing_intervals_agree_with_promtools_own_evaluation(seed, tmp_path):
    series = generated(seed)
    tools = find_tools()
    (tmp_path / "flags.om").write_text(openmetrics(series))
    backfill_openmetrics(tools, tmp_path / "flags.om", tmp_path / "data")
    end = BASE + (STEPS - 1) * STEP
    with Server(tools, tmp_path / "data", tmp_path) as server:
        answered = server.query_range(RULE["expr"], BASE, end, STEP)
    times = [BASE + i * STEP for i in range(STEPS)]
    firing_at: dict[float, list[str]] = {}
    episodes = 0
    for labels, points in answered.items():
        app = dict(labels)["application"]
        for found in firing(dict(points), times, 60, 120, labels):
            episodes += 1
            stop = found.end if found.end is not None else end + STEP
            for t in times:
                if found.start <= t < stop:
                    firing_at.setdefault(t - BASE, []).append(app)
    assert episodes >= 4  # the series do flap
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": [
        {"name": "flaps", "rules": [RULE]}]}))
    (tmp_path / "flaps.test.yml").write_text(yaml.safe_dump(promtool_test(series, firing_at)))
    done = subprocess.run([tools.promtool, "test", "rules", "flaps.test.yml"],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout
