"""``searchpulse demo``: simulated traffic → engine → /metrics, with a live terminal view.

Event time starts at the wall clock and runs ``speed`` times faster, so a 300 s abandonment
window closes in 300 / speed seconds of wall time. No Kafka and no Prometheus are needed.
"""

from __future__ import annotations

import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from prometheus_client import CollectorRegistry, ProcessCollector

from collector.config import Config
from collector.engine import Engine
from collector.exposition.http import MetricsServer
from collector.exposition.metrics import Exposition
from collector.exposition.summary import quality_summary
from collector.series.examination import ExaminationCollector, ExaminationFile
from collector.series.judged_relevance import JudgmentsFile
from collector.sources.simulator import SimulationSpec, Simulator
from collector.store.store_writer import StoreHealthCollector, StoreWriter

_HEADLINES = (("searches", "searches", "{:,}"), ("zero-result rate", "zero_result_rate", "{:.1%}"),
              ("CTR", "ctr", "{:.1%}"), ("reformulation rate", "reformulation_rate", "{:.1%}"),
              ("abandonment rate", "abandonment_rate", "{:.1%}"),
              ("mean time to first click", "mean_time_to_first_click_s", "{:.1f} s"),
              ("MRR of first clicks", "mrr_first_click", "{:.3f}"),
              # what the demo's web front end sends beside people's searches (README.md)
              ("keystrokes per search", "keystrokes_per_search", "{:.2f}"),
              ("automated share", "automated_share", "{:.1%}"),
              ("event coverage", "event_coverage", "{:.1%}"))


class LiveView:
    """Redraws a few headline lines in place on a terminal; prints a line now and then if not."""

    def __init__(self, out: TextIO, interval_s: float = 1.0) -> None:
        self.out = out
        self.tty = out.isatty()
        self.interval_s = interval_s if self.tty else 10.0
        self._next = 0.0
        self._lines = 0

    def maybe_draw(self, engine: Engine, started: float, port: int, force: bool = False) -> None:
        now = time.monotonic()
        if now < self._next and not force:
            return
        self._next = now + self.interval_s
        lines = render(engine, now - started, port)
        if self.tty:
            self.out.write(f"\x1b[{self._lines}F\x1b[J" if self._lines else "")
            self._lines = len(lines)
            self.out.write("\n".join(lines) + "\n")
        else:
            self.out.write(" | ".join(lines[1:4]) + "\n")
        self.out.flush()


def render(engine: Engine, elapsed: float, port: int) -> list[str]:
    summary = quality_summary(engine.table.series)
    records = engine.stats.total()
    lines = [f"searchpulse demo — {elapsed:,.0f} s, {records:,} records "
             f"({records / max(elapsed, 1e-9):,.0f}/s), metrics on http://localhost:{port}/metrics"]
    judged = (("judged NDCG@10", "judged_ndcg_at_10", "{:.3f}"),
               ("judged coverage@10", "judged_coverage_at_10", "{:.1%}"))
    for label, key, fmt in (*_HEADLINES, *judged):
        value = summary.get(key)
        lines.append(f"  {label:<26} {'no data' if value is None else fmt.format(value)}")
    lines.append(f"  open sessions {len(engine.sessions.sessions):,}  "
                 f"pending outcomes {engine.sessions.pending:,}  "
                 f"records waiting {engine.waiting:,}")
    return lines


class _StopRequest:
    """Ctrl-C (SIGINT) and SIGTERM end the demo with its final summary and flush, even when
    it was started with SIGINT ignored (a background job of a script, some CI runners:
    Python then leaves SIGINT ignored instead of raising KeyboardInterrupt). The first signal
    only asks the loop to stop between two records (within the simulator's 0.5 s tick):
    raised inside ``Engine.process`` it could leave a search half-buffered (the engine's
    bookkeeping of it without its record). A second signal interrupts whatever runs, the
    final flush included."""

    def __init__(self) -> None:
        self.requested = False

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)

    def _on_signal(self, number: int, _frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt(signal.Signals(number).name)
        self.requested = True


def run_demo(config: Config, spec: SimulationSpec, speed: float, duration_s: float | None,
             out: TextIO | None = None) -> Engine:
    """Without ``judgments.file`` the demo scores its rankings against the simulator's own
    judgment set (``simulate --judgments-out``), and without ``clicks.examination_file`` it
    weighs clicks by the simulated users' examination curve, so those metrics show too.
    ``out``: where the live view goes (default: the standard error of the time of the call,
    not of the import)."""
    out = out or sys.stderr
    writer = StoreWriter.from_config(config)
    judgments = examination = None
    with tempfile.TemporaryDirectory() as directory:
        if not config["judgments.file"]:
            path = Path(directory) / "judgments.csv"
            path.write_text(Simulator(spec).judgments_csv(), encoding="utf-8")
            judgments = JudgmentsFile(str(path), config["judgments.max_grade"])
        if not config["clicks.examination_file"]:
            path = Path(directory) / "examination.json"
            path.write_text(Simulator.examination_json(), encoding="utf-8")
            examination = ExaminationFile(str(path), config["clicks.max_weight"],
                                          config["labels.application_cap"],
                                          config["clicks.depth"])
    engine = Engine(config, query_stats=writer.new_stats() if writer is not None else None,
                    judgments=judgments, examination=examination)
    stats = {"demo": engine.query_stats}
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)  # process_resident_memory_bytes etc. for the dashboards
    if writer is not None:
        registry.register(StoreHealthCollector(writer))
    if engine.examination is not None:
        registry.register(ExaminationCollector(engine.examination))
    server = MetricsServer.from_config(Exposition(engine.view, registry).render, config).start()
    stop = _StopRequest()
    stop.install()
    view = LiveView(out)
    started = last = time.monotonic()
    try:
        for count, raw in enumerate(Simulator(spec).paced(speed, duration_s, tick_s=0.5)):
            if stop.requested:
                break
            if raw is None:  # waiting for traffic: an idle source (event time = wall × speed)
                engine.idle((time.monotonic() - last) * speed)
                view.maybe_draw(engine, started, server.port)
                continue
            last = time.monotonic()
            engine.process(raw)
            if not count & 255:
                view.maybe_draw(engine, started, server.port)
                if writer is not None and writer.due(stats.values()):
                    writer.flush(stats)
    finally:
        engine.close()
        view.maybe_draw(engine, started, server.port, force=True)
        server.stop()
        if writer is not None:
            writer.flush(stats, wait=True)
            writer.close()
    return engine
