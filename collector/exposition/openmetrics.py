"""Scrapes of /metrics (text format 0.0.4) → one timestamped OpenMetrics file, what
``promtool tsdb create-blocks-from openmetrics`` backfills into a Prometheus TSDB.

A scrape is stored the way Prometheus stores it: every sample with the target's labels (``job``
and ``instance``, as the scrape configuration gives them) and an ``up`` sample of 1, at the
scrape's time. OpenMetrics wants each family's samples together and each series' points
together, in time order, while scrapes come one instant at a time: each family's samples are
spooled to a file of their own as they come, and at the end every family is written with its
series' points grouped (a stable sort by series keeps their time order). Memory holds one
family's spool at that point, not the whole file.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import BinaryIO

# 0.0.4 → OpenMetrics types (a counter's family drops its _total; 0.0.4's untyped is unknown)
_TYPES = {b"counter": b"counter", b"gauge": b"gauge", b"histogram": b"histogram",
          b"summary": b"summary", b"untyped": b"unknown"}
_LE = re.compile(rb',?le="[^"]*"')
UP = b"up"


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def target_labels(labels: Mapping[str, str]) -> bytes:
    """The label pairs a scrape adds to every sample, written once (``job="…",…``)."""
    return ",".join(f'{name}="{_escaped(value)}"' for name, value in labels.items()).encode()


def timestamp(seconds: float) -> bytes:
    """OpenMetrics timestamps are seconds; Prometheus keeps milliseconds."""
    return (b"%d" % seconds if seconds == int(seconds)
            else f"{seconds:.3f}".rstrip("0").encode())


class _Family:
    """One family: its OpenMetrics HELP and TYPE lines and the spool of its samples."""

    def __init__(self, head: bytes, spool: BinaryIO) -> None:
        self.head = head
        self.spool = spool


class OpenMetricsWriter:
    """``add(seconds, exposition)`` per scrape, in time order; ``close()`` writes the file,
    ending with ``# EOF``. ``labels``: the target's labels (job, instance); ``families``: the
    only families written (their 0.0.4 TYPE names), None for all."""

    def __init__(self, out: BinaryIO, labels: Mapping[str, str],
                 families: Collection[str] | None = None) -> None:
        self.out = out
        self.labels = target_labels(labels)
        self.families = None if families is None else {f.encode() for f in families}
        self._spools = tempfile.TemporaryDirectory(prefix="searchpulse-openmetrics-")
        self._families: dict[bytes, _Family] = {}
        self.scrapes = 0
        self.last: float | None = None

    def add(self, seconds: float, exposition: bytes) -> None:
        """One scrape at ``seconds`` (Unix time) of a 0.0.4 exposition."""
        if self.last is not None and seconds <= self.last:
            raise ValueError(f"scrape at {seconds} after one at {self.last}: scrapes go "
                             "forward in time")
        self.last = seconds
        self.scrapes += 1
        tail = b" " + timestamp(seconds) + b"\n"
        labels = self.labels
        with_labels = b"{" + labels + b","
        alone = b"{" + labels + b"} "
        self._family(UP, b"# HELP up 1 if the target was scraped (every scrape here)\n"
                         b"# TYPE up gauge\n").spool.write(b"up" + alone + b"1" + tail)
        family: _Family | None = None
        lines: list[bytes] = []
        for line in exposition.splitlines():
            if line.startswith(b"# HELP "):
                continue
            if line.startswith(b"# TYPE "):
                if family is not None:
                    family.spool.write(b"".join(lines))
                    lines = []
                _, _, name, kind = line.split(b" ", 3)
                if self.families is not None and name not in self.families:
                    family = None
                    continue
                family = self._families.get(name) or self._family(name, _head(name, kind,
                                                                              exposition))
                continue
            if family is None or not line or line.startswith(b"#"):
                continue
            brace = line.find(b"{")
            if brace >= 0:
                lines.append(line[:brace] + with_labels + line[brace + 1:] + tail)
            else:
                name, _, value = line.partition(b" ")
                lines.append(name + alone + value + tail)
        if family is not None:
            family.spool.write(b"".join(lines))

    def _family(self, name: bytes, head: bytes) -> _Family:
        found = self._families.get(name)
        if found is None:
            spool = open(Path(self._spools.name) / f"{len(self._families)}.om", "w+b")
            found = self._families[name] = _Family(head, spool)
        return found

    def close(self) -> None:
        """Every family with its series' points together, then ``# EOF``."""
        try:
            write = self.out.write
            for family in self._families.values():
                write(family.head)
                family.spool.seek(0)
                write(b"".join(sorted(family.spool.read().splitlines(keepends=True),
                                      key=_series)))
            write(b"# EOF\n")
        finally:
            for family in self._families.values():
                family.spool.close()
            self._spools.cleanup()


