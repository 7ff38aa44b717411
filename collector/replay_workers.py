"""``searchpulse replay --workers N``: the replay split by partition over N processes.

Records are partitioned as a Kafka topic of ``replay.partitions`` partitions keyed by
``client_id`` partitions them (collector/sources/partitions.py), and each partition has its own
engine — its own stream clock, sessions and counts — as each partition of ``collect`` has: the
replay computes what the consumers of such a topic compute, and the same whatever ``N``.

The parent is the one reader: it reads the inputs once (repeats, the store's marks, progress),
finds each record's partition (a two-field decode) and sends each worker, a forked process, the
records of its partitions batch by batch, so reading and routing overlap the engines instead of
being repeated in every worker. At the end each worker sends each partition's counts (a
``View``), per-query aggregates and dead letters. The parent merges them in partition order, so
every sum — floats included — is added in the same order whichever worker computed it: the
summary, the exposition and the store rows are those of one process, byte for byte.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from collector.config import Config
from collector.engine import Engine
from collector.errors import ConfigError, InputMismatch, StoreError, WorkerFailed
from collector.exposition.summary import counts_summary
from collector.exposition.view import View, merge_views
from collector.ingest.deadletter import DeadLetterFile
from collector.output_files import writing
from collector.privacy.redaction import redact
from collector.replay import (
    InputReport,
    all_written,
    feed,
    mismatch_refused,
    refusal,
    refuse_legacy,
    rendered,
    repeated_ranges,
    reported,
    warn_empty,
)
from collector.series.examination import ExaminationFile
from collector.series.judged_relevance import JudgmentsFile
from collector.series.zero_result_queries import QueryRelease
from collector.sources.files import Input, open_inputs
from collector.sources.partitions import Partitioner
from collector.store.query_stats import Key, QueryRow, QueryStats
from collector.store.query_store import InputMark
from collector.store.replay_lock import ReplayLock
from collector.store.replay_progress import ReplayProgress
from collector.store.store_writer import StoreWriter

PARTITIONS_KEY = "replay.partitions"
log = logging.getLogger(__name__)


@dataclass
class PartitionResult:
    partition: int
    view: View
    rows: dict[Key, QueryRow] | None
    dead_letters: str | None  # the file of its dead letters, in its order


Parts = list[tuple[int, list[bytes]]]  # a batch's records of one worker's partitions


def replay_partitioned(paths: list[str], config: Config, workers: int,
                       dlq: str | None = None, metrics_out: str | None = None,
                       progress: bool = False) -> dict:
    """``replay`` (collector/replay.py) of ``replay.partitions`` engines over ``workers``
    processes: the summary of their counts merged, the top queries released from all of
    them together (as a collector of several partitions releases them). With a store
    (``store.url``), the partitions' rows are written at the end, merged in partition order,
    with every input marked complete, in one transaction: nothing is written before, so a
    crash leaves the store as it was and the same command starts over (see ``_into_store``)."""
    check_workers(workers, config)
    writer = StoreWriter.from_config(config)
    lock = None
    # the partitions' dead letters, apart until the store holds what they go with
    dlq_dir = tempfile.mkdtemp(prefix="searchpulse-dlq-") if dlq else None
    try:
        with _ended_by_signals():
            if writer is not None:
                writer.connect()
                lock = ReplayLock.taken(writer.url)  # before what the store holds is read
                writer.guard = lock.keep
            stored = _stored(writer, paths) if writer is not None else None
            merged = run_workers(paths, config, workers, dlq_dir, stored, progress)
            if writer is not None:
                _into_store(writer, merged, config)
            # after an input broke off, a replay into a store wrote nothing, and the same
            # command starts over: so are its dead letters, which that run writes
            if dlq and not (merged.input_error and writer is not None):
                _append(dlq, merged.dead_letters)
    except InputMismatch as mismatch:  # a worker found an input that is not the store's
        if writer is None:
            raise
        raise refusal(writer, mismatch) from None
    finally:
        if writer is not None:
            writer.close()
        if lock is not None:
            lock.release()
        if dlq_dir:
            shutil.rmtree(dlq_dir, ignore_errors=True)
    view = merge_views(merged.views, QueryRelease.from_config(config))
    if metrics_out:
        with writing(metrics_out, "--metrics-out", "wb") as handle:
            handle.write(rendered(view, ExaminationFile.from_config(config), merged.inputs))
    summary = counts_summary(view.series, view.stats)
    warn_empty(merged.inputs)
    if merged.held:
        summary["already_in_store"] = merged.held
    repeated = repeated_ranges(merged.inputs)
    if repeated:
        summary["repeated_records"] = repeated
    if merged.input_error:
        summary["input_error"] = merged.input_error
    return summary


@contextmanager
def _ended_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP end the replay as an exception (exit 128 + the signal), so what it
    keeps apart — the partitions' dead letters, raw records — is removed on the way out, as
    on Ctrl-C; the workers are forked with the default handlers back (``_child``)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers: a caller's thread keeps its own
        return
    ending = (signal.SIGTERM, signal.SIGHUP)
    before = {number: signal.signal(number, _end) for number in ending}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def _end(number: int, _frame: object) -> None:
    raise SystemExit(128 + number)


def _append(dlq: str, parts: list[str]) -> None:
    """Each partition's dead letters appended to ``dlq``, in partition order."""
    with open(dlq, "ab") as out:
        for path in parts:
            with open(path, "rb") as handle:
                shutil.copyfileobj(handle, out)


