"""Files the judges' tools import as they are, checked against each tool's own importer.

What is *to be judged* (written by ``searchpulse feedback``):

* ``quepid/<application>.book.json`` — a Quepid **Book** (``book_importer.rb``): ``name``,
  ``scale``, ``show_rank`` (false: a judge should not see production's order),
  ``query_doc_pairs`` of ``query_text``, ``doc_id``, ``position`` (the document's rank in the
  query's pool: most shown first, then most clicked, then the extra runs) and ``notes`` (why the
  query was chosen). One book per application: Quepid keys a pair by query text, so a query two
  applications share stays two queries. The store keeps no document fields, so the book has
  none: Quepid shows each document from the case's search endpoint.
* ``trec/pool.txt`` — ``topic docid`` lines to judge; ``trec/topics.tsv`` — exactly
  ``id<TAB>query`` (what ir_datasets reads); ``trec/topic-applications.tsv`` — ``id<TAB>
  application``. No grade is invented: there is no ``-1`` template.
* ``srw/<application>.query-set.json`` — the body of ``PUT _plugins/_search_relevance/
  query_sets`` (at most 1,000 queries, the plugin's limit: larger sets are split into parts).

What *is* judged (written by ``searchpulse judgments import``, final grades only):

* ``quepid/<application>.ratings.csv`` — ``query,docid,rating``, every row rated;
* ``trec/qrels.txt`` — ``topic 0 docid grade`` with real grades (with its topics files);
* ``srw/<application>.judgments.json`` — ``type: IMPORT_JUDGMENT`` with every ``rating`` a
  string (the plugin casts it to one and rejects numbers) and no query without ratings.

An application's file name is its name where that is a safe file name (letters, digits,
``._-``), else a safe form plus a hash of the real name, so two applications never share a file.
"""

from __future__ import annotations

import csv
import io
import re
import zlib
from collections import Counter
from collections.abc import Iterable
from itertools import groupby
from pathlib import Path
from typing import Any

import pandas as pd

from collector.control_characters import json_text, visible
from collector.judgments import srw_text
from collector.judgments.readers import book_name
from feedback.candidates.outputs import trec_token
from feedback.candidates.pooling import PooledDocument

SRW_MAX_QUERIES = 1000  # SearchRelevanceSettings: queries per query set
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
DESCRIPTION = "Candidates mined by searchpulse feedback from failing production queries"
# Files this module owns in each directory: removed before writing, so no stale file survives.
_OWNED = {"quepid": ("*.book.json", "*.ratings.csv"),
          "srw": ("*.query-set*.json", "*.judgments.json"),
          "trec": ("pool.txt", "topics.tsv", "topic-applications.tsv", "qrels.txt")}


def file_stem(application: str) -> str:
    """A file name for ``application`` that no other application maps to."""
    if application and not _UNSAFE.search(application) and not application.startswith("."):
        return application
    safe = _UNSAFE.sub("_", application).lstrip(".") or "all"
    return f"{safe}-{zlib.crc32(application.encode()):08x}" if application else "all"


def prepare(out: Path) -> dict[str, Path]:
    """The tool directories under ``out``, emptied of the files a previous run wrote."""
    directories = {}
    for name, patterns in _OWNED.items():
        directory = directories[name] = out / name
        directory.mkdir(parents=True, exist_ok=True)
        for pattern in patterns:
            for stale in directory.glob(pattern):
                stale.unlink()
    return directories


def _write_json(path: Path, body: Any) -> None:
    path.write_text(json_text(body) + "\n", encoding="utf-8")


def write_books(directory: Path, pooled: list[PooledDocument], notes: dict[str, str],
                max_grade: int, title: str) -> list[Path]:
    """One Quepid book per application of ``pooled`` (grouped by application, then topic)."""
    written = []
    ordered = sorted(pooled, key=lambda p: p.application)
    for application, documents in groupby(ordered, key=lambda p: p.application):
        pairs = []
        for _, of_topic in groupby(documents, key=lambda p: p.topic):
            pairs.extend({"query_text": p.query, "doc_id": p.document, "position": position,
                          "notes": notes.get(p.topic, "")}
                         for position, p in enumerate(of_topic, start=1))
        path = directory / f"{file_stem(application)}.book.json"
        _write_json(path, {"name": book_name(application, title),
                           "scale": list(range(max_grade + 1)), "show_rank": False,
                           "support_implicit_judgements": False, "query_doc_pairs": pairs})
        written.append(path)
    return written


