"""The README is executable: its shell blocks run as written, in order, in one empty directory.

Each ```sh block is preceded by `<!-- readme-test: MODE -->`: `run` (every line must succeed),
`serve` (each line is a server: it must serve /metrics, then stop cleanly on Ctrl-C), or
`not run here: WHY`, where WHY names the test that covers it instead.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

from testbed.process import free_port

pytestmark = pytest.mark.integration  # runs make, pip and a server
ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCK = re.compile(r"<!-- readme-test: (?P<mode>.+?) -->\n```sh\n(?P<body>.*?)```", re.S)
BLOCKS = [(m["mode"], m["body"]) for m in BLOCK.finditer(README)]


def environment(**extra: str) -> dict[str, str]:
    """The user's shell after `source .venv/bin/activate`: the installed package, nothing of
    the clone on the import path (a block that needs the clone fails here)."""
    inherited = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**inherited, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", **extra}


def test_every_shell_block_says_how_it_is_tested():
    assert README.count("```sh\n") == len(BLOCKS)
    for mode, _ in BLOCKS:
        assert mode in ("run", "serve") or mode.startswith("not run here"), mode
        if mode.startswith("not run here"):
            named = re.findall(r"tests/[\w/]+\.py|\.ci/run", mode)
            assert named and all((ROOT / path).exists() for path in named), mode


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> Path:
    """Every `run` block, in README order, in one directory (later blocks use earlier files)."""
    workdir = tmp_path_factory.mktemp("readme")
    for mode, body in BLOCKS:
        if mode == "run":
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=workdir,
                                  env=environment(), capture_output=True, text=True, check=False)
            assert done.returncode == 0, (body, done.stdout[-2000:], done.stderr[-3000:])
    return workdir


def test_run_blocks_succeed_and_leave_what_they_promise(ran):
    assert (ran / "rejected.jsonl").exists() and (ran / "final.prom").stat().st_size > 0
    for refresh in ("refresh", "refresh-2026q4"):
        assert (ran / refresh / "candidates.csv").read_text().count("\n") > 1
        assert (ran / refresh / "report.html").exists()
    rules = (ran / "deploy" / "searchpulse-rules.yml").read_text()
    assert "https://wiki.example.com/searchpulse/runbooks#searchzeroresultratehigh" in rules
    assert "https://grafana.example.com/d/" in rules
    assert "p99_rate1h > 0.4)" in rules  # the collector's guardrail, from the same file
    assert "difference_low_increase6h > 0.02\n" in rules  # the experiment design, likewise
    assert "https://pager.example.com/hook" in (ran / "deploy" / "alertmanager.yml").read_text()
    overview = json.loads((ran / "deploy" / "dashboards" / "overview.json").read_text())
    drawn = {p["title"]: [s["value"] for s in p["fieldConfig"]["defaults"]["thresholds"]["steps"]]
             for p in overview["panels"] if "thresholds" in p["fieldConfig"]["defaults"]}
    assert drawn["Zero-result rate"] == [None, 0.2] and drawn["Latency p99"] == [None, 0.4]
    # the CI gate caught the branch: a failing test case, a summary that says so
    cases = {(c.classname, c.name): c for suite in JUnitXml.fromfile(str(ran / "evaluate.xml"))
             for c in suite}
    assert set(cases) == {("evaluate.nDCG(gains={2:3,3:7})@10", "all"), ("evaluate.R@100", "all")}
    assert isinstance(cases[("evaluate.nDCG(gains={2:3,3:7})@10", "all")].result[0], Failure)
    assert cases[("evaluate.R@100", "all")].is_passed
    # the backtest ran the profile's rules over the log on Prometheus
    assert (ran / "scrapes.om").read_text().endswith("\n# EOF\n")
    backtest = json.loads((ran / "backtest.json").read_text())
    assert backtest["searches"] > 0 and backtest["incidents"][0]["incident"] == "10m+5m"
    assert (ran / "summary.md").read_text().startswith("### ❌ searchpulse evaluate")


SERVERS = [line.split("#")[0].strip() for mode, body in BLOCKS if mode == "serve"
           for line in body.splitlines() if line.strip()]


@pytest.mark.parametrize("command", SERVERS)
def test_serve_blocks_serve_metrics_then_stop_on_ctrl_c(command, tmp_path):
    port = free_port()
    process = subprocess.Popen(
        ["bash", "-c", command], cwd=ROOT if command.startswith("make ") else tmp_path,
        env=environment(SEARCHPULSE_HTTP_PORT=str(port)), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)
    body = ""
    deadline = time.monotonic() + 120
    while "searchpulse_searches_total" not in body and time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read()[-3000:]
        time.sleep(1)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
                body = reply.read().decode()
        except OSError:
            continue
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C in the terminal: the whole group
    output, _ = process.communicate(timeout=60)
    assert "searchpulse_searches_total" in body, output[-3000:]
    assert "final summary:" in output, output[-3000:]
    if not command.startswith("make "):  # make itself reports the interrupt with its own code
        assert process.returncode == 0, output[-3000:]
