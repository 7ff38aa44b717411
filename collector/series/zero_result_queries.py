"""The top zero-result queries of each application over a sliding event-time window.

The one place query text reaches a label, so it is bounded and guarded: at most ``k`` queries
per application (applications are already capped), per-slot counts pruned to the most frequent
``slot_capacity`` queries, and a query is shown only when it passes both privacy rules
(``QueryRelease``): at least ``min_clients`` distinct clients typed it in the window, and no
personal-data detector fires on it. A client is a ``client_id``: a search without one is
counted but never makes a client (a session id is chosen by the page, a fresh one per search
would count every search as a new person). Distinct clients are kept as salted hashes, at most
``min_clients`` per query and slot — enough to decide the rule exactly (the union of capped sets
reaches the threshold exactly when the union of the full sets does).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from heapq import nlargest
from operator import itemgetter
from typing import TYPE_CHECKING

from collector.control_characters import visible
from collector.privacy.personal_data import NOT_SCANNED_YET, PersonalData, too_few_clients

if TYPE_CHECKING:  # a type only: the stage below it imports nothing above
    from collector.config import Config

MAX_LABEL_LENGTH = 64
_CANDIDATES_PER_SHOWN = 20  # queries examined per query shown (the withheld ones among them)

# (normalized query, zero-result searches in the window, hashes of distinct clients, searches
# without a client id)
Candidate = tuple[str, int, frozenset[int], int]


class _Slot:
    __slots__ = ("counts", "clients", "without_client")

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.clients: dict[str, set[int]] = {}
        self.without_client: Counter[str] = Counter()  # query → searches without a client id


class TopZeroResultQueries:
    def __init__(self, k: int = 10, window_s: float = 900.0, slots: int = 15,
                 slot_capacity: int = 2000, min_clients: int = 3) -> None:
        self.k = k
        self.window_s = window_s
        self.slot_s = window_s / slots
        self.slot_capacity = slot_capacity
        self.min_clients = min_clients
        self._slots: dict[int, dict[str, _Slot]] = {}  # slot number → application → counts

    def add(self, application: str, normalized: str, ts: float, client: str | None) -> None:
        """A zero-result search; ``client``: its ``client_id`` (None: counted, no client)."""
        number = int(ts // self.slot_s)
        apps = self._slots.get(number)
        if apps is None:
            apps = self._slots[number] = {}
            self._drop_before(number)
        slot = apps.get(application)
        if slot is None:
            slot = apps[application] = _Slot()
        slot.counts[normalized] += 1
        clients = slot.clients.get(normalized)
        if clients is None:
            clients = slot.clients[normalized] = set()
        if client is None:
            slot.without_client[normalized] += 1
        elif len(clients) < self.min_clients:
            clients.add(hash(client))
        if len(slot.counts) > 2 * self.slot_capacity:
            slot.counts = Counter(dict(slot.counts.most_common(self.slot_capacity)))
            slot.clients = {q: slot.clients[q] for q in slot.counts}
            slot.without_client = Counter({q: n for q, n in slot.without_client.items()
                                           if q in slot.counts})

    def _oldest(self, newest_slot: int) -> int:
        return newest_slot - int(round(self.window_s / self.slot_s)) + 1

    def _drop_before(self, newest_slot: int) -> None:
        oldest = self._oldest(newest_slot)
        for number in [s for s in self._slots if s < oldest]:
            del self._slots[number]

    def candidates(self, now: float) -> dict[str, list[Candidate]]:
        """Application → the most frequent zero-result queries of the window ending at event
        time ``now`` (``20 × k`` of them), unfiltered: for ``QueryRelease`` only."""
        oldest = self._oldest(int(now // self.slot_s))
        counts: dict[str, Counter[str]] = {}
        clients: dict[str, dict[str, set[int]]] = {}
        without: dict[str, Counter[str]] = {}
        for number, apps in list(self._slots.items()):
            if number < oldest:
                continue
            for application, slot in list(apps.items()):
                counts.setdefault(application, Counter()).update(dict(slot.counts))
                without.setdefault(application, Counter()).update(dict(slot.without_client))
                merged = clients.setdefault(application, {})
                for query, seen in list(slot.clients.items()):
                    merged.setdefault(query, set()).update(seen)
        return {application: [(query, n, frozenset(clients[application][query]),
                               without[application][query])
                               for query, n in nlargest(_CANDIDATES_PER_SHOWN * self.k,
                                                        c.items(), key=itemgetter(1))]
                for application, c in counts.items()}


@dataclass
class Released:
    shown: dict[str, list[tuple[str, int]]]  # application → (label text, searches), top k
    withheld: dict[str, Counter[str]]  # application → reason → candidates withheld


class QueryRelease:
    """The two rules a query must pass to be shown, applied to the candidates of one engine
    or of several merged (a query's clients may be spread over partitions).

    Cheap first: the count of distinct clients (a set's size) and the length decide most
    candidates; the detectors read only the text of queries that passed both and were not
    read before (``PersonalData`` remembers). The text new to a release is read within
    ``scan_budget_s`` of detector time, most frequent first across every application (each
    one's first, then each one's second …): a flood of new text — 4,200 distinct
    phone-shaped queries at the caps — never holds a scrape or a checkpoint longer than the
    budget. What the budget did not reach is withheld as ``not_scanned_yet`` and read by the
    next releases."""

    def __init__(self, k: int, min_clients: int, detectors: PersonalData,
                 scan_budget_s: float = 0.03,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.k = k
        self.min_clients = min_clients
        self.detectors = detectors
        self.scan_budget_s = scan_budget_s
        self.clock = clock

    @classmethod
    def from_config(cls, config: Config) -> QueryRelease:
        return cls(config["top_queries.size"], config["privacy.min_distinct_clients"],
                   PersonalData.from_config(config), config["privacy.scan_budget_ms"] / 1000)

    def release(self, candidates: dict[str, list[Candidate]]) -> Released:
        ranked = {application: sorted(found, key=lambda c: (-c[1], c[0]))
                  for application, found in candidates.items()}
        reasons = self._reasons(ranked)
        shown: dict[str, list[tuple[str, int]]] = {}
        withheld: dict[str, Counter[str]] = {}
        for application, found in ranked.items():
            labelled: Counter[str] = Counter()
            refused: Counter[str] = Counter()
            for rank, (query, count, _, _) in enumerate(found):
                reason = reasons[application, rank]
                if reason:
                    refused[reason] += 1
                else:
                    labelled[label(query)] += count
            shown[application] = sorted(labelled.items(), key=lambda kv: (-kv[1], kv[0]))[
                : self.k]
            withheld[application] = refused
        return Released(shown, withheld)

    def _reasons(self, ranked: dict[str, list[Candidate]]
                 ) -> dict[tuple[str, int], str | None]:
        """(application, rank) → why the candidate is withheld, or None."""
        detectors = self.detectors
        reasons: dict[tuple[str, int], str | None] = {}
        unread: list[tuple[int, str, str]] = []  # (rank, application, query)
        for application, found in ranked.items():
            for rank, (query, _, clients, without_client) in enumerate(found):
                reason = too_few_clients(len(clients), without_client, self.min_clients)
                if reason is None and not detectors.is_cheap(query):
                    unread.append((rank, application, query))
                    continue
                reasons[application, rank] = reason or detectors.reason(query)
        deadline = self.clock() + self.scan_budget_s
        for rank, application, query in sorted(unread):
            reasons[application, rank] = (detectors.reason(query) if self.clock() < deadline
                                          else NOT_SCANNED_YET)
        return reasons


def merge_candidates(many: list[dict[str, list[Candidate]]]) -> dict[str, list[Candidate]]:
    """Several engines' candidates as one: searches added, client sets united."""
    counts: dict[str, Counter[str]] = {}
    without: dict[str, Counter[str]] = {}
    clients: dict[str, dict[str, set[int]]] = {}
    for candidates in many:
        for application, found in candidates.items():
            for query, count, seen, without_client in found:
                counts.setdefault(application, Counter())[query] += count
                without.setdefault(application, Counter())[query] += without_client
                clients.setdefault(application, {}).setdefault(query, set()).update(seen)
    return {application: [(q, n, frozenset(clients[application][q]), without[application][q])
                          for q, n in c.items()]
            for application, c in counts.items()}


def label(query: str) -> str:
    """Control characters visible, length-capped: safe as a label value."""
    query = visible(query)
    if len(query) > MAX_LABEL_LENGTH:
        return query[: MAX_LABEL_LENGTH - 1] + "…"
    return query
