"""``candidates.csv`` (one row per candidate: what it is, its signals, why it was chosen and
how many documents were pooled for it), and the rules that keep every file safe to open. The
judges' tools' files are written by feedback/candidates/handoff.py.

Safety: a cell of the human-facing ``candidates.csv`` that a spreadsheet would evaluate (leading
``= + - @``, tab, carriage return) is prefixed with ``'`` as OWASP recommends; queries that start
like a formula never get here (feedback/candidates/release.py). A document id is written only when
it is safe everywhere (no leading formula character, no control character); in the TREC line formats
its whitespace and ``%`` are percent-encoded, so one id stays one token.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from collector.control_characters import visible
from feedback.candidates.pooling import PooledDocument

CANDIDATE_COLUMNS = (
    "topic", "query", "application", "stratum", "selected_as", "reason", "searches", "days",
    "zero_result_rate", "zero_result_lb", "reformulation_rate", "reformulation_lb",
    "abandonment_rate", "abandonment_lb", "ctr", "ctr_lb", "mrr", "failure", "impact",
    "judged_ndcg", "judged_coverage", "pooled_documents", "sample_reformulations")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def neutralized(cell: object) -> object:
    """A text cell a spreadsheet will not evaluate (OWASP CSV injection), its control
    characters visible (``\\xNN``: CSV has no escape for them)."""
    if not isinstance(cell, str):
        return cell
    return "'" + visible(cell) if cell.startswith(_FORMULA) else visible(cell)


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


POOL_COLUMNS = ("topic", "application", "query", "document", "sources", "implicit_relevance",
                "position_bias")


def write_pool_signals(path: Path, pooled: list[PooledDocument]) -> None:
    """``pool.csv``: every pooled document with why it was pooled and, with an examination
    curve, its debiased relevance and whether it is clicked only because it sits first. For
    the relevance team, not for the judges (a judge shown click signals is anchored by them)."""
    table = pd.DataFrame([[getattr(p, c) for c in POOL_COLUMNS] for p in pooled],
                         columns=list(POOL_COLUMNS))
    for column in ("application", "query", "document"):
        table[column] = table[column].map(neutralized)
    table.to_csv(path, index=False, float_format="%.3f", na_rep="")


def write_candidates(path: Path, chosen: pd.DataFrame) -> None:
    table = chosen.rename(columns={"ctr_rate": "ctr"})[list(CANDIDATE_COLUMNS)].copy()
    for column in table.select_dtypes(exclude="number").columns:
        table[column] = table[column].map(neutralized)
    table.to_csv(path, index=False, float_format="%.4f", na_rep="")
