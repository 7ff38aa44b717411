"""`collect` obeys SIGTERM within 5 s when its real Kafka broker is killed mid-run, and its
restart (broker back) is still exactly once: what the checkpoints not written at shutdown
covered is replayed from the last one written."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from testbed.kafka import KafkaBroker
from tests.integration.test_kafka_collector import Run, scrape, truth_counts, wait_for_truth

pytestmark = pytest.mark.integration
LIMIT_S = 5.0


def test_broker_killed_mid_run_then_sigterm_exits_within_5_s_and_nothing_is_lost(tmp_path):
    broker = KafkaBroker(tmp_path / "broker").start()  # its own broker: this test kills it
    try:
        run = Run(broker.bootstrap, tmp_path, sessions=20_000, seed=21)
        timings = []
        for attempt in range(2):  # killed while counting, then again right after a restart
            collector, url = run.collector("a")
            collector.start(timeout=60)
            deadline = time.monotonic() + 90
            while "searchpulse_searches_total{" not in scrape(url):
                assert time.monotonic() < deadline, collector.log()
                time.sleep(0.2)
            broker.process.send_signal(signal.SIGKILL)  # no goodbye to anyone
            broker.process.wait()
            time.sleep(1.0 + attempt)  # the collector notices, retries, checkpoints fail
            started = time.monotonic()
            collector.process.send_signal(signal.SIGTERM)
            try:
                collector.process.wait(60)
            except subprocess.TimeoutExpired:
                collector.process.kill()
                pytest.fail(f"collect still running 60 s after SIGTERM:\n{collector.log()}")
            timings.append(time.monotonic() - started)
            assert collector.process.returncode == 0, collector.log()
            stopping = collector.log(10**7).rsplit("SIGTERM: stopping", 1)[-1]
            assert "Traceback" not in stopping, stopping[-4000:]  # none from the shutdown
            broker.start()
        assert max(timings) < LIMIT_S, timings
        collector, url = run.collector("a")  # the same instance, broker back
        collector.start(timeout=60)
        try:
            wait_for_truth(url, truth_counts(run.truth), timeout=150)
        finally:
            collector.stop()
    finally:
        broker.stop()
