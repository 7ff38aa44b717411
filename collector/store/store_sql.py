"""The SQL of the per-query store that holds for both databases: the tables (and the columns
added since the first version), PostgreSQL's merge of two item objects, and the statements a
store prepares once when it connects (query_store.py puts in each database's placeholder and
collation, and runs them).

Apart from query_store.py, which connects, reads and writes: a change to a table or a statement
is here, in one place, and a change to how a flush or a read runs is there. The statement of
``store_inputs`` stays beside ``InputMark``, whose fields it is built from.
"""

from __future__ import annotations

from collector.store.query_stats import COUNTS, SUMS

COLUMNS = (*COUNTS, *SUMS)
ITEMS = ("shown", "clicked_documents", "reformulations", "clients", "shown_at", "clicked_at")
KEY_COLUMNS = "application, query, day"
# Distinct client marks of the row's day (≤ CLIENT_MARKS): read by the feedback job without
# parsing JSON; their maximum over days is a lower bound of the period's distinct clients.
MARKS = "client_marks"
MERGE = "searchpulse_merge_counts"
INSERT_DAY = "INSERT INTO store_days (day) VALUES (?) ON CONFLICT (day) DO NOTHING"
# (`WHERE true`: SQLite's parser needs a WHERE before an upsert clause of INSERT … SELECT)
BACKFILL_DAYS = ("INSERT INTO store_days (day) SELECT DISTINCT day FROM query_stats WHERE true "
                 "ON CONFLICT (day) DO NOTHING")

TOPIC_ID = "topic_id TEXT NOT NULL DEFAULT ''"


def schema_statements(integer: str, real: str, suffix: str) -> tuple[str, ...]:
    counts = ", ".join(f"{c} {real if c in SUMS else integer} NOT NULL" for c in COLUMNS)
    items = ", ".join(f"{c} TEXT NOT NULL" for c in ITEMS)
    return (
        f"CREATE TABLE IF NOT EXISTS query_stats (application TEXT NOT NULL, query TEXT NOT NULL,"
        f" day TEXT NOT NULL, {counts}, {items}, {MARKS} {integer} NOT NULL DEFAULT 0, "
        f"PRIMARY KEY ({KEY_COLUMNS})){suffix}",
        # Every day the store holds a row of: the newest one (where the feedback job's period
        # ends) is then one index lookup, not a scan of every row (10 % of the job on a
        # 10M-row store). Filled with the rows, in the same transaction.
        f"CREATE TABLE IF NOT EXISTS store_days (day TEXT NOT NULL PRIMARY KEY){suffix}",
        # topic_id: the Kafka topic id the offsets are of ('' before topic ids were kept): a
        # topic created again under its name (another id) does not start from them
        "CREATE TABLE IF NOT EXISTS store_offsets (consumer_group TEXT NOT NULL, "
        f"topic TEXT NOT NULL, kafka_partition INTEGER NOT NULL, safe_offset {integer} NOT NULL, "
        f"high_offset {integer} NOT NULL, {TOPIC_ID}, "
        f"PRIMARY KEY (consumer_group, topic, kafka_partition)){suffix}",
        # How far `replay` got in each input, known by its content (InputMark): the file
        # counterpart of store_offsets, written in the same transactions.
        "CREATE TABLE IF NOT EXISTS store_inputs (head TEXT NOT NULL PRIMARY KEY, "
        "name TEXT NOT NULL, run TEXT NOT NULL, ordinal INTEGER NOT NULL, "
        f"safe_records {integer} NOT NULL, safe_digest TEXT NOT NULL, "
        f"high_records {integer} NOT NULL, high_digest TEXT NOT NULL, "
        f"complete INTEGER NOT NULL){suffix}",
    )


