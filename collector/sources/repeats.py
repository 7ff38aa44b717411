"""Ranges of one input that repeat an earlier range of the same input — ``cat log log``, a log
shipper that resent a file from its start, a rotation that copied its last lines into the next
file — recognised, so that their records are counted once (docs/delivery.md, "What is
recognised as the same input").

A **repeated range** is a run of at least ``RANGE_MIN`` consecutive records each equal (byte for
byte, as the reader strips them) to the record at the same place of an earlier run of the same
input. Genuine traffic never repeats ``RANGE_MIN`` records byte for byte (every query record
carries its own query id and time); a shorter repeat is left to the engine, which judges its
records as what they look like (duplicates while their searches are open, late records
behind them).

How, at the cost of one hash a record: the 64-bit hash of every record (Python's hash of its
bytes, computed in C for a whole batch) is kept in an array, 8 bytes a record, for the first
``REMEMBERED`` records; every ``ANCHOR_EVERY``-th position is an **anchor** (its hash → its
position). A batch none of whose records equals an anchor (three C calls) is decided at once.
A record equal to an anchor starts a candidate run, extended backwards over the records not yet
decided and forwards while each next record equals the next one of the earlier run. Since any
range of ``RANGE_MIN`` (= ``ANCHOR_EVERY``) records of the earlier run holds an anchor, every
repeated range is found within its first ``RANGE_MIN`` records: the last ``HOLD`` records read
wait until the records after them say whether a range starts among them. Every decision is a
function of the records alone, not of how they were batched: the same content read from a
file, a ``.gz`` or stdin is cut into the same ranges.
"""

from __future__ import annotations

from array import array
from itertools import chain, compress
from operator import or_
from typing import NamedTuple

ANCHOR_EVERY = 64
RANGE_MIN = ANCHOR_EVERY  # records: a repeat shorter than this is not a range
HOLD = ANCHOR_EVERY - 1  # records read that wait for the next ones before they are decided
REMEMBERED = 1 << 24  # records whose hash is kept (128 MiB): a range repeating a later one
# is not recognised (a log of more than 16.7 million records, repeated whole, still is)

Run = tuple[bool, list[bytes]]  # (repeated, records): decided records in input order


class Range(NamedTuple):
    """Records ``start`` to ``end`` (excluded) of an input repeat its records from
    ``source`` on (positions: records from the input's start, repeats included)."""

    start: int
    end: int
    source: int


