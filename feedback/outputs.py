"""The job's files, each in a format its tool reads as is:

* ``candidates.csv`` — one row per candidate: what it is, its signals and why it was chosen;
* ``topics.tsv`` — ``topic<TAB>query<TAB>application``, the ids the TREC files use;
* ``pool.quepid.csv`` — ``query,docid,rating`` with the rating empty (Quepid's ratings import);
* ``qrels.template.txt`` — TREC qrels ``topic 0 docid -1``: -1 marks "not judged yet";
* ``srw-query-set.json`` and ``srw-judgments.json`` — request bodies of OpenSearch Search
  Relevance Workbench (``PUT _plugins/_search_relevance/query_sets`` and ``…/judgments`` with
  ``type: IMPORT_JUDGMENT``); fill each ``rating`` before importing the judgments.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd

from feedback.pooling import PooledDocument

CANDIDATE_COLUMNS = (
    "topic", "query", "application", "stratum", "selected_as", "reason", "searches", "days",
    "zero_result_rate", "zero_result_lb", "reformulation_rate", "reformulation_lb",
    "abandonment_rate", "abandonment_lb", "ctr", "ctr_lb", "mrr", "failure", "impact",
    "sample_reformulations")
UNJUDGED = -1


def write_candidates(path: Path, chosen: pd.DataFrame) -> None:
    table = chosen.rename(columns={"ctr_rate": "ctr"})[list(CANDIDATE_COLUMNS)]
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
        handle.writelines(f"{p.topic} 0 {p.document} {UNJUDGED}\n" for p in pooled)


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
