"""The job's files, each in a format its tool reads as is, and safe to open:

* ``candidates.csv`` — one row per candidate: what it is, its signals and why it was chosen;
* ``topics.tsv`` — ``topic<TAB>query<TAB>application``, the ids the TREC files use;
* ``pool.quepid.csv`` — ``query,docid,rating`` with the rating empty (Quepid's ratings import);
* ``qrels.template.txt`` — TREC qrels ``topic 0 docid -1``: -1 marks "not judged yet";
* ``srw-query-set.json`` and ``srw-judgments.json`` — request bodies of OpenSearch Search
  Relevance Workbench (``PUT _plugins/_search_relevance/query_sets`` and ``…/judgments`` with
  ``type: IMPORT_JUDGMENT``); fill each ``rating`` before importing the judgments.

Safety: a cell of the human-facing ``candidates.csv`` that a spreadsheet would evaluate (leading
``= + - @``, tab, carriage return) is prefixed with ``'`` as OWASP recommends; queries that start
like a formula never get here (feedback/release.py). A document id is written only when it is
safe everywhere (no leading formula character, no control character); in the TREC line formats
its whitespace and ``%`` are percent-encoded, so one id stays one token.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from feedback.pooling import PooledDocument

CANDIDATE_COLUMNS = (
    "topic", "query", "application", "stratum", "selected_as", "reason", "searches", "days",
    "zero_result_rate", "zero_result_lb", "reformulation_rate", "reformulation_lb",
    "abandonment_rate", "abandonment_lb", "ctr", "ctr_lb", "mrr", "failure", "impact",
    "sample_reformulations")
UNJUDGED = -1
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def neutralized(cell: object) -> object:
    """A text cell a spreadsheet will not evaluate (OWASP CSV injection)."""
    return "'" + cell if isinstance(cell, str) and cell.startswith(_FORMULA) else cell


def safe_document(document: str) -> bool:
    return not document.startswith(_FORMULA) and not any(
        unicodedata.category(c) == "Cc" for c in document)


def safe_pool(pooled: list[PooledDocument]) -> tuple[list[PooledDocument], int]:
    """The pooled documents whose ids are safe in every file, and how many were not."""
    kept = [p for p in pooled if safe_document(p.document)]
    return kept, len(pooled) - len(kept)


def trec_token(document: str) -> str:
    """One whitespace-free token of a TREC line (qrels, runs, pools)."""
    return quote(document, safe="".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%"))


def write_candidates(path: Path, chosen: pd.DataFrame) -> None:
    table = chosen.rename(columns={"ctr_rate": "ctr"})[list(CANDIDATE_COLUMNS)].copy()
    for column in table.select_dtypes(exclude="number").columns:
        table[column] = table[column].map(neutralized)
    table.to_csv(path, index=False, float_format="%.4f", na_rep="")


def write_topics(path: Path, chosen: pd.DataFrame) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for topic, query, application in chosen[["topic", "query", "application"]].itertuples(
                index=False):
            handle.write(f"{topic}\t{query}\t{application}\n")


def write_quepid(path: Path, pooled: list[PooledDocument]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["query", "docid", "rating"])
        writer.writerows((p.query, p.document, "") for p in pooled)


def write_qrels(path: Path, pooled: list[PooledDocument]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(f"{p.topic} 0 {trec_token(p.document)} {UNJUDGED}\n" for p in pooled)


def write_srw(directory: Path, chosen: pd.DataFrame, pooled: list[PooledDocument],
              name: str) -> None:
    description = "Candidates mined by searchpulse feedback from failing production queries"
    queries = list(dict.fromkeys(chosen["query"]))
    (directory / "srw-query-set.json").write_text(json.dumps({
        "name": name, "description": description, "sampling": "manual",
        "querySetQueries": [{"queryText": q} for q in queries]}, indent=2) + "\n")
    ratings: dict[str, dict[str, str]] = {q: {} for q in queries}
    for p in pooled:
        ratings[p.query].setdefault(p.document, "")
    (directory / "srw-judgments.json").write_text(json.dumps({
        "name": name, "description": description + "; fill every rating before import",
        "type": "IMPORT_JUDGMENT",
        "judgmentRatings": [{"query": q, "ratings": [{"docId": d, "rating": r}
                                                     for d, r in docs.items()]}
                            for q, docs in ratings.items()]}, indent=2) + "\n")
