"""What a result page shows: each query's fixed ranking, with some churn."""

from __future__ import annotations

import zlib

PAGE_SIZE = 10
_CHURN = 5000  # of 100,000: the share of result positions showing some other document


def ranked(normalized: str, index: int) -> str:
    """The document a query's ranking puts at 0-based ``index``: the same for every search of
    the query, as a search engine's ranking is."""
    return f"doc-{(zlib.crc32(normalized.encode()) * 7919 + index * 104729) % 100000}"


def shown(normalized: str, page: int, i: int, drawn: int) -> str:
    """Position ``i`` of a result page: the query's ranked document, or now and then (5 %,
    decided by ``drawn``, a draw in [0, 100000)) another one, as fresh content and
    personalization do."""
    if drawn < _CHURN:
        return f"doc-{drawn}"
    return ranked(normalized, (page - 1) * PAGE_SIZE + i)
