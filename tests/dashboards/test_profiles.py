"""One deployment profile, three artefacts: `searchpulse generate` with non-default windows,
thresholds and quantiles writes rules and dashboards that agree — every series a panel reads is
a generated recording rule or a series the collector exports, and every threshold a panel draws
is the value its alert fires at."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from types import SimpleNamespace

import promql_parser
import pytest
import yaml
from prometheus_client import CollectorRegistry, generate_latest

from alerts.build import GENERATED as RULES_GENERATED
from collector.sources.kafka.health import KafkaHealthCollector
from collector.store.store_writer import StoreHealthCollector
from dashboards.build import GENERATED as DASHBOARDS_GENERATED
from searchpulse import main
from tests.conftest import examination_file
from tests.dashboards.test_dashboards import VARIABLES, selectors

# Prometheus' own series (its scrape and its alerts) and the client library's process metrics.
PROMETHEUS_SERIES = {"ALERTS", "up", "scrape_duration_seconds", "process_resident_memory_bytes"}
# (config file, environment, --set): each profile comes from all three sources at once.
PROFILES = {
    "paging short window 10m": (
        "[alerts.windows]\npage_short = '10m'\n", {}, []),
    "latency p95": (
        "", {"SEARCHPULSE_ALERTS_THRESHOLDS_LATENCY_QUANTILE": "0.95"}, []),
    "every window and threshold moved": (
        "[metrics]\nlatency_guardrail_s = 0.4\n[alerts.windows]\npage_long = '2h'\n"
        "[alerts.thresholds]\nzero_result_rate_critical = 0.25\n",
        {"SEARCHPULSE_ALERTS_WINDOWS_TICKET_LONG": "12h",
         "SEARCHPULSE_ALERTS_THRESHOLDS_EVENT_STALENESS_S_CRITICAL": "1200"},
        ["--set", "alerts.windows.ticket_short=1h",
         "--set", "alerts.thresholds.known_item_zero_result_rate_critical=0.1",
         "--set", "alerts.thresholds.latency_quantile=0.999",
         "--set", "alerts.thresholds.event_coverage_floor=0.1"]),
    "experiment design moved": (
        "[experiments]\ncontrol_variant = 'baseline'\nsplit = ['baseline=0.8', 'treatment=0.2']\n",
        {"SEARCHPULSE_EXPERIMENTS_GUARDRAIL_ZERO_RESULT_MARGIN": "0.02"},
        ["--set", "experiments.unit_buckets=16", "--set", "experiments.unit_window_s=3600"]),
}


def generate(tmp_path: Path, monkeypatch, text: str, environ: dict[str, str],
             flags: list[str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "searchpulse.toml").write_text(text)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "deploy"
    assert main(["generate", "--config", str(tmp_path / "searchpulse.toml"), "--out", str(out),
                 *flags]) == 0
    return out


def rules_of(out: Path) -> list[dict]:
    groups = yaml.safe_load((out / "searchpulse-rules.yml").read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def boards_of(directory: Path) -> dict[str, dict]:
    return {path.stem: json.loads(path.read_text()) for path in directory.glob("*.json")}


def panel_series(board: dict) -> set[str]:
    """Every series name any target of ``board`` selects."""
    names = set()
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in VARIABLES.items():
                expr = expr.replace(variable, value)
            names.update(s.name for s in selectors(promql_parser.parse(expr)))
    return names


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> set[str]:
    """The series a collector exports: a replay's final exposition (judged, debiased,
    interleaved and invalid traffic: nearly every family has samples; a gauge or counter it
    declares without one — lag per partition, events without a search in a log with no such
    event — counts too), the Kafka consumer's health and the store writer's (their collectors
    over stand-ins of their sources)."""
    work = tmp_path_factory.mktemp("exported")
    cli = [sys.executable, "-m", "searchpulse"]
    subprocess.run([*cli, "simulate", "--sessions", "400", "--out", "ubi.jsonl", "--truth",
                    "truth.json", "--judgments-out", "judgments.csv", "--interleaving", "0.1",
                    "--invalid-rate", "0.05"],
                   cwd=work, check=True)
    examination = examination_file(work, dict.fromkeys(
        ("web", "mobile", "legacy", "opensearch"), [1 / r for r in range(1, 11)]))
    subprocess.run([*cli, "replay", "ubi.jsonl", "--judgments", "judgments.csv",
                    "--examination", str(examination), "--metrics-out", "final.prom"],
                   cwd=work, check=True, capture_output=True)
    registry = CollectorRegistry()
    registry.register(KafkaHealthCollector(SimpleNamespace(
        parts={}, lag=lambda assigned: {}, consumed={"ubi": 1}, connected=True,
        health={"commits": 1, "commit_failures": 0, "rebalances": 0,
                "topic_recreations": 0})))
    registry.register(StoreHealthCollector(SimpleNamespace(
        flushes=1, failures=0, rows_written=1, waiting=0, spilled=0, spill_failures=0,
        away_s=0.0)))
    text = (work / "final.prom").read_text() + generate_latest(registry).decode()
    samples = {line.split()[0].split("{")[0] for line in text.splitlines()
               if line and not line.startswith("#")}
    declared = set(re.findall(r"^# TYPE (\S+) (?:gauge|counter)$", text, re.M))
    return samples | declared | PROMETHEUS_SERIES


@pytest.mark.parametrize("profile", PROFILES)
def test_every_series_a_panel_reads_is_recorded_or_exported(profile, exported, tmp_path,
                                                           monkeypatch):
    out = generate(tmp_path, monkeypatch, *PROFILES[profile])
    recorded = {rule["record"] for rule in rules_of(out) if "record" in rule}
    for name, board in boards_of(out / "dashboards").items():
        read = panel_series(board)
        assert {s for s in read if ":" in s} - recorded == set(), (profile, name)
        assert {s for s in read if ":" not in s} - exported == set(), (profile, name)


def _panel(board: dict, title: str) -> dict:
    return next(p for p in board["panels"] if p["title"] == title)


def _drawn(panel: dict) -> list[float]:
    return [step["value"] for step in panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
            if step["value"] is not None]


def test_thresholds_drawn_are_the_ones_that_page(tmp_path, monkeypatch):
    out = generate(tmp_path, monkeypatch, *PROFILES["every window and threshold moved"])
    alerts = {(r["alert"], r["labels"]["severity"]): r["expr"] for r in rules_of(out)
              if "alert" in r}
    boards = boards_of(out / "dashboards")
    overview, health = boards["overview"], boards["collector-health"]
    zero = _panel(overview, "Zero-result rate")
    assert _drawn(zero) == [0.25] and "ratio_rate5m > 0.25\n" in \
        alerts[("SearchZeroResultRateHigh", "critical")]
    assert "rate5m" in zero["targets"][0]["expr"]
    assert _drawn(_panel(overview, "Known-item zero-result rate")) == [0.1]
    assert "> 0.1\n" in alerts[("SearchKnownItemZeroResultRateHigh", "critical")]
    latency = _panel(overview, "Latency p99.9")
    assert _drawn(latency) == [0.4] and "histogram_quantile(0.999," in latency["targets"][0]["expr"]
    assert re.findall(r":p99_9_rate(\w+) > ([\d.]+)",
                      alerts[("SearchLatencyHigh", "warning")]) == [("5m", "0.4"), ("2h", "0.4")]
    assert _drawn(_panel(health, "Freshness")) == [1200]
    for title in ("Event coverage", "Event coverage by application"):
        assert _drawn(_panel(overview, title)) == [0.1], title
    assert "ratio_rate2h < 0.1\n" in alerts[("SearchTrackingBroken", "critical")]
    assert "the median of the same 2h window 1d, 1w, 2w, 3w earlier" in \
        _panel(overview, "Event coverage by application")["description"]
    assert "> 1200\n" in alerts[("SearchpulseEventsStale", "critical")]
    experiments = {p["title"]: p for p in boards["experiments"]["panels"]}
    assert "Latency p99.9 by variant" in experiments
    # the guardrail's panel: always-valid since the collector started, and the fixed-horizon
    # interval of the ticket's window (12h) beside it
    guardrail = experiments["Zero-result rate difference from the control, always-valid 95 %"]
    assert "over the last 12h" in guardrail["description"]
    assert [t["expr"].split(":")[2].split("{")[0] for t in guardrail["targets"]] == [
        "difference_sum", "difference_always_valid_low_sum", "difference_always_valid_high_sum",
        "difference_low_increase12h", "difference_high_increase12h"]


def test_the_experiment_design_the_rules_and_panels_read_is_the_report_s(tmp_path,
                                                                        monkeypatch):
    """experiments.* (the settings `searchpulse experiments` reads) reach the rules and the
    experiments dashboard from the same profile: the control every difference is taken from,
    the designed split the sample-ratio test expects, the guardrail margin the ticket fires at
    and the panel names, the t of B − 1 degrees of freedom, the unit window."""
    from collector.series.experiment_stats import t_quantile

    out = generate(tmp_path, monkeypatch, *PROFILES["experiment design moved"])
    rules = rules_of(out)
    alerts = {r["alert"]: r for r in rules if "alert" in r}
    records = {r["record"]: r["expr"] for r in rules if "record" in r}
    difference = records["application_variant:searchpulse_zero_result_searches_per_searches:"
                         "difference_increase6h"]
    assert '{variant!="baseline"}' in difference and '{variant="baseline"}' in difference
    assert "difference_low_increase6h > 0.02\n" in alerts["SearchExperimentGuardrailWorse"]["expr"]
    assert "baseline 80%, treatment 20%" in \
        alerts["SearchExperimentSampleRatioMismatch"]["annotations"]["description"]
    assert "last 1h" in alerts["SearchExperimentSampleRatioMismatch"]["annotations"]["description"]
    low = records["application_variant:searchpulse_zero_result_searches_per_searches:"
                  "difference_low_increase6h"]
    assert repr(t_quantile(15)) in low
    assert records["application_variant:searchpulse_clicked_searches_per_tracked_searches_"
                   "with_results:clustered_variance_sum"].startswith(f"{16 / 15!r} * ")
    panels = {p["title"]: p for p in boards_of(out / "dashboards")["experiments"]["panels"]}
    guardrail = panels["Zero-result rate difference from the control, always-valid 95 %"][
        "description"]
    assert "margin (0.02, experiments.guardrail_zero_result_margin)" in guardrail
    assert "the last 1h of event time" in panels["Units by variant"]["description"]


def test_the_issue_s_two_profiles(tmp_path, monkeypatch):
    """page_short=10m: the headline reads the 10m rules that exist (5m ones do not); a 0.95
    quantile is named p95 in the rule, the alert and both dashboards."""
    short = generate(tmp_path / "short", monkeypatch, *PROFILES["paging short window 10m"])
    records = {r["record"] for r in rules_of(short) if "record" in r}
    assert "application:searchpulse_searches:rate10m" in records
    assert not any(name.endswith("rate5m") for name in records)
    headline = _panel(boards_of(short / "dashboards")["overview"], "Zero-result rate")
    assert "application:searchpulse_zero_result_searches:rate10m" in headline["targets"][0]["expr"]
    assert "over 10m" in headline["description"]
    p95 = generate(tmp_path / "p95", monkeypatch, *PROFILES["latency p95"])
    latency = next(r for r in rules_of(p95) if r.get("alert") == "SearchLatencyHigh")
    assert ":p95_rate5m > 0.5" in latency["expr"] and "p99" not in json.dumps(latency)
    boards = boards_of(p95 / "dashboards")
    assert "histogram_quantile(0.95," in _panel(boards["overview"], "Latency p95")["targets"][0][
        "expr"]
    assert "Latency p95 by variant" in {p["title"] for p in boards["experiments"]["panels"]}


def test_without_settings_it_writes_the_packaged_defaults(tmp_path, monkeypatch):
    """The committed artefacts are package data, and exactly what the installed command writes
    with no settings (what a deployment gets from the wheel without the clone)."""
    out = generate(tmp_path, monkeypatch, "", {}, [])
    packaged_rules = files("alerts") / "generated"
    packaged_boards = files("dashboards") / "generated"
    for name in ("searchpulse-rules.yml", "alertmanager.yml"):
        assert (out / name).read_text() == (packaged_rules / name).read_text() == \
            (RULES_GENERATED / name).read_text()
    for name in ("overview", "experiments", "collector-health"):
        assert (out / "dashboards" / f"{name}.json").read_text() == \
            (packaged_boards / f"{name}.json").read_text() == \
            (DASHBOARDS_GENERATED / f"{name}.json").read_text()


def test_a_contradicting_profile_exits_2_naming_the_setting(tmp_path, capsys):
    assert main(["generate", "--out", str(tmp_path / "deploy"),
                 "--set", "alerts.windows.page_short=2h"]) == 2
    err = capsys.readouterr().err
    assert "alerts.windows.page_short (2h) must be shorter than alerts.windows.page_long" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "deploy").exists()


@pytest.mark.integration
@pytest.mark.parametrize("profile", PROFILES)
def test_promtool_accepts_every_profile_s_rules(profile, tmp_path, monkeypatch):
    from testbed.process import require

    out = generate(tmp_path, monkeypatch, *PROFILES[profile])
    done = subprocess.run([require("promtool"), "check", "rules",
                           str(out / "searchpulse-rules.yml")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
