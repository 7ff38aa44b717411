"""``searchpulse replay --workers N``: the replay split by partition over N processes.

Records are partitioned as a Kafka topic of ``replay.partitions`` partitions keyed by
``client_id`` partitions them (collector/sources/partitions.py), and each partition has its own
engine — its own stream clock, sessions and counts — as each partition of ``collect`` has: the
replay computes what the consumers of such a topic compute, and the same whatever ``N``.

Each worker is a forked process that reads every input itself (no records cross a pipe: a
record's partition costs a two-field decode, far less than sending it) and keeps the records
of its own partitions; at the end it sends each partition's counts (a ``View``), per-query
aggregates and dead letters. The parent merges them in partition order, so every sum — floats
included — is added in the same order whichever worker computed it: the summary, the
exposition and the store rows are those of one process, byte for byte.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import tempfile
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from collector.config import Config
from collector.engine import Engine
from collector.errors import ConfigError, InputMismatch, StoreError
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
from collector.sources.files import open_inputs
from collector.sources.partitions import Partitioner
from collector.store.query_stats import Key, QueryRow, QueryStats
from collector.store.query_store import InputMark
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


@dataclass
class WorkerResult:
    partitions: list[PartitionResult]
    input_error: str | None
    inputs: list[InputReport] = field(default_factory=list)
    marks: list[InputMark] = field(default_factory=list)  # every input complete (a store)
    held: dict[str, int] = field(default_factory=dict)  # input → records the store held


def replay_partitioned(paths: list[str], config: Config, workers: int,
                       dlq: str | None = None, metrics_out: str | None = None,
                       progress: bool = False) -> dict:
    """``replay`` (collector/replay.py) of ``replay.partitions`` engines over ``workers``
    processes: the summary of their counts merged, the top queries released from all of
    them together (as a collector of several partitions releases them). With a store
    (``store.url``), the partitions' rows are written at the end, merged in partition order,
    with every input marked complete, in one transaction: nothing is written before, so a
    crash leaves the store as it was and the same command starts over (see ``_into_store``)."""
    if "-" in paths:
        raise ConfigError("--workers: not with - (stdin): each worker reads every input "
                          "itself; give the log as a file")
    writer = StoreWriter.from_config(config)
    try:
        stored = _stored(writer, paths) if writer is not None else None
        merged = run_workers(paths, config, workers, dlq, stored, progress)
        if writer is not None:
            _into_store(writer, merged, config)
    except InputMismatch as mismatch:  # a worker found an input that is not the store's
        if writer is None:
            raise
        raise refusal(writer, mismatch) from None
    finally:
        if writer is not None:
            writer.close()
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


def _stored(writer: StoreWriter, paths: list[str]) -> dict[str, InputMark]:
    """What the store holds of replays' inputs, once it is known that the workers can go on
    from there: every refusal of a replay into a store (an earlier version's marks, an
    input beginning like a held one, two inputs the same) is made here, before a worker
    starts; so is an interrupted replay's, which only the command that began it can finish
    (its rows are one engine's, a ``--workers`` replay's the partitions')."""
    writer.connect()
    refuse_legacy(writer, paths)
    stored = writer.inputs()
    tracker = mismatch_refused(writer, lambda: ReplayProgress(
        open_inputs(paths, digest=True), stored))
    if tracker.until is not None:
        raise StoreError(f"store {redact(writer.url)} holds an interrupted replay of "
                         f"{', '.join(tracker.held)} (without --workers): finish it with the "
                         "command that began it, without --workers")
    return stored


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
    all_written(writer, config["store.wait_s"])


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
    """The engines of one worker's partitions, fed batch by batch as one engine is."""

    def __init__(self, config: Config, mine: range, dlq_dir: str | None, with_store: bool) -> None:
        self.mine = mine
        self.router = Partitioner(config[PARTITIONS_KEY])
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

    def process_all(self, batch: list[bytes]) -> None:
        engines = self.engines
        for p, records in self.router.split(batch, self.mine).items():
            if records:
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


def run_worker(
    paths: list[str],
    config: Config,
    mine: range,
    dlq_dir: str | None,
    stored: dict[str, InputMark] | None,
    progress: bool,
    report_inputs: bool,
) -> WorkerResult:
    """One worker's replay: every input read, its partitions' records fed to their engines.
    ``stored`` (a replay into a store): what the store holds of the inputs, skipped as a
    replay into it skips it (collector/store/replay_progress.py), every worker alike."""
    inputs = open_inputs(paths, digest=stored is not None)
    tracker = None
    if stored is not None:
        tracker = ReplayProgress(inputs, stored, announce=False)  # the parent announced it
        inputs = tracker.inputs + [i for i in inputs if i.head is None]
    group = PartitionGroup(config, mine, dlq_dir, stored is not None)
    input_error = feed(group, paths, progress, inputs)
    result = WorkerResult(group.results(), input_error, reported(inputs) if report_inputs else [])
    if tracker is not None and report_inputs:
        result.marks = [] if input_error else tracker.marks()
        result.held = tracker.held
    return result


def _child(conn: Connection, *args: Any) -> None:
    try:
        result: Any = ("ok", run_worker(*args))
    except BaseException as error:  # sent to the parent, which raises it
        result = ("error", error, traceback.format_exc())
    try:
        conn.send(result)
    finally:
        conn.close()


@dataclass
class Merged:
    """The partitions' results put together, in partition order."""

    views: list[View]
    rows: dict[int, dict[Key, QueryRow]]  # per partition (a replay into a store)
    input_error: str | None
    inputs: list[InputReport]
    marks: list[InputMark]
    held: dict[str, int]


def run_workers(
    paths: list[str],
    config: Config,
    workers: int,
    dlq: str | None,
    stored: dict[str, InputMark] | None,
    progress: bool,
) -> Merged:
    """Fork ``workers`` processes over the partitions and gather what they computed; the
    dead letters of every partition appended to ``dlq`` in partition order."""
    check_workers(workers, config)
    dlq_dir = tempfile.mkdtemp(prefix="searchpulse-dlq-") if dlq else None
    try:
        results = list(_gather(paths, config, workers, dlq_dir, stored, progress))
        parts = sorted((p for r in results for p in r.partitions), key=lambda p: p.partition)
        if dlq:
            with open(dlq, "ab") as out:
                for part in parts:
                    if part.dead_letters:
                        with open(part.dead_letters, "rb") as handle:
                            shutil.copyfileobj(handle, out)
    finally:
        if dlq_dir:
            shutil.rmtree(dlq_dir, ignore_errors=True)
    first = results[0]
    return Merged(
        [p.view for p in parts],
        {p.partition: p.rows for p in parts if p.rows is not None},
        first.input_error,
        first.inputs,
        first.marks,
        first.held,
    )


def _gather(
    paths: list[str],
    config: Config,
    workers: int,
    dlq_dir: str | None,
    stored: dict[str, InputMark] | None,
    progress: bool,
) -> Iterator[WorkerResult]:
    """Each worker's result, in worker order; a worker's exception is raised here."""
    context = multiprocessing.get_context("fork")
    started = []
    for w, mine in enumerate(assigned(config[PARTITIONS_KEY], workers)):
        receive, send = context.Pipe(duplex=False)
        process = context.Process(
            target=_child,
            args=(send, paths, config, mine, dlq_dir, stored, progress and w == 0, w == 0),
            name=f"searchpulse-replay-{w}",
        )
        process.start()
        send.close()
        started.append((process, receive))
    failure = None
    answers = []
    for process, receive in started:
        try:
            answers.append(receive.recv())
        except EOFError:
            process.join()
            answers.append(
                (
                    "error",
                    RuntimeError(
                        f"replay worker {process.name} ended without a result (exit code "
                        f"{process.exitcode}, killed?)"
                    ),
                    "",
                )
            )
        finally:
            receive.close()
    for process, _ in started:
        process.join()
    for answer in answers:
        if answer[0] == "error" and failure is None:
            failure = answer[1]
    if failure is not None:
        raise failure
    for answer in answers:
        yield answer[1]
