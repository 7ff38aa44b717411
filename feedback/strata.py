"""Strata of the period's queries, the way the collector defines them: known-item by the same
patterns and titles, else head / torso / tail by the query's share of all searches, cumulated
from the most frequent down (a query is head while the searches of the queries before it are
below ``head_share`` of the total, torso below ``torso_share``, tail after).

``strata.csv`` lists the head and torso queries: the collector loads it as ``strata.file``, finds
known-item queries by pattern and counts every unlisted query as tail.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

from collector.quality import HEAD, KNOWN_ITEM, STRATA, TAIL, TORSO
from collector.strata import StrataClassifier


def assign_strata(frame: pd.DataFrame, classifier: StrataClassifier, head_share: float,
                  torso_share: float) -> pd.Series:
    """The stratum name of every row of per-(application, query) totals. Frequency strata are
    computed over all applications together, as the collector's strata file is."""
    volume = frame.groupby("query", sort=False)["searches"].sum()
    volume = volume.iloc[np.lexsort((volume.index.to_numpy(), -volume.to_numpy()))]
    before = (volume.cumsum() - volume) / max(int(volume.sum()), 1)
    codes = np.where(before < head_share, HEAD, np.where(before < torso_share, TORSO, TAIL))
    by_query = pd.Series(codes, index=volume.index)
    known = np.fromiter((classifier.is_known_item(q) for q in by_query.index), bool,
                        count=len(by_query))
    by_query[known] = KNOWN_ITEM
    names = np.asarray(STRATA, dtype=object)
    return pd.Series(names[by_query.reindex(frame["query"]).to_numpy()], index=frame.index,
                     name="stratum")


def write_strata_csv(path: Path, frame: pd.DataFrame) -> int:
    """Head and torso queries, most frequent first; returns the number of rows written."""
    listed = frame[frame["stratum"].isin((STRATA[HEAD], STRATA[TORSO]))]
    listed = (listed.groupby(["query", "stratum"], sort=False)["searches"].sum().reset_index()
              .sort_values(["searches", "query"], ascending=[False, True]))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["query", "stratum"])
        writer.writerows(listed[["query", "stratum"]].itertuples(index=False))
    return len(listed)