def write_trec_topics(directory: Path, topics: Iterable[tuple[str, str, str]]) -> None:
    """``topics.tsv`` (id, query) and ``topic-applications.tsv`` (id, application); a
    control character (a tab would split the line) as its ``\\xNN``."""
    topics = list(topics)
    with open(directory / "topics.tsv", "w", encoding="utf-8") as handle:
        handle.writelines(f"{topic}\t{visible(query)}\n" for topic, query, _ in topics)
    with open(directory / "topic-applications.tsv", "w", encoding="utf-8") as handle:
        handle.writelines(f"{topic}\t{visible(application)}\n"
                          for topic, _, application in topics if application)


def write_pool(directory: Path, pooled: list[PooledDocument]) -> None:
    with open(directory / "pool.txt", "w", encoding="utf-8") as handle:
        handle.writelines(f"{p.topic} {trec_token(p.document)}\n" for p in pooled)


def write_query_sets(directory: Path, chosen: pd.DataFrame, title: str) -> Counter[str]:
    """SRW query sets per application, split at the plugin's 1,000 queries; returns the
    queries withheld by reason. A query SRW refuses (``size: xl``, ``21" monitor``: one fails
    the whole set) is withheld, not altered: a query set is run against the search
    configuration, and ``size xl`` is another query than the one users failed on."""
    withheld: Counter[str] = Counter()
    for application, rows in chosen.groupby("application", sort=True):
        queries = []
        for query in dict.fromkeys(rows["query"]):
            reason = srw_text.query_text_refusal(query)
            if reason is None:
                queries.append(query)
            else:
                withheld[reason] += 1
        parts = [queries[i:i + SRW_MAX_QUERIES]
                 for i in range(0, len(queries), SRW_MAX_QUERIES)]
        for number, part in enumerate(parts, start=1):
            suffix = "" if len(parts) == 1 else f"-{number}"
            path = directory / f"{file_stem(str(application))}.query-set{suffix}.json"
            _write_json(path, {
                "name": srw_text.name(str(application), title, suffix),
                "description": srw_text.description(DESCRIPTION), "sampling": "manual",
                "querySetQueries": [{"queryText": q} for q in part]})
    return withheld


def write_srw_judgments(path: Path, application: str, title: str, description: str,
                        queries: Iterable[tuple[str, list[tuple[str, float]]]]) -> None:
    """The body of SRW's judgment import: every rating a string ("2.000"), as the importer
    casts it (a number throws there); name and description as SRW's validation accepts them
    (its import does not validate query texts: they are written as judged)."""
    _write_json(path, {
        "name": srw_text.name(application, title),
        "description": srw_text.description(description), "type": "IMPORT_JUDGMENT",
        "judgmentRatings": [{"query": query, "ratings": [
            {"docId": document, "rating": f"{rating:.3f}"} for document, rating in ratings]}
            for query, ratings in queries if ratings]})


def quepid_line(query: str, document: str, rating: object) -> str | None:
    """One line of Quepid's ratings CSV, or None when its importer would refuse it: the
    browser splits lines on ``\n`` and, when a line has more than three comma-separated
    parts, accepts it only with exactly two ``"`` (one quoted field, no quote inside). A
    query's control characters are written as ``\\xNN``."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([visible(query), document, rating])
    line = buffer.getvalue()[:-1]
    if "\n" in line or "\r" in line or (line.count(",") >= 3 and line.count('"') != 2):
        return None
    return line


def write_ratings(directories: dict[str, Path], final: pd.DataFrame,
                  topics: dict[tuple[str, str], str], title: str) -> dict[str, int]:
    """The final grades in each tool's format; returns what was written and refused."""
    final = final.sort_values(["application", "query", "doc_id"], kind="stable")
    refused = 0
    for application, rows in final.groupby("application", sort=True):
        stem = file_stem(str(application))
        lines = [quepid_line(q, d, g) for q, d, g in
                 rows[["query", "doc_id", "grade"]].itertuples(index=False)]
        refused += lines.count(None)
        with open(directories["quepid"] / f"{stem}.ratings.csv", "w", encoding="utf-8") as out:
            out.write("query,docid,rating\n")
            out.writelines(line + "\n" for line in lines if line is not None)
        write_srw_judgments(
            directories["srw"] / f"{stem}.judgments.json", str(application), title,
            "Judgments imported by searchpulse",
            [(query, list(zip(docs["doc_id"], docs["grade"], strict=True)))
             for query, docs in rows.groupby("query", sort=True)])
    write_trec_topics(directories["trec"], ((topic, query, application) for
                                            (application, query), topic in
                                            sorted(topics.items(), key=lambda kv: kv[1])))
    with open(directories["trec"] / "qrels.txt", "w", encoding="utf-8") as handle:
        handle.writelines(
            f"{topics[(a, q)]} 0 {trec_token(d)} {g}\n" for a, q, d, g in
            final[["application", "query", "doc_id", "grade"]].itertuples(index=False))
    return {"ratings": len(final), "quepid_refused": refused}
