"""Per-query aggregates for the feedback job: what Prometheus cannot hold.

One row per (day, application, normalized query), fed by the same decisions that feed the
metrics (so the two always agree). Rows are drained to a store (collector/query_store.py) that
adds them up. Counts are exact; the documents shown (the first ``shown_depth`` results of each
search) are a bounded heavy-hitter list per row: past ``8 × shown_depth`` distinct documents the
least shown half is dropped, so rarely shown documents' counts are lower bounds.
"""

from __future__ import annotations

import zlib
from collections import Counter
from heapq import nlargest
from operator import itemgetter

import msgspec

TOP_REFORMULATIONS = 5
# Distinct clients kept per row, as 32-bit marks (CRC-32 of the id, not the id): enough to
# decide k-anonymity up to this k (feedback.min_distinct_clients).
CLIENT_MARKS = 8
# ranked_clicked: first clicks with a known position, the denominator of the MRR
COUNTS = ("searches", "zero_result", "clicked", "ranked_clicked", "clicks", "converted",
          "reformulated", "abandoned", "judged_searches")
# Sums of per-search scores (REAL columns): Σ 1/position of first clicks; judged NDCG@10 and
# coverage@10 of the judged searches (collector/judged_relevance.py).
SUMS = ("reciprocal_rank_sum", "judged_ndcg_sum", "judged_coverage_sum")


class QueryRow(msgspec.Struct, gc=False):
    """gc=False: tens of thousands of rows stay out of the cyclic GC's traversals (they hold
    no cycles), which otherwise cost more than the counting itself."""

    searches: int = 0
    zero_result: int = 0
    clicked: int = 0
    ranked_clicked: int = 0
    clicks: int = 0
    converted: int = 0
    reformulated: int = 0
    abandoned: int = 0
    judged_searches: int = 0
    reciprocal_rank_sum: float = 0.0
    judged_ndcg_sum: float = 0.0
    judged_coverage_sum: float = 0.0
    live: bool = True  # False once drained: a search holding it must look its row up again
    # Plain dicts: `d[k] = d.get(k, 0) + 1` beats Counter.update for one item at a time.
    reformulations: dict[str, int] = msgspec.field(default_factory=dict)
    clicked_documents: dict[str | int, int] = msgspec.field(default_factory=dict)
    clients: dict[str, int] = msgspec.field(default_factory=dict)  # mark → searches, ≤ 8
    shown: Counter[str | int] = msgspec.field(default_factory=Counter)  # document → times
    pending: list[str | int] = msgspec.field(default_factory=list)  # shown, not yet counted

    def add(self, other: QueryRow) -> None:
        """Add another row of the same key (a failed flush's, written again)."""
        for name in (*COUNTS, *SUMS):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.shown.update(other.shown)
        for mine, theirs in ((self.reformulations, other.reformulations),
                             (self.clicked_documents, other.clicked_documents),
                             (self.clients, other.clients)):
            for item, count in theirs.items():
                mine[item] = mine.get(item, 0) + count


Key = tuple[int, str, str]  # (UTC day number, application, normalized query)


def merge_rows(into: dict[Key, QueryRow], rows: dict[Key, QueryRow]) -> dict[Key, QueryRow]:
    """Add ``rows`` into ``into`` (drained rows only: nothing pending) and return it."""
    for key, row in rows.items():
        mine = into.get(key)
        if mine is None:
            into[key] = row
        else:
            mine.add(row)
    return into


class QueryStats:
    """Rows being accumulated; `drain()` hands them to a store and starts afresh. A search's
    later outcomes look their row up again, so a drain between them only splits the row."""

    def __init__(self, shown_depth: int = 10) -> None:
        self.rows: dict[Key, QueryRow] = {}
        self.shown_depth = shown_depth
        self._batch = 8 * shown_depth  # documents queued before a fold; also the cap of `shown`

    def row(self, ts: float, application: str, normalized: str) -> QueryRow:
        key = (int(ts // 86400), application, normalized)
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = QueryRow()
        return row

    @staticmethod
    def mark(row: QueryRow, client: str) -> None:
        """Note a client who typed the query (until ``CLIENT_MARKS`` distinct are noted)."""
        marks = row.clients
        if len(marks) < CLIENT_MARKS:
            mark = f"{zlib.crc32(client.encode()):08x}"
            marks[mark] = marks.get(mark, 0) + 1

    def show(self, row: QueryRow, documents: list[str | int] | None) -> None:
        """Count the first ``shown_depth`` documents of a result page as shown: they are
        queued (the page itself is not kept alive) and counted in C (Counter.update) once
        ``8 × shown_depth`` are queued, not one document at a time."""
        if documents:
            pending = row.pending
            pending += documents[:self.shown_depth]
            if len(pending) >= self._batch:
                self._fold(row)

    def _fold(self, row: QueryRow) -> None:
        shown = row.shown
        shown.update(row.pending)
        row.pending.clear()
        if len(shown) > self._batch:  # memory bound: keep the most shown half (approximate)
            row.shown = Counter(dict(nlargest(self._batch // 2, shown.items(),
                                              key=itemgetter(1))))

    def drain(self) -> dict[Key, QueryRow]:
        """Every row, complete, and a fresh start."""
        rows, self.rows = self.rows, {}
        for row in rows.values():
            if row.pending:
                self._fold(row)
            row.live = False
        return rows
