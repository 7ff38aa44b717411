"""Experiment statistics at the unit of randomization: clients, and their hashed buckets.

Experiments randomize clients, not searches: a client brings all its searches (and clicks) into
one variant, so searches are not independent draws. Two things are kept per (application,
experiment variant) — every variant but ``none`` and ``other``:

* **units**: the distinct clients (``client_id``) with a search of that variant within the
  last ``experiments.unit_window_s`` of event time — a client counts once however many
  searches it makes. The sample-ratio test is a χ² on these. A search without a ``client_id``
  belongs to no unit: its session id is the page's choice (a fresh one per search would make
  every search a unit of its own, the per-search statistics this module replaces), and the
  user it was randomized as is unknown. It is counted per variant (``without_client_id``) and
  kept out of units and buckets — as it is kept out of the privacy rule's clients (issue 25).
* **unit buckets**: every client is hashed (CRC-32 of its id, stable across processes and
  restarts) into one of ``experiments.unit_buckets`` buckets; each bucket sums its clients'
  searches and outcomes. Buckets are independent and identically distributed sums of whole
  clients, so the variance of a rate across buckets is the variance at the unit of
  randomization (the delta method over buckets: Deng, Knoblich, Lu 2018; the bucketed variance
  of Kohavi, Tang, Xu ch. 18). Bucket sums are plain counters: ``increase()`` over any window
  composes, which per-client sums of squares would not (a square of a sum is not a sum).
* **by client** (offline reports only: ``searchpulse experiments`` on a log): one bucket per
  client instead, so the variance is the exact cluster-robust one; a live collector cannot keep
  that (unbounded series, and ``increase()`` of per-client sums would not compose), so it keeps
  its hashed buckets. Offline, the variant ``none`` gets its clients' buckets too: an
  interleaved log without variants has its clustered Δ.

The window is sliding: a client leaves the count ``unit_window_s`` after its newest search (a
lazily re-queued FIFO, checked once per ordering-buffer bucket, not per search). The tracked
clients are state, not counts: a restarted or newly assigned partition rebuilds them from the
records it replays (from its checkpoint's safe offset, ≈ attribution window before), so after a
restart the count covers a shorter window until the window has passed — a subset of clients
chosen by time, not by variant, which the χ² test still holds for. At most
``experiments.max_units`` clients per engine are tracked; a search of a client beyond that still
counts in its bucket and is counted as the data-quality issue ``experiment_unit_not_tracked``.
The Kafka collector runs one engine per partition; producers key by client_id, so a client is
on one partition and the engines' unit counts add up (collector/exposition/view.py).
"""

from __future__ import annotations

import zlib
from collections import Counter, deque
from collections.abc import Iterable
from typing import Any

import msgspec

from collector.definitions import BUCKET_COUNTS

UNIT_NOT_TRACKED = "experiment_unit_not_tracked"

# The per-bucket counts (collector/definitions.py rows: attribute, family, help).
_NAMES = tuple(family.attribute for family in BUCKET_COUNTS)


class BucketCounts:
    """The summed searches and outcomes of one unit bucket of one experiment variant."""

    __slots__ = ("experiment", "index", *_NAMES, "interleaving_wins", "interleaving_ties")

    def __init__(self, experiment: ExperimentUnits, index: int) -> None:
        self.experiment = experiment
        self.index = index
        for name in _NAMES:
            setattr(self, name, 0)
        self.interleaving_wins: dict[str, int] | None = None
        self.interleaving_ties = 0


class ExperimentUnits:
    """One (application, variant) of an experiment: its units and its unit buckets (created
    when a client of theirs first searches: only buckets with data are exposed)."""

    __slots__ = ("application", "variant", "buckets", "units", "without_client_id", "clients")

    def __init__(self, application: str, variant: str, buckets: int,
                 by_client: bool = False) -> None:
        """``by_client``: one bucket per client (its index in ``clients``), ``buckets`` unused
        — the offline reports' exact clustering (module docstring)."""
        self.application = application
        self.variant = variant
        self.buckets: list[BucketCounts | None] = [] if by_client else [None] * buckets
        self.units = 0  # clients tracked now (a gauge)
        self.without_client_id = 0  # searches of the variant that belong to no unit (a count)
        self.clients: dict[str, int] | None = {} if by_client else None

    def bucket(self, index: int) -> BucketCounts:
        counts = self.buckets[index]
        if counts is None:
            counts = self.buckets[index] = BucketCounts(self, index)
        return counts

    def bucket_for(self, client: str) -> BucketCounts:
        """The bucket a client's searches count in: its hashed bucket, or its own."""
        clients = self.clients
        if clients is None:
            return self.bucket(bucket_of(client, len(self.buckets)))
        index = clients.get(client)
        if index is None:
            index = clients[client] = len(self.buckets)
            self.buckets.append(None)
        return self.bucket(index)

    def filled(self) -> list[BucketCounts]:
        return [b for b in self.buckets if b is not None]


def bucket_of(client: str, buckets: int) -> int:
    """A client's unit bucket: the same in every process, partition and restart."""
    return zlib.crc32(client.encode("utf-8", "surrogatepass")) % buckets


class Unit(msgspec.Struct, gc=False):
    """A tracked client: its newest search and when its expiry is next checked. gc=False, as
    ``sessions.Search``: a million of them stay invisible to the cyclic GC (they hold no
    cycle)."""

    key: str | tuple[str, str, str]
    last: float
    queued: float
    counts: BucketCounts