def _stored(writer: StoreWriter, paths: list[str]) -> tuple[ReplayProgress, list[Input]]:
    """The inputs opened against what the store holds of them, once it is known that the
    workers can go on from there: every refusal of a replay into a store (an earlier
    version's marks, an input beginning like a held one, two inputs the same) is made here,
    before a worker starts; so is an interrupted replay's, which only the command that began
    it can finish (its rows are one engine's, a ``--workers`` replay's the partitions')."""
    refuse_legacy(writer, paths)
    stored = writer.inputs()
    inputs = open_inputs(paths, digest=True)
    tracker = mismatch_refused(writer, lambda: ReplayProgress(inputs, stored))
    if tracker.until is not None:
        raise StoreError(f"store {redact(writer.url)} holds an interrupted replay of "
                         f"{', '.join(tracker.held)} (without --workers): finish it with the "
                         "command that began it, without --workers")
    return tracker, inputs


def _into_store(writer: StoreWriter, merged: Merged, config: Config) -> None:
    """The partitions' rows, in partition order, and every input complete, in one write
    (waited for up to ``store.wait_s``). Not after an input broke off: a replay into a store
    finishes the searches open at a break only with the intact input, and the workers have
    no position they can all resume from, so nothing is written and the store stays as it
    was, for the same command with the input whole."""
    if merged.input_error:
        log.error("nothing written to the store %s: an input broke off (replay --workers "
                  "writes a store only from inputs read to their end)", redact(writer.url))
        return
    depth = config["store.shown_depth"]
    writer.flush({p: QueryStats.holding(rows, depth) for p, rows in merged.rows.items()},
                 inputs=merged.marks)
    all_written(writer, config["store.wait_s"],  # one transaction: none of it was written
                "the same command starts over (replay --workers writes once, at the end)")


def assigned(partitions: int, workers: int) -> list[range]:
    """Each worker's partitions: contiguous ranges, as even as they can be."""
    base, extra = divmod(partitions, workers)
    ranges, start = [], 0
    for w in range(workers):
        size = base + (w < extra)
        ranges.append(range(start, start + size))
        start += size
    return ranges


def check_workers(workers: int, config: Config) -> None:
    """``--workers`` must be 1 to ``replay.partitions``: a worker with no partition has
    nothing to do, and the partitioning (hence the result) must not depend on N."""
    partitions = config[PARTITIONS_KEY]
    if not 1 <= workers <= partitions:
        raise ConfigError(
            f"--workers {workers}: must be 1 to {PARTITIONS_KEY} "
            f"({partitions}): each worker replays whole partitions (raise "
            f"{PARTITIONS_KEY} for more workers)"
        )


