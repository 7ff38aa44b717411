"""Process wiring of `searchpulse collect`: HTTP first, then connect with backoff, run, stop
(within ``Shutdown.GRACE_S`` of SIGTERM, whatever the brokers do)."""

from __future__ import annotations

import logging
import os
import signal
import threading

from kafka.errors import KafkaError
from prometheus_client import CollectorRegistry, ProcessCollector

from collector.config import Config
from collector.exposition.http import MetricsServer
from collector.exposition.metrics import Exposition
from collector.exposition.view import View
from collector.ingest.accounting import PipelineStats
from collector.series.examination import ExaminationCollector
from collector.sources.kafka.consumer import KafkaCollector
from collector.sources.kafka.health import KafkaHealthCollector
from collector.store.store_writer import StoreHealthCollector

log = logging.getLogger(__name__)


class _Holder:
    """The collector, once connected; /metrics and /readyz work before that."""

    source: KafkaCollector | None = None

    def view(self) -> View:
        if self.source is None:
            return View(series=[], stats=PipelineStats(), folded={})
        return self.source.exposed

    def ready(self) -> tuple[bool, str]:
        return self.source.ready() if self.source else (False, "connecting to Kafka")


class Shutdown:
    """What SIGTERM and SIGINT do: set ``stop`` (the loop finishes its batch, checkpoints and
    closes every client, each step bounded), and end the process ``GRACE_S`` after the
    signal, as a SIGKILL would (what the last checkpoint and the store's last flush cover is
    kept; the rest is replayed next start). While connecting, nothing has been read yet: the
    process ends at once, instead of waiting out kafka-python's bootstrap (up to 30 s) or
    breaking into it (its half-made clients then print tracebacks as they are collected)."""

    GRACE_S = 4.5

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.connecting = True
        self._deadline: threading.Timer | None = None

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

    def _on_signal(self, number: int, _frame: object) -> None:
        self.stop.set()
        if self._deadline is None:
            log.info("%s: stopping", signal.Signals(number).name)
            self._deadline = threading.Timer(self.GRACE_S, self._exit_now)
            self._deadline.daemon = True
            self._deadline.start()
        if self.connecting:
            log.info("not connected to Kafka yet: nothing read, nothing to save")
            self._exit()

    def _exit_now(self) -> None:
        log.warning("shutdown not finished %.1f s after the signal (a broker or the store "
                    "not answering): exiting; the next start goes on from the last checkpoint",
                    self.GRACE_S)
        self._exit()

    @staticmethod
    def _exit() -> None:
        logging.shutdown()
        os._exit(0)


def _connect(config: Config, holder: _Holder, shutdown: Shutdown) -> None:
    """Connect, retrying with backoff, until connected (a signal meanwhile ends the process:
    Shutdown)."""
    delay = 1.0
    while holder.source is None:
        try:
            holder.source = KafkaCollector(config)
        except (KafkaError, OSError) as error:
            log.warning("Kafka unavailable at start (%s); retrying in %.0f s", error, delay)
            shutdown.stop.wait(delay)
            delay = min(delay * 2, 30.0)
    shutdown.connecting = False


def run_collector(config: Config) -> None:
    holder = _Holder()
    shutdown = Shutdown()
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)  # process_resident_memory_bytes etc. for the dashboards
    server = MetricsServer.from_config(Exposition(holder.view, registry).render, config,
                                       holder.ready).start()
    shutdown.install()
    _connect(config, holder, shutdown)
    stop = shutdown.stop
    log.info("collecting %s as %s in group %s", ",".join(holder.source.topics),
             holder.source.instance, config["kafka.group_id"])
    registry.register(KafkaHealthCollector(holder.source))
    if holder.source.writer is not None:
        registry.register(StoreHealthCollector(holder.source.writer))
    if holder.source.examination is not None:
        registry.register(ExaminationCollector(holder.source.examination))
    holder.source.stop_event = stop
    try:
        holder.source.run()
    finally:
        server.stop()
