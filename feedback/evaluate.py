"""``searchpulse evaluate``: score rankings against the judgment set, per stratum and
application; compare two and gate on a significant regression ("regressions die in review").

Rankings: a TREC run (``topic Q0 doc rank score tag``, ordered by **rank**, topics named by
``--topics`` / ``--topic-applications``), or a UBI log, whose searches (first pages with hit
ids) are the rankings production showed — one ranking per search, so every mean over a log is
a mean over searches, as the live ``searchpulse_judged_*`` metrics are — or the per-query store
(a ``sqlite:///`` or ``postgresql://`` URL): per query the ranking production showed most, one
ranking per query.

Measures per ranking (a ranking is scored when its query has final grades; "relevant" = grade
≥ 1): NDCG@k with gain 2^g − 1 and the ideal from all judged documents of the query, AP, P@k
(÷ k), R@k, reciprocal rank and Judged@k — by ir_measures over pytrec_eval (trec_eval's own
code; the run is handed over with score = N − rank so trec_eval keeps our order) — and ERR@k
(collector/judged_relevance.py; ir_measures has none). Unjudged documents are not relevant.

Comparison: rankings of the same key in both runs, paired; per measure the mean difference
(B − A), wins / losses / ties of NDCG@k, and a two-sided paired randomization test (sign flips
of the per-ranking differences, 10,000 rounds, fixed seed). The gate fails (exit 4) when the
NDCG@k of the whole set or of any stratum drops by more than ``evaluate.margin`` with p below
``evaluate.significance``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from collector.events import Rejected, decode
from collector.judged_relevance import err_at
from collector.outcomes import normalize_query
from collector.query_stats import position_key
from collector.query_store import StoreError, open_store
from feedback.judgments import JudgmentsError, read_run_rankings

MEASURES = ("ndcg", "err", "ap", "p", "r", "rr", "judged")
ROUNDS = 10_000
ALL = "all"

Key = tuple[str, str, str]  # (application, query, search id or "")
STORE_SCHEMES = ("sqlite:///", "postgresql://", "postgres://")


@dataclass
class Rankings:
    """The ranked documents of each key, and the lines or records that were not usable."""

    ranked: dict[Key, list[str]]
    rejected: dict[str, int] = field(default_factory=dict)


def read_log(path: str | Path) -> Rankings:
    """Every first-page search of a UBI log with hit ids: one ranking each."""
    ranked: dict[Key, list[str]] = {}
    rejected: dict[str, int] = {}
    with open(path, "rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                record = decode(line)
            except Rejected as error:
                rejected[error.reason] = rejected.get(error.reason, 0) + 1
                continue
            hits = record.query_response_hit_ids
            if record.user_query is None or not hits:
                continue  # an event, or a search that showed nothing to score
            attributes = record.query_attributes
            if attributes is not None and attributes.page is not None and attributes.page > 1:
                continue
            ranked[(record.application or "", normalize_query(record.user_query),
                    record.query_id or "")] = [str(h) for h in hits]
    return Rankings(ranked, rejected)


def read_store(url: str) -> Rankings:
    """The per-query store: per (application, query), the ranking production showed most — at
    each position the document shown there most often (and not placed higher already) — over
    everything the store holds: one ranking per query, not per search."""
    try:
        store = open_store(url, read_only=True)
        try:
            return Rankings({(row.application, row.query, ""): modal_ranking(row.shown_at)
                             for row in store.positions("0000-01-01")})
        finally:
            store.close()
    except StoreError as error:
        raise JudgmentsError(str(error)) from None


def modal_ranking(shown_at: dict[str, int]) -> list[str]:
    """Documents by position from impressions per ``"position:document"``."""
    by_position: dict[int, list[tuple[int, str]]] = {}
    for key, times in shown_at.items():
        parsed = position_key(key)
        if parsed is not None:
            by_position.setdefault(parsed[0], []).append((-times, parsed[1]))
    ranking: list[str] = []
    for position in sorted(by_position):
        placed = set(ranking)
        best = next((d for _, d in sorted(by_position[position]) if d not in placed), None)
        if best is not None:
            ranking.append(best)
    return ranking


def read_rankings(path: str | Path, topics: dict[str, str] | None,
                  topic_applications: dict[str, str]) -> Rankings:
    """A store URL, a UBI log (JSON lines) or a TREC run file (by content)."""
    if str(path).startswith(STORE_SCHEMES):
        return read_store(str(path))
    with open(path, "rb") as handle:
        start = handle.read(4096).lstrip()[:1]
    if start == b"{":
        return read_log(path)
    if topics is None:
        raise JudgmentsError(f"{path}: TREC runs name topics by id; pass --topics FILE")
    return Rankings({(topic_applications.get(topic, ""), query, ""): documents
                     for (topic, query), documents in
                     read_run_rankings(path, topics).items()})


def _grades_of(final: pd.DataFrame) -> dict[tuple[str, str], dict[str, int]]:
    grades: dict[tuple[str, str], dict[str, int]] = {}
    for application, query, document, grade in final[
            ["application", "query", "doc_id", "grade"]].itertuples(index=False):
        grades.setdefault((application, query), {})[document] = int(grade)
    return grades


def score(rankings: Rankings, final: pd.DataFrame, k: int, max_grade: int) -> pd.DataFrame:
    """One row per judged ranking: application, query, search and every measure."""
    import ir_measures
    from ir_measures import AP, RR, Judged, P, R, nDCG

    grades = _grades_of(final)
    # ir_measures' dict-of-dict form: what pytrec_eval takes as it is (no per-pair tuples)
    keys: list[tuple[tuple[str, str, str], dict[str, int], list[str]]] = []
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for key, documents in rankings.ranked.items():
        judged = grades.get(key[:2]) or grades.get(("", key[1]))
        if judged is None:
            continue
        documents = list(dict.fromkeys(documents))  # trec_eval refuses a repeated document
        qid = str(len(keys))
        keys.append((key, judged, documents))
        qrels[qid] = judged
        run[qid] = {d: float(len(documents) - rank) for rank, d in enumerate(documents)}
    gains = {g: 2 ** g - 1 for g in range(max_grade + 1)}
    names = {nDCG(gains=gains) @ k: "ndcg", AP(rel=1): "ap", P(rel=1) @ k: "p",
             R(rel=1) @ k: "r", RR(rel=1): "rr", Judged @ k: "judged"}
    values: dict[str, dict[str, float]] = {name: {} for name in names.values()}
    # A measure hashes by building its repr: look each result's measure up by identity
    # (the object held, so its id is not reused), by name only once per distinct object.
    seen: dict[int, tuple[object, dict[str, float]]] = {}
    for metric in ir_measures.iter_calc(list(names), qrels, run):
        measure = metric.measure
        known = seen.get(id(measure))
        if known is None or known[0] is not measure:
            known = seen[id(measure)] = measure, values[names[measure]]
        known[1][metric.query_id] = metric.value
    rows = []
    for i, (key, judged, documents) in enumerate(keys):
        qid = str(i)
        row = {"application": key[0], "query": key[1], "search": key[2],
               "err": err_at([judged.get(d) for d in documents], k, max_grade)}
        row.update({name: values[name].get(qid, 0.0) for name in values})
        rows.append(row)
    return pd.DataFrame(rows, columns=["application", "query", "search", *MEASURES])


def summarize(scores: pd.DataFrame, strata: pd.Series) -> pd.DataFrame:
    """Mean of every measure over all rankings, per stratum and per application."""
    frame = scores.assign(stratum=strata.reindex(scores["query"]).to_numpy())
    parts = [frame[list(MEASURES)].mean().to_frame().T.assign(slice=ALL,
                                                               rankings=len(frame))]
    for column in ("stratum", "application"):
        grouped = frame.groupby(column, sort=True)
        means = grouped[list(MEASURES)].mean()
        means["rankings"] = grouped.size()
        means["slice"] = [f"{column}={value}" for value in means.index]
        parts.append(means.reset_index(drop=True))
    table = pd.concat(parts, ignore_index=True)
    return table[["slice", "rankings", *MEASURES]]


def randomization_p(differences: np.ndarray, rounds: int = ROUNDS, seed: int = 1) -> float:
    """Two-sided p of a paired sign-flip randomization test of mean(differences) = 0."""
    n = len(differences)
    if n == 0 or not differences.any():
        return 1.0
    observed = abs(differences.mean())
    rng = np.random.default_rng(seed)
    extreme = 0
    chunk = max(1, 2_000_000 // n)
    for start in range(0, rounds, chunk):
        size = min(chunk, rounds - start)
        signs = rng.integers(0, 2, (size, n), dtype=np.int8) * 2 - 1
        extreme += int((np.abs(signs @ differences) / n >= observed - 1e-12).sum())
    return (extreme + 1) / (rounds + 1)


def compare(a: pd.DataFrame, b: pd.DataFrame, strata: pd.Series, margin: float,
            significance: float) -> tuple[pd.DataFrame, bool]:
    """Per slice: paired rankings, mean differences, wins/losses/ties, p of NDCG; and whether
    the gate fails."""
    key = ["application", "query", "search"]
    paired = a.merge(b, on=key, suffixes=("_a", "_b"))
    paired["stratum"] = strata.reindex(paired["query"]).to_numpy()
    slices: list[tuple[str, pd.DataFrame]] = [(ALL, paired)]
    slices += [(f"stratum={s}", part) for s, part in paired.groupby("stratum", sort=True)]
    slices += [(f"application={s}", part) for s, part in paired.groupby("application",
                                                                         sort=True)]
    rows, failed = [], False
    for name, part in slices:
        ndcg = (part["ndcg_b"] - part["ndcg_a"]).to_numpy()
        row: dict[str, Any] = {"slice": name, "paired": len(part),
                               "wins": int((ndcg > 1e-12).sum()),
                               "losses": int((ndcg < -1e-12).sum())}
        row["ties"] = len(part) - row["wins"] - row["losses"]
        for measure in MEASURES:
            row[f"delta_{measure}"] = float((part[f"{measure}_b"] - part[f"{measure}_a"]).mean())
        row["p_ndcg"] = randomization_p(ndcg)
        row["regression"] = bool(row["delta_ndcg"] < -margin and row["p_ndcg"] < significance
                                 and not name.startswith("application="))
        failed |= row["regression"]
        rows.append(row)
    return pd.DataFrame(rows), failed


def evaluate(runs: Sequence[Rankings], final: pd.DataFrame, strata: pd.Series, k: int,
             max_grade: int, margin: float, significance: float) -> dict[str, Any]:
    scored = [score(run, final, k, max_grade) for run in runs]
    result: dict[str, Any] = {
        "k": k, "judged_queries": int(final[["application", "query"]].drop_duplicates().shape[0]),
        "runs": [{"rankings": len(run.ranked), "judged_rankings": len(s),
                  "rejected": run.rejected, "summary": summarize(s, strata)}
                 for run, s in zip(runs, scored, strict=True)]}
    if len(scored) == 2:
        table, failed = compare(*scored, strata, margin, significance)
        result.update(comparison=table, regression=failed, margin=margin,
                      significance=significance)
    result["scores"] = scored
    return result


def as_json(result: dict[str, Any]) -> dict[str, Any]:
    """The result without per-ranking rows, with tables as lists of records."""
    def records(table: pd.DataFrame) -> list[dict[str, Any]]:
        return json_safe(table.to_dict(orient="records"))

    out = {k: v for k, v in result.items() if k not in ("runs", "comparison", "scores")}
    out["runs"] = [{**{k: v for k, v in run.items() if k != "summary"},
                    "summary": records(run["summary"])} for run in result["runs"]]
    if "comparison" in result:
        out["comparison"] = records(result["comparison"])
    return out


def json_safe(value: Any) -> Any:
    """NaN (no data) → None, numpy scalars → Python numbers, recursively."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, str):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    return None if isinstance(value, float) and value != value else value