class UnitTracker:
    """Finds a search's unit bucket and counts its client once per window (module docstring)."""

    def __init__(self, window_s: float, max_units: int, guardrail_s: float,
                 data_quality: Counter[str] | None = None) -> None:
        self.window_s = window_s
        self.max_units = max_units
        self.guardrail_s = guardrail_s  # a search slower than this is slow (latency histogram)
        self.data_quality = Counter() if data_quality is None else data_quality
        self.seen: dict[str | tuple[str, str, str], Unit] = {}
        self.queue: deque[Unit] = deque()

    def counts(self, experiment: ExperimentUnits, client: str, ts: float) -> BucketCounts:
        """The bucket a search of ``client`` in ``experiment`` at ``ts`` counts in. The hot
        path: one dict lookup for a client already tracked."""
        unit = self.seen.get(client)
        if unit is not None and unit.counts.experiment is experiment:
            if ts > unit.last:
                unit.last = ts
            return unit.counts
        return self._admit(experiment, client, ts, unit is not None)

    def _admit(self, experiment: ExperimentUnits, client: str, ts: float,
               elsewhere: bool) -> BucketCounts:
        """A client new to the window, or tracked under another application or variant (it
        is a unit of each: keyed by client, application and variant there)."""
        key: str | tuple[str, str, str] = client
        if elsewhere:
            key = (client, experiment.application, experiment.variant)
            unit = self.seen.get(key)
            if unit is not None:
                if ts > unit.last:
                    unit.last = ts
                return unit.counts
        counts = experiment.bucket_for(client)
        if len(self.seen) >= self.max_units:
            self.data_quality[UNIT_NOT_TRACKED] += 1
            return counts
        unit = self.seen[key] = Unit(key, ts, ts, counts)
        self.queue.append(unit)
        experiment.units += 1
        return counts

    def expire_before(self, t: float) -> None:
        """Forget the clients whose newest search is older than ``t − window``."""
        horizon = t - self.window_s
        queue = self.queue
        while queue and queue[0].queued < horizon:
            unit = queue.popleft()
            if unit.last < horizon:
                del self.seen[unit.key]
                unit.counts.experiment.units -= 1
            else:  # seen since it was queued: check again one window after its newest search
                unit.queued = unit.last
                queue.append(unit)


# -- merging and checkpoints -----------------------------------------------------------------
def merge_experiments(many: Iterable[ExperimentUnits]) -> list[ExperimentUnits]:
    """Sum experiments with the same labels into new objects (units too: a client lives on one
    partition, so the engines' distinct clients are disjoint)."""
    merged: dict[tuple[str, str], ExperimentUnits] = {}
    for experiment in list(many):
        key = (experiment.application, experiment.variant)
        total = merged.get(key)
        if total is None:
            total = merged[key] = ExperimentUnits(*key, len(experiment.buckets))
        elif len(experiment.buckets) > len(total.buckets):  # a checkpoint of another setting
            total.buckets.extend([None] * (len(experiment.buckets) - len(total.buckets)))
        total.units += experiment.units
        total.without_client_id += experiment.without_client_id
        for counts in experiment.filled():
            _add(total.bucket(counts.index), counts)
    return list(merged.values())


def _add(total: BucketCounts, counts: BucketCounts) -> None:
    for name in _NAMES:
        setattr(total, name, getattr(total, name) + getattr(counts, name))
    total.interleaving_ties += counts.interleaving_ties
    if counts.interleaving_wins is not None:
        wins = total.interleaving_wins = total.interleaving_wins or {}
        for team, value in counts.interleaving_wins.items():
            wins[team] = wins.get(team, 0) + value


def reset_experiment(experiment: ExperimentUnits) -> None:
    """Zero every bucket count in place (open searches hold their buckets); units are state
    and stay."""
    experiment.without_client_id = 0
    for counts in experiment.filled():
        for name in _NAMES:
            setattr(counts, name, 0)
        counts.interleaving_ties = 0
        if counts.interleaving_wins is not None:
            counts.interleaving_wins = dict.fromkeys(counts.interleaving_wins, 0)


def experiment_to_dict(experiment: ExperimentUnits) -> dict[str, Any]:
    """The counts of a checkpoint (not the units: state, rebuilt by the replay)."""
    buckets: dict[str, Any] = {}
    for counts in experiment.filled():
        data: dict[str, Any] = {name: getattr(counts, name) for name in _NAMES}
        data["interleaving_ties"] = counts.interleaving_ties
        if counts.interleaving_wins is not None:
            data["interleaving_wins"] = dict(counts.interleaving_wins)
        buckets[str(counts.index)] = data
    return {"labels": [experiment.application, experiment.variant],
            "unit_buckets": len(experiment.buckets), "buckets": buckets,
            "without_client_id": experiment.without_client_id}


def experiment_from_dict(data: dict[str, Any]) -> ExperimentUnits:
    experiment = ExperimentUnits(*data["labels"], data["unit_buckets"])
    experiment.without_client_id = data.get("without_client_id", 0)  # older checkpoints: 0
    for index, values in data["buckets"].items():
        counts = experiment.bucket(int(index))
        for name in _NAMES:
            setattr(counts, name, values.get(name, 0))
        counts.interleaving_ties = values.get("interleaving_ties", 0)
        if "interleaving_wins" in values:
            counts.interleaving_wins = dict(values["interleaving_wins"])
    return experiment