def _series(line: bytes) -> bytes:
    """A sample's series, the ``le`` of a histogram bucket aside (one point of a histogram is
    all its buckets, its count and its sum; a stable sort keeps them in order)."""
    end = line.rfind(b"}")
    head = line[:end + 1] if end >= 0 else line.split(b" ", 1)[0]
    name, _, labels = head.partition(b"{")
    for suffix in (b"_bucket", b"_count", b"_sum"):
        if name.endswith(suffix):
            name = name[:-len(suffix)]
            break
    return name + b"{" + _LE.sub(b"", labels)


def _head(name: bytes, kind: bytes, exposition: bytes) -> bytes:
    """The family's OpenMetrics HELP and TYPE lines from its 0.0.4 ones: a counter's family
    name without ``_total`` (its samples keep it), HELP's quotes escaped as OpenMetrics wants."""
    family = name
    kind = _TYPES.get(kind, b"unknown")
    if kind == b"counter":
        if name.endswith(b"_total"):
            family = name[:-len(b"_total")]
        else:  # OpenMetrics counters' samples end in _total: this one is only a number
            kind = b"unknown"
    start = exposition.find(b"# HELP " + name + b" ")
    text = b""
    if start >= 0:
        end = exposition.find(b"\n", start)
        text = exposition[start + len(b"# HELP ") + len(name) + 1:end].replace(b'"', b'\\"')
    return b"# HELP " + family + b" " + text + b"\n# TYPE " + family + b" " + kind + b"\n"


class DailyFiles:
    """Scrapes in one OpenMetrics file per ``span_s`` of event time (aligned to its multiples
    in Unix time), each handed to ``done(path)`` once written: promtool reads a whole file into
    memory and backfills it block by block, so a month is backfilled a day at a time."""

    def __init__(self, directory: Path, labels: Mapping[str, str], span_s: float,
                 done: Callable[[Path], None], families: Collection[str] | None = None) -> None:
        self.directory = directory
        self.labels = labels
        self.span_s = span_s
        self.done = done
        self.families = families
        self.scrapes = 0
        self._writer: OpenMetricsWriter | None = None
        self._handle: BinaryIO | None = None
        self._path: Path | None = None
        self._until = float("-inf")

    def add(self, seconds: float, exposition: bytes) -> None:
        if seconds >= self._until:
            self._finish()
            start = seconds - seconds % self.span_s
            self._until = start + self.span_s
            self._path = self.directory / f"scrapes-{int(start)}.om"
            self._handle = open(self._path, "wb")  # closed in _finish
            self._writer = OpenMetricsWriter(self._handle, self.labels, self.families)
        self._writer.add(seconds, exposition)
        self.scrapes += 1

    def _finish(self) -> None:
        if self._writer is None:
            return
        writer, handle, path = self._writer, self._handle, self._path
        self._writer = self._handle = self._path = None
        try:
            writer.close()
        finally:
            handle.close()
        self.done(path)

    def close(self) -> None:
        """The last file written and handed on."""
        self._finish()
