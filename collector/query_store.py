"""Where per-query aggregates are kept: SQLite (the embedded default, `sqlite:///path.db`).

Writes add to what is stored (a flush may split a day's row in two), inside one transaction
per flush, so a crash in the middle of a flush leaves the store as it was before it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from collector.query_stats import Key, QueryRow

SCHEMA = """
CREATE TABLE IF NOT EXISTS query_stats (
    day TEXT NOT NULL,
    application TEXT NOT NULL,
    query TEXT NOT NULL,
    row TEXT NOT NULL,
    PRIMARY KEY (day, application, query)
)
"""


class StoreError(ValueError):
    """The store URL is unusable; the message names it."""


def day_name(day: int) -> str:
    return datetime.fromtimestamp(day * 86400, UTC).strftime("%Y-%m-%d")


class SqliteStore:
    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.db = sqlite3.connect(path)
            self.db.execute(SCHEMA)
        except sqlite3.Error as error:
            raise StoreError(f"store sqlite:///{path}: {error}") from None

    def add(self, rows: dict[Key, QueryRow]) -> None:
        """Merge rows into the store in one transaction."""
        with self.db:
            for (day, application, query), row in rows.items():
                key = (day_name(day), application, query)
                found = self.db.execute(
                    "SELECT row FROM query_stats WHERE day = ? AND application = ? AND query = ?",
                    key).fetchone()
                if found:
                    merged = QueryRow.from_record(json.loads(found[0]))
                    merged.merge(row)
                    row = merged
                self.db.execute("INSERT OR REPLACE INTO query_stats VALUES (?, ?, ?, ?)",
                                (*key, json.dumps(row.to_record())))

    def rows(self) -> Iterator[dict[str, Any]]:
        for day, application, query, row in self.db.execute(
                "SELECT day, application, query, row FROM query_stats ORDER BY 1, 2, 3"):
            yield {"day": day, "application": application, "query": query, **json.loads(row)}

    def close(self) -> None:
        self.db.close()


def open_store(url: str) -> SqliteStore:
    if url.startswith("sqlite:///"):
        return SqliteStore(url.removeprefix("sqlite:///"))
    raise StoreError(f"store {url!r}: expected sqlite:///PATH")
