"""Strata of the period's queries, the way the collector defines them: known-item by the same
patterns and titles, else head / torso / tail by the query's share of all searches, cumulated
from the most frequent down (a query is head while the searches of the queries before it are
below ``head_share`` of the total, torso below ``torso_share``, tail after).

``strata.csv`` lists the head and torso queries that pass the privacy rules: the collector loads
it as ``strata.file``, finds known-item queries by pattern and counts every unlisted query as
tail.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from collector.control_characters import visible
from collector.series.quality import HEAD, KNOWN_ITEM, STRATA, TAIL, TORSO
from collector.series.strata import StrataClassifier


def query_strata(classifier: StrataClassifier, head_share: float, torso_share: float,
                 volume: pd.Series, total: int) -> pd.Series:
    """The stratum code of every query of ``volume`` (searches per query over every
    application, most frequent first, ties by query; at least every query with more searches
    than any query the caller will look up); ``total``: all searches of the period."""
    volume = volume.iloc[np.lexsort((volume.index.to_numpy(), -volume.to_numpy()))]
    before = (volume.cumsum() - volume) / max(total, 1)
    codes = np.where(before < head_share, HEAD, np.where(before < torso_share, TORSO, TAIL))
    by_query = pd.Series(codes, index=volume.index)
    known = np.fromiter((classifier.is_known_item(q) for q in by_query.index), bool,
                        count=len(by_query))
    by_query[known] = KNOWN_ITEM
    return by_query


def stratum_names(frame: pd.DataFrame, by_query: pd.Series) -> pd.Series:
    """The stratum name of every row; queries absent from ``by_query`` (seen once) are tail."""
    names = np.asarray(STRATA, dtype=object)
    codes = by_query.reindex(frame["query"]).fillna(TAIL).to_numpy(dtype="int64")
    return pd.Series(names[codes], index=frame.index, name="stratum")


def listed_strata(by_query: pd.Series, allowed: Callable[[pd.Index], np.ndarray]
                  ) -> pd.Series:
    """The head and torso queries of ``by_query``, in its order (most frequent first), that
    may leave the system (``allowed``: the privacy rules, for all of them at once)."""
    listed = by_query[by_query.isin((HEAD, TORSO))]
    return listed[allowed(listed.index)]


def write_strata_csv(path: Path, listed: pd.Series) -> int:
    """``query,stratum`` rows (control characters as ``\\xNN``); returns the number written."""
    pd.DataFrame({"query": listed.index.map(visible),
                  "stratum": np.asarray(STRATA, dtype=object)[listed.to_numpy()]}).to_csv(
        path, index=False)
    return len(listed)
