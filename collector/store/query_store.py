"""Where per-query aggregates are kept: SQLite (the embedded default, ``sqlite:///path.db``) or
PostgreSQL (``postgresql://user@host/db``).

One row per (application, query, day): the counts, and the most frequent documents shown and
clicked and reformulations as JSON objects (``{"item": count}``). A flush adds to what is stored
with one batched upsert inside **one transaction**, together with the Kafka offsets the flush
covers (``store_offsets``): a crash in the middle of a flush leaves the store as it was, and
after any crash the stored offsets say exactly which records the stored counts include
(docs/delivery.md). On a conflict the item objects are merged by the database function
``searchpulse_merge_counts``, which keeps the most frequent ones: each stays bounded. The tables
and the statements are in store_sql.py; here, how a store connects, writes a flush and reads.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, date, datetime
from heapq import nlargest
from itertools import islice
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

import msgspec
import pandas as pd

from collector.errors import StoreError, StoreUnavailable
from collector.privacy.redaction import redact
from collector.store.query_stats import (
    CLIENT_MARKS,
    COUNTS,
    POSITION_PAIRS,
    SUMS,
    TOP_REFORMULATIONS,
    Key,
    QueryRow,
)
from collector.store.store_sql import (
    ADDED,
    APPLICATION_TOTALS,
    BACKFILL_DAYS,
    CLIENTS_OF,
    COLUMNS,
    INSERT_DAY,
    ITEMS,
    ITEMS_OF,
    KEY_COLUMNS,
    MARKS,
    MERGE,
    NEWEST_DAY,
    PG_MERGE,
    POSITIONS,
    QUERY_VOLUMES,
    TOPIC_ID,
    TOTALS,
    UPSERT_OFFSETS,
    schema_statements,
    upsert,
)

# Rows per executemany of one write: a write of any size (the rows spilled during an outage,
# collector/store/spill.py) holds one chunk's parameters at a time, in one transaction.
_CHUNK_ROWS = 10_000
# How long a write waits for another process's lock on a SQLite file (sqlite3's default)
# before it fails and the store is away (the writer tries again with backoff).
BUSY_TIMEOUT_S = 5.0


Offsets = dict[tuple[str, int], tuple[int, int]]  # (topic, partition) → (safe, high-water)
TopicIds = dict[str, str]  # topic → its Kafka topic id, where known


class InputMark(NamedTuple):
    """A row of ``store_inputs``: how far a replay got in one input
    (collector/store/replay_progress.py).

    ``head``: sha256 of the input's first record, what names it whatever its file; ``run``:
    the replay that wrote it (an interrupted one is resumed with all its inputs, in
    ``ordinal`` order); every record before ``safe_records`` is final, the stored rows hold
    every record before ``high_records``; the digests are the running sha256 of the records
    before each; ``complete``: read to its end (or to the break that ended it)."""

    head: str
    name: str
    run: str
    ordinal: int
    safe_records: int
    safe_digest: str
    high_records: int
    high_digest: str
    complete: bool


_UPSERT_INPUT = (
    f"INSERT INTO store_inputs VALUES ({', '.join(['?'] * len(InputMark._fields))}) "
    "ON CONFLICT (head) DO UPDATE SET "
    + ", ".join(f"{field} = excluded.{field}" for field in InputMark._fields[1:]))


_encode = msgspec.json.Encoder().encode  # C, ~20× json.dumps with custom separators
_decode = msgspec.json.Decoder(dict[str, int]).decode


def top_items(counts: dict[Any, int], keep: int) -> str:
    """The ``keep`` most frequent items as a JSON object, most frequent first."""
    if not counts:
        return "{}"
    if len(counts) > keep:
        counts = dict(nlargest(keep, counts.items(), key=itemgetter(1)))
    return _encode(counts).decode()


def merge_counts(a: str, b: str, keep: int) -> str:
    """Two item objects added up, the ``keep`` most frequent kept."""
    merged = _decode(a)
    for item, count in _decode(b).items():
        merged[item] = merged.get(item, 0) + count
    return top_items(merged, keep)


def _ranked(objects: Iterable[str]) -> dict[str, int]:
    """Item objects (one per day) added up, most frequent first (ties by item)."""
    total: dict[str, int] = {}
    for text in objects:
        for item, count in _decode(text).items():
            total[item] = total.get(item, 0) + count
    return dict(sorted(total.items(), key=lambda pair: (-pair[1], pair[0])))


class QueryPositions(msgspec.Struct):
    """One query's impressions and clicks per ``"position:document"`` over a period."""

    application: str
    query: str
    searches: int = 0
    client_marks: int = 0  # the most distinct client marks of one day (a lower bound)
    shown_at: dict[str, int] = msgspec.field(default_factory=dict)
    clicked_at: dict[str, int] = msgspec.field(default_factory=dict)


