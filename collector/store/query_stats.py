"""Per-query aggregates for the feedback job: what Prometheus cannot hold.

One row per (day, application, normalized query), fed by the same decisions that feed the
metrics (so the two always agree). Rows are drained to a store (collector/store/query_store.py) that
adds them up. Counts are exact; the documents shown (the first ``shown_depth`` results of each
search) are a bounded heavy-hitter list per row: past ``8 × shown_depth`` distinct documents the
least shown half is dropped, so rarely shown documents' counts are lower bounds. The same holds
for impressions and clicks per (position, document) — ``shown_at`` and ``clicked_at``, keyed
``"position:document"`` — which the position-based click model (feedback/clicks/click_model.py)
needs.
"""

from __future__ import annotations

import zlib
from heapq import nlargest
from operator import itemgetter

import msgspec

TOP_REFORMULATIONS = 5
# Distinct clients kept per row, as 32-bit marks (CRC-32 of the id, not the id): enough to
# decide k-anonymity up to this k (feedback.min_distinct_clients).
CLIENT_MARKS = 8
# ranked_clicked: first clicks with a known position, the denominator of the MRR
# (position, document) pairs a store keeps per row and day, × shown_depth
POSITION_PAIRS = 3
COUNTS = ("searches", "zero_result", "clicked", "ranked_clicked", "clicks", "converted",
          "reformulated", "abandoned", "judged_searches", "searches_without_client_id")
# Sums of per-search scores (REAL columns): Σ 1/position of first clicks; judged NDCG@10 and
# coverage@10 of the judged searches (collector/series/judged_relevance.py).
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
    searches_without_client_id: int = 0  # counted, but no client for k-anonymity
    reciprocal_rank_sum: float = 0.0
    judged_ndcg_sum: float = 0.0
    judged_coverage_sum: float = 0.0
    live: bool = True  # False once drained: a search holding it must look its row up again
    # Plain dicts: `d[k] = d.get(k, 0) + 1` beats Counter.update for one item at a time.
    reformulations: dict[str, int] = msgspec.field(default_factory=dict)
    clicked_documents: dict[str | int, int] = msgspec.field(default_factory=dict)
    clients: dict[str, int] = msgspec.field(default_factory=dict)  # mark → searches, ≤ 8
    shown: dict[str | int, int] = msgspec.field(default_factory=dict)  # document → times
    # "position:document" → impressions (from the result list) / clicks at a known position
    shown_at: dict[str, int] = msgspec.field(default_factory=dict)
    clicked_at: dict[str, int] = msgspec.field(default_factory=dict)
    # distinct first pages shown → times, not yet counted into shown / shown_at
    pages: dict[tuple[str | int, ...], int] = msgspec.field(default_factory=dict)

    def add(self, other: QueryRow) -> None:
        """Add another row of the same key (a failed flush's, written again)."""
        for name in (*COUNTS, *SUMS):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in ((self.shown, other.shown), (self.shown_at, other.shown_at),
                             (self.reformulations, other.reformulations),
                             (self.clicked_documents, other.clicked_documents),
                             (self.clicked_at, other.clicked_at),
                             (self.clients, other.clients)):
            for item, count in theirs.items():
                mine[item] = mine.get(item, 0) + count


Key = tuple[int, str, str]  # (UTC day number, application, normalized query)
_POSITION_KEY = "{}:{}".format
_POSITIONS = range(1, 1 << 16)


def position_key(key: str) -> tuple[int, str] | None:
    """A ``shown_at`` / ``clicked_at`` key, ``"position:document"`` → (position, document);
    None when malformed."""
    position, _, document = key.partition(":")
    return (int(position), document) if position.isdigit() and document else None


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
        self._batch = 8 * shown_depth  # the cap of `shown`, and of `shown_at` (× 4)
        self._pages = 4 * shown_depth  # distinct pages kept before they are counted

    @classmethod
    def holding(cls, rows: dict[Key, QueryRow], shown_depth: int = 10) -> QueryStats:
        """Rows drained elsewhere (a replay worker's, received whole), for a store writer to
        drain again."""
        stats = cls(shown_depth)
        stats.rows = rows
        return stats

    def row(self, ts: float, application: str, normalized: str) -> QueryRow:
        key = (int(ts // 86400), application, normalized)
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = QueryRow()
        return row

    @staticmethod
    def mark(row: QueryRow, client: str | None) -> None:
        """Note a client who typed the query (until ``CLIENT_MARKS`` distinct are noted); a
        search without a ``client_id`` is counted as such, never as a client."""
        if client is None:
            row.searches_without_client_id += 1
            return
        marks = row.clients
        if len(marks) < CLIENT_MARKS:
            mark = f"{zlib.crc32(client.encode()):08x}"
            marks[mark] = marks.get(mark, 0) + 1

    def show(self, row: QueryRow, documents: tuple[str | int, ...] | None) -> None:
        """Count the first ``shown_depth`` documents of a result page as shown, at their
        positions. Pages are counted as pages (a head query shows the same page again and
        again) and their documents only at a drain, or once ``4 × shown_depth`` distinct pages
        wait: each distinct page's documents once per flush, not once per search."""
        if documents:
            page = (documents if len(documents) <= self.shown_depth
                    else documents[:self.shown_depth])
            pages = row.pages
            pages[page] = pages.get(page, 0) + 1
            if len(pages) > self._pages:
                self._fold(row)

    def shown_at(self, row: QueryRow, position: int, document: str | int) -> None:
        """An impression event of ``document`` at a known 1-based ``position`` (searches
        without a result list: their pages give no positions)."""
        if position <= self.shown_depth:
            key = f"{position}:{document}"
            row.shown_at[key] = row.shown_at.get(key, 0) + 1

    def click_at(self, row: QueryRow, position: int, document: str | int) -> None:
        """A click on ``document`` at a known 1-based ``position`` within ``shown_depth``."""
        if position <= self.shown_depth:
            key = f"{position}:{document}"
            clicked_at = row.clicked_at
            clicked_at[key] = clicked_at.get(key, 0) + 1

    def _fold(self, row: QueryRow) -> None:
        shown, shown_at = row.shown, row.shown_at
        count, count_at = shown.get, shown_at.get
        for page, times in row.pages.items():
            for document in page:
                shown[document] = count(document, 0) + times
            for key in map(_POSITION_KEY, _POSITIONS, page):  # "1:d7", "2:d3", …
                shown_at[key] = count_at(key, 0) + times
        row.pages.clear()
        cap = self._batch
        if len(shown) > cap:  # memory bound: keep the most shown half (approximate)
            row.shown = dict(nlargest(cap // 2, shown.items(), key=itemgetter(1)))
        if len(shown_at) > 4 * cap:
            row.shown_at = dict(nlargest(2 * cap, shown_at.items(), key=itemgetter(1)))

    def drain(self) -> dict[Key, QueryRow]:
        """Every row, complete, and a fresh start."""
        rows, self.rows = self.rows, {}
        for row in rows.values():
            if row.pages:
                self._fold(row)
            row.live = False
        return rows
