"""``searchpulse replay``: run the engine over JSON-lines logs and summarize."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from tqdm import tqdm

from collector.config import Config
from collector.deadletter import DeadLetterFile
from collector.engine import Engine
from collector.metrics import SearchpulseCollector
from collector.query_stats import QueryStats
from collector.query_store import open_store
from collector.sources.files import input_size, read_records
from collector.summary import replay_summary

_PROGRESS_EVERY = 1 << 14  # records between progress-bar updates


def replay(paths: list[str], config: Config, dlq: str | None = None,
           metrics_out: str | None = None, progress: bool = False,
           store: str | None = None) -> dict:
    """Feed every record of ``paths`` to a fresh engine, close it and return the summary;
    with ``store``, the per-query aggregates are written there too."""
    dead_letters = DeadLetterFile(dlq) if dlq else None
    query_store = open_store(store) if store else None
    engine = Engine(config, dead_letters,
                    query_stats=QueryStats() if query_store is not None else None)
    records = read_records(paths)
    try:
        if progress:
            with tqdm(total=input_size(paths), unit="B", unit_scale=True, desc="replay") as bar:
                engine.process_all(_counting_bytes(records, bar))
        else:
            engine.process_all(records)
        engine.close()
        if query_store is not None:
            query_store.add(engine.sessions.query_stats.drain())
    finally:
        if dead_letters:
            dead_letters.close()
        if query_store is not None:
            query_store.close()
    if metrics_out:
        with open(metrics_out, "wb") as handle:
            handle.write(exposition(engine))
    return replay_summary(engine)


def exposition(engine: Engine) -> bytes:
    """The engine's metrics in the Prometheus text format, as a scrape would see them."""
    registry = CollectorRegistry()
    registry.register(SearchpulseCollector(engine.view))
    return generate_latest(registry)


def _counting_bytes(records: Iterable[bytes], bar: tqdm) -> Iterator[bytes]:
    size = count = 0
    for raw in records:
        size += len(raw)
        count += 1
        if count == _PROGRESS_EVERY:
            bar.update(size)
            size = count = 0
        yield raw
    bar.update(size)