def _failure(url: str, error: Exception) -> StoreUnavailable:
    """The database's error, naming the store, without its password (nor any piece of it the
    database repeats)."""
    return StoreUnavailable(redact(f"store {url}: {error}", url))


def day_name(day: int) -> str:
    return datetime.fromtimestamp(day * 86400, UTC).strftime("%Y-%m-%d")


class QueryStore:
    """The SQL both databases share; subclasses connect and name their placeholder."""

    placeholder = "?"
    binary = ""  # the collation that orders text by code point (SQLite's default)
    count_keys = "(SELECT COUNT(*) FROM json_each({}))"
    errors: tuple[type[Exception], ...] = ()
    # Now, in Unix seconds (tests set their own): no day after it is the newest day, and none
    # moves the retention cut-off (a record stamped in the future must not delete a real day).
    wall_clock: Callable[[], float] = staticmethod(time.time)

    def __init__(self, url: str, db: Any, schema: tuple[str, ...],
                 items_per_flush: dict[str, int], read_only: bool,
                 retention_days: int = 0) -> None:
        self.url = url
        self.db = db
        self.items_per_flush = items_per_flush
        self._sql = {name: sql.replace("?", self.placeholder).replace("{binary}", self.binary)
                     for name, sql in (
            ("rows", upsert(items_per_flush, self.count_keys)), ("offsets", UPSERT_OFFSETS),
            ("inputs", _UPSERT_INPUT),
            ("totals", TOTALS), ("application_totals", APPLICATION_TOTALS),
            ("query_volumes", QUERY_VOLUMES), ("items_of", ITEMS_OF),
            ("clients_of", CLIENTS_OF), ("positions", POSITIONS),
            ("newest_day", NEWEST_DAY.format(days="store_days")),
            ("day", INSERT_DAY), ("expire", "DELETE FROM query_stats WHERE day < ?"),
            ("expire_days", "DELETE FROM store_days WHERE day < ?"))}
        self.retention_days = retention_days
        self.read_only = read_only
        self._expired_before = ""  # the retention cut-off last applied (once per day of data)
        if read_only:  # a store of an older version, read as it is: its missing columns
            self._read_as_defaults()  # read as their defaults
            return
        try:
            with self._transaction():
                for statement in schema:
                    self.db.execute(statement)
            self._upgrade()
        except self.errors as error:
            raise _failure(url, error) from None

    def _read_as_defaults(self) -> None:
        """A reader never changes a store: columns an older version did not write are read
        as their defaults (no items, zero counts) in every statement."""
        try:
            cursor = self.db.cursor()
            cursor.execute("SELECT * FROM query_stats LIMIT 0")
            present = {d[0] for d in cursor.description}
        except self.errors as error:
            raise _failure(self.url, error) from None
        try:
            self.db.cursor().execute("SELECT day FROM store_days LIMIT 0")
        except self.errors:  # written before the table: the newest day from every row
            self._sql["newest_day"] = NEWEST_DAY.format(days="query_stats").replace(
                "?", self.placeholder)
        for column, kind in ADDED:
            if column not in present:
                default = "'{}'" if kind.startswith("TEXT") else "0"
                unaliased = re.compile(rf"(?<!AS )\b{column}\b")
                self._sql = {name: unaliased.sub(default, sql)
                             for name, sql in self._sql.items()}

    def _upgrade(self) -> None:
        """Stores written by an older version lack the columns added since, and the days
        they hold (one scan, once: by the first writer of this version)."""
        for column, kind in ADDED:
            try:
                with self._transaction():
                    self.db.execute(f"SELECT {column} FROM query_stats LIMIT 0")
            except self.errors:
                with self._transaction():
                    self.db.execute(f"ALTER TABLE query_stats ADD COLUMN {column} {kind}")
        try:
            with self._transaction():
                self.db.execute("SELECT topic_id FROM store_offsets LIMIT 0")
        except self.errors:  # offsets written before topic ids were kept: of no id ('')
            with self._transaction():
                self.db.execute(f"ALTER TABLE store_offsets ADD COLUMN {TOPIC_ID}")
        with self._transaction():
            cursor = self.db.cursor()
            cursor.execute("SELECT day FROM store_days LIMIT 1")
            if cursor.fetchone() is None:
                cursor.execute(BACKFILL_DAYS)

    def add(self, rows: Iterable[tuple[Key, QueryRow]], offsets: Offsets | None = None,
            group: str = "", inputs: Iterable[InputMark] = (),
            topic_ids: TopicIds | None = None) -> None:
        """Add rows (and record the offsets or the input positions they cover, the offsets
        with the id of their topic in ``topic_ids``) in one transaction, ``_CHUNK_ROWS`` at a
        time (``rows`` may stream from a spill); rows older than ``retention_days`` before
        the newest day written — or before today, if that is earlier: a day past the wall
        clock deletes nothing — are deleted in it."""
        days: dict[int, str] = {}
        rows = iter(rows)
        today = int(self.wall_clock() // 86400)
        try:
            with self._transaction():
                cursor = self.db.cursor()
                while values := self._row_values(islice(rows, _CHUNK_ROWS), days):
                    cursor.executemany(self._sql["rows"], values)
                if days:
                    cursor.executemany(self._sql["day"], [(day,) for day in days.values()])
                cutoff = day_name(min(max(days), today) - self.retention_days) if days else ""
                expire = bool(self.retention_days) and cutoff > self._expired_before
                if expire:
                    # by the data's own time, bounded by the wall clock: a replay of an old
                    # log keeps what it writes, a log dated ahead keeps it too
                    cursor.execute(self._sql["expire"], (cutoff,))
                    cursor.execute(self._sql["expire_days"], (cutoff,))
                self._write_positions(cursor, offsets, group, inputs, topic_ids or {})
        except self.errors as error:
            raise _failure(self.url, error) from None
        if expire:
            self._expired_before = cutoff

    def _row_values(self, rows: Iterable[tuple[Key, QueryRow]], days: dict[int, str]
                    ) -> list[tuple[Any, ...]]:
        """Each row as the insert's parameters, its item counts cut to ``items_per_flush``;
        ``days`` collects the day names written (each named once)."""
        keep = self.items_per_flush
        clients = keep["clients"]
        shown, clicked, reformulations, _, shown_at, clicked_at = (keep[c] for c in ITEMS)
        counts = attrgetter(*COLUMNS)  # one C call per row for every count
        return [
            (application, query, days.get(day) or days.setdefault(day, day_name(day)),
             *counts(row), top_items(row.shown, shown),
             top_items(row.clicked_documents, clicked),
             top_items(row.reformulations, reformulations), top_items(row.clients, clients),
             top_items(row.shown_at, shown_at), top_items(row.clicked_at, clicked_at),
             min(len(row.clients), clients))
            for (day, application, query), row in rows]

    def _write_positions(self, cursor: Any, offsets: Offsets | None, group: str,
                         inputs: Iterable[InputMark], topic_ids: TopicIds) -> None:
        """The Kafka offsets or the input positions the rows cover, in the rows' transaction:
        a restart resumes exactly where the stored counts end."""
        if offsets:
            cursor.executemany(self._sql["offsets"], [
                (group, topic, partition, safe, high, topic_ids.get(topic, ""))
                for (topic, partition), (safe, high) in offsets.items()])
        marks = [(*mark[:-1], int(mark.complete)) for mark in inputs]
        if marks:
            cursor.executemany(self._sql["inputs"], marks)

    def _transaction(self) -> Any:
        return self.db  # sqlite3: the connection's context manager commits or rolls back

    def offsets(self, group: str) -> Offsets:
        """The offsets the stored counts cover, per partition of the consumer group."""
        try:
            cursor = self.db.cursor()
            cursor.execute("SELECT topic, kafka_partition, safe_offset, high_offset FROM "
                           f"store_offsets WHERE consumer_group = {self.placeholder}", (group,))
            return {(topic, partition): (safe, high) for topic, partition, safe, high in cursor}
        except self.errors as error:
            raise _failure(self.url, error) from None

    def topic_ids(self, group: str) -> dict[tuple[str, int], str]:
        """The topic id each partition's stored offsets are of ('' when written before
        topic ids were kept), per partition of the consumer group."""
        try:
            cursor = self.db.cursor()
            cursor.execute("SELECT topic, kafka_partition, topic_id FROM store_offsets WHERE "
                           f"consumer_group = {self.placeholder}", (group,))
            return {(topic, partition): topic_id for topic, partition, topic_id in cursor}
        except self.errors as error:
            raise _failure(self.url, error) from None

    def inputs(self) -> dict[str, InputMark]:
        """How far replays got in the inputs whose rows the store holds, by head (none in a
        store written before they were recorded)."""
        try:
            cursor = self.db.cursor()
            cursor.execute(f"SELECT {', '.join(InputMark._fields)} FROM store_inputs")
            return {row[0]: InputMark(*row[:-1], bool(row[-1])) for row in cursor.fetchall()}
        except self.errors as error:
            if self.read_only:  # a store of an older version, read as it is
                return {}
            raise _failure(self.url, error) from None

    def _frame(self, statement: str, parameters: tuple[Any, ...]) -> pd.DataFrame:
        try:
            cursor = self.db.cursor()
            cursor.execute(self._sql[statement], parameters)
            names = [d[0] for d in cursor.description]
            return pd.DataFrame.from_records(cursor.fetchall(), columns=names)
        except self.errors as error:
            raise _failure(self.url, error) from None

    def totals(self, since_day: str, min_searches: int = 1) -> pd.DataFrame:
        """Counts per (application, query) from ``since_day`` on, summed over days, in
        (application, query) order; only pairs with at least ``min_searches`` searches (the
        database drops the long tail of one-off queries, not the job's memory)."""
        frame = self._frame("totals", (since_day, min_searches))
        return frame.astype({c: "int64" for c in (*COUNTS, "days", MARKS)} | {
            c: "float64" for c in SUMS})

    def application_totals(self, since_day: str) -> pd.DataFrame:
        """Counts per application from ``since_day`` on (every query), indexed by application."""
        frame = self._frame("application_totals", (since_day,))
        return frame.astype({c: "int64" for c in COUNTS}).set_index("application")

    def query_volumes(self, since_day: str, min_searches: int = 1) -> pd.Series:
        """Searches per query (over every application) with at least ``min_searches``."""
        frame = self._frame("query_volumes", (since_day, min_searches))
        return pd.Series(frame.iloc[:, 1].to_numpy(dtype="int64"), index=frame.iloc[:, 0],
                         name="searches")

    def newest_day(self) -> date | None:
        """The last day holding any aggregate, and not after today (the wall clock's): where
        the feedback job's period ends, whatever a record stamped in the future left. A store
        whose every day is after today (a synthetic log dated ahead) ends on its last."""
        frame = self._frame("newest_day", (day_name(int(self.wall_clock() // 86400)),))
        day = frame.iloc[0, 0]
        return date.fromisoformat(day) if isinstance(day, str) else None

    def items(self, application: str, query: str, since_day: str) -> dict[str, dict[str, int]]:
        """Documents shown and clicked and reformulations of one query over the period, most
        frequent first."""
        cursor = self.db.cursor()
        cursor.execute(self._sql["items_of"], (application, query, since_day))
        days = cursor.fetchall()
        return {kind: _ranked(day[i] for day in days) for i, kind in enumerate(ITEMS)}

    def positions(self, since_day: str) -> Iterator[QueryPositions]:
        """Impressions and clicks per (position, document) of every query from ``since_day``
        on, days added up, in (application, query) order: what the click model fits."""
        try:
            cursor = self.db.cursor()
            cursor.execute(self._sql["positions"], (since_day,))
            current: QueryPositions | None = None
            for application, query, searches, marks, shown_at, clicked_at in cursor:
                if current is None or (current.application, current.query) != (application,
                                                                                query):
                    if current is not None:
                        yield current
                    current = QueryPositions(application, query)
                current.searches += searches
                current.client_marks = max(current.client_marks, marks)
                for total, text in ((current.shown_at, shown_at),
                                    (current.clicked_at, clicked_at)):
                    for key, count in _decode(text).items():
                        total[key] = total.get(key, 0) + count
            if current is not None:
                yield current
        except self.errors as error:
            raise _failure(self.url, error) from None

    def client_marks(self, application: str, query: str, since_day: str) -> set[str]:
        """The distinct client marks of one query over the period (k-anonymity)."""
        return self.clients_of(application, query, since_day)[0]

    def clients_of(self, application: str, query: str, since_day: str
                   ) -> tuple[set[str], int]:
        """The distinct client marks of one query over the period and its searches without a
        client id (which make no client): what rule 2 and its reason are decided from."""
        try:
            cursor = self.db.cursor()
            cursor.execute(self._sql["clients_of"], (application, query, since_day))
            days = cursor.fetchall()
        except self.errors as error:
            raise _failure(self.url, error) from None
        return ({mark for text, _ in days for mark in _decode(text)},
                sum(without for _, without in days))

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every stored row, items parsed (for inspection and tests, not for large stores)."""
        cursor = self.db.cursor()
        cursor.execute(f"SELECT * FROM query_stats ORDER BY {KEY_COLUMNS}")
        names = [d[0] for d in cursor.description]
        for values in cursor.fetchall():
            row = dict(zip(names, values, strict=True))
            for kind in ITEMS:
                row[kind] = _ranked([row[kind]])
            yield row

    def close(self) -> None:
        self.db.close()


class SqliteStore(QueryStore):
    errors = (sqlite3.Error,)

    def __init__(self, path: str, items_per_flush: dict[str, int], read_only: bool,
                 retention_days: int = 0) -> None:
        try:
            if read_only:  # a reader never creates or changes a store
                db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
                db.execute("SELECT 1 FROM query_stats LIMIT 1")
            else:
                # written by the writer thread (collector/store/store_writer.py), one at a time
                db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
                db.create_function(MERGE, 3, merge_counts, deterministic=True)
                db.execute("PRAGMA journal_mode=WAL")  # readers (the feedback job) never block
                db.execute("PRAGMA synchronous=NORMAL")  # a power cut may lose the last
                # flushes, together with their offsets: the store stays consistent
        except sqlite3.Error as error:
            raise StoreUnavailable(f"store sqlite:///{path}: {error}") from None
        super().__init__(f"sqlite:///{path}", db,
                         schema_statements("INTEGER", "REAL", " WITHOUT ROWID"),
                         items_per_flush, read_only, retention_days)


class PostgresStore(QueryStore):
    placeholder = "%s"
    binary = ' COLLATE "C"'  # the same order as SQLite, whatever the database's locale
    count_keys = "(SELECT COUNT(*) FROM jsonb_object_keys(({})::jsonb))"

    def __init__(self, url: str, items_per_flush: dict[str, int], read_only: bool,
                 retention_days: int = 0) -> None:
        try:
            import psycopg
        except ImportError:
            raise StoreError(f"store {redact(url)}: PostgreSQL needs the psycopg package "
                             "(pip install 'searchpulse[postgres]')") from None
        self.errors = (psycopg.Error,)
        try:
            db = psycopg.connect(url, connect_timeout=10, autocommit=True)
        except (psycopg.Error, UnicodeError) as error:  # psycopg resolves host names itself:
            # one IDNA cannot encode (".", a label over 63 characters) raises UnicodeError
            raise _failure(url, error) from None
        super().__init__(url, db,
                         (*schema_statements("BIGINT", "DOUBLE PRECISION", ""), PG_MERGE),
                         items_per_flush, read_only, retention_days)

    def _transaction(self) -> Any:
        return self.db.transaction()  # reads autocommit; each flush is one transaction


def open_store(url: str, shown_depth: int = 10, read_only: bool = False,
               retention_days: int = 0) -> QueryStore:
    """A store from its URL; ``shown_depth`` documents shown and clicked are kept per flush;
    ``retention_days``: rows older than that before the newest day written are deleted (0:
    kept). ``read_only``: the store must exist already, and is neither created nor changed."""
    items = {"shown": shown_depth, "clicked_documents": shown_depth,
             "reformulations": TOP_REFORMULATIONS, "clients": CLIENT_MARKS,
             # (position, document) pairs: a document seen at a few positions per day
             "shown_at": POSITION_PAIRS * shown_depth, "clicked_at": POSITION_PAIRS * shown_depth}
    if url.startswith("sqlite:///"):
        return SqliteStore(url.removeprefix("sqlite:///"), items, read_only, retention_days)
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresStore(url, items, read_only, retention_days)
    raise StoreError(f"store {redact(url)!r}: expected sqlite:///PATH or postgresql://…")
