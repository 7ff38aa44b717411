"""``searchpulse replay``: run the engine over JSON-lines logs and summarize."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry
from tqdm import tqdm

from collector.config import Config
from collector.deadletter import DeadLetterFile
from collector.engine import Engine
from collector.examination import ExaminationCollector
from collector.metrics import Exposition
from collector.query_store import StoreError
from collector.redaction import redact
from collector.sources.files import InputError, input_size, open_inputs, read_batches
from collector.store_writer import StoreWriter
from collector.summary import replay_summary

_FLUSH_CHECK_EVERY = 1 << 16  # records between checks whether aggregates are due for a flush
# A store remembers the inputs it holds the aggregates of as store_offsets rows of this group
# (topic = the input's fingerprint), written in the same transaction as the rows.
REPLAY_GROUP = "searchpulse-replay"
_FINGERPRINT_SPAN = 1 << 20  # bytes hashed at each end of an input (and its size)


def replay(paths: list[str], config: Config, dlq: str | None = None,
           metrics_out: str | None = None, progress: bool = False,
           store: str | None = None) -> dict:
    """Feed every record of ``paths`` to a fresh engine, close it and return the summary;
    with a store (``store`` or ``store.url``), the per-query aggregates are written there too.
    An input that cannot be read to its end stops the input there; everything read before is
    counted, flushed and written as usual, and the summary's ``input_error`` names the file."""
    dead_letters = DeadLetterFile(dlq) if dlq else None
    writer = StoreWriter.from_config(config, store)
    marks = _not_yet_applied(writer, paths) if writer is not None else None
    engine = Engine(config, dead_letters,
                    query_stats=writer.new_stats() if writer is not None else None)
    batches = read_batches(open_inputs(paths))
    input_error = None
    try:
        try:
            if progress:
                with tqdm(total=input_size(paths), unit="B", unit_scale=True,
                          desc="replay") as bar:
                    _process(engine, _counting_bytes(batches, bar), writer, marks)
            else:
                _process(engine, batches, writer, marks)
        except InputError as error:
            input_error = str(error)
        engine.close()
        if writer is not None and not writer.flush([engine.query_stats], marks,
                                                   REPLAY_GROUP, wait=True):
            raise StoreError(f"store {redact(writer.store.url)}: the final flush failed")
    finally:
        if dead_letters:
            dead_letters.close()
        if writer is not None:
            writer.close()
    if metrics_out:
        with open(metrics_out, "wb") as handle:
            handle.write(exposition(engine))
    summary = replay_summary(engine)
    if input_error:
        summary["input_error"] = input_error
    return summary


def _not_yet_applied(writer: StoreWriter, paths: list[str]) -> dict[tuple[str, int], tuple]:
    """The marks recording ``paths`` in the store; refuses inputs the store already holds
    (replaying one again would count it twice). Standard input cannot be recognised."""
    fingerprints = {_fingerprint(path): path for path in paths if path != "-"}
    held = {topic for topic, _ in writer.offsets(REPLAY_GROUP)}
    again = [path for fingerprint, path in fingerprints.items() if fingerprint in held]
    if again:
        raise StoreError(f"store {redact(writer.store.url)} already holds the aggregates of "
                         f"{', '.join(again)}: replaying again would count them twice "
                         "(use another store)")
    return {(fingerprint, 0): (1, 1) for fingerprint in fingerprints}


def _fingerprint(path: str) -> str:
    """sha256 of the size and the first and last MiB: the same bytes under any name."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        size = handle.seek(0, 2)
        digest.update(str(size).encode())
        handle.seek(0)
        digest.update(handle.read(_FINGERPRINT_SPAN))
        handle.seek(max(0, size - _FINGERPRINT_SPAN))
        digest.update(handle.read(_FINGERPRINT_SPAN))
    return "input:" + digest.hexdigest()


def _process(engine: Engine, batches: Iterator[list[bytes]], writer: StoreWriter | None,
              marks: dict | None) -> None:
    """Batch by batch; every ``_FLUSH_CHECK_EVERY`` records, aggregates are flushed when due.
    The records read before an input error are applied before the error goes on."""
    stats = [engine.query_stats]
    since_check = 0
    for batch in batches:
        engine.process_all(batch)
        since_check += len(batch)
        if writer is not None and since_check >= _FLUSH_CHECK_EVERY:
            since_check = 0
            if writer.due(stats):
                writer.flush(stats, marks, REPLAY_GROUP)


def exposition(engine: Engine) -> bytes:
    """The engine's metrics in the Prometheus text format, as a scrape would see them."""
    registry = CollectorRegistry()
    if engine.examination is not None:
        registry.register(ExaminationCollector(engine.examination))
    return Exposition(engine.view, registry).render()


def _counting_bytes(batches: Iterable[list[bytes]], bar: tqdm) -> Iterator[list[bytes]]:
    for batch in batches:
        yield batch
        bar.update(sum(map(len, batch)))
