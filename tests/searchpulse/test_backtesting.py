"""``searchpulse backtest`` end to end: missing tools and selectors it cannot serve are named;
on a simulated incident it pages, and its firing intervals are promtool's own evaluation of
the same series with the same generated rules."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from alerts.build import GENERATED
from alerts.config import SETTINGS, load_profile
from alerts.rules import rule_groups
from collector.backtest.run import run
from collector.backtest.tools import find_tools
from collector.config import load_config

INCIDENT = "2026-01-05T09:20:00Z+10m@web"


def searchpulse(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "searchpulse", *args], capture_output=True,
                          text=True, check=False, env=env)


@pytest.fixture(scope="module")
def small_log(tmp_path_factory) -> Path:
    log = tmp_path_factory.mktemp("small") / "ubi.jsonl"
    done = searchpulse("simulate", "--sessions", "300", "--out", str(log))
    assert done.returncode == 0, done.stderr
    return log


def test_missing_prometheus_says_how_to_install_it(small_log, tmp_path):
    env = {**os.environ, "PATH": str(Path(sys.executable).parent),
           "SEARCHPULSE_PROMETHEUS": "", "SEARCHPULSE_PROMTOOL": ""}
    done = searchpulse("backtest", str(small_log), env=env)
    assert done.returncode == 5
    assert "prometheus and promtool not found" in done.stderr
    assert "apt-get install prometheus" in done.stderr


def test_a_selector_the_samples_cannot_match_is_refused(small_log):
    done = searchpulse("backtest", str(small_log), "--set",
                       'alerts.deployment.selector=job=~"search.*"')
    assert done.returncode == 2
    assert "alerts.deployment.selector 'job=~\"search.*\"'" in done.stderr
    assert 'name="value" matchers' in done.stderr


def test_a_bad_incident_is_a_usage_error(small_log):
    done = searchpulse("backtest", str(small_log), "--incident", "soon")
    assert done.returncode == 2
    assert "argument --incident: --incident 'soon': expected START+DURATION" in done.stderr


# -- on a real Prometheus --------------------------------------------------------------------

@pytest.fixture(scope="module")
def incident_log(tmp_path_factory) -> Path:
    log = tmp_path_factory.mktemp("incident") / "ubi.jsonl"
    done = searchpulse("simulate", "--seed", "3", "--sessions", "12000", "--incident",
                       "zero_results@web:x2:20m+10m", "--out", str(log))
    assert done.returncode == 0, done.stderr
    return log


@pytest.mark.integration
@pytest.mark.slow
def test_a_doubled_zero_result_rate_pages_within_ten_minutes(incident_log):
    done = searchpulse("backtest", str(incident_log), "--incident", INCIDENT, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (found,) = report["incidents"]
    assert found["paged"] is True
    assert found["paged_by"] == "SearchZeroResultRateHigh"
    assert 0 < found["page_delay_s"] <= 600


_SAMPLE = re.compile(r"^(\S+\{.*\}) (\S+) (\S+)$")
# time() is the evaluation's time: promtool's tests start at 0, the backtest at the log's time
_CLOCK_RULES = {"SearchpulseEventsStale"}


def promtool_series(scrapes: str, start: float, steps: int) -> list[dict]:
    """Every series of the scrapes as promtool input: a value per 15 s from ``start``, _
    where the scrape had none."""
    values: dict[str, dict[int, str]] = defaultdict(dict)
    for line in scrapes.splitlines():
        sample = _SAMPLE.match(line)
        if sample:
            values[sample.group(1)][round((float(sample.group(3)) - start) / 15)] = \
                repr(float(sample.group(2)))
    return [{"series": series, "values": " ".join(points.get(i, "_") for i in range(steps))}
            for series, points in values.items()]


@pytest.mark.integration
@pytest.mark.slow
def test_firing_intervals_are_promtools_own_evaluation(incident_log, tmp_path):
    config = load_config(None, {}, extra=SETTINGS, environ={})
    groups = rule_groups(load_profile(environ={}))
    result = run([str(incident_log)], config, groups,
                 {"job": "searchpulse", "instance": "backtest"}, tmp_path / "work",
                 keep_scrapes=True)
    origin = result.start  # promtool's step k: the backtest's evaluation k, at scrape k
    steps = int((result.end - origin) // 15) + 1
    firing_at: dict[tuple[str, int], list[dict]] = defaultdict(list)
    fired = 0
    for rule, found in result.firing:
        for interval in found:
            fired += 1
            labels = {k: v for k, v in interval.labels if k != "alertname"}
            end = interval.end if interval.end is not None else result.end + 15
            for step in range(steps):
                if interval.start <= round(origin + step * 15, 3) < end:
                    firing_at[rule.name, step].append(labels)
    assert fired >= 8
    rules = yaml.safe_load((GENERATED / "searchpulse-rules.yml").read_text())
    assert rules == json.loads(json.dumps(groups))  # the rules the backtest ran
    for group in rules["groups"]:
        for rule in group["rules"]:
            rule.pop("annotations", None)
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(rules))
    names = sorted({r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
                   - _CLOCK_RULES)
    test = {
        "rule_files": ["rules.yml"], "evaluation_interval": "15s",
        "group_eval_order": [g["name"] for g in rules["groups"]],
        "tests": [{
            "interval": "15s",
            "input_series": promtool_series("".join(
                path.read_text() for path in (tmp_path / "work" / "scrapes").iterdir()),
                result.start, steps),
            "alert_rule_test": [
                {"eval_time": f"{step * 15}s", "alertname": name,
                 "exp_alerts": [{"exp_labels": labels}
                                for labels in firing_at.get((name, step), [])]}
                for step in range(steps) for name in names],
        }],
    }
    (tmp_path / "backtest.test.yml").write_text(yaml.safe_dump(test, width=10**9))
    done = subprocess.run([find_tools().promtool, "test", "rules", "backtest.test.yml"],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[:3000]
