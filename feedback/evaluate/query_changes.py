"""Which rankings a comparison changed, and how: every paired ranking where some measure moved,
with each measure before (A) and after (B), and the documents that entered or left the top k
with their grades — what a reviewer opens first when the gate fails ("nobody notices the two
hundred queries that got worse")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

KEY = ["application", "query", "search"]
_TIE = 1e-12


def moved(documents_a: Sequence[str], documents_b: Sequence[str], grades: dict[str, int],
          k: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(entered, left): documents in B's top k and not A's, with their rank in B; in A's top k
    and not B's, with their rank in A; each with its grade (None: not judged)."""
    top_a, top_b = list(documents_a[:k]), list(documents_b[:k])
    in_a, in_b = set(top_a), set(top_b)
    entered = [{"document": d, "rank": r, "grade": grades.get(d)}
               for r, d in enumerate(top_b, start=1) if d not in in_a]
    left = [{"document": d, "rank": r, "grade": grades.get(d)}
            for r, d in enumerate(top_a, start=1) if d not in in_b]
    return entered, left


def changed(paired: pd.DataFrame, measures: Sequence[str], primary: str) -> pd.DataFrame:
    """The paired rows where any measure differs, worst first by ``primary``'s difference
    (B − A), then by key (a stable, reproducible order)."""
    deltas = np.column_stack([paired[f"{m}|b"].to_numpy() - paired[f"{m}|a"].to_numpy()
                              for m in measures]) if len(paired) else np.zeros((0, 1))
    rows = paired.loc[np.abs(deltas).max(axis=1) > _TIE] if len(paired) else paired
    rows = rows.assign(_delta=rows[f"{primary}|b"] - rows[f"{primary}|a"])
    return rows.sort_values(["_delta", *KEY], kind="stable").drop(columns="_delta")


def records(rows: pd.DataFrame, measures: Sequence[str], rankings_a: dict, rankings_b: dict,
            grades_of: Any, k: int) -> list[dict[str, Any]]:
    """One JSON-ready record per changed ranking. ``grades_of(application, query)``: its
    grades; ``rankings_*``: documents per key."""
    columns = {m: (rows[f"{m}|a"].tolist(), rows[f"{m}|b"].tolist()) for m in measures}
    out = []
    for i, (application, query, search, stratum) in enumerate(zip(
            rows["application"].tolist(), rows["query"].tolist(), rows["search"].tolist(),
            rows["stratum"].tolist(), strict=True)):
        key = (application, query, search)
        # a judged topic one TREC run ranked nothing for: an empty ranking, scored 0
        entered, left = moved(rankings_a.get(key, ()), rankings_b.get(key, ()),
                              grades_of(application, query), k)
        out.append({
            "application": application, "query": query, "search": search, "stratum": stratum,
            "measures": {m: {"a": a[i], "b": b[i], "delta": b[i] - a[i]}
                         for m, (a, b) in columns.items()},
            "entered": entered, "left": left})
    return out


def in_slice(queries: list[dict[str, Any]], slice_name: str) -> list[dict[str, Any]]:
    """The records of one slice (``all``, ``stratum=…``, ``application=…``)."""
    if slice_name == "all":
        return queries
    grouping, _, value = slice_name.partition("=")
    return [q for q in queries if str(q[grouping]) == value]


def worse_and_better(queries: list[dict[str, Any]], measure: str, top: int | None
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``top`` records whose ``measure`` dropped most, and rose most."""
    worse = sorted((q for q in queries if q["measures"][measure]["delta"] < -_TIE),
                   key=lambda q: q["measures"][measure]["delta"])
    better = sorted((q for q in queries if q["measures"][measure]["delta"] > _TIE),
                    key=lambda q: -q["measures"][measure]["delta"])
    return worse[:top], better[:top]


def describe_moved(record: dict[str, Any], limit: int = 5) -> str:
    """``+d7 (3) −d2 (unjudged)``: documents in (+) and out (−) of the top k, grade in brackets."""
    def one(sign: str, entry: dict[str, Any]) -> str:
        grade = "unjudged" if entry["grade"] is None else entry["grade"]
        return f"{sign}{entry['document']} ({grade})"

    parts = [one("+", e) for e in record["entered"][:limit]]
    parts += [one("−", e) for e in record["left"][:limit]]
    more = len(record["entered"]) + len(record["left"]) - len(parts)
    if more > 0:
        parts.append(f"… {more} more")
    return " ".join(parts) if parts else "same documents, new order"
