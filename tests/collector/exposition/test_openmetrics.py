"""The OpenMetrics file of scrapes through event time: its exact text, and replay counting the
same with and without it."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from collector.exposition.openmetrics import DailyFiles, OpenMetricsWriter, timestamp

SCRAPE_1 = b"""# HELP searches_total Searches "decided".
# TYPE searches_total counter
searches_total{application="web",variant="none"} 1.0
searches_total{application="shop",variant="none"} 0.0
# HELP open Sessions open.
# TYPE open gauge
open 3.0
# HELP lat Latency.
# TYPE lat histogram
lat_bucket{application="web",le="0.5"} 1.0
lat_bucket{application="web",le="+Inf"} 1.0
lat_count{application="web"} 1.0
lat_sum{application="web"} 0.25
"""
SCRAPE_2 = SCRAPE_1.replace(b'variant="none"} 1.0', b'variant="none"} 4.0').replace(
    b"open 3.0", b"open 2.0")

EXPECTED = b"""# HELP up 1 if the target was scraped (every scrape here)
# TYPE up gauge
up{job="j",instance="i"} 1 1767600000
up{job="j",instance="i"} 1 1767600015.5
# HELP searches Searches \\"decided\\".
# TYPE searches counter
searches_total{job="j",instance="i",application="shop",variant="none"} 0.0 1767600000
searches_total{job="j",instance="i",application="shop",variant="none"} 0.0 1767600015.5
searches_total{job="j",instance="i",application="web",variant="none"} 1.0 1767600000
searches_total{job="j",instance="i",application="web",variant="none"} 4.0 1767600015.5
# HELP open Sessions open.
# TYPE open gauge
open{job="j",instance="i"} 3.0 1767600000
open{job="j",instance="i"} 2.0 1767600015.5
# HELP lat Latency.
# TYPE lat histogram
lat_bucket{job="j",instance="i",application="web",le="0.5"} 1.0 1767600000
lat_bucket{job="j",instance="i",application="web",le="+Inf"} 1.0 1767600000
lat_count{job="j",instance="i",application="web"} 1.0 1767600000
lat_sum{job="j",instance="i",application="web"} 0.25 1767600000
lat_bucket{job="j",instance="i",application="web",le="0.5"} 1.0 1767600015.5
lat_bucket{job="j",instance="i",application="web",le="+Inf"} 1.0 1767600015.5
lat_count{job="j",instance="i",application="web"} 1.0 1767600015.5
lat_sum{job="j",instance="i",application="web"} 0.25 1767600015.5
# EOF
"""


def test_scrapes_become_one_family_after_another_each_series_in_time_order():
    out = io.BytesIO()
    writer = OpenMetricsWriter(out, {"job": "j", "instance": "i"})
    writer.add(1_767_600_000, SCRAPE_1)
    writer.add(1_767_600_015.5, SCRAPE_2)
    writer.close()
    assert out.getvalue() == EXPECTED
    assert writer.scrapes == 2


def test_scrapes_must_go_forward():
    writer = OpenMetricsWriter(io.BytesIO(), {"job": "searchpulse"})
    writer.add(1_767_600_015, SCRAPE_1)
    with pytest.raises(ValueError, match="scrapes go forward"):
        writer.add(1_767_600_015, SCRAPE_1)
    writer.close()


def test_timestamps_are_seconds_to_the_millisecond():
    assert [timestamp(t) for t in (1_767_600_000.0, 1_767_600_000.25, 0.001)] == \
        [b"1767600000", b"1767600000.25", b"0.001"]


def searchpulse(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "searchpulse", *args], capture_output=True,
                          check=False)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sim")
    log = folder / "ubi.jsonl"
    done = searchpulse("simulate", "--seed", "11", "--sessions", "1500", "--type-ahead", "web",
                       "--bot", "crawler@web:25/m", "--out", str(log))
    assert done.returncode == 0, done.stderr
    return log


def test_replay_counts_the_same_with_the_scrapes(simulated, tmp_path):
    plain = searchpulse("replay", str(simulated), "--json", "--metrics-out",
                        str(tmp_path / "plain.prom"))
    scraped = searchpulse("replay", str(simulated), "--json", "--metrics-out",
                          str(tmp_path / "scraped.prom"), "--openmetrics-out",
                          str(tmp_path / "scrapes.om"))
    assert plain.returncode == scraped.returncode == 0, scraped.stderr
    assert scraped.stdout == plain.stdout  # the summary, byte for byte
    assert (tmp_path / "scraped.prom").read_bytes() == (tmp_path / "plain.prom").read_bytes()
    text = (tmp_path / "scrapes.om").read_bytes()
    assert text.endswith(b"\n# EOF\n")
    times = sorted({float(line.rsplit(b" ", 1)[1]) for line in text.splitlines()
                    if line.startswith(b"up{")})
    assert all(t % 15 == 0 for t in times)
    assert [b - a for a, b in zip(times, times[1:], strict=False)] == [15.0] * (len(times) - 1)


def test_scrape_options_are_checked(simulated, tmp_path):
    for flag, value, message in (
            ("--scrape-interval", "0s", b"argument --scrape-interval: expected a duration > 0"),
            ("--scrape-label", "__name__=x", b"argument --scrape-label: expected NAME=VALUE")):
        done = searchpulse("replay", str(simulated), "--openmetrics-out",
                           str(tmp_path / "x.om"), flag, value)
        assert done.returncode == 2
        assert message in done.stderr
    done = searchpulse("replay", str(simulated), "--openmetrics-out", str(tmp_path / "x.om"),
                       "--store", f"sqlite:///{tmp_path / 'q.db'}")
    assert done.returncode == 2
    assert b"--openmetrics-out is a replay from the first record" in done.stderr


def test_only_the_families_asked_for_are_written():
    out = io.BytesIO()
    writer = OpenMetricsWriter(out, {"job": "j"}, families={"searches_total", "lat"})
    writer.add(1_767_600_000, SCRAPE_1)
    writer.close()
    names = {line.split(b"{")[0] for line in out.getvalue().splitlines()
             if not line.startswith(b"#")}
    assert names == {b"up", b"searches_total", b"lat_bucket", b"lat_count", b"lat_sum"}


def test_a_file_a_day_each_handed_on_when_written(tmp_path):
    written: list[tuple[str, int]] = []

    def done(path):
        written.append((path.name, path.read_bytes().count(b"\nup{")))

    files = DailyFiles(tmp_path, {"job": "j"}, 86400, done)
    day = 1_767_571_200  # 2026-01-05T00:00:00Z
    for t in (day + 86385, day + 86400, day + 86415, day + 2 * 86400 + 30):
        files.add(t, SCRAPE_1)
    assert written == [(f"scrapes-{day}.om", 1), (f"scrapes-{day + 86400}.om", 2)]
    files.close()
    assert written[-1] == (f"scrapes-{day + 2 * 86400}.om", 1)
    assert files.scrapes == 4
