"""Per-query aggregates for the feedback job: what Prometheus cannot hold.

One row per (day, application, normalized query), fed by the same decisions that feed the
metrics (so the two always agree). Rows are drained to a store (collector/query_store.py) that
adds them up; document lists count the first ``shown_depth`` results of each search.
"""

from __future__ import annotations

TOP_REFORMULATIONS = 5
# ranked_clicked: first clicks with a known position, the denominator of the MRR
COUNTS = ("searches", "zero_result", "clicked", "ranked_clicked", "clicks", "converted",
          "reformulated", "abandoned")


class QueryRow:
    __slots__ = (*COUNTS, "reciprocal_rank_sum", "reformulations", "shown", "clicked_documents",
                 "live")

    def __init__(self) -> None:
        for name in COUNTS:
            setattr(self, name, 0)
        self.reciprocal_rank_sum = 0.0
        self.live = True  # False once drained: a search holding it must look its row up again
        # Plain dicts, not Counters: `d[k] = d.get(k, 0) + 1` is several times cheaper than
        # Counter.update on the per-event path.
        self.reformulations: dict[str, int] = {}
        self.shown: dict[str | int, int] = {}  # document id → times shown
        self.clicked_documents: dict[str | int, int] = {}



Key = tuple[int, str, str]  # (UTC day number, application, normalized query)


class QueryStats:
    """Rows being accumulated; `drain()` hands them to a store and starts afresh. A search's
    later outcomes look their row up again, so a drain between them only splits the row."""

    def __init__(self, shown_depth: int = 10) -> None:
        self.rows: dict[Key, QueryRow] = {}
        self.shown_depth = shown_depth

    def row(self, ts: float, application: str, normalized: str) -> QueryRow:
        key = (int(ts // 86400), application, normalized)
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = QueryRow()
        return row

    def show(self, row: QueryRow, documents: list[str | int] | None) -> None:
        """Count the first ``shown_depth`` documents of a result page as shown."""
        if documents:
            shown = row.shown
            for document in documents[:self.shown_depth]:
                shown[document] = shown.get(document, 0) + 1

    def drain(self) -> dict[Key, QueryRow]:
        rows, self.rows = self.rows, {}
        for row in rows.values():
            row.live = False
        return rows
