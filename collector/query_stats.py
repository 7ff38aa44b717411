"""Per-query aggregates for the feedback job: what Prometheus cannot hold.

One row per (day, application, normalized query), fed by the same decisions that feed the
metrics (so the two always agree), bounded in memory: rows are drained to a store on an interval
and at the end of input, document and reformulation lists keep their most frequent entries.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

TOP_DOCUMENTS = 20
TOP_REFORMULATIONS = 5
_COUNTS = ("searches", "zero_result", "clicked", "clicks", "converted", "reformulated",
           "abandoned")


class QueryRow:
    __slots__ = (*_COUNTS, "reciprocal_rank_sum", "reformulations", "shown", "clicked_documents")

    def __init__(self) -> None:
        for name in _COUNTS:
            setattr(self, name, 0)
        self.reciprocal_rank_sum = 0.0
        self.reformulations: Counter[str] = Counter()
        self.shown: Counter[str] = Counter()
        self.clicked_documents: Counter[str] = Counter()

    def show(self, documents: list[str | int] | None) -> None:
        if documents:
            self.shown.update(str(d) for d in documents[:TOP_DOCUMENTS])

    def merge(self, other: QueryRow) -> None:
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.reciprocal_rank_sum += other.reciprocal_rank_sum
        self.reformulations.update(other.reformulations)
        self.shown.update(other.shown)
        self.clicked_documents.update(other.clicked_documents)

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {name: getattr(self, name) for name in _COUNTS}
        record["reciprocal_rank_sum"] = self.reciprocal_rank_sum
        record["reformulations"] = dict(self.reformulations.most_common(TOP_REFORMULATIONS))
        record["shown"] = dict(self.shown.most_common(TOP_DOCUMENTS))
        record["clicked_documents"] = dict(self.clicked_documents.most_common(TOP_DOCUMENTS))
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> QueryRow:
        row = cls()
        for name in _COUNTS:
            setattr(row, name, record[name])
        row.reciprocal_rank_sum = record["reciprocal_rank_sum"]
        row.reformulations.update(record["reformulations"])
        row.shown.update(record["shown"])
        row.clicked_documents.update(record["clicked_documents"])
        return row


Key = tuple[int, str, str]  # (UTC day number, application, normalized query)


class QueryStats:
    """Rows being accumulated; `drain()` hands them to a store and starts afresh. A search's
    later outcomes look their row up again, so a drain between them only splits the row."""

    def __init__(self) -> None:
        self.rows: dict[Key, QueryRow] = {}

    def row(self, ts: float, application: str, normalized: str) -> QueryRow:
        key = (int(ts // 86400), application, normalized)
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = QueryRow()
        return row

    def drain(self) -> dict[Key, QueryRow]:
        rows, self.rows = self.rows, {}
        return rows
