"""`searchpulse simulate` → `searchpulse replay --json` through the real command line."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest

from collector.store.query_store import open_store
from tests.collector.test_properties import without_sparse_tail_retiming

REPLAY_KEYS = {
    "searches", "searches_with_results", "zero_result_searches", "zero_result_rate",
    "clicked_searches", "clicks", "ctr", "converted_searches", "conversion_rate",
    "reformulated_searches", "reformulation_rate", "reformulations_by_kind", "abandoned_searches",
    "abandonment_rate", "zero_result_exits", "mean_time_to_first_click_s", "mrr_first_click",
    "keystroke_records", "keystrokes_per_search", "automated_searches", "automated_share",
    "searches_with_events", "event_coverage", "untracked_searches",
    "records", "invalid_records", "orphan_events", "late_events", "late_queries", "retimed_records",
    "future_records", "duplicates", "ignored_records",
    "by_application",
}


def searchpulse(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "searchpulse", *args], input=stdin,
                          capture_output=True, check=False)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sim")
    log, truth, strata = folder / "ubi.jsonl", folder / "truth.json", folder / "strata.csv"
    done = searchpulse("simulate", "--seed", "7", "--sessions", "2000", "--invalid-rate", "0.02",
                       "--out", str(log), "--truth", str(truth), "--strata-out", str(strata))
    assert done.returncode == 0, done.stderr
    return log, json.loads(truth.read_text()), strata


def _rounded(value):
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return round(value, 9) if isinstance(value, float) else value


def test_replay_equals_the_simulators_ground_truth(simulated, tmp_path):
    log, truth, strata = simulated
    dlq = tmp_path / "dlq.jsonl"
    done = searchpulse("replay", str(log), "--json", "--strata-file", str(strata),
                       "--dlq", str(dlq), "--no-progress")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary) == REPLAY_KEYS
    assert _rounded(summary) == _rounded(without_sparse_tail_retiming(summary, truth))
    assert summary["invalid_records"] > 0 and summary["duplicates"] > 0
    letters = [json.loads(line) for line in dlq.read_text().splitlines()]
    assert len(letters) == summary["invalid_records"] + summary["orphan_events"]
    assert {letter["reason"] for letter in letters} >= {"malformed_json", "orphan"}


def test_replay_reads_gzip_and_stdin(simulated, tmp_path):
    log, truth, strata = simulated
    packed = tmp_path / "ubi.jsonl.gz"
    packed.write_bytes(gzip.compress(log.read_bytes()))
    from_gzip = searchpulse("replay", str(packed), "--json", "--strata-file", str(strata))
    from_stdin = searchpulse("replay", "-", "--json", "--strata-file", str(strata),
                             stdin=log.read_bytes())
    assert json.loads(from_gzip.stdout) == json.loads(from_stdin.stdout)
    assert json.loads(from_gzip.stdout)["searches"] == truth["searches"]


def test_rates_are_null_without_denominator(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    summary = json.loads(searchpulse("replay", str(empty), "--json").stdout)
    assert summary["records"] == 0
    assert summary["zero_result_rate"] is None and summary["ctr"] is None
    assert summary["by_application"] == {}


def test_exit_codes_say_what_went_wrong(tmp_path):
    assert searchpulse("replay", str(tmp_path / "missing.jsonl")).returncode == 3
    bad = searchpulse("replay", "-", "--set", "windows.abandonment_s=-1", stdin=b"")
    assert bad.returncode == 2
    assert b"windows.abandonment_s (from command line): must be a finite number > 0" in bad.stderr
    assert searchpulse("simulate", "--incident", "meteor:x2:1m+1m").returncode == 2
    assert searchpulse("config", "check").returncode == 0
    bad_store = searchpulse("replay", "-", "--store", "mysql://db/x", stdin=b"")
    assert bad_store.returncode == 2
    assert b"store.url (from command line): must be sqlite:///PATH or postgresql://" in (
        bad_store.stderr)


@pytest.mark.slow  # ~6 s: a demo and a replay subprocess
def test_demo_and_replay_keep_per_query_aggregates_with_store(simulated, tmp_path):
    """`demo --store` flushes while it runs and at the end: the stored searches add up to
    the searches it counted; `replay --store` takes the URL from the environment too."""
    store = f"sqlite:///{tmp_path / 'demo.db'}"
    done = searchpulse("demo", "--duration", "6s", "--speed", "600", "--sessions", "2000",
                       "--port", "0", "--store", store, "--set", "store.flush_interval_s=1")
    assert done.returncode == 0, done.stderr
    counted = next(int(line.split()[1]) for line in done.stdout.decode().splitlines()
                   if line.startswith("searches "))
    totals = open_store(store, read_only=True).totals("1970-01-01")
    assert counted > 0 and int(totals["searches"].sum()) == counted
    log, truth, _ = simulated
    env_store = tmp_path / "env.db"
    done = subprocess.run([sys.executable, "-m", "searchpulse", "replay", str(log)],
                          capture_output=True, check=False,
                          env={**os.environ,
                               "SEARCHPULSE_STORE_URL": f"sqlite:///{env_store}"})
    assert done.returncode == 0, done.stderr
    totals = open_store(f"sqlite:///{env_store}", read_only=True).totals("1970-01-01")
    assert int(totals["searches"].sum()) == truth["searches"]
