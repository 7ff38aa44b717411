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
from collector.errors import ConfigError
from collector.exposition.summary import counts_summary
from collector.exposition.view import View, merge_views
from collector.ingest.deadletter import DeadLetterFile
from collector.output_files import writing
from collector.replay import InputReport, feed, rendered, repeated_ranges, reported, warn_empty
from collector.series.examination import ExaminationFile
from collector.series.judged_relevance import JudgmentsFile
from collector.series.zero_result_queries import QueryRelease
from collector.sources.files import open_inputs
from collector.sources.partitions import Partitioner
from collector.store.query_stats import Key, QueryRow, QueryStats

PARTITIONS_KEY = "replay.partitions"


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


def replay_partitioned(paths: list[str], config: Config, workers: int,
                       dlq: str | None = None, metrics_out: str | None = None,
                       progress: bool = False) -> dict:
    """``replay`` (collector/replay.py) of ``replay.partitions`` engines over ``workers``
    processes: the summary of their counts merged, the top queries released from all of
    them together (as a collector of several partitions releases them)."""
    if config["store.url"]:
        raise ConfigError("--workers: not with --store (store.url) yet: replay into a store "
                          "without --workers")
    if "-" in paths:
        raise ConfigError("--workers: not with - (stdin): each worker reads every input "
                          "itself; give the log as a file")
    merged = run_workers(paths, config, workers, dlq, False, progress)
    view = merge_views(merged.views, QueryRelease.from_config(config))
    if metrics_out:
        with writing(metrics_out, "--metrics-out", "wb") as handle:
            handle.write(rendered(view, ExaminationFile.from_config(config), merged.inputs))
    summary = counts_summary(view.series, view.stats)
    warn_empty(merged.inputs)
    repeated = repeated_ranges(merged.inputs)
    if repeated:
        summary["repeated_records"] = repeated
    if merged.input_error:
        summary["input_error"] = merged.input_error
    return summary


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

    def __init__(
        self, config: Config, mine: range, dlq_dir: str | None, with_store: bool, shown_depth: int
    ) -> None:
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
                query_stats=QueryStats(shown_depth) if with_store else None,
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
    with_store: bool,
    progress: bool,
    report_inputs: bool,
) -> WorkerResult:
    """One worker's replay: every input read, its partitions' records fed to their engines."""

    group = PartitionGroup(config, mine, dlq_dir, with_store, config["store.shown_depth"])
    inputs = open_inputs(paths)
    input_error = feed(group, paths, progress, inputs)
    return WorkerResult(group.results(), input_error, reported(inputs) if report_inputs else [])


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
    rows: list[dict[Key, QueryRow]]
    input_error: str | None
    inputs: list[InputReport]


def run_workers(
    paths: list[str],
    config: Config,
    workers: int,
    dlq: str | None,
    with_store: bool,
    progress: bool,
) -> Merged:
    """Fork ``workers`` processes over the partitions and gather what they computed; the
    dead letters of every partition appended to ``dlq`` in partition order."""
    check_workers(workers, config)
    dlq_dir = tempfile.mkdtemp(prefix="searchpulse-dlq-") if dlq else None
    try:
        results = list(_gather(paths, config, workers, dlq_dir, with_store, progress))
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
    return Merged(
        [p.view for p in parts],
        [p.rows for p in parts if p.rows is not None],
        results[0].input_error,
        results[0].inputs,
    )


def _gather(
    paths: list[str],
    config: Config,
    workers: int,
    dlq_dir: str | None,
    with_store: bool,
    progress: bool,
) -> Iterator[WorkerResult]:
    """Each worker's result, in worker order; a worker's exception is raised here."""
    context = multiprocessing.get_context("fork")
    started = []
    for w, mine in enumerate(assigned(config[PARTITIONS_KEY], workers)):
        receive, send = context.Pipe(duplex=False)
        process = context.Process(
            target=_child,
            args=(send, paths, config, mine, dlq_dir, with_store, progress and w == 0, w == 0),
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
