"""Where per-query aggregates are kept: SQLite (the embedded default, ``sqlite:///path.db``) or
PostgreSQL (``postgresql://user@host/db``).

Two tables: counts per (application, query, day), and document / reformulation counts per
(application, query, day, kind, item) — each flush writes a row's most frequent items only, so
the item table stays bounded. A flush adds to what is stored with one batched upsert per table
inside **one transaction**, together with the Kafka offsets the flush covers (``store_offsets``):
a crash in the middle of a flush leaves the store as it was, and after any crash the stored
offsets say exactly which records the stored counts include (docs/delivery.md).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from heapq import nlargest
from operator import itemgetter
from typing import Any

import pandas as pd

from collector.query_stats import COUNTS, TOP_REFORMULATIONS, Key, QueryRow

_COLUMNS = (*COUNTS, "reciprocal_rank_sum")
_KEY = "application, query, day"


def _schema(integer: str, real: str, suffix: str) -> tuple[str, ...]:
    counts = ", ".join(f"{c} {real if c == 'reciprocal_rank_sum' else integer} NOT NULL"
                       for c in _COLUMNS)
    return (
        f"CREATE TABLE IF NOT EXISTS query_stats (application TEXT NOT NULL, query TEXT NOT NULL,"
        f" day TEXT NOT NULL, {counts}, PRIMARY KEY ({_KEY})){suffix}",
        "CREATE TABLE IF NOT EXISTS query_items (application TEXT NOT NULL, query TEXT NOT NULL, "
        f"day TEXT NOT NULL, kind TEXT NOT NULL, item TEXT NOT NULL, count {integer} NOT NULL, "
        f"PRIMARY KEY ({_KEY}, kind, item)){suffix}",
        "CREATE TABLE IF NOT EXISTS store_offsets (consumer_group TEXT NOT NULL, "
        f"topic TEXT NOT NULL, kafka_partition INTEGER NOT NULL, safe_offset {integer} NOT NULL, "
        f"high_offset {integer} NOT NULL, PRIMARY KEY (consumer_group, topic, kafka_partition))"
        f"{suffix}",
    )


_UPSERT_COUNTS = (
    f"INSERT INTO query_stats ({_KEY}, {', '.join(_COLUMNS)}) "
    f"VALUES ({', '.join(['?'] * (3 + len(_COLUMNS)))}) ON CONFLICT ({_KEY}) DO UPDATE SET "
    + ", ".join(f"{c} = query_stats.{c} + excluded.{c}" for c in _COLUMNS))
_UPSERT_ITEMS = (f"INSERT INTO query_items ({_KEY}, kind, item, count) VALUES (?, ?, ?, ?, ?, ?) "
                 f"ON CONFLICT ({_KEY}, kind, item) "
                 "DO UPDATE SET count = query_items.count + excluded.count")
_UPSERT_OFFSETS = (
    "INSERT INTO store_offsets VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (consumer_group, topic, kafka_partition) DO UPDATE SET "
    "safe_offset = excluded.safe_offset, high_offset = excluded.high_offset")
_TOTALS = (f"SELECT application, query, {', '.join(f'SUM({c}) AS {c}' for c in _COLUMNS)}, "
           "COUNT(*) AS days FROM query_stats WHERE day >= ? GROUP BY application, query")
_ITEMS = ("SELECT kind, item, SUM(count) AS total FROM query_items "
          "WHERE application = ? AND query = ? AND day >= ? GROUP BY kind, item "
          "ORDER BY total DESC, item")
_ROW_ITEMS = ("SELECT kind, item, count FROM query_items WHERE application = ? AND query = ? "
              "AND day = ? ORDER BY count DESC, item")

Offsets = dict[tuple[str, int], tuple[int, int]]  # (topic, partition) → (safe, high-water)


class StoreError(ValueError):
    """The store is unusable (bad URL, unreachable, not a database); the message names it."""


def day_name(day: int) -> str:
    return datetime.fromtimestamp(day * 86400, UTC).strftime("%Y-%m-%d")


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(//[^:/@]+):[^@]*@", r"\1:***@", url)


class QueryStore:
    """The SQL both databases share; subclasses connect and name their placeholder."""

    placeholder = "?"
    errors: tuple[type[Exception], ...] = ()

    def __init__(self, url: str, db: Any, schema: tuple[str, ...],
                 items_per_flush: dict[str, int], read_only: bool) -> None:
        self.url = url
        self.db = db
        self.items_per_flush = items_per_flush
        self._sql = {name: sql.replace("?", self.placeholder) for name, sql in (
            ("counts", _UPSERT_COUNTS), ("items", _UPSERT_ITEMS), ("offsets", _UPSERT_OFFSETS),
            ("totals", _TOTALS), ("items_of", _ITEMS), ("row_items", _ROW_ITEMS))}
        if read_only:
            return
        try:
            with self._transaction():
                for statement in schema:
                    self.db.execute(statement)
        except self.errors as error:
            raise StoreError(f"store {redact(url)}: {error}") from None

    def add(self, rows: Iterable[tuple[Key, QueryRow]], offsets: Offsets | None = None,
            group: str = "") -> None:
        """Add rows (and record the offsets they cover) in one transaction."""
        days: dict[int, str] = {}
        counts, items = [], []
        for (day, application, query), row in rows:
            name = days.get(day) or days.setdefault(day, day_name(day))
            counts.append((application, query, name, *(getattr(row, c) for c in _COLUMNS)))
            for kind, keep in self.items_per_flush.items():  # per flush, the most frequent
                counts_of = getattr(row, kind)
                top = (nlargest(keep, counts_of.items(), key=itemgetter(1))
                       if len(counts_of) > keep else counts_of.items())
                for item, count in top:
                    items.append((application, query, name, kind, str(item), count))
        try:
            with self._transaction():
                cursor = self.db.cursor()
                if counts:
                    cursor.executemany(self._sql["counts"], counts)
                if items:
                    cursor.executemany(self._sql["items"], items)
                if offsets:
                    cursor.executemany(self._sql["offsets"], [
                        (group, topic, partition, safe, high)
                        for (topic, partition), (safe, high) in offsets.items()])
        except self.errors as error:
            raise StoreError(f"store {redact(self.url)}: {error}") from None

    def _transaction(self) -> Any:
        return self.db  # sqlite3: the connection's context manager commits or rolls back

    def offsets(self, group: str) -> Offsets:
        """The offsets the stored counts cover, per partition of the consumer group."""
        cursor = self.db.cursor()
        cursor.execute("SELECT topic, kafka_partition, safe_offset, high_offset FROM "
                       f"store_offsets WHERE consumer_group = {self.placeholder}", (group,))
        return {(topic, partition): (safe, high) for topic, partition, safe, high in cursor}

    def totals(self, since_day: str) -> pd.DataFrame:
        """Counts per (application, query) from ``since_day`` on, summed over days."""
        try:
            cursor = self.db.cursor()
            cursor.execute(self._sql["totals"], (since_day,))
            names = [d[0] for d in cursor.description]
            frame = pd.DataFrame.from_records(cursor.fetchall(), columns=names)
        except self.errors as error:
            raise StoreError(f"store {redact(self.url)}: {error}") from None
        return frame.astype({c: "int64" for c in (*COUNTS, "days")} | {
            "reciprocal_rank_sum": "float64"})

    def items(self, application: str, query: str, since_day: str) -> dict[str, dict[str, int]]:
        """Documents shown and clicked and reformulations of one query, most frequent first."""
        found: dict[str, dict[str, int]] = {kind: {} for kind in self.items_per_flush}
        cursor = self.db.cursor()
        cursor.execute(self._sql["items_of"], (application, query, since_day))
        for kind, item, total in cursor:
            found[kind][item] = int(total)
        return found

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every stored row with its items (for inspection and tests, not for large stores)."""
        cursor = self.db.cursor()
        cursor.execute(f"SELECT * FROM query_stats ORDER BY {_KEY}")
        names = [d[0] for d in cursor.description]
        for values in cursor.fetchall():
            row = dict(zip(names, values, strict=True))
            items = {kind: {} for kind in self.items_per_flush}
            inner = self.db.cursor()
            inner.execute(self._sql["row_items"], (row["application"], row["query"], row["day"]))
            for kind, item, count in inner:
                items[kind][item] = count
            row.update(items)
            yield row

    def close(self) -> None:
        self.db.close()


