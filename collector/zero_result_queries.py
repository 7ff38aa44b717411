"""The top zero-result queries of each application over a sliding event-time window.

The one place query text reaches a label, so it is bounded three ways: at most ``k`` queries per
application (applications are already capped), per-slot counts are pruned to the most frequent
``slot_capacity`` queries, and the text is scrubbed of personal data and length-capped.
"""

from __future__ import annotations

from collections import Counter

from collector.pii import PiiScrubber


class TopZeroResultQueries:
    def __init__(self, k: int = 10, window_s: float = 900.0, slots: int = 15,
                 slot_capacity: int = 2000, scrubber: PiiScrubber | None = None) -> None:
        self.k = k
        self.window_s = window_s
        self.slot_s = window_s / slots
        self.slot_capacity = slot_capacity
        self.scrubber = scrubber or PiiScrubber()
        self._slots: dict[int, dict[str, Counter[str]]] = {}  # slot number → app → counts

    def add(self, application: str, normalized: str, ts: float) -> None:
        slot = int(ts // self.slot_s)
        apps = self._slots.get(slot)
        if apps is None:
            apps = self._slots[slot] = {}
            self._drop_before(slot)
        counts = apps.get(application)
        if counts is None:
            counts = apps[application] = Counter()
        counts[normalized] += 1
        if len(counts) > 2 * self.slot_capacity:
            apps[application] = Counter(dict(counts.most_common(self.slot_capacity)))

    def _oldest(self, newest_slot: int) -> int:
        return newest_slot - int(round(self.window_s / self.slot_s)) + 1

    def _drop_before(self, newest_slot: int) -> None:
        oldest = self._oldest(newest_slot)
        for slot in [s for s in self._slots if s < oldest]:
            del self._slots[slot]

    def top(self, now: float) -> dict[str, list[tuple[str, int]]]:
        """Application → up to k (scrubbed query, zero-result searches in the window ending at
        event time ``now``)."""
        oldest = self._oldest(int(now // self.slot_s))
        merged: dict[str, Counter[str]] = {}
        for slot, apps in list(self._slots.items()):
            if slot < oldest:
                continue
            for application, counts in list(apps.items()):
                merged.setdefault(application, Counter()).update(dict(counts))
        result: dict[str, list[tuple[str, int]]] = {}
        for application, counts in merged.items():
            labelled: Counter[str] = Counter()
            for query, count in counts.most_common(4 * self.k):
                labelled[self.scrubber.label(query)] += count
            result[application] = sorted(labelled.items(), key=lambda kv: (-kv[1], kv[0]))[
                : self.k]
        return result
