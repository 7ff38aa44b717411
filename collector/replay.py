"""``searchpulse replay``: run the engine over JSON-lines logs and summarize."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.registry import Collector
from tqdm import tqdm

from collector import definitions as d
from collector.config import Config
from collector.engine import Engine
from collector.errors import StoreError, StoreIncomplete
from collector.exposition.metrics import Exposition
from collector.exposition.openmetrics import DailyFiles, OpenMetricsWriter
from collector.exposition.scrapes import EventTimeScrapes
from collector.exposition.summary import replay_summary
from collector.exposition.view import View
from collector.ingest.deadletter import DeadLetterFile, DiscardWithCount
from collector.output_files import writing
from collector.privacy.redaction import redact
from collector.progress import counted
from collector.series.examination import ExaminationCollector, ExaminationFile
from collector.sources.files import (
    Input,
    InputError,
    InputMismatch,
    input_size,
    open_inputs,
    read_batches,
)
from collector.store.replay_lock import ReplayLock
from collector.store.replay_progress import ReplayProgress, input_name
from collector.store.store_writer import StoreWriter

T = TypeVar("T")
log = logging.getLogger(__name__)

# Stores written before input positions were recorded (store_inputs) marked each input they
# held as a store_offsets row of this group, topic = a fingerprint of its file's bytes: such an
# input is still refused (a store that old cannot say how far it got).
_LEGACY_GROUP = "searchpulse-replay"
_FINGERPRINT_SPAN = 1 << 20  # bytes hashed at each end of an input (and its size)
_SOURCE = "replay"  # the writer's one source: the replay's engine


def replay(paths: list[str], config: Config, dlq: str | None = None,
           metrics_out: str | None = None, progress: bool = False,
           store: str | None = None, openmetrics: ScrapeFile | None = None) -> dict:
    """Feed every record of ``paths`` to a fresh engine, close it and return the summary;
    with a store (``store`` or ``store.url``), the per-query aggregates are written there too,
    with how far each input got (collector/store/replay_progress.py): the same command after a
    crash finishes the replay, and records the store holds are not counted again (the
    summary's ``already_in_store``). An input that cannot be read to its end stops the input
    there; everything read before is counted, flushed and written as usual, and the summary's
    ``input_error`` names the file. The store must answer at the start (nothing is read
    before); one that goes away later is waited for: its rows wait (store_writer.py), and at
    the end the replay waits up to ``store.wait_s`` for it. ``openmetrics``: also write
    what /metrics showed at every scrape through event time (collector/exposition/scrapes.py):
    not with a store, whose resumed replay counts from where the store is, not from zero."""
    if openmetrics is not None and (store or config["store.url"]):
        raise StoreError("--openmetrics-out is a replay from the first record, and a replay "
                         "into a store resumes where the store is: run it without --store "
                         "(and store.url)")
    dead_letters = DeadLetterFile(dlq) if dlq else None
    writer = StoreWriter.from_config(config, store)
    lock = None
    try:
        inputs = open_inputs(paths, digest=writer is not None)
        tracker = None
        if writer is not None:
            writer.connect()
            lock = ReplayLock.taken(writer.url)  # before what the store holds is read
            writer.guard = lock.keep
            refuse_legacy(writer, paths)
            tracker = mismatch_refused(writer, lambda: ReplayProgress(
                inputs, writer.inputs()))
            inputs = tracker.inputs + [i for i in inputs if i.head is None]
        engine = Engine(config, dead_letters,
                        query_stats=writer.new_stats() if writer is not None else None)
        if tracker is None and openmetrics is not None:
            input_error = _scraped(engine, paths, progress, inputs, openmetrics)
        elif tracker is None:
            input_error = feed(engine, paths, progress, inputs)
        else:
            input_error = mismatch_refused(writer, lambda: feed(
                engine, paths, progress, inputs, tracker.until,
                lambda batches: _into_store(engine, batches, writer, tracker,
                                            config["store.wait_s"]),
                resumable=True))
            mismatch_refused(writer, tracker.finish)
            # after a break the replay stays unfinished, as a crash there would leave it
            marks = tracker.marks(engine.final_before() if input_error else None)
            writer.flush({_SOURCE: engine.query_stats}, inputs=marks)
            all_written(writer, config["store.wait_s"])
    finally:
        if dead_letters:
            dead_letters.close()
        if writer is not None:
            writer.close()
        if lock is not None:
            lock.release()
    reports = reported(inputs)
    if metrics_out:
        with writing(metrics_out, "--metrics-out", "wb") as handle:
            handle.write(exposition(engine, reports))
    summary = replay_summary(engine)
    warn_empty(reports)
    if tracker is not None and tracker.held:
        summary["already_in_store"] = tracker.held
    repeated = repeated_ranges(reports)
    if repeated:
        summary["repeated_records"] = repeated
    if input_error:
        summary["input_error"] = input_error
        if tracker is not None:
            summary["searches_left_open"] = engine.sessions.pending
            log.warning("the store records this replay as unfinished: the %d searches open "
                        "where the input broke off are decided when the same command is run "
                        "with the input whole", engine.sessions.pending)
    return summary


@dataclass
class InputReport:
    """What the summary and the exposition need of an input once it is read (an ``Input``
    holds its file; a worker of replay --workers sends this instead)."""

    path: str
    records: int
    failed: bool
    repeated: int  # records of its repeated ranges
    ranges: list[tuple[int, int, int]]  # (start, end, where the original starts)


def reported(inputs: list[Input]) -> list[InputReport]:
    return [InputReport(s.path, s.records, s.error is not None, s.repeats.repeated,
                        [(r.start, r.end, r.source) for r in s.repeats.found()])
            for s in inputs]


def warn_empty(inputs: list[InputReport]) -> None:
    """All of them empty is the CLI's error; one of several, a warning."""
    if len(inputs) > 1:
        for source in inputs:
            if not source.records and not source.failed:
                log.warning("input %s: no records in it (empty)", input_name(source.path))


@dataclass
class ScrapeFile:
    """Where and how the scrapes through event time are written: the OpenMetrics file, the
    scrape interval (s), the target's labels (job, instance) every sample gets and where in
    the interval the scrapes fall (``phase`` s after its multiples). With ``span_s``, ``path``
    is a directory that gets one file per span of event time, each handed to ``done`` once
    written; ``families``: only these (0.0.4 TYPE names). Once written: the first and last
    scrape's times and how many there were."""

    path: str
    interval: float
    labels: dict[str, str]
    phase: float = 0.0
    span_s: float | None = None
    done: Callable[[Path], None] | None = None
    families: Collection[str] | None = None
    first: float | None = None
    last: float | None = None
    scrapes: int = 0


def _scraped(engine: Engine, paths: list[str], progress: bool, inputs: list[Input],
             out: ScrapeFile) -> str | None:
    """``feed``, with the exposition written to ``out`` at every scrape of event time."""
    exposer = exposition_of(engine, inputs)
    with ExitStack() as stack:
        if out.span_s is None:
            handle = stack.enter_context(writing(out.path, "--openmetrics-out", "wb"))
            writer: OpenMetricsWriter | DailyFiles = OpenMetricsWriter(
                handle, out.labels, out.families)
        else:
            writer = DailyFiles(Path(out.path), out.labels, out.span_s,
                                out.done or (lambda _: None), out.families)
        stack.callback(writer.close)

        def scrape(t: float, exposition: bytes) -> None:
            writer.add(t, exposition)
            out.first = t if out.first is None else out.first
            out.last = t

        scrapes = EventTimeScrapes(engine, exposer.render, out.interval, scrape, out.phase)
        input_error = feed(engine, paths, progress, inputs, process=scrapes.process)
        scrapes.finish()
    out.scrapes = writer.scrapes
    log.info("%s: %d scrapes every %g s of event time", out.path, writer.scrapes,
             out.interval)
    return input_error


def repeated_ranges(inputs: list[InputReport]) -> dict[str, dict]:
    """Per input with repeated ranges: how many records repeat, and each range (positions
    from the input's start, the last one excluded) with where its original starts. Each is
    logged once."""
    named = {}
    for source in inputs:
        if not source.ranges:
            continue
        name = input_name(source.path)
        named[name] = {"records": sum(end - start for start, end, _ in source.ranges),
                       "ranges": [{"from": start, "to": end, "repeats_from": original}
                                  for start, end, original in source.ranges]}
        for start, end, original in source.ranges:
            log.warning("input %s: records %d to %d repeat its records %d to %d (the same "
                        "content again): counted once", name, start, end - 1, original,
                        original + end - start - 1)
    return named


class Fed(Protocol):
    """What ``feed`` drives: an engine, or the workers' engines through the reader's router
    (replay_workers.Router), fed batch by batch and closed at the end."""

    def process_all(self, batch: list[bytes]) -> None: ...

    def close(self) -> None: ...


def feed(engine: Fed, paths: list[str], progress: bool = False,
         inputs: list[Input] | None = None, until: int | None = None,
         process: Callable[[Iterator[list[bytes]]], None] | None = None,
         resumable: bool = False, label: str = "replay") -> str | None:
    """Every record of ``paths`` through ``engine`` (``process``: how, batch by batch; default
    each batch in turn), then close it; the message of an input that could not be read to its
    end (what was read before is applied), else None. ``inputs``: ``paths`` opened already;
    ``until``: where a resumed replay catches up (files.read_batches). ``resumable`` (a
    replay into a store): an input that breaks off ends every input there and the engine is
    not closed — the searches open at the break stay open, to be decided when the replay is
    finished with the intact input, as one clean replay decides them. ``label``: the progress
    bar's, the command's name."""
    batches = read_batches(inputs if inputs is not None else open_inputs(paths), until,
                           stop_at_break=resumable)
    run = process or (lambda records: _each(engine, records))
    input_error = None
    try:
        if progress:
            with counted(label, input_size(paths), "B", True) as bar:
                run(_counting_bytes(batches, bar))
        else:
            run(batches)
    except InputError as error:
        input_error = str(error)
    if not (resumable and input_error):
        engine.close()
    return input_error


def _each(engine: Fed, batches: Iterator[list[bytes]]) -> None:
    for batch in batches:
        engine.process_all(batch)


def all_written(writer: StoreWriter, wait_s: float,
                then: str = "the same command resumes from there") -> None:
    """Every row waiting in the store, waiting for it up to ``wait_s`` while it is away;
    else an error (what the store holds stays; ``then``: what the same command does)."""
    if not writer.write_all(wait_s):
        raise StoreIncomplete(f"store {redact(writer.url)}: away for {writer.away_s:.0f} s, "
                         f"{writer.waiting} rows not written (store.wait_s = {wait_s:g}): "
                         f"the store holds what it held; {then}")


def _into_store(engine: Engine, batches: Iterator[list[bytes]], writer: StoreWriter,
                tracker: ReplayProgress, wait_s: float) -> None:
    """Batch by batch; after each, aggregates are flushed when due, with the positions they
    cover. A resumed replay neither flushes nor writes dead letters until it has caught up;
    there it forgets what it counted (the store has it). While the store is away the rows
    wait; if they fill memory and cannot be spilled, reading waits for the store."""
    stats = {_SOURCE: engine.query_stats}
    dead_letters = engine.dead_letters
    if tracker.replaying:
        engine.dead_letters = DiscardWithCount()
    for batch in batches:
        engine.process_all(batch)
        tracker.after_batch(engine.buffered_until())
        if tracker.replaying:
            continue
        if tracker.caught_up():
            engine.reset_counts()
            engine.query_stats.drain()
            engine.dead_letters = dead_letters
        elif writer.due(stats.values()):
            writer.flush(stats, inputs=tracker.marks(engine.final_before()))
            if writer.full:
                all_written(writer, wait_s)


def mismatch_refused(writer: StoreWriter, step: Callable[[], T]) -> T:
    """``step``, with an input that is not what the store counted refused by name."""
    try:
        return step()
    except InputMismatch as mismatch:
        raise refusal(writer, mismatch) from None


def refusal(writer: StoreWriter, mismatch: InputMismatch) -> StoreError:
    """The error of an input that is not what the store counted."""
    return StoreError(f"store {redact(writer.url)}: {mismatch} (it begins with the first "
                      "record of an input the store holds): not replayed into it, nothing "
                      "was written (use another store)")


def refuse_legacy(writer: StoreWriter, paths: list[str]) -> None:
    """Inputs a store written by an earlier version marked as held are refused."""
    held = {topic for topic, _ in writer.offsets(_LEGACY_GROUP)}
    again = [p for p in paths if p != "-" and held and _fingerprint(p) in held]
    if again:
        raise StoreError(f"store {redact(writer.url)} already holds the aggregates of "
                         f"{', '.join(again)} (written by an earlier version, which cannot "
                         "say how far it got): replaying again would count them twice "
                         "(use another store)")


def _fingerprint(path: str) -> str:
    """sha256 of the size and the first and last MiB (the earlier version's mark)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        size = handle.seek(0, 2)
        digest.update(str(size).encode())
        handle.seek(0)
        digest.update(handle.read(_FINGERPRINT_SPAN))
        handle.seek(max(0, size - _FINGERPRINT_SPAN))
        digest.update(handle.read(_FINGERPRINT_SPAN))
    return "input:" + digest.hexdigest()


def exposition(engine: Engine, inputs: list[InputReport] | None = None) -> bytes:
    """The engine's metrics in the Prometheus text format, as a scrape would see them; with
    ``inputs``, their repeated records too."""
    return rendered(engine.view(), engine.examination, inputs)


def rendered(view: View, examination: ExaminationFile | None,
             inputs: list[InputReport] | None) -> bytes:
    """The counts of ``view`` (of one engine, or of several merged) in the text format."""
    repeated = None if inputs is None else sum(i.repeated for i in inputs)
    return _exposition(lambda: view, examination,
                       None if repeated is None else lambda: repeated).render()


def exposition_of(engine: Engine, inputs: list[Input]) -> Exposition:
    """The engine's /metrics as the replay goes, rendered at each ``render()`` (the scrapes
    through event time), with the inputs' repeated records so far."""
    return _exposition(engine.view, engine.examination,
                       lambda: sum(i.repeats.repeated for i in inputs))


def _exposition(view: Callable[[], View], examination: ExaminationFile | None,
                repeated: Callable[[], int] | None) -> Exposition:
    registry = CollectorRegistry()
    if examination is not None:
        registry.register(ExaminationCollector(examination))
    if repeated is not None:
        registry.register(RepeatsCollector(repeated))
    return Exposition(view, registry)


class RepeatsCollector(Collector):
    """``searchpulse_repeated_records_total``: the records of the inputs' repeated ranges
    (``repeated``: how many, when scraped)."""

    def __init__(self, repeated: Callable[[], int]) -> None:
        self.repeated = repeated

    def collect(self) -> Iterable[Metric]:
        yield d.REPEATED_RECORDS.metric(self.repeated())


def _counting_bytes(batches: Iterable[list[bytes]], bar: tqdm) -> Iterator[list[bytes]]:
    for batch in batches:
        yield batch
        bar.update(sum(map(len, batch)))
