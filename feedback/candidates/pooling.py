"""Documents to judge per candidate: the top-k shown (by exposure) ∪ the top-k clicked ∪ the
top-k of every extra run (candidate rankers' TREC runs), in that order, without repeats.
Judging the union of what users saw, what they chose and what a new ranker would show is what
makes the judgments reusable for comparing rankers (classic TREC pooling).

With an identified examination curve of the application (``searchpulse clicks``), each shown
document gets its position-debiased relevance (feedback/clicks/click_model.py): the top-k by it join
the pool (``implicit``), the pool is ordered by it (documents without one last, in pool
order), and a document is flagged ``position_bias`` — clicked a lot only because it sits first
— when at least half its clicks came at position 1 and its debiased relevance is below the
median of the query's documents."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from statistics import median

import numpy as np

from feedback.clicks.click_model import relevance_by_document


@dataclass(frozen=True)
class PooledDocument:
    topic: str
    query: str
    application: str
    document: str
    sources: str  # "shown", "clicked", "implicit", "run:NAME", joined by "+"
    implicit_relevance: float | None = None  # debiased, with an examination curve
    position_bias: bool = False


def pool(topic: str, query: str, application: str, items: dict[str, dict[str, int]],
         runs: dict[str, dict[str, list[str]]], depth: int,
         curve: np.ndarray | None = None, min_impressions: int = 10) -> list[PooledDocument]:
    """``items``: the store's shown / clicked_documents (/ shown_at / clicked_at) counts, most
    frequent first; ``curve``: the application's identified examination curve, if any."""
    sources: dict[str, list[str]] = {}

    def add(documents: Iterable[str], source: str) -> None:
        for document in documents:
            sources.setdefault(document, []).append(source)

    add(list(items.get("shown", {}))[:depth], "shown")
    add(list(items.get("clicked_documents", {}))[:depth], "clicked")
    implicit = {} if curve is None else {
        document: found for document, found in relevance_by_document(
            items.get("shown_at", {}), items.get("clicked_at", {}), curve).items()
        if found[1] >= min_impressions}
    add(sorted(implicit, key=lambda d: (-implicit[d][0], d))[:depth], "implicit")
    for name, ranking in runs.items():
        add(ranking.get(query, ())[:depth], f"run:{name}")
    pooled = [PooledDocument(topic, query, application, document, "+".join(found))
              for document, found in sources.items()]
    if not implicit:
        return pooled
    typical = median(gamma for gamma, _, _, _ in implicit.values())
    pooled = [replace(p, implicit_relevance=round(implicit[p.document][0], 3),
                      position_bias=_position_bias(implicit[p.document], typical))
              if p.document in implicit else p for p in pooled]
    return sorted(pooled, key=lambda p: -1.0 if p.implicit_relevance is None
                  else p.implicit_relevance, reverse=True)


def _position_bias(found: tuple[float, int, int, int], typical: float) -> bool:
    gamma, _, clicks, at_first = found
    return clicks > 0 and 2 * at_first >= clicks and gamma < typical


def pool_all(candidates: list[tuple[str, str, str]],
             items_of: Callable[[str, str], dict[str, dict[str, int]]],
             runs: dict[str, dict[str, list[str]]], depth: int,
             progress: Callable[[int], None] = lambda _: None,
             curves: dict[str, np.ndarray] | None = None, min_impressions: int = 10,
             ) -> tuple[list[PooledDocument], dict[tuple[str, str], dict[str, dict[str, int]]]]:
    """The pool of every (topic, query, application) and the items it was built from;
    ``curves``: identified examination curves per application."""
    pooled: list[PooledDocument] = []
    items_by_candidate = {}
    curves = curves or {}
    for topic, query, application in candidates:
        items = items_by_candidate[(application, query)] = items_of(application, query)
        pooled.extend(pool(topic, query, application, items, runs, depth,
                           curves.get(application), min_impressions))
        progress(1)
    return pooled, items_by_candidate
