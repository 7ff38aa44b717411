"""replay's OpenMetrics scrapes through promtool into a TSDB, read back by a real Prometheus:
every point of the file is the point Prometheus answers, and the last scrape is the replay's
final count."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict

import pytest

from collector.backtest.tools import find_tools
from collector.backtest.tsdb import Server, backfill_openmetrics

pytestmark = pytest.mark.integration
_SAMPLE = re.compile(r"^(\w+)\{(.*)\} (\S+) (\S+)$")


def searchpulse(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "searchpulse", *args], capture_output=True,
                          text=True, check=False)


def points(text: str, name: str) -> dict[tuple, list[tuple[float, float]]]:
    """The file's own points of ``name``, per label set."""
    found: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for line in text.splitlines():
        sample = _SAMPLE.match(line)
        if sample and sample.group(1) == name:
            labels = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', sample.group(2))))
            found[labels].append((float(sample.group(4)), float(sample.group(3))))
    return found


@pytest.fixture(scope="module")
def backfilled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tsdb")
    log, scrapes = folder / "ubi.jsonl", folder / "scrapes.om"
    done = searchpulse("simulate", "--seed", "5", "--sessions", "1200", "--out", str(log))
    assert done.returncode == 0, done.stderr
    done = searchpulse("replay", str(log), "--json", "--openmetrics-out", str(scrapes))
    assert done.returncode == 0, done.stderr
    tools = find_tools()
    backfill_openmetrics(tools, scrapes, folder / "data")
    with Server(tools, folder / "data", folder) as server:
        yield json.loads(done.stdout), scrapes.read_text(), server


def test_prometheus_answers_every_point_of_the_file(backfilled):
    _, text, server = backfilled
    expected = points(text, "searchpulse_searches_total")
    times = sorted(t for series in points(text, "up").values() for t, _ in series)
    assert len(times) > 50
    answered = server.query_range("searchpulse_searches_total", times[0], times[-1], 15)
    assert {labels: values for labels, values in answered.items()} == {
        (("__name__", "searchpulse_searches_total"), *labels): values
        for labels, values in expected.items()}


def test_the_last_scrape_is_the_replays_final_count(backfilled):
    summary, text, server = backfilled
    last = max(t for series in points(text, "up").values() for t, _ in series)
    result = server.query('sum by (application) (searchpulse_searches_total{job="searchpulse"})',
                          last)
    assert {r["metric"]["application"]: float(r["value"][1]) for r in result} == {
        app: float(totals["searches"]) for app, totals in summary["by_application"].items()}
    up = server.query('up{job="searchpulse",instance="replay"}', last)
    assert [r["value"][1] for r in up] == ["1"]