class PartitionGroup:
    """The engines of one worker's partitions, fed the records the reader routed to them."""

    def __init__(self, config: Config, mine: range, dlq_dir: str | None, with_store: bool) -> None:
        self.mine = mine
        judgments = (
            JudgmentsFile(config["judgments.file"], config["judgments.max_grade"])
            if config["judgments.file"]
            else None
        )
        examination = ExaminationFile.from_config(config)
        self.sinks = (
            {p: DeadLetterFile(os.path.join(dlq_dir, f"{p}.jsonl")) for p in mine}
            if dlq_dir
            else {}
        )
        self.engines = {
            p: Engine(
                config,
                self.sinks.get(p),
                query_stats=QueryStats(config["store.shown_depth"]) if with_store else None,
                judgments=judgments,
                examination=examination,
            )
            for p in mine
        }

    def process_parts(self, parts: Parts) -> None:
        """One batch's records of these partitions, each partition's in arrival order."""
        engines = self.engines
        for p, records in parts:
            engines[p].process_all(records)

    def close(self) -> None:
        for engine in self.engines.values():
            engine.close()

    def results(self) -> list[PartitionResult]:
        out = []
        for p, engine in self.engines.items():
            sink = self.sinks.get(p)
            if sink is not None:
                sink.close()
            stats = engine.query_stats
            out.append(
                PartitionResult(
                    p,
                    merge_views([engine.view(release=False)]),
                    stats.drain() if stats is not None else None,
                    sink.path if sink is not None else None,
                )
            )
        return out


class Router:
    """The reader's side of the workers, driven by ``feed`` as one engine is: each batch's
    records split by partition (collector/sources/partitions.py) and sent to the worker of
    their partition, one message a batch, so each partition's engine gets the sub-batches a
    ``PartitionGroup`` of every partition would give it, in the same order, whatever ``N``.
    A worker that has not taken the last message yet holds the reader back (the pipe)."""

    def __init__(self, partitions: int, ranges: list[range], pipes: list[Connection]) -> None:
        self.partitioner = Partitioner(partitions)
        self.every = range(partitions)
        self.ranges = list(zip(ranges, pipes, strict=True))

    def process_all(self, batch: list[bytes]) -> None:
        split = self.partitioner.split(batch, self.every)
        for mine, pipe in self.ranges:
            parts = [(p, split[p]) for p in mine if split[p]]
            if parts:
                pipe.send(parts)

    def close(self) -> None:
        """The end of the inputs: each worker closes its engines and sends its results (a
        worker that ended early has its error there instead)."""
        for _, pipe in self.ranges:
            try:
                pipe.send(None)
            except BrokenPipeError:
                pass


def run_worker(records: Connection, config: Config, mine: range, dlq_dir: str | None,
               with_store: bool) -> list[PartitionResult]:
    """One worker's replay: its partitions' records as the reader sends them, until the end
    of the inputs (``None``); then its partitions' results."""
    group = PartitionGroup(config, mine, dlq_dir, with_store)
    while (parts := records.recv()) is not None:
        group.process_parts(parts)
    group.close()
    return group.results()


def _child(inherited: list[Connection], records: Connection, results: Connection,
           *args: Any) -> None:
    for number in (signal.SIGTERM, signal.SIGHUP):  # the parent's handlers are not a worker's
        signal.signal(number, signal.SIG_DFL)
    for end in inherited:  # the parent's ends of its pipes and the earlier workers': so a
        end.close()  # parent that dies ends this worker's pipes, and it ends too
    try:
        result: Any = ("ok", run_worker(records, *args))
    except BaseException as error:  # sent to the parent, which raises it
        result = ("error", error, traceback.format_exc())
    finally:
        records.close()  # the reader's next message fails at once instead of waiting
    try:
        results.send(result)
    except OSError:  # the parent is gone (it stopped the workers): nobody to tell
        pass
    finally:
        results.close()


