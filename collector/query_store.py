"""Where per-query aggregates are kept: SQLite (the embedded default, `sqlite:///path.db`).

Two tables: counts per (day, application, query), and document / reformulation counts per
(day, application, query, kind, item) — each flush writes a row's most frequent items only, so the
item table stays bounded. A flush adds to what is stored with one batched upsert per table inside
one transaction: a crash in the middle of a flush leaves the store as it was.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from heapq import nlargest
from operator import itemgetter
from typing import Any

from collector.query_stats import COUNTS, TOP_DOCUMENTS, TOP_REFORMULATIONS, Key, QueryRow

ITEM_KINDS = {"shown": TOP_DOCUMENTS, "clicked_documents": TOP_DOCUMENTS,
              "reformulations": TOP_REFORMULATIONS}
_COLUMNS = (*COUNTS, "reciprocal_rank_sum")
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS query_stats (day TEXT NOT NULL, application TEXT NOT NULL, "
    "query TEXT NOT NULL, " + ", ".join(f"{c} REAL NOT NULL" if c == "reciprocal_rank_sum"
                                        else f"{c} INTEGER NOT NULL" for c in _COLUMNS)
    + ", PRIMARY KEY (day, application, query))",
    "CREATE TABLE IF NOT EXISTS query_items (day TEXT NOT NULL, application TEXT NOT NULL, "
    "query TEXT NOT NULL, kind TEXT NOT NULL, item TEXT NOT NULL, count INTEGER NOT NULL, "
    "PRIMARY KEY (day, application, query, kind, item))",
)
UPSERT_COUNTS = (
    f"INSERT INTO query_stats VALUES (?, ?, ?, {', '.join('?' * len(_COLUMNS))}) "
    "ON CONFLICT (day, application, query) DO UPDATE SET "
    + ", ".join(f"{c} = {c} + excluded.{c}" for c in _COLUMNS))
UPSERT_ITEMS = ("INSERT INTO query_items VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (day, application, query, kind, item) "
                "DO UPDATE SET count = count + excluded.count")


class StoreError(ValueError):
    """The store URL is unusable; the message names it."""


def day_name(day: int) -> str:
    return datetime.fromtimestamp(day * 86400, UTC).strftime("%Y-%m-%d")


class SqliteStore:
    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.db = sqlite3.connect(path)
            for statement in SCHEMA:
                self.db.execute(statement)
        except sqlite3.Error as error:
            raise StoreError(f"store sqlite:///{path}: {error}") from None

    def add(self, rows: dict[Key, QueryRow]) -> None:
        """Add rows to the store, in one transaction."""
        days: dict[int, str] = {}
        counts, items = [], []
        for (day, application, query), row in rows.items():
            name = days.get(day) or days.setdefault(day, day_name(day))
            counts.append((name, application, query,
                           *(getattr(row, c) for c in _COLUMNS)))
            for kind, keep in ITEM_KINDS.items():  # per flush, the most frequent ones
                counts_of = getattr(row, kind)
                top = (nlargest(keep, counts_of.items(), key=itemgetter(1))
                       if len(counts_of) > keep else counts_of.items())
                for item, count in top:
                    items.append((name, application, query, kind, str(item), count))
        with self.db:
            self.db.executemany(UPSERT_COUNTS, counts)
            self.db.executemany(UPSERT_ITEMS, items)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every stored row, with its most frequent documents and reformulations."""
        items: dict[tuple[str, str, str], dict[str, dict[str, int]]] = {}
        for day, application, query, kind, item, count in self.db.execute(
                "SELECT * FROM query_items ORDER BY count DESC, item"):
            kinds = items.setdefault((day, application, query), {k: {} for k in ITEM_KINDS})
            if len(kinds[kind]) < ITEM_KINDS[kind]:
                kinds[kind][item] = count
        cursor = self.db.execute("SELECT * FROM query_stats ORDER BY day, application, query")
        names = [d[0] for d in cursor.description]
        for values in cursor:
            row = dict(zip(names, values, strict=True))
            key = (row["day"], row["application"], row["query"])
            row.update(items.get(key, {k: {} for k in ITEM_KINDS}))
            yield row

    def close(self) -> None:
        self.db.close()


def open_store(url: str) -> SqliteStore:
    if url.startswith("sqlite:///"):
        return SqliteStore(url.removeprefix("sqlite:///"))
    raise StoreError(f"store {url!r}: expected sqlite:///PATH")
