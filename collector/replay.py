"""``searchpulse replay``: run the engine over JSON-lines logs and summarize."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice

from prometheus_client import CollectorRegistry, generate_latest
from tqdm import tqdm

from collector.config import Config
from collector.deadletter import DeadLetterFile
from collector.engine import Engine
from collector.metrics import SearchpulseCollector
from collector.query_store import StoreError, redact
from collector.sources.files import input_size, read_records
from collector.store_writer import StoreWriter
from collector.summary import replay_summary

_PROGRESS_EVERY = 1 << 14  # records between progress-bar updates
_FLUSH_CHECK_EVERY = 1 << 16  # records between checks whether aggregates are due for a flush


def replay(paths: list[str], config: Config, dlq: str | None = None,
           metrics_out: str | None = None, progress: bool = False,
           store: str | None = None) -> dict:
    """Feed every record of ``paths`` to a fresh engine, close it and return the summary;
    with a store (``store`` or ``store.url``), the per-query aggregates are written there too."""
    dead_letters = DeadLetterFile(dlq) if dlq else None
    writer = StoreWriter.from_config(config, store)
    engine = Engine(config, dead_letters,
                    query_stats=writer.new_stats() if writer is not None else None)
    records = read_records(paths)
    try:
        if progress:
            with tqdm(total=input_size(paths), unit="B", unit_scale=True, desc="replay") as bar:
                _process(engine, _counting_bytes(records, bar), writer)
        else:
            _process(engine, records, writer)
        engine.close()
        if writer is not None and not writer.flush([engine.sessions.query_stats], wait=True):
            raise StoreError(f"store {redact(writer.store.url)}: the final flush failed")
    finally:
        if dead_letters:
            dead_letters.close()
        if writer is not None:
            writer.close()
    if metrics_out:
        with open(metrics_out, "wb") as handle:
            handle.write(exposition(engine))
    return replay_summary(engine)


def _process(engine: Engine, records: Iterator[bytes], writer: StoreWriter | None) -> None:
    if writer is None:
        engine.process_all(records)
        return
    stats = [engine.sessions.query_stats]
    while chunk := list(islice(records, _FLUSH_CHECK_EVERY)):
        engine.process_all(chunk)
        if writer.due(stats):
            writer.flush(stats)


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
