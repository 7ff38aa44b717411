"""Process wiring of `searchpulse collect`: HTTP first, then connect with backoff, run, stop."""

from __future__ import annotations

import logging
import signal
import threading

from kafka.errors import KafkaError
from prometheus_client import CollectorRegistry, ProcessCollector

from collector.config import Config
from collector.examination import ExaminationCollector
from collector.http import MetricsServer
from collector.metrics import Exposition
from collector.sources.kafka.consumer import KafkaCollector
from collector.sources.kafka.health import KafkaHealthCollector
from collector.store_writer import StoreHealthCollector
from collector.view import View

log = logging.getLogger(__name__)


class _Holder:
    """The collector, once connected; /metrics and /readyz work before that."""

    source: KafkaCollector | None = None

    def view(self) -> View:
        from collector.accounting import PipelineStats

        if self.source is None:
            return View(series=[], stats=PipelineStats(), folded={})
        return self.source.exposed

    def ready(self) -> tuple[bool, str]:
        return self.source.ready() if self.source else (False, "connecting to Kafka")


def run_collector(config: Config) -> None:
    holder = _Holder()
    stop = threading.Event()
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)  # process_resident_memory_bytes etc. for the dashboards
    server = MetricsServer.from_config(Exposition(holder.view, registry).render, config,
                                       holder.ready).start()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    delay = 1.0
    while not stop.is_set() and holder.source is None:
        try:
            holder.source = KafkaCollector(config)
        except (KafkaError, OSError) as error:
            log.warning("Kafka unavailable at start (%s); retrying in %.0f s", error, delay)
            stop.wait(delay)
            delay = min(delay * 2, 30.0)
    if holder.source is None:
        server.stop()
        return
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