@dataclass
class Merged:
    """The partitions' results put together, in partition order."""

    views: list[View]
    rows: dict[int, dict[Key, QueryRow]]  # per partition (a replay into a store)
    dead_letters: list[str]  # each partition's file of them, in partition order
    input_error: str | None
    inputs: list[InputReport]
    marks: list[InputMark]
    held: dict[str, int]


def run_workers(
    paths: list[str],
    config: Config,
    workers: int,
    dlq_dir: str | None,
    stored: tuple[ReplayProgress, list[Input]] | None,
    progress: bool,
) -> Merged:
    """Fork ``workers`` processes over the partitions, read the inputs to them and gather
    what they computed; each partition's dead letters in a file of its own in ``dlq_dir``.
    ``stored`` (a replay into a store): the inputs opened against what the store holds
    of them, held ones skipped and grown ones continued as a replay into it does
    (collector/store/replay_progress.py)."""
    tracker, inputs = stored if stored is not None else (None, open_inputs(paths))
    if tracker is not None:
        inputs = tracker.inputs + [i for i in inputs if i.head is None]
    ranges = assigned(config[PARTITIONS_KEY], workers)
    started = _start(config, ranges, dlq_dir, stored is not None)
    router = Router(config[PARTITIONS_KEY], ranges, [pipe for _, pipe, _ in started])
    try:
        try:
            input_error = feed(router, paths, progress, inputs)
        except BrokenPipeError:  # a worker ended early: its error is in its result
            input_error = None
            router.close()
        results = _gather(started)
    except BaseException:  # a worker's error, a refusal, an interrupt: none go on
        _stop(started)
        raise
    parts = sorted((p for r in results for p in r), key=lambda p: p.partition)
    return Merged(
        [p.view for p in parts],
        {p.partition: p.rows for p in parts if p.rows is not None},
        [p.dead_letters for p in parts if p.dead_letters],
        input_error,
        reported(inputs),
        ([] if input_error else tracker.marks()) if tracker is not None else [],
        tracker.held if tracker is not None else {},
    )


Started = list[tuple[BaseProcess, Connection, Connection]]  # a worker, its records, its result


def _start(config: Config, ranges: list[range], dlq_dir: str | None,
           with_store: bool) -> Started:
    """A forked worker per range of partitions, each with a pipe of records from the reader
    and one of its result back. The parent closes the children's ends at once, before the
    next fork, so no other process holds them: a worker that ends early breaks the reader's
    pipe, and one that dies ends its result pipe; each worker closes its copies of the
    parent's ends (of its pipes and of those forked before it)."""
    context = multiprocessing.get_context("fork")
    started: Started = []
    for w, mine in enumerate(ranges):
        take, give = context.Pipe(duplex=False)
        receive, send = context.Pipe(duplex=False)
        inherited = [end for _, *ends in started for end in ends] + [give, receive]
        process = context.Process(target=_child, args=(inherited, take, send, config, mine,
                                                       dlq_dir, with_store),
                                  name=f"searchpulse-replay-{w}")
        process.start()
        take.close()
        send.close()
        started.append((process, give, receive))
    return started


def _stop(started: Started) -> None:
    """The workers ended without their results (the reader failed: a refusal, an
    interrupt)."""
    for process, give, receive in started:
        give.close()
        receive.close()
        process.terminate()
    for process, _, _ in started:
        process.join()


def _gather(started: Started) -> list[list[PartitionResult]]:
    """Each worker's results, in worker order; a worker's exception is raised here."""
    answers = []
    for process, give, receive in started:
        give.close()  # every message sent, the end (None) last
        try:
            answers.append(receive.recv())
        except EOFError:
            process.join()
            answers.append(("error", WorkerFailed(
                f"replay worker {process.name} ended without its result (exit code "
                f"{process.exitcode}: killed, out of memory?); nothing was written"), ""))
        finally:
            receive.close()
    for process, _, _ in started:
        process.join()
    for answer in answers:
        if answer[0] == "error":
            if answer[2] and not isinstance(answer[1], (ValueError, OSError, KeyboardInterrupt)):
                log.error("a replay worker failed:\n%s", answer[2])  # not one of ours
            raise answer[1]
    return [answer[1] for answer in answers]