class Repeats:
    """The repeated ranges of one input: records pushed in input order, decided runs out."""

    def __init__(self) -> None:
        self.hashes = array("q")  # of every record at a position < REMEMBERED
        self.anchors: dict[int, int] = {}  # hash → the latest anchor position holding it
        self.pushed = 0  # records pushed
        self.decided = 0  # records decided (the waiting ones follow)
        self.waiting: list[bytes] = []
        self.waiting_hashes: list[int] = []  # of those beyond REMEMBERED
        self.candidates: list[list[int]] = []  # [start, source start, length] not confirmed
        self.current: list[int] | None = None  # the confirmed range being read
        self.ranges: list[Range] = []  # ranges found and ended
        self._unreleased = 0  # the first of them with records still waiting
        self.floor = 0  # no candidate reaches back before the end of the last range

    @property
    def repeated(self) -> int:
        """Records found in repeated ranges so far."""
        current = self.current[2] if self.current is not None else 0
        return sum(r.end - r.start for r in self.ranges) + current

    def found(self) -> list[Range]:
        """Every range found, the one being read included."""
        if self.current is None:
            return list(self.ranges)
        start, source, length = self.current
        return [*self.ranges, Range(start, start + length, source)]

    def push(self, records: list[bytes]) -> list[Run]:
        """The next records of the input; returns the runs decided now."""
        hashes = list(map(hash, records))
        start = self.pushed
        self.pushed += len(records)
        self.waiting += records
        if self.pushed > REMEMBERED:  # the hashes of the records waiting, beyond the array
            self.waiting_hashes += hashes[max(0, REMEMBERED - start):]
        if start < REMEMBERED:
            self.hashes += array("q", hashes[:REMEMBERED - start] if self.pushed > REMEMBERED
                                 else hashes)
        own = set(hashes[-start % ANCHOR_EVERY::ANCHOR_EVERY])  # this batch's anchors
        if (self.current is None and not self.candidates
                and self.anchors.keys().isdisjoint(hashes)
                and sum(map(own.__contains__, hashes)) == len(own)):
            self._anchor(hashes, start)  # no record equals an anchor before it
        else:
            self._scan(hashes, start, own)
        return self._release(self.pushed - HOLD)

    def end(self) -> list[Run]:
        """The input ended: every record waiting is decided."""
        self._close_current()
        self.candidates = []
        return self._release(self.pushed)

    def _anchor(self, hashes: list[int], start: int) -> None:
        anchors = self.anchors
        for position in range(start + -start % ANCHOR_EVERY,
                              min(start + len(hashes), REMEMBERED), ANCHOR_EVERY):
            anchors[hashes[position - start]] = position

    def _hash_at(self, position: int) -> int | None:
        if position < len(self.hashes):
            return self.hashes[position]
        if position >= max(self.decided, REMEMBERED):
            return self.waiting_hashes[position - max(self.decided, REMEMBERED)]
        return None  # beyond what is remembered

    def _scan(self, hashes: list[int], start: int, own: set[int]) -> None:
        """Record by record while a range is being read or candidates grow; between them, only
        the records equal to an anchor (of an earlier batch, or of this one: found in C) can
        start anything, and anchor positions are among them."""
        anchors = self.anchors
        step = self._step
        notable = compress(range(len(hashes)), map(or_, map(anchors.__contains__, hashes),
                                                   map(own.__contains__, hashes)))
        offset = 0
        for index in chain(notable, (len(hashes),)):
            while offset < index and (self.current is not None or self.candidates):
                step(start + offset, hashes[offset])
                offset += 1
            if index == len(hashes):
                return
            if index >= offset:
                step(start + index, hashes[index])
                offset = index + 1

    def _step(self, position: int, value: int) -> None:
        """One record: the range being read goes on or ends, candidates grow or are dropped,
        a record equal to an anchor starts a candidate."""
        current = self.current
        if current is not None:
            if self._hash_at(current[1] + current[2]) == value:
                current[2] += 1
                self._anchor_at(position, value)
                return
            self._close_current()
        if self.candidates:
            self._extend_candidates(value)
        source = self.anchors.get(value)
        if source is not None and self.current is None:
            self._candidate(position, source)
        self._anchor_at(position, value)

    def _anchor_at(self, position: int, value: int) -> None:
        if position % ANCHOR_EVERY == 0 and position < REMEMBERED:
            self.anchors[value] = position

    def _extend_candidates(self, value: int) -> None:
        """Each candidate whose next earlier record equals this one grows; the first to reach
        ``RANGE_MIN`` is the range being read."""
        kept = []
        for candidate in self.candidates:
            if self._hash_at(candidate[1] + candidate[2]) == value:
                candidate[2] += 1
                if candidate[2] >= RANGE_MIN:
                    self.current = candidate
                    self.candidates = []
                    return
                kept.append(candidate)
        self.candidates = kept

    def _candidate(self, position: int, source: int) -> None:
        """A record equal to the anchor at ``source``: a run of its alignment, reaching back
        over the records not yet decided (at most ``HOLD``) that equal the ones before it."""
        for start, earlier, length in self.candidates:
            if earlier + (position - start) == source and start + length == position + 1:
                return  # that alignment is a candidate already (and took this record)
        low = max(self.decided, self.floor, position - HOLD)
        back = 0
        while (position - back - 1 >= low and source - back - 1 >= 0
               and self._hash_at(position - back - 1) == self._hash_at(source - back - 1)):
            back += 1
        candidate = [position - back, source - back, back + 1]
        if candidate[2] >= RANGE_MIN:
            self.current = candidate
            self.candidates = []
        else:
            self.candidates.append(candidate)

    def _close_current(self) -> None:
        if self.current is not None:
            start, source, length = self.current
            self.ranges.append(Range(start, start + length, source))
            self.floor = start + length
            self.current = None

    def _release(self, until: int) -> list[Run]:
        """The waiting records before ``until`` (no candidate starts before it), split into
        runs of repeated and other records."""
        if until <= self.decided:
            return []
        while (self._unreleased < len(self.ranges)
               and self.ranges[self._unreleased].end <= self.decided):
            self._unreleased += 1
        intervals = [(r.start, r.end) for r in self.ranges[self._unreleased:]]
        if self.current is not None:
            intervals.append((self.current[0], self.current[0] + self.current[2]))
        runs: list[Run] = []
        position = self.decided
        waiting = self.waiting
        for start, end in intervals:
            start, end = max(start, position), min(end, until)
            if start >= end:
                continue
            if start > position:
                runs.append((False, waiting[position - self.decided:start - self.decided]))
            runs.append((True, waiting[start - self.decided:end - self.decided]))
            position = end
        if position < until:
            runs.append((False, waiting[position - self.decided:until - self.decided]))
        del self.waiting[:until - self.decided]
        if self.waiting_hashes:
            del self.waiting_hashes[:max(0, until - max(self.decided, REMEMBERED))]
        self.decided = until
        return runs