class SqliteStore(QueryStore):
    errors = (sqlite3.Error,)

    def __init__(self, path: str, items_per_flush: dict[str, int], read_only: bool) -> None:
        try:
            if read_only:  # a reader never creates or changes a store
                db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
                db.execute("SELECT 1 FROM query_stats LIMIT 1")
            else:
                db = sqlite3.connect(path)
                db.execute("PRAGMA journal_mode=WAL")  # readers (the feedback job) never block
                db.execute("PRAGMA synchronous=NORMAL")  # a power cut may lose the last
                # flushes, together with their offsets: the store stays consistent
        except sqlite3.Error as error:
            raise StoreError(f"store sqlite:///{path}: {error}") from None
        super().__init__(f"sqlite:///{path}", db,
                         _schema("INTEGER", "REAL", " WITHOUT ROWID"), items_per_flush,
                         read_only)


class PostgresStore(QueryStore):
    placeholder = "%s"

    def __init__(self, url: str, items_per_flush: dict[str, int], read_only: bool) -> None:
        try:
            import psycopg
        except ImportError:
            raise StoreError(f"store {redact(url)}: PostgreSQL needs the psycopg package "
                             "(pip install 'searchpulse[postgres]')") from None
        self.errors = (psycopg.Error,)
        try:
            db = psycopg.connect(url, connect_timeout=10, autocommit=True)
        except psycopg.Error as error:
            raise StoreError(f"store {redact(url)}: {error}") from None
        super().__init__(url, db, _schema("BIGINT", "DOUBLE PRECISION", ""), items_per_flush,
                         read_only)

    def _transaction(self) -> Any:
        return self.db.transaction()  # reads autocommit; each flush is one transaction


def open_store(url: str, shown_depth: int = 10, read_only: bool = False) -> QueryStore:
    """A store from its URL; ``shown_depth`` documents shown and clicked are kept per flush.
    ``read_only``: the store must exist already, and is neither created nor changed."""
    items = {"shown": shown_depth, "clicked_documents": shown_depth,
             "reformulations": TOP_REFORMULATIONS}
    if url.startswith("sqlite:///"):
        return SqliteStore(url.removeprefix("sqlite:///"), items, read_only)
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresStore(url, items, read_only)
    raise StoreError(f"store {redact(url)!r}: expected sqlite:///PATH or postgresql://…")
