"""A Prometheus TSDB of a backtest: blocks backfilled by promtool, and a Prometheus server on it
whose query engine answers the rules' expressions.

The server scrapes nothing and evaluates no rule: it only serves queries over the blocks. Its
retention is unbounded (a log of last year is history, not data to delete). Blocks that promtool
writes later (recording rules) are moved into the TSDB and the server restarted, which loads
them at once (a running Prometheus picks new blocks up only at its next reload).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from collector.backtest.tools import Tools
from collector.errors import ToolFailed

MAX_POINTS = 11_000  # Prometheus refuses a range query of more points per series
_READY_S = 60.0


def _run(args: list[str], what: str) -> str:
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ToolFailed(f"{what}: {' '.join(args[:4])} … exited with {done.returncode}: "
                         f"{(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def backfill_openmetrics(tools: Tools, source: Path, tsdb: Path,
                         block_hours: int = 2) -> None:
    """promtool's blocks of an OpenMetrics file, into ``tsdb``."""
    _run([tools.promtool, "tsdb", "create-blocks-from", "openmetrics",
          f"--max-block-duration={block_hours}h", str(source), str(tsdb)],
         f"backfilling {source}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``prometheus`` on ``tsdb`` (its log in ``workdir``), for queries only."""

    def __init__(self, tools: Tools, tsdb: Path, workdir: Path) -> None:
        self.tools = tools
        self.tsdb = tsdb.resolve()
        self.workdir = workdir.resolve()
        self.config = self.workdir / "prometheus.yml"
        self.config.write_text("global: {}\n")
        self.log_path = self.workdir / "prometheus.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> Server:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [self.tools.prometheus, f"--config.file={self.config}",
                 f"--storage.tsdb.path={self.tsdb}", "--storage.tsdb.retention.time=100y",
                 f"--web.listen-address=127.0.0.1:{port}", "--query.max-samples=200000000",
                 "--query.timeout=10m"],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
        deadline = time.monotonic() + _READY_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ToolFailed(f"prometheus exited with {self.process.returncode}: "
                                 f"{self.log_path.read_text(errors='replace')[-2000:]}")
            if self._ready():
                return self
            time.sleep(0.1)
        self.stop()
        raise ToolFailed(f"prometheus not ready after {_READY_S:g} s: see {self.log_path}")

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def add_blocks(self, blocks: Path) -> None:
        """Move the blocks promtool wrote in ``blocks`` into the TSDB and restart on it."""
        self.stop()
        for block in sorted(blocks.iterdir()):
            if block.is_dir() and (block / "meta.json").exists():
                shutil.move(str(block), str(self.tsdb / block.name))
        self.start()

    def _get(self, path: str, params: dict[str, Any]) -> Any:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=900) as response:
                body = json.load(response)
        except urllib.error.HTTPError as error:
            body = json.loads(error.read() or b"{}")
        if body.get("status") != "success":
            raise ToolFailed(f"prometheus {path} {params.get('query', '')!r}: "
                             f"{body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        """An instant query at ``at`` (Unix seconds)."""
        return self._get("/api/v1/query", {"query": expr, "time": _seconds(at)})["result"]

    def query_range(self, expr: str, start: float, end: float, step: float
                    ) -> dict[tuple[tuple[str, str], ...], list[tuple[float, float]]]:
        """``expr`` at ``start``, ``start + step``, … ``end``: per label set (sorted pairs), its
        (time, value) points, in as many requests as Prometheus' point limit needs."""
        series: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
        span = step * (MAX_POINTS - 1)
        at = start
        while at <= end:
            last = min(end, at + span)
            data = self._get("/api/v1/query_range", {
                "query": expr, "start": _seconds(at), "end": _seconds(last),
                "step": _seconds(step)})
            for found in data["result"]:
                key = tuple(sorted(found["metric"].items()))
                series.setdefault(key, []).extend(
                    (float(t), float(v)) for t, v in found["values"])
            at = last + step
        return series


def _seconds(t: float) -> str:
    return f"{t:.3f}"


def backfill_rules(tools: Tools, server: Server, rule_file: Path, start: float, end: float,
                   interval: float, out: Path) -> None:
    """promtool's blocks of the recording rules of ``rule_file``, evaluated by ``server``
    every ``interval`` from ``start`` to ``end``, into ``out``."""
    _run([tools.promtool, "tsdb", "create-blocks-from", "rules", f"--url={server.url}",
          f"--start={int(start)}", f"--end={int(end) + 1}",
          f"--eval-interval={interval:g}s", f"--output-dir={out}", str(rule_file)],
         f"evaluating the recording rules of {rule_file}")
