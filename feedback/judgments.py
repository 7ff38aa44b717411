"""Queries already in the current judgment set, and extra runs to pool from.

Judgment files: a Quepid CSV (a header with a ``query`` column: ``query,docid,rating``) or a TREC
qrels file (``topic iteration docid relevance``), whose topic ids are mapped to query text by a
topics file (``id<TAB>query``, as this job writes). TREC run files (``topic Q0 docid rank score
tag``) use the same topics. Queries are compared normalized, as the collector stores them.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

from collector.outcomes import normalize_query


class JudgmentsError(ValueError):
    """A judgments, topics or run file is unusable; the message names the file and line."""


def read_topics(path: str | Path) -> dict[str, str]:
    topics: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip() or line.startswith("#"):
                continue
            topic, sep, query = line.rstrip("\n").partition("\t")
            if not sep or not query.strip():
                raise JudgmentsError(f"{path}:{line_number}: expected TOPIC<TAB>QUERY")
            topics[topic.strip()] = normalize_query(query.split("\t")[0])
    return topics


def _columns(path: str | Path, line_number: int, line: str, minimum: int) -> list[str]:
    fields = line.split()
    if len(fields) < minimum:
        raise JudgmentsError(f"{path}:{line_number}: expected at least {minimum} "
                             f"whitespace-separated fields, got {len(fields)}")
    return fields


def _topic_query(path: str | Path, line_number: int, topic: str,
                 topics: dict[str, str] | None) -> str:
    if topics is None:
        raise JudgmentsError(f"{path}: TREC files name topics by id; pass --topics FILE "
                             "(id<TAB>query) to map them to queries")
    if topic not in topics:
        raise JudgmentsError(f"{path}:{line_number}: topic {topic!r} is not in the topics file")
    return topics[topic]


def read_judged(paths: Iterable[str | Path], topics: dict[str, str] | None) -> set[str]:
    """Normalized queries of every judgment file (Quepid CSV or TREC qrels)."""
    judged: set[str] = set()
    for path in paths:
        with open(path, encoding="utf-8", newline="") as handle:
            first = handle.readline()
            handle.seek(0)
            if "query" in [c.strip().lower() for c in first.split(",")]:
                reader = csv.DictReader(handle)
                column = next(c for c in reader.fieldnames or () if c.strip().lower() == "query")
                judged.update(normalize_query(row[column]) for row in reader if row[column])
                continue
            for line_number, line in enumerate(handle, start=1):
                if line.strip():
                    topic = _columns(path, line_number, line, 4)[0]
                    judged.add(_topic_query(path, line_number, topic, topics))
    return judged


def read_run(path: str | Path, topics: dict[str, str] | None,
             depth: int) -> dict[str, list[str]]:
    """The top ``depth`` documents per query of a TREC run file, by rank."""
    ranked: dict[str, list[tuple[int, str]]] = {}
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            topic, _, document, rank = _columns(path, line_number, line, 6)[:4]
            try:
                position = int(rank)
            except ValueError:
                raise JudgmentsError(
                    f"{path}:{line_number}: rank {rank!r} is not an integer") from None
            query = _topic_query(path, line_number, topic, topics)
            ranked.setdefault(query, []).append((position, document))
    return {query: [document for _, document in sorted(entries)[:depth]]
            for query, entries in ranked.items()}
