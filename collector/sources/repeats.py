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
latest position, and each anchor position → the one before it of the same hash, for records
that a repeat already put at several anchors: ``ALIGNMENTS`` of them are tried, newest first).
A batch none of whose records equals an anchor (three C calls) is decided at once.
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
ALIGNMENTS = 16  # anchor positions of one hash a record equal to it is tried against
_SHIFTS = 4  # other alignments a range being read keeps to go on along
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
        self.earlier: dict[int, int] = {}  # anchor position → the one before it, same hash
        self.pushed = 0  # records pushed
        self.decided = 0  # records decided (the waiting ones follow)
        self.waiting: list[bytes] = []
        self.waiting_hashes: list[int] = []  # of those beyond REMEMBERED
        self.candidates: list[list[int]] = []  # [start, source start, length] not confirmed
        self.current: list[int] | None = None  # the confirmed range being read
        # other earlier runs the range being read may follow (source − position of records
        # in it equal to an anchor of another alignment): where its own earlier run ends, it
        # goes on along one that holds all of its records (a copy of a copy, then the original)
        self.shifts: list[int] = []
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
        for position in range(start + -start % ANCHOR_EVERY,
                              min(start + len(hashes), REMEMBERED), ANCHOR_EVERY):
            self._set_anchor(hashes[position - start], position)

    def _set_anchor(self, value: int, position: int) -> None:
        before = self.anchors.get(value)
        if before is not None and before != position:
            self.earlier[position] = before
        self.anchors[value] = position

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
            if self._hash_at(current[1] + current[2]) == value or self._realign(current, value):
                current[2] += 1
                if value in self.anchors:
                    self._note_shifts(position, value, current[1] - current[0])
                self._anchor_at(position, value)
                return
            self._close_current()
        if self.candidates:
            self._extend_candidates(value)
        source = self.anchors.get(value)
        tries = ALIGNMENTS
        while source is not None and self.current is None and tries:
            # a record a repeat put at several anchors: each of their alignments may be the
            # one the range follows (the newest ends where the oldest goes on)
            self._candidate(position, source)
            source, tries = self.earlier.get(source), tries - 1
        if self.current is None and any(c[2] >= RANGE_MIN for c in self.candidates):
            self._confirm(next(c for c in self.candidates if c[2] >= RANGE_MIN))
        self._anchor_at(position, value)

    def _anchor_at(self, position: int, value: int) -> None:
        if position % ANCHOR_EVERY == 0 and position < REMEMBERED:
            self._set_anchor(value, position)

    def _note_shifts(self, position: int, value: int, shift: int) -> None:
        """A record of the range being read equal to anchors: the alignments (source −
        position) of those not of the range's own (``shift``), newest last, a few kept."""
        source, tries = self.anchors.get(value), ALIGNMENTS
        while source is not None and tries:
            other = source - position
            if other != shift and other not in self.shifts:
                self.shifts.append(other)
                del self.shifts[:-_SHIFTS]
            source, tries = self.earlier.get(source), tries - 1

    def _realign(self, current: list[int], value: int) -> bool:
        """The range's earlier run ends here: it goes on along another earlier run that holds
        every one of its records and this one too (checked record by record, once per end)."""
        start, _, length = current
        for shift in reversed(self.shifts):
            source = start + shift
            if source < 0 or self._hash_at(source + length) != value:
                continue
            if all(self._hash_at(source + i) == self._hash_at(start + i) is not None
                   for i in range(length)):
                current[1] = source
                self.shifts.remove(shift)
                return True
        return False

    def _extend_candidates(self, value: int) -> None:
        """Each candidate whose next earlier record equals this one grows; the first to reach
        ``RANGE_MIN`` is the range being read."""
        kept = []
        for candidate in self.candidates:
            if self._hash_at(candidate[1] + candidate[2]) == value:
                candidate[2] += 1
                kept.append(candidate)
        self.candidates = kept
        ready = next((c for c in kept if c[2] >= RANGE_MIN), None)
        if ready is not None:
            self._confirm(ready)

    def _confirm(self, candidate: list[int]) -> None:
        """``candidate`` is the range being read; the other candidates of it (another earlier
        run) are alignments it may go on along."""
        self.current = candidate
        self.shifts = [c[1] - c[0] for c in self.candidates
                       if c is not candidate and c[0] == candidate[0]][-_SHIFTS:]
        self.candidates = []

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
        self.candidates.append([position - back, source - back, back + 1])

    def _close_current(self) -> None:
        if self.current is not None:
            start, source, length = self.current
            self.ranges.append(Range(start, start + length, source))
            self.floor = start + length
            self.current = None
            self.shifts = []

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