# PostgreSQL's merge of two item objects (SQLite's is `merge_counts` in query_store.py, in
# Python).
PG_MERGE = f"""CREATE OR REPLACE FUNCTION {MERGE}(a text, b text, keep integer) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT COALESCE(jsonb_object_agg(k, n), '{{}}'::jsonb)::text FROM (
    SELECT k, SUM(v::bigint) AS n FROM (
      SELECT key AS k, value AS v FROM jsonb_each_text(a::jsonb)
      UNION ALL SELECT key, value FROM jsonb_each_text(b::jsonb)) e
    GROUP BY k ORDER BY n DESC, k LIMIT keep) t
$$"""

# The newest day not after today, else (every day is after it) the newest one.
NEWEST_DAY = "SELECT COALESCE(MAX(CASE WHEN day <= ? THEN day END), MAX(day)) FROM {days}"
_SUMS = ", ".join(f"SUM({c}) AS {c}" for c in COLUMNS)
TOTALS = (f"SELECT application, query, {_SUMS}, COUNT(*) AS days, "
          f"MAX({MARKS}) AS {MARKS} FROM query_stats "
          "WHERE day >= ? GROUP BY application, query HAVING SUM(searches) >= ? "
          "ORDER BY application{binary}, query{binary}")
APPLICATION_TOTALS = (f"SELECT application, {_SUMS} FROM query_stats WHERE day >= ? "
                      "GROUP BY application")
QUERY_VOLUMES = ("SELECT query, SUM(searches) FROM query_stats WHERE day >= ? GROUP BY query "
                 "HAVING SUM(searches) >= ?")
ITEMS_OF = (f"SELECT {', '.join(ITEMS)} FROM query_stats "
            "WHERE application = ? AND query = ? AND day >= ?")
POSITIONS = (f"SELECT application, query, searches, {MARKS}, shown_at, clicked_at "
             "FROM query_stats WHERE day >= ? AND shown_at <> '{}' "
             "ORDER BY application{binary}, query{binary}")
CLIENTS_OF = ("SELECT clients, searches_without_client_id FROM query_stats "
              "WHERE application = ? AND query = ? AND day >= ?")
UPSERT_OFFSETS = (
    "INSERT INTO store_offsets (consumer_group, topic, kafka_partition, safe_offset, "
    "high_offset, topic_id) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (consumer_group, topic, kafka_partition) DO UPDATE SET "
    "safe_offset = excluded.safe_offset, high_offset = excluded.high_offset, "
    "topic_id = excluded.topic_id")

# Columns added after the first version, with their type and default (old stores: upgraded by
# a writer, read as the defaults by a reader).
ADDED = (*((c, "TEXT NOT NULL DEFAULT '{}'") for c in ITEMS),
         ("judged_searches", "INTEGER NOT NULL DEFAULT 0"),
         ("judged_ndcg_sum", "DOUBLE PRECISION NOT NULL DEFAULT 0"),
         ("judged_coverage_sum", "DOUBLE PRECISION NOT NULL DEFAULT 0"),
         (MARKS, "INTEGER NOT NULL DEFAULT 0"),
         ("searches_without_client_id", "INTEGER NOT NULL DEFAULT 0"))


def upsert(keep: dict[str, int], count_keys: str) -> str:
    """``count_keys``: the database's expression for the number of keys of a JSON object."""
    merged = {c: f"{MERGE}(query_stats.{c}, excluded.{c}, {keep[c]})" for c in ITEMS}
    return (f"INSERT INTO query_stats ({KEY_COLUMNS}, {', '.join(COLUMNS)}, {', '.join(ITEMS)}, "
            f"{MARKS}) VALUES ({', '.join(['?'] * (4 + len(COLUMNS) + len(ITEMS)))}) "
            f"ON CONFLICT ({KEY_COLUMNS}) DO UPDATE SET "
            + ", ".join([f"{c} = query_stats.{c} + excluded.{c}" for c in COLUMNS]
                        + [f"{c} = {merged[c]}" for c in ITEMS]
                        + [f"{MARKS} = {count_keys.format(merged['clients'])}"]))
