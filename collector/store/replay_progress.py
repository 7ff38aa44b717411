"""How far a replay into a store got in each input, kept in the store with the rows it covers:
the file counterpart of the Kafka offsets (docs/delivery.md, "Replay into a store").

An input is known by its content, not its file: its **head** (sha256 of its first record)
names it, and the running digest of the records counted says which records they were — the
same log as a file, a ``.gz``, a ``.zst`` or on stdin is the same input. Every flush records,
per input, a **safe** position C (every record before it is final: older than every window
still open, and at least a stream clock's rebuild back) and the **high** position H (the
stored rows hold every record before it), each with the digest of the records before it.

The same command again after a crash (an *interrupted* replay: positions not ``complete``)
skips every input to its C, checking the digest, replays up to H to rebuild the open sessions
with dead letters muted, forgets what that replay counted (the store has it) and counts from
H on: the store ends as one clean replay leaves it. An input the store holds in full is
skipped (its digest checked); one that grew since continues after what the store holds.
Anything else that begins with a held input's first record is refused before a row is
written: its records are not the ones the store counted.
"""

from __future__ import annotations

import logging
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

from collector.clock.stream_clock import SAMPLE_MASK, WINDOW
from collector.errors import InputMismatch, StoreError
from collector.store.query_store import InputMark

if TYPE_CHECKING:  # a type only: the stage below it imports nothing above
    from collector.sources.files import Input

log = logging.getLogger(__name__)

# A replay from C must see enough records to rebuild the stream clock's window (WINDOW samples
# of about every (SAMPLE_MASK + 1)th record) before it reaches H: twice that many records,
# as a Kafka partition keeps (collector/sources/kafka/partition.py).
_REBUILD_RECORDS = 2 * WINDOW * (SAMPLE_MASK + 1)

Cut = list[tuple[int, Any]]  # per input: (records handed on, a copy of their digest)


def input_name(path: str) -> str:
    return "stdin" if path == "-" else path


class ReplayProgress:
    """The inputs of one replay into a store: where each starts, whether the replay is still
    catching up with an interrupted one, and the positions each flush records."""

    def __init__(self, inputs: list[Input], stored: dict[str, InputMark],
                 announce: bool = True) -> None:
        """``announce``: log what the store holds of each input (once per replay: a worker
        of ``replay --workers`` that skips the same records says nothing)."""
        self.inputs = [i for i in inputs if i.head is not None]  # empty inputs name nothing
        self.run = uuid.uuid4().hex
        self.until: int | None = None  # records in all at which a resumed replay caught up
        self.held: dict[str, int] = {}  # input → records the store held before this run
        _distinct(self.inputs)
        ours = {i.head: stored[i.head] for i in self.inputs if i.head in stored}
        interrupted = {mark.run for mark in ours.values() if not mark.complete}
        if interrupted:
            self._resume(interrupted, ours, stored)
        else:
            for source in self.inputs:
                mark = ours.get(source.head)
                if mark is not None:  # held whole: what follows, if it grew, is new
                    source.expect(mark.high_records, mark.high_digest)
                    source.skip(mark.high_records)
                    self.held[input_name(source.path)] = mark.high_records
                    if announce:
                        log.warning("input %s: its first %d records are in the store already "
                                    "(counted by an earlier replay): not counted again",
                                    input_name(source.path), mark.high_records)
        self._buckets: deque[list[Any]] = deque([[self._cut(), float("-inf")]])

    def _resume(self, runs: set[str], ours: dict[str, InputMark],
                stored: dict[str, InputMark]) -> None:
        """Go on with the interrupted replay: the same inputs, each skipped to its C, its
        records up to H replayed (``until``)."""
        if len(runs) > 1:
            raise StoreError("these inputs belong to different interrupted replays: finish "
                             "each with its own inputs")
        (self.run,) = runs
        members = {h: m for h, m in stored.items() if m.run == self.run and not m.complete}
        missing = [m.name for h, m in members.items() if h not in ours]
        if missing:
            raise StoreError(f"the interrupted replay also read {', '.join(missing)}: give "
                             "the same inputs to finish it")
        others = [input_name(i.path) for i in self.inputs if i.head not in members]
        if others:
            raise StoreError(f"finish the interrupted replay of "
                             f"{', '.join(m.name for m in members.values())} first (the same "
                             f"command), then replay {', '.join(others)}")
        self.inputs.sort(key=lambda i: members[i.head].ordinal)  # its merge order
        for source in self.inputs:
            mark = members[source.head]
            source.expect(mark.safe_records, mark.safe_digest)
            source.skip(mark.safe_records)
            source.expect(mark.high_records, mark.high_digest)
            self.held[input_name(source.path)] = mark.high_records
            log.warning("input %s: resuming an interrupted replay (%d records counted; "
                        "re-reading from %d)", input_name(source.path), mark.high_records,
                        mark.safe_records)
        self.until = sum(members[i.head].high_records for i in self.inputs)

    @property
    def handed_on(self) -> int:
        return sum(i.records for i in self.inputs)

    @property
    def replaying(self) -> bool:
        """Still before where the interrupted replay's last flush got: nothing is flushed."""
        return self.until is not None and self.handed_on < self.until

    def caught_up(self) -> bool:
        """True once, when the records handed on reach where the interrupted replay got."""
        if self.until is not None and self.handed_on >= self.until:
            self.until = None
            return True
        return False

    def finish(self) -> None:
        """At the end of input: a resumed replay that never caught up read less than the
        store counted (nothing was flushed)."""
        if self.replaying:
            short = ", ".join(input_name(i.path) for i in self.inputs)
            raise InputMismatch(f"input {short}: ends after {self.handed_on} records in all, "
                                f"the interrupted replay counted {self.until}")

    def after_batch(self, newest: float) -> None:
        """A batch was processed; ``newest``: the newest event time it could still take
        (``Engine.buffered_until``)."""
        self._buckets[-1][1] = newest
        self._buckets.append([self._cut(), newest])

    def marks(self, horizon: float | None = None) -> list[InputMark]:
        """The positions to record: C the newest cut before which every record is older than
        ``horizon`` (``Engine.final_before``); None: the end, every input complete."""
        if horizon is None:
            safe, complete = self._cut(), True
        elif not self.handed_on:  # nothing counted yet (an input broke off before its
            return []  # first record: the merge stopped there): nothing to finish
        else:
            safe, complete = self._safe(horizon), False
        return [InputMark(source.head or "", input_name(source.path), self.run, ordinal,
                          records, digest.hexdigest(), source.records, source.digest(),
                          complete)
                for ordinal, (source, (records, digest)) in enumerate(zip(self.inputs, safe,
                                                                          strict=True))]

    def _cut(self) -> Cut:
        return [source.snapshot() for source in self.inputs]

    def _safe(self, horizon: float) -> Cut:
        """Buckets (a cut before a batch, the newest time after it) whose records are all
        behind the horizon are dropped, keeping ``_REBUILD_RECORDS`` behind the end."""
        buckets = self._buckets
        keep_from = self.handed_on - _REBUILD_RECORDS
        while (len(buckets) > 1 and buckets[1][1] < horizon
               and sum(records for records, _ in buckets[1][0]) <= keep_from):
            buckets.popleft()
        return buckets[0][0]


def _distinct(inputs: list[Input]) -> None:
    seen: dict[str | None, str] = {}
    for source in inputs:
        if source.head in seen:
            raise StoreError(f"inputs {seen[source.head]} and {input_name(source.path)} begin "
                             "with the same record: the same log twice would count twice")
        seen[source.head] = input_name(source.path)
