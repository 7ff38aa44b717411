"""Rules: generated from alerts/config.py, valid for promtool, unit-tested case by case."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from alerts.build import GENERATED, build
from alerts.config import Profile
from testbed.process import require

ALERTS = Path(__file__).parents[2] / "alerts"
RULES = GENERATED / "searchpulse-rules.yml"
TEST_FILES = sorted((ALERTS / "tests").glob("*.test.yml"))


def rules() -> list[dict]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def test_generated_files_are_up_to_date(tmp_path):
    build(tmp_path, Profile(), "http://pager.invalid/searchpulse",
          "http://tickets.invalid/searchpulse")
    for generated in tmp_path.iterdir():
        committed = GENERATED / generated.name
        assert committed.read_text() == generated.read_text(), \
            f"{committed} is stale: run `make generate` and commit"


def test_promtool_check_rules():
    done = subprocess.run([require("promtool"), "check", "rules", str(RULES)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 109 rules found" in done.stdout


@pytest.mark.parametrize("test_file", TEST_FILES, ids=lambda p: p.name)
def test_promtool_unit_tests(test_file):
    done = subprocess.run([require("promtool"), "test", "rules", test_file.name],
                          cwd=test_file.parent, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]


def test_every_alert_has_a_fires_and_a_does_not_fire_case():
    fires: set[str] = set()
    silent: set[str] = set()
    for test_file in TEST_FILES:
        for case in yaml.safe_load(test_file.read_text())["tests"]:
            for check in case.get("alert_rule_test", []):
                (fires if check.get("exp_alerts") else silent).add(check["alertname"])
    alerts = {rule["alert"] for rule in rules() if "alert" in rule}
    assert alerts - fires == set(), "alerts without a fires case"
    assert alerts - silent == set(), "alerts without a does-not-fire case"


def test_alerts_carry_labels_annotations_and_a_runbook_section():
    runbook = (ALERTS / "runbooks.md").read_text()
    for rule in (r for r in rules() if "alert" in r):
        assert rule["labels"]["severity"] in ("critical", "warning")
        assert rule["labels"]["service"] == "searchpulse"
        assert set(rule["annotations"]) == {"summary", "description", "runbook_url",
                                            "dashboard_url"}
        assert rule["annotations"]["runbook_url"].endswith("#" + rule["alert"].lower())
        assert f"\n## {rule['alert']}\n" in runbook
        assert rule["for"] and rule["keep_firing_for"]


def test_recording_rules_follow_level_metric_operations():
    for rule in (r for r in rules() if "record" in r):
        level, metric, operations = rule["record"].split(":")
        assert level in ("application", "application_stratum")
        assert metric.startswith("searchpulse_") and operations
