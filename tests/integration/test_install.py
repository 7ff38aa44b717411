"""The package installs the way the collector image installs it (collector/Dockerfile: the files
it copies, then `pip install ".[postgres]"`) into a fresh virtual environment, and the commands
run from outside the repository: nothing installed on this machine by hand can hide a missing
dependency."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # needs the package index (or pip's cache)
ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "collector" / "Dockerfile"


def copied_by_the_dockerfile(app: Path) -> None:
    for line in DOCKERFILE.read_text().splitlines():
        if match := re.fullmatch(r"COPY (.+) (\S+)", line.strip()):
            sources, target = match.group(1).split(), app / match.group(2).removeprefix("./")
            for source in sources:
                path = ROOT / source
                if path.is_dir():
                    shutil.copytree(path, target, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copy(path, target / path.name)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("install")
    copied_by_the_dockerfile(work / "app")
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    pip = subprocess.run([str(work / "venv" / "bin" / "pip"), "install", "--quiet",
                          "--disable-pip-version-check", ".[postgres]"], cwd=work / "app",
                         capture_output=True, text=True, check=False)
    assert pip.returncode == 0, pip.stderr[-3000:]
    return work / "venv" / "bin"


def run(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([str(bin_dir / "searchpulse"), *args], cwd=cwd, capture_output=True,
                          text=True, check=False, env={"PATH": str(bin_dir), "HOME": str(cwd)})
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-3000:])
    return done


def test_fresh_install_runs_simulate_replay_feedback_and_demo_help(installed, tmp_path):
    run(installed, tmp_path, "simulate", "--sessions", "2000", "--out", "ubi.jsonl")
    replayed = run(installed, tmp_path, "replay", "ubi.jsonl", "--store", "sqlite:///q.db",
                   "--json")
    assert '"searches"' in replayed.stdout
    run(installed, tmp_path, "feedback", "--store", "sqlite:///q.db", "--out", "refresh")
    assert (tmp_path / "refresh" / "candidates.csv").stat().st_size > 0
    assert "usage: searchpulse demo" in run(installed, tmp_path, "demo", "--help").stdout


def test_fresh_install_generates_rules_and_dashboards_of_one_profile(installed, tmp_path):
    """Deploying alerts and dashboards needs the wheel, not the clone: the README's deploy
    block, from an empty directory."""
    (tmp_path / "searchpulse.toml").write_text(
        "[alerts.windows]\npage_short = '10m'\n[alerts.thresholds]\nlatency_quantile = 0.95\n")
    run(installed, tmp_path, "config", "check", "--config", "searchpulse.toml")
    run(installed, tmp_path, "generate", "--config", "searchpulse.toml", "--out", "deploy")
    rules = (tmp_path / "deploy" / "searchpulse-rules.yml").read_text()
    assert "application:searchpulse_searches:rate10m" in rules and ":p95_rate10m" in rules
    overview = (tmp_path / "deploy" / "dashboards" / "overview.json").read_text()
    assert "application:searchpulse_zero_result_searches:rate10m" in overview
    assert "histogram_quantile(0.95," in overview
    defaults = subprocess.run(
        [str(installed / "python"), "-c", "from importlib.resources import files; "
         "print((files('alerts') / 'generated' / 'searchpulse-rules.yml').read_text())"],
        cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert defaults == (ROOT / "alerts" / "generated" / "searchpulse-rules.yml").read_text() + "\n"


def test_fresh_install_holds_every_module_of_the_tree(installed, tmp_path):
    """The wheel holds every product module (the packages are found from the tree, not listed
    by hand), and each imports from outside the clone: a subpackage left out would pass every
    test run from the clone."""
    tree = sorted(".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(
        ".__init__") for folder in ("alerts", "collector", "dashboards", "feedback")
        for path in (ROOT / folder).rglob("*.py"))
    script = ("import importlib, importlib.util, sys\n"
              "for name in sys.argv[1:]:\n"  # a __main__ would run: found, not imported
              "    where = (importlib.util.find_spec(name).origin if name.endswith('__main__')\n"
              "             else importlib.import_module(name).__file__)\n"
              "    assert 'site-packages' in where, where\n"
              "print(len(sys.argv) - 1)\n")
    done = subprocess.run([str(installed / "python"), "-c", script, *tree], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout) == len(tree) > 120
