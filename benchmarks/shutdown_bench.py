"""How long `collect` takes to obey SIGTERM when the broker does not answer.

    python -m benchmarks.shutdown_bench [--rounds 3] [--against DIR] [--json FILE]

1. No broker reachable: `collect` started against a closed port; SIGTERM 0.5, 3 and 8 s after
   its /healthz answers (inside kafka-python's bootstrap wait, or between two attempts).
2. Broker killed mid-run: a real broker (testbed/kafka.py) with 3,000 simulated sessions on a
   topic; once the collector counts, the broker is SIGKILLed, and SIGTERM follows 1 s later.
Seconds from SIGTERM to exit (a child still running 60 s after is killed and reported as
60); with ``--against DIR`` (another version's source tree) its collector runs in the same
rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.command import command_module
from testbed.process import free_port, http_ok

_GIVE_UP_S = 60.0


def _stop(process: subprocess.Popen) -> float:
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(_GIVE_UP_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return _GIVE_UP_S
    return round(time.monotonic() - started, 2)


def _collect(source: Path, bootstrap: str, port: int, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", command_module(source), "collect", "--bootstrap-servers", bootstrap,
         "--metrics-port", str(port), *extra], cwd=source,
        env={**os.environ, "PYTHONPATH": str(source)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def no_broker(source: Path, after_s: float) -> float:
    port = free_port()
    process = _collect(source, f"127.0.0.1:{free_port()}", port, "--topic", "ubi")
    while not http_ok(f"http://127.0.0.1:{port}/healthz"):
        time.sleep(0.05)
    time.sleep(after_s)
    return _stop(process)


def broker_killed(source: Path, workdir: Path, seed: int) -> float:
    """``workdir``: a new folder (a broker's data folder is its identity)."""
    from testbed.kafka import KafkaBroker
    from tests.integration.test_kafka_collector import Run, scrape

    broker = KafkaBroker(workdir / "broker").start()
    try:
        run = Run(broker.bootstrap, workdir, sessions=3000, seed=seed)
        port = free_port()
        process = _collect(source, broker.bootstrap, port, "--topic", run.topic,
                           "--group-id", run.group, "--instance-id", f"{run.topic}-a",
                           "--set", f"kafka.checkpoint_topic=cp-{run.topic}",
                           "--set", f"kafka.dead_letter_topic=dlq-{run.topic}")
        url = f"http://127.0.0.1:{port}/metrics"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if "searchpulse_searches_total{" in scrape(url):
                    break
            except OSError:
                pass
            time.sleep(0.2)
        broker.process.send_signal(signal.SIGKILL)
        broker.process.wait()
        time.sleep(1.0)
        return _stop(process)
    finally:
        broker.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another version's source tree")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    versions = {"this": Path.cwd(), **({"against": args.against.resolve()}
                                       if args.against else {})}
    result: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="shutdown-bench-") as folder:
        for n in range(args.rounds):
            for name, source in versions.items():
                for after in (0.5, 3.0, 8.0):
                    result.setdefault(name, {}).setdefault(f"no broker, SIGTERM {after} s in",
                                                           []).append(no_broker(source, after))
                result[name].setdefault("broker killed mid-run", []).append(
                    broker_killed(source, Path(folder) / f"{name}-{n}", seed=30 + n))
            print(f"round {n + 1}: {json.dumps(result, indent=2)}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
