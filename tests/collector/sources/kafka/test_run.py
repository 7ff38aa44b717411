"""Stopping without a broker: `collect` obeys SIGTERM within 5 s while no broker answers (it
ends at once: nothing was read yet; no client's bootstrap wait is waited out), without a
traceback; `demo` stops with its final summary on SIGINT even when started with SIGINT
ignored, and on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from testbed.process import free_port, http_ok

LIMIT_S = 5.0


def _stopped_within(process: subprocess.Popen, signal_number: int) -> float:
    started = time.monotonic()
    process.send_signal(signal_number)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"still running 30 s after {signal.Signals(signal_number).name}")
    return time.monotonic() - started


@pytest.mark.slow  # ~15 s: waits 0.5, 3 and 8 s before the signal
@pytest.mark.parametrize("after_s", [0.5, 3.0, 8.0])
def test_collect_without_a_reachable_broker_obeys_sigterm_within_5_s(after_s, tmp_path):
    """kafka-python waits up to 30 s for a first bootstrap: before, SIGTERM took 21-30 s."""
    port = free_port()
    log = tmp_path / "collect.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "searchpulse", "collect", "--bootstrap-servers",
             f"127.0.0.1:{free_port()}", "--topic", "ubi", "--metrics-port", str(port),
             "--store", f"sqlite:///{tmp_path / 'store.db'}"],
            stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while not http_ok(f"http://127.0.0.1:{port}/healthz"):
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    time.sleep(after_s)  # inside a client's bootstrap wait, or between two attempts
    took = _stopped_within(process, signal.SIGTERM)
    assert took < LIMIT_S, (took, log.read_text()[-3000:])
    assert process.returncode == 0, log.read_text()[-3000:]
    assert "SIGTERM: stopping" in log.read_text()
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


def _readyz(port: int) -> tuple[int, str] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


@pytest.mark.slow  # ~9 s: the connect timeout runs out
def test_collect_without_a_broker_is_not_ready_says_so_per_attempt_and_exits_3(tmp_path):
    """A broker nobody runs (a free port): /readyz answers 503 naming the brokers, every
    failed attempt is a line of ours (not only kafka-python's), and after
    kafka.connect_timeout_s the process ends with exit 3 and one error naming the setting."""
    port, broker = free_port(), f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [sys.executable, "-m", "searchpulse", "collect", "--bootstrap-servers", broker,
         "--topic", "ubi", "--metrics-port", str(port), "--set", "kafka.connect_timeout_s=8"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        answers = []
        while process.poll() is None:
            answer = _readyz(port)
            if answer is not None:
                answers.append(answer)
            time.sleep(0.2)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 3, err[-3000:]
    assert answers and all(code == 503 for code, _ in answers), answers
    assert answers[-1][1].startswith(f"connecting to Kafka at {broker}: "), answers[-1]
    ours = [line for line in err.splitlines() if "collector.sources.kafka.run" in line]
    assert len(ours) >= 2 and all(f"Kafka at {broker} unreachable" in line and "retrying in"
                                  in line for line in ours), err[-3000:]
    errors = [line for line in err.splitlines() if " ERROR searchpulse: " in line]
    assert len(errors) == 1 and "kafka.connect_timeout_s = 8 s" in errors[0], err[-3000:]
    assert "Traceback" not in err, err[-3000:]


def _demo(tmp_path, ignore_sigint: bool) -> subprocess.Popen:
    def ignoring() -> None:  # what a launcher that ignores SIGINT hands its children
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.Popen(
        [sys.executable, "-m", "searchpulse", "demo", "--port", "0", "--speed", "600",
         "--store", f"sqlite:///{tmp_path / 'demo.db'}", "--set", "store.flush_interval_s=1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=ignoring if ignore_sigint else None)


def _drawn(process: subprocess.Popen, timeout_s: float = 60.0) -> str:
    """Wait for the demo's first live view (drawn once its loop runs, after it installed its
    signal handlers; a loaded machine takes seconds to get there): its stderr until then."""
    lines: list[str] = []
    drawn = threading.Event()

    def read() -> None:
        for line in process.stderr:
            lines.append(line)
            if line.startswith("  "):  # a headline of the live view (a log line has a date)
                drawn.set()
                return

    threading.Thread(target=read, daemon=True).start()
    if not drawn.wait(timeout_s):
        process.kill()
        pytest.fail(f"no live view {timeout_s:.0f} s after the start:\n{''.join(lines)}")
    return "".join(lines)


@pytest.mark.slow  # ~15 s: three demos of 3 s each
@pytest.mark.parametrize(("ignore_sigint", "signal_number"),
                         [(True, signal.SIGINT), (False, signal.SIGINT),
                          (False, signal.SIGTERM)])
def test_the_demo_stops_with_its_summary_on_sigint_even_if_started_ignoring_it(
        ignore_sigint, signal_number, tmp_path):
    from collector.store.query_store import open_store

    process = _demo(tmp_path, ignore_sigint)
    errors = _drawn(process)  # its handlers are installed: a signal before is the launcher's
    time.sleep(3)  # it simulates and flushes
    assert process.poll() is None, process.stderr.read()
    took = _stopped_within(process, signal_number)
    output = process.stdout.read()
    assert took < LIMIT_S and process.returncode == 0, (errors + process.stderr.read())[-3000:]
    assert "final summary:" in output
    counted = next(int(line.split()[1]) for line in output.splitlines()
                   if line.startswith("searches "))
    stored = open_store(f"sqlite:///{tmp_path / 'demo.db'}", read_only=True)
    assert counted > 0 and int(stored.totals("1970-01-01")["searches"].sum()) == counted
