"""Documents to judge per candidate: the top-k shown (by exposure) ∪ the top-k clicked ∪ the
top-k of every extra run (candidate rankers' TREC runs), in that order, without repeats.
Judging the union of what users saw, what they chose and what a new ranker would show is what
makes the judgments reusable for comparing rankers (classic TREC pooling)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class PooledDocument:
    topic: str
    query: str
    application: str
    document: str
    sources: str  # "shown", "clicked", "run:NAME", joined by "+"


def pool(topic: str, query: str, application: str, items: dict[str, dict[str, int]],
         runs: dict[str, dict[str, list[str]]], depth: int) -> list[PooledDocument]:
    """``items``: the store's shown / clicked_documents counts, most frequent first."""
    sources: dict[str, list[str]] = {}

    def add(documents: Iterable[str], source: str) -> None:
        for document in documents:
            sources.setdefault(document, []).append(source)

    add(list(items.get("shown", {}))[:depth], "shown")
    add(list(items.get("clicked_documents", {}))[:depth], "clicked")
    for name, ranking in runs.items():
        add(ranking.get(query, ())[:depth], f"run:{name}")
    return [PooledDocument(topic, query, application, document, "+".join(found))
            for document, found in sources.items()]


def pool_all(candidates: list[tuple[str, str, str]],
             items_of: Callable[[str, str], dict[str, dict[str, int]]],
             runs: dict[str, dict[str, list[str]]], depth: int,
             progress: Callable[[int], None] = lambda _: None,
             ) -> tuple[list[PooledDocument], dict[tuple[str, str], dict[str, dict[str, int]]]]:
    """The pool of every (topic, query, application) and the items it was built from."""
    pooled: list[PooledDocument] = []
    items_by_candidate = {}
    for topic, query, application in candidates:
        items = items_by_candidate[(application, query)] = items_of(application, query)
        pooled.extend(pool(topic, query, application, items, runs, depth))
        progress(1)
    return pooled, items_by_candidate
