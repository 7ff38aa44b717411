"""``searchpulse evaluate``: score rankings against the judgment set, per stratum and
application; compare two and gate on a significant regression ("regressions die in review").

Rankings: a TREC run (``topic Q0 doc rank score tag``, ordered by **rank**; its topic ids are
its queries, or ``--topics`` maps them to query text when the judgments name queries by text),
or a UBI log, whose searches (first pages with hit ids) are the rankings production showed —
one ranking per search, so every mean over a log is a mean over searches, as the live
``searchpulse_judged_*`` metrics are — or the per-query store (a ``sqlite:///`` or
``postgresql://`` URL): per query the ranking production showed most, one ranking per query.

Measures (collector/judgments/measures.py): named as ir_measures names them, each with its own
cut-off; a ranking is scored when its query has final grades; unjudged documents are not relevant.

Comparison: rankings of the same key in both runs, paired; per slice and measure the means, the
mean difference (B − A) with a 95 % interval, wins / losses / ties and a two-sided paired
randomization test (feedback/evaluate/randomization.py); every changed ranking with its documents
that entered or left the top k (feedback/evaluate/query_changes.py); the gate's rules
(collector/judgments/gate.py) fail it (exit 4).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from collector.errors import JudgmentsError, Rejected, StoreError
from collector.ingest.events import decode
from collector.judgments import measures as measure_set
from collector.judgments.gate import Rule
from collector.judgments.readers import read_run_rankings
from collector.outcomes import normalize_query
from collector.privacy.redaction import redact
from collector.sources.files import misnamed
from collector.store.query_stats import position_key
from collector.store.query_store import open_store
from feedback.evaluate import query_changes
from feedback.evaluate.randomization import LEVEL, paired

ALL = "all"
NO_APPLICATION = "(none)"

Key = tuple[str, str, str]  # (application, query, search id or "")
STORE_SCHEMES = ("sqlite:///", "postgresql://", "postgres://")


@dataclass
class Rankings:
    """The ranked documents of each key, and the lines or records that were not usable."""

    ranked: dict[Key, list[str]]
    rejected: dict[str, int] = field(default_factory=dict)
    topic_ids: bool = False  # a TREC run read without topics: its queries are topic ids
    # a TREC run: one ranking per topic, so a judged topic it has no ranking for is one the
    # ranker returned nothing for (scored 0, as trec_eval -c and ir_measures score it)
    per_topic: bool = False


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
    """A store URL, a UBI log (JSON lines) or a TREC run file (by content). Without topics, a
    TREC run's topic ids stand for its queries (as trec_eval reads it against qrels). One that
    holds no ranking is refused by name: scored as nothing, it would pass any gate."""
    rankings = _rankings(path, topics, topic_applications)
    if not rankings.ranked:
        rejected = sum(rankings.rejected.values())
        raise JudgmentsError(
            f"{redact(str(path))}: no ranking to score (no TREC run line, no first-page search "
            f"with hit ids{f'; {rejected:,} records rejected' if rejected else ''})")
    return rankings


def _rankings(path: str | Path, topics: dict[str, str] | None,
              topic_applications: dict[str, str]) -> Rankings:
    if str(path).startswith(STORE_SCHEMES):
        return read_store(str(path))
    wrong = misnamed(str(path))
    if wrong:
        raise JudgmentsError(f"{path}: {wrong}")
    with open(path, "rb") as handle:
        start = handle.read(4096).lstrip()[:1]
    if not start:
        raise JudgmentsError(f"{path}: empty: no ranking to score (is it the run the ranker "
                             "wrote?)")
    if start == b"{":
        return read_log(path)
    # a topic id stands for its query exactly as written; a topics file's text is normalized
    return Rankings({(topic_applications.get(topic, ""), query, ""): documents
                     for (topic, query), documents in
                     read_run_rankings(path, topics).items()},
                    topic_ids=topics is None, per_topic=True)


Grades = dict[tuple[str, str], dict[str, int]]


def grades_of(final: pd.DataFrame) -> Grades:
    """Final grades per (application, query); application "" stands for every application."""
    grades: Grades = {}
    for application, query, document, grade in zip(
            final["application"].tolist(), final["query"].tolist(), final["doc_id"].tolist(),
            final["grade"].tolist(), strict=True):
        grades.setdefault((application, query), {})[document] = int(grade)
    return grades


def judged_grades(grades: Grades, application: str, query: str) -> dict[str, int] | None:
    key = judged_key(grades, application, query)
    return None if key is None else grades[key]


def judged_key(grades: Grades, application: str, query: str) -> tuple[str, str] | None:
    """The (application, query) whose grades a ranking is scored by (application "": every
    application's), or None."""
    for key in ((application, query), ("", query)):
        if grades.get(key):
            return key
    return None


def score(rankings: Rankings, grades: Grades, measures: Sequence[Any], max_grade: int,
          ranked_only: bool = False) -> pd.DataFrame:
    """One row per judged ranking: application, query, search, ``ranked`` and every measure
    (a column named as ir_measures writes the measure).

    A TREC run has one ranking per topic: a judged topic it ranks nothing for is a row of its
    own scored 0 on every measure (``ranked`` False), as ``trec_eval -c`` and
    ``ir_measures.calc_aggregate`` count it — averaged over the ranked topics only, a run
    that drops its hardest topics would score better. ``ranked_only`` (``--ranked-only``)
    leaves such topics out. A UBI log or a store is a sample of what production showed: a
    judged query no one searched is no failure of the ranker, and is not counted."""
    keys: list[Key] = []
    ranked: list[measure_set.Ranked] = []
    used: set[tuple[str, str]] = set()
    for key, documents in rankings.ranked.items():
        judged = judged_key(grades, key[0], key[1])
        if judged is None:
            continue
        used.add(judged)
        keys.append(key)
        # trec_eval refuses a repeated document: it counts once, at its first rank
        ranked.append(measure_set.Ranked(list(dict.fromkeys(documents)), grades[judged]))
    values = measure_set.score(measures, ranked, max_grade)
    missing = [] if ranked_only or not rankings.per_topic or not keys else sorted(
        key for key in grades if key not in used)
    frame = pd.DataFrame(keys + [(*key, "") for key in missing],
                         columns=["application", "query", "search"])
    frame["ranked"] = np.arange(len(frame)) < len(keys)
    for measure, column in values.items():
        frame[str(measure)] = np.concatenate(
            [np.asarray(column, dtype=float), np.full(len(missing), float(measure.DEFAULT))])
    return frame


def slices(frame: pd.DataFrame) -> tuple[list[tuple[str, np.ndarray]], dict[str, str]]:
    """(name, row mask) of all rankings, each stratum and each application — a grouping only
    when it splits the rankings (a lone stratum or application is ``all`` again, not a slice
    of its own); and the names of the groups folded into ``all`` (for a rule naming one)."""
    out = [(ALL, np.ones(len(frame), dtype=bool))]
    folded: dict[str, str] = {}
    for column in ("stratum", "application"):
        values = frame[column].to_numpy()
        groups = sorted(set(values.tolist()))
        if len(groups) == 1:
            folded[f"{column}={_label(column, groups[0])}"] = ALL
            continue
        out += [(f"{column}={_label(column, g)}", values == g) for g in groups]
    return out, folded


def _label(column: str, value: str) -> str:
    return NO_APPLICATION if column == "application" and value == "" else value


def summarize(scores: pd.DataFrame, strata: pd.Series, names: Sequence[str]) -> pd.DataFrame:
    """Mean of every measure over all rankings, per stratum and per application; ``rankings``
    counts the rows averaged, ``unranked`` the judged topics among them a TREC run ranked
    nothing for (each 0)."""
    frame = scores.assign(stratum=strata.reindex(scores["query"]).to_numpy())
    rows = []
    for name, mask in slices(frame)[0]:
        part = frame.loc[mask, list(names)]
        rows.append({"slice": name, "rankings": int(mask.sum()),
                     "unranked": int((~frame.loc[mask, "ranked"]).sum()),
                     **{m: float(part[m].mean()) if len(part) else float("nan")
                        for m in names}})
    return pd.DataFrame(rows, columns=["slice", "rankings", "unranked", *names])


@dataclass
class Comparison:
    """Per (slice, measure): means, difference, interval, p, wins/losses/ties; the gate's
    verdict per (rule, slice); every changed ranking."""

    table: pd.DataFrame
    verdicts: pd.DataFrame
    queries: list[dict[str, Any]]
    regression: bool


def compare(a: pd.DataFrame, b: pd.DataFrame, strata: pd.Series, names: Sequence[str],
            rules: Sequence[Rule], changes: Any, top: int) -> Comparison:
    """``changes(rows)``: the JSON records of the changed paired rows (their documents);
    ``top``: how many worst queries each verdict names."""
    both = _paired_rankings(a, b, strata)
    cut, folded = slices(both)
    rows = [row for name, mask in cut for row in _slice_rows(name, both.loc[mask], names)]
    # looked up in Python: pandas' string comparison loses a trailing NUL ("application=\x00")
    by_key = {(r["slice"], r["measure"]): r for r in rows}
    changed = changes(query_changes.changed(both, names, rules[0].measure))
    cut_names = [n for n, _ in cut]
    verdicts = [verdict for rule in rules
                for verdict in _rule_verdicts(rule, cut_names, folded, by_key, changed, top)]
    return Comparison(pd.DataFrame(rows), pd.DataFrame(verdicts), changed,
                      any(v["regression"] for v in verdicts))


def _paired_rankings(a: pd.DataFrame, b: pd.DataFrame, strata: pd.Series) -> pd.DataFrame:
    """The rankings both runs judged, side by side (``measure|a``, ``measure|b``), with their
    query's stratum — a judged topic one TREC run ranks nothing for paired as its 0, as the
    means count it. No topic ranked by both is an error: a gate that compared two disjoint
    sets of rankings (the wrong file, or two UBI logs) must not pass."""
    both = a.merge(b, on=query_changes.KEY, suffixes=("|a", "|b"))
    if not (both["ranked|a"] & both["ranked|b"]).any():
        raise JudgmentsError(
            f"no ranking of the second run pairs with one of the first "
            f"({int(a['ranked'].sum()):,} and {int(b['ranked'].sum()):,} judged rankings): "
            "rankings pair by application, query and search id "
            "— two UBI logs never share search ids; compare TREC runs, or stores")
    both["stratum"] = strata.reindex(both["query"]).to_numpy()
    return both


def _slice_rows(name: str, part: pd.DataFrame, names: Sequence[str]) -> list[dict[str, Any]]:
    """Per measure over one slice's paired rankings: both means, the paired difference with
    its interval and p, and the rankings it got better, worse or left alone (a change under
    1e-12 is float noise, a tie)."""
    before = part[[f"{m}|a" for m in names]].to_numpy(dtype=float)
    after = part[[f"{m}|b" for m in names]].to_numpy(dtype=float)
    differences = after - before
    test = paired(differences)
    rows = []
    for j, measure in enumerate(names):
        column = differences[:, j]
        wins, losses = int((column > 1e-12).sum()), int((column < -1e-12).sum())
        rows.append({"slice": name, "measure": measure, "paired": len(part),
                     "mean_a": _mean(before[:, j]), "mean_b": _mean(after[:, j]),
                     "delta": _mean(column), "ci_low": float(test.low[j]),
                     "ci_high": float(test.high[j]), "p": float(test.p[j]),
                     "wins": wins, "losses": losses, "ties": len(part) - wins - losses})
    return rows


def _rule_verdicts(rule: Rule, cut: list[str], folded: dict[str, str],
                   by_key: dict[tuple[str, str], dict[str, Any]],
                   changed: list[dict[str, Any]], top: int) -> list[dict[str, Any]]:
    """The gate's verdict of one rule on each slice it covers (a regression: the mean fell by
    more than the margin, significantly), naming the slice's worst queries; a slice the rule
    names that no paired ranking falls in is listed as such, never a silent pass."""
    wanted = [n for n in cut if rule.covers(n)]
    wanted += [folded[s] for s in rule.slices if s in folded and folded[s] not in wanted]
    verdicts = []
    for name in wanted:
        row = by_key[(name, rule.measure)]
        regression = bool(row["delta"] < -rule.margin and row["p"] < rule.significance)
        worse, _ = query_changes.worse_and_better(
            query_changes.in_slice(changed, name), rule.measure, top)
        verdicts.append({"measure": rule.measure, "slice": name, "margin": rule.margin,
                         "significance": rule.significance, "paired": int(row["paired"]),
                         "mean_a": row["mean_a"], "mean_b": row["mean_b"],
                         "delta": row["delta"], "ci_low": row["ci_low"],
                         "ci_high": row["ci_high"], "p": row["p"],
                         "losses": int(row["losses"]), "wins": int(row["wins"]),
                         "regression": regression, "worst": worse})
    missing = [s for s in rule.slices if "=" in s and s not in folded and s not in set(cut)]
    verdicts += [{"measure": rule.measure, "slice": s, "margin": rule.margin,
                  "significance": rule.significance, "paired": 0, "regression": False,
                  "worst": [], "note": "no paired rankings in this slice"}
                 for s in missing]
    return verdicts


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else float("nan")


def format_p(p: float | None) -> str:
    """p as people read it: below 0.001 said so (10,000 rounds resolve about 1e-4)."""
    if p is None or p != p:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def evaluate(runs: Sequence[Rankings], final: pd.DataFrame, strata: pd.Series,
             measures: Sequence[Any], rules: Sequence[Rule], k: int, max_grade: int,
             top: int = 10, ranked_only: bool = False) -> dict[str, Any]:
    """Score each run; with two, compare them and apply the gate. ``k``: the depth at which
    documents entering or leaving a ranking are listed; ``ranked_only``: a judged topic a
    TREC run ranks nothing for is left out rather than scored 0 (:func:`score`) — in the
    gate as in the means, for both runs alike."""
    grades = grades_of(final)
    names = [str(m) for m in measures]
    scored = [score(run, grades, measures, max_grade, ranked_only) for run in runs]
    for run, frame in zip(runs, scored, strict=True):
        if run.ranked and frame.empty:
            raise JudgmentsError(_nothing_judged(run, final))
    result: dict[str, Any] = {
        "k": k, "measures": names, "notes": measure_set.notes(measures, max_grade),
        "ranked_only": ranked_only,
        "judged_queries": int(final[["application", "query"]].drop_duplicates().shape[0]),
        "runs": [{"rankings": len(run.ranked), "judged_rankings": int(s["ranked"].sum()),
                  "unranked_topics": int((~s["ranked"]).sum()),
                  "rejected": run.rejected, "summary": summarize(s, strata, names)}
                 for run, s in zip(runs, scored, strict=True)]}
    if len(scored) == 2:
        def changes(rows: pd.DataFrame) -> list[dict[str, Any]]:
            return query_changes.records(
                rows, names, runs[0].ranked, runs[1].ranked,
                lambda application, query: judged_grades(grades, application, query) or {}, k)

        comparison = compare(*scored, strata, names, rules, changes, top)
        result.update(comparison=comparison, regression=comparison.regression,
                      rules=[r.describe() for r in rules], interval=LEVEL)
    result["scores"] = scored
    return result


def _nothing_judged(run: Rankings, final: pd.DataFrame) -> str:
    what = f"none of the {len(run.ranked):,} rankings has a judged query"
    if final.empty:
        return (f"{what}: the judgments hold no real grade (every row unrated, unrateable or "
                "-1: see the counts of `searchpulse judgments import`)")
    if run.topic_ids:
        return (f"{what}: this TREC run names topics by id and no judged query is one of its "
                "ids; pass --topics FILE (id<TAB>query) to map them to the judgments' queries")
    sample = ", ".join(repr(q) for q in sorted(set(final["query"]))[:3])
    return (f"{what} (judged queries: {sample}…): are the judgments for these rankings? (TREC "
            "qrels name topics by id: --topics FILE maps the ids to query text)")


def as_json(result: dict[str, Any]) -> dict[str, Any]:
    """The result without per-ranking rows, with tables as lists of records."""
    def records(table: pd.DataFrame) -> list[dict[str, Any]]:
        return json_safe(table.to_dict(orient="records"))

    out = {k: v for k, v in result.items() if k not in ("runs", "comparison", "scores")}
    out["runs"] = [{**{k: v for k, v in run.items() if k != "summary"},
                    "summary": records(run["summary"])} for run in result["runs"]]
    if "comparison" in result:
        comparison: Comparison = result["comparison"]
        out["comparison"] = records(comparison.table)
        out["gate"] = records(comparison.verdicts)
        out["queries"] = comparison.queries  # Python floats and None already: no walk
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
