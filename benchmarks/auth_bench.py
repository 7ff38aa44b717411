"""Basic auth under attack: authenticated scrapes while 150 clients send wrong passwords.

    python -m benchmarks.auth_bench [--rounds 3] [--baseline 0873b15] [--json FILE]

The /metrics server runs in a child process with basic auth (one user, a bcrypt hash of cost
10, as `htpasswd -nBC 10` makes) and renders the exposition of an engine at the caps (4,200
top-K candidates read before: ~25 ms a scrape); 150 attacker threads in another process send
wrong passwords as fast as they are answered, a new password on every request (no verdict to
remember: the worst case), user `prometheus`. The measuring process scrapes with the right
password every 200 ms for 12 s, starting 1 s into the attack, after one scrape before it (so
the right header is known, as a running Prometheus's is): latency of each scrape (a failed
or timed-out scrape, 10 s as Prometheus's default timeout, counts as 10 s). Then the first
scrape of a right header not seen before, under the same attack: seconds until it succeeds
(retrying after each 429). Each round runs this server and the baseline commit's
(`collector/exposition/http.py`, or `collector/http.py` before issue 27; read with `git show`),
in turn.

Without attack, in the same child: median seconds of 20 requests with a wrong password for
the known user and 20 for an unknown one (timing must not tell them apart), and the status of
a password of 100 bytes.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bcrypt

from testbed.process import free_port

ATTACKERS = 150
SCRAPE_TIMEOUT_S = 10.0
SCRAPES_S = 12.0
PASSWORD = b"s3cret-scrape"

SERVER = """
import importlib.util, sys, time
from benchmarks.privacy_bench import engine_at_the_caps
from collector.replay import exposition
spec = importlib.util.spec_from_file_location("server_http", sys.argv[1])
web = importlib.util.module_from_spec(spec); sys.modules["server_http"] = web
spec.loader.exec_module(web)
engine = engine_at_the_caps("product-like")
exposition(engine)  # the detectors read the candidates once
server = web.MetricsServer(lambda: exposition(engine), "127.0.0.1", int(sys.argv[3]),
                           web_config=web.WebConfig.load(sys.argv[2])).start()
print("ready", flush=True)
sys.stdin.read()
server.stop()
"""

ATTACK = """
import base64, http.client, sys, threading, time
port, attackers = int(sys.argv[1]), int(sys.argv[2])
stop = threading.Event()
def attack(n):
    tried = 0
    while not stop.is_set():
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            while not stop.is_set():
                tried += 1
                token = base64.b64encode(f"prometheus:wrong-{n}-{tried}".encode()).decode()
                conn.request("GET", "/metrics", headers={"Authorization": "Basic " + token})
                conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            time.sleep(0.05)
threads = [threading.Thread(target=attack, args=(n,), daemon=True) for n in range(attackers)]
for t in threads: t.start()
sys.stdin.read()
stop.set()
"""


def _authorization(user: str, password: bytes) -> str:
    return "Basic " + base64.b64encode(user.encode() + b":" + password).decode()


def _get(port: int, authorization: str) -> tuple[int, float]:
    started = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=SCRAPE_TIMEOUT_S)
        conn.request("GET", "/metrics", headers={"Authorization": authorization})
        response = conn.getresponse()
        response.read()
        conn.close()
        return response.status, time.perf_counter() - started
    except (OSError, http.client.HTTPException):
        return 0, SCRAPE_TIMEOUT_S


def _start(code: str, *args: str) -> subprocess.Popen[str]:
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=environment)  # (stderr: the servers' shutdown noise)


def _stop(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def one_round(http_module: Path, web_config: Path) -> dict[str, object]:
    port = free_port()
    server = _start(SERVER, str(http_module), str(web_config), str(port))
    assert server.stdout is not None and server.stdout.readline().strip() == "ready"
    try:
        right = _authorization("prometheus", PASSWORD)
        quiet = {
            "known_user_wrong_password_s": statistics.median(
                _get(port, _authorization("prometheus", f"no{i}".encode()))[1]
                for i in range(20)),
            "unknown_user_s": statistics.median(
                _get(port, _authorization(f"nobody{i}", b"no"))[1] for i in range(20)),
            "password_of_100_bytes_status": _get(port, _authorization("prometheus",
                                                                      b"p" * 100))[0]}
        _get(port, right)  # the right header, seen once before the attack
        attack = _start(ATTACK, str(port), str(ATTACKERS))
        try:
            time.sleep(1.0)
            latencies, failures = [], 0
            deadline = time.monotonic() + SCRAPES_S
            while time.monotonic() < deadline:
                status, seconds = _get(port, right)
                latencies.append(seconds if status == 200 else SCRAPE_TIMEOUT_S)
                failures += status != 200
                time.sleep(0.2)
            fresh = _authorization("prometheus2", PASSWORD)  # a right header never seen
            started = time.perf_counter()
            while _get(port, fresh)[0] != 200 and time.perf_counter() - started < 60:
                time.sleep(0.2)
            first_new = time.perf_counter() - started
        finally:
            _stop(attack)
    finally:
        _stop(server)
    latencies.sort()
    return {**quiet, "scrapes": len(latencies), "failed_scrapes": failures,
            "p50_s": round(latencies[len(latencies) // 2], 4),
            "p99_s": round(latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 4),
            "max_s": round(latencies[-1], 4), "first_new_header_s": round(first_new, 3)}


# the server module now, and where it was before issue 27's folders
HTTP_PATHS = ("collector/exposition/http.py", "collector/http.py")


def _at_commit(commit: str, paths: tuple[str, ...]) -> str:
    """The first of ``paths`` that exists at ``commit``, as it was there."""
    for path in paths:
        shown = subprocess.run(["git", "show", f"{commit}:{path}"], capture_output=True,
                               text=True)
        if shown.returncode == 0:
            return shown.stdout
    raise SystemExit(f"auth_bench: none of {', '.join(paths)} exists at {commit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default="0873b15",
                        help="commit whose HTTP server module (collector/exposition/http.py, "
                             "before issue 27 collector/http.py) is the baseline")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        hashed = bcrypt.hashpw(PASSWORD, bcrypt.gensalt(rounds=10)).decode()
        web_config = directory / "web.yml"
        web_config.write_text(f"basic_auth_users:\n  prometheus: '{hashed}'\n"
                              f"  prometheus2: '{hashed}'\n")
        baseline = directory / "baseline_http.py"
        baseline.write_text(_at_commit(args.baseline, HTTP_PATHS))
        modules = {"this": Path(__file__).resolve().parents[1] / HTTP_PATHS[0],
                   args.baseline: baseline}
        runs: dict[str, list[dict[str, object]]] = {name: [] for name in modules}
        for _ in range(args.rounds):
            for name, module in modules.items():
                runs[name].append(result := one_round(module, web_config))
                print(name, result, flush=True)
    summary = {name: {key: statistics.median(float(r[key]) for r in results)  # type: ignore[arg-type]
                      for key in results[0]} for name, results in runs.items()}
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"attackers": ATTACKERS, "bcrypt_cost": 10,
                                         "rounds": args.rounds, "medians": summary,
                                         "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
