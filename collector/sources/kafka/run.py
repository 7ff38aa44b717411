"""Process wiring of `searchpulse collect`: HTTP first, then connect with backoff (one line
per attempt; given up after ``kafka.connect_timeout_s``), run, stop (within
``Shutdown.GRACE_S`` of SIGTERM, whatever the brokers do)."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

from kafka.errors import KafkaError
from prometheus_client import CollectorRegistry, ProcessCollector

from collector.config import Config
from collector.errors import BrokersUnreachable
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
    connecting = "connecting to Kafka"  # what /readyz says until connected

    def view(self) -> View:
        if self.source is None:
            return View(series=[], stats=PipelineStats(), folded={})
        return self.source.exposed

    def ready(self) -> tuple[bool, str]:
        return self.source.ready() if self.source else (False, self.connecting)


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
        self._previous = {number: signal.signal(number, self._on_signal)
                          for number in (signal.SIGTERM, signal.SIGINT)}

    def uninstall(self) -> None:
        """The handlers before :meth:`install` (``collect`` run in-process, as tests do)."""
        for number, handler in self._previous.items():
            signal.signal(number, handler)

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


# Each attempt waits at most this long for a first broker (twice the backoff before it, from
# 2 s; kafka-python's own bootstrap waits 30 s, logging only its own lines): one line of ours
# per attempt, and a timeout kept to.
ATTEMPT_S = 10.0


def _connect(config: Config, holder: _Holder, shutdown: Shutdown) -> None:
    """Connect, retrying with backoff, one warning per failed attempt, until connected; after
    ``kafka.connect_timeout_s`` (0: never) :class:`BrokersUnreachable` (a signal meanwhile
    ends the process: Shutdown)."""
    servers = config["kafka.bootstrap_servers"]
    limit = config["kafka.connect_timeout_s"]
    deadline = time.monotonic() + limit if limit else float("inf")
    delay = 1.0
    while holder.source is None:
        attempt = max(0.5, min(ATTEMPT_S, 2 * delay, deadline - time.monotonic()))
        try:
            holder.source = KafkaCollector(config, bootstrap_timeout_s=attempt)
        except (KafkaError, OSError) as error:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrokersUnreachable(
                    f"Kafka at {servers}: no broker answered within kafka.connect_timeout_s "
                    f"= {limit:g} s (last: {error}): is it running, and are "
                    "kafka.bootstrap_servers and kafka.security_protocol right?") from None
            wait = min(delay, left)
            holder.connecting = f"connecting to Kafka at {servers}: {error}"
            log.warning("Kafka at %s unreachable (%s); retrying in %.0f s%s", servers, error,
                        wait, f", giving up in {left:.0f} s (kafka.connect_timeout_s)"
                        if limit else "")
            shutdown.stop.wait(wait)
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
    try:
        _connect(config, holder, shutdown)
        log.info("collecting %s as %s in group %s", ",".join(holder.source.topics),
                 holder.source.instance, config["kafka.group_id"])
        registry.register(KafkaHealthCollector(holder.source))
        if holder.source.writer is not None:
            registry.register(StoreHealthCollector(holder.source.writer))
        if holder.source.examination is not None:
            registry.register(ExaminationCollector(holder.source.examination))
        holder.source.stop_event = shutdown.stop
        holder.source.run()
    finally:
        server.stop()
        shutdown.uninstall()
