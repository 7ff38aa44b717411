"""``searchpulse feedback``: store → per-query signals → strata → PII and judged queries out →
selection → pooling → files. Each step is its own module; this one only runs them in order."""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from collector.config import Config
from collector.errors import FeedbackError
from collector.judgments.readers import (
    Sources,
    read_judgments,
    read_run,
    read_topic_applications,
    read_topics,
)
from collector.privacy.personal_data import PersonalData
from collector.privacy.redaction import redact
from collector.series.examination import parse
from collector.series.strata import StrataClassifier
from collector.store.query_store import QueryStore, open_store
from feedback.candidates import handoff, outputs, report
from feedback.candidates.disagreement import DisagreementRules, mine, score_judged
from feedback.candidates.pooling import pool_all
from feedback.candidates.release import FeedbackRelease
from feedback.candidates.report_narrative import STALE_AFTER_DAYS
from feedback.candidates.selection import SelectionRules, select
from feedback.candidates.signals import add_signals, z_score
from feedback.candidates.strata import listed_strata, query_strata, stratum_names, write_strata_csv
from feedback.judging.agreement_report import section as agreement_section
from feedback.judging.job import measure

SAMPLE_REFORMULATIONS = 3
_MIN_STRATUM_VOLUME = 2  # a query seen once in the period is tail, whatever its rank
TOP_FAILING = 50
log = logging.getLogger(__name__)


@dataclass
class FeedbackRequest:
    store: str
    out: Path
    since: str = "90d"  # days back from the period's end, or a date YYYY-MM-DD
    judgments: list[str] = field(default_factory=list)
    topics: str | None = None
    topic_applications: str | None = None
    runs: list[str] = field(default_factory=list)
    seed: int = 1
    progress: bool = False
    until: date | None = None  # the period's end; default: the newest day in the store
    examination: str | None = None  # examination.json of `searchpulse clicks`


def _curves(config: Config, path: str) -> dict[str, np.ndarray]:
    """The identified examination curves of ``path`` (none without a path)."""
    if not path:
        return {}
    try:
        text = Path(path).read_text(encoding="utf-8")
        return parse(text, config["clicks.max_weight"], config["labels.application_cap"],
                     config["clicks.depth"]).identified()
    except (OSError, ValueError) as error:
        raise FeedbackError(f"examination {path}: {error}") from None


def period_of(store: QueryStore, url: str, since: str, until: date | None,
              error: type[ValueError] = FeedbackError,
              allow_incomplete: bool = False) -> tuple[str, date]:
    """(first day, last day) of the period: ``until`` or the newest day in the store. A store
    an interrupted replay left holds part of its inputs: refused unless ``allow_incomplete``
    (its period would silently miss what the replay had not reached yet)."""
    incomplete = ", ".join(f"{mark.name} ({mark.high_records} records counted)"
                           for mark in store.inputs().values() if not mark.complete)
    if incomplete and not allow_incomplete:
        raise error(f"store {redact(url)} holds an unfinished replay of {incomplete}: run the "
                    "same `searchpulse replay` command again to finish it, or pass "
                    "--allow-incomplete (store.allow_incomplete) to use the store as it is")
    if incomplete:
        log.warning("store %s holds an unfinished replay of %s: used as it is", redact(url),
                    incomplete)
    until = until or store.newest_day()
    if until is None:
        raise error(f"store {redact(url)} holds no per-query aggregates: run the collector "
                    f"with --store first")
    return since_day(since, until), until


def after_newest(url: str, since: str, until: date) -> str | None:
    """Why a period holds nothing when it starts after the store's newest day, or None (the
    store holds data: the fix is an earlier --since, not another collector run)."""
    if since <= until.isoformat():
        return None
    return (f"store {redact(url)}: the period starts on {since}, after the newest day the store "
            f"holds ({until}): pass an earlier --since (a date up to {until}, or days back from "
            "it like 90d)")


def since_day(since: str, until: date) -> str:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", since):
        return since
    match = re.fullmatch(r"(\d+)d", since.strip())
    if not match:
        raise FeedbackError(f"--since {since!r}: expected a number of days (90d) or a date "
                            "(2026-09-01)")
    return (until - timedelta(days=int(match.group(1)))).isoformat()


def rules_from(config: Config, seed: int) -> SelectionRules:
    return SelectionRules(
        quotas={s: config[f"feedback.quota_{s}"] for s in ("head", "torso", "tail",
                                                            "known_item")},
        calibration_share=config["feedback.calibration_share"],
        failure_threshold=config["feedback.failure_threshold"],
        similarity=config["feedback.near_duplicate_similarity"], seed=seed)


def disagreement_rules(config: Config) -> DisagreementRules:
    return DisagreementRules(
        good_ndcg=config["feedback.judged_good_ndcg"],
        poor_ndcg=config["feedback.judged_poor_ndcg"],
        coverage_min=config["feedback.judged_coverage_min"],
        failure_threshold=config["feedback.failure_threshold"],
        quota=config["feedback.quota_disagreement"], repool_quota=config["feedback.quota_repool"])


@dataclass
class _Inputs:
    """What the job reads besides the store: the judgment set, the candidate rankers' runs
    and the examination curves."""

    judgments: Any  # collector.judgments.readers.Reading
    judged: set[tuple[str, str]]
    runs: dict[str, Any]
    curves: dict[str, np.ndarray]


@dataclass
class _Mined:
    """What the period gave: every query considered, what was dropped, chosen and pooled."""

    since: str
    until: date
    total: int  # searches of the period
    frame: pd.DataFrame  # queries with their signals and strata, personal data dropped
    dropped: pd.DataFrame  # queries holding personal data
    is_judged: np.ndarray  # per row of frame
    selection: Any  # feedback.candidates.selection.Selection
    scored: pd.DataFrame
    mined: pd.DataFrame
    chosen: pd.DataFrame
    pooled: list[Any]
    unsafe: Any
    failing: pd.DataFrame
    top_failing: pd.DataFrame
    listed: Any
    release: FeedbackRelease


def run_feedback(config: Config, request: FeedbackRequest) -> dict[str, Any]:
    """Run the job; returns its summary (also at the top of the report)."""
    started = time.perf_counter()
    inputs = _read_inputs(config, request)
    steps = tqdm(total=6, desc="feedback", unit="step", disable=not request.progress)
    store = open_store(request.store, read_only=True)
    try:
        mined = _mine(config, request, inputs, store, steps)
    finally:
        store.close()
    steps.set_postfix_str("writing")
    written = _write(config, request.out, mined)
    summary = _summary(inputs, mined, written, redact(request.store),
                       time.perf_counter() - started)
    if summary["days_since_newest_data"] > STALE_AFTER_DAYS:
        log.warning("the newest per-query aggregates are from %s, %d days ago: is the collector "
                    "still writing to this store?", mined.until,
                    summary["days_since_newest_data"])
    judgment_set = inputs.judgments.judgment_set()
    agreement = (agreement_section(measure(config, judgment_set, None, ()))
                 if len(judgment_set.raters) > 1 else "")
    (request.out / "report.html").write_text(
        report.render(summary, mined.frame, mined.chosen, mined.top_failing, agreement),
        encoding="utf-8")
    steps.update()
    steps.close()
    return summary


def _read_inputs(config: Config, request: FeedbackRequest) -> _Inputs:
    """Every file the job reads besides the store, read before any work on the store (a
    malformed --since or file fails first)."""
    since_day(request.since, date.today())
    topics = read_topics(request.topics) if request.topics else None
    if request.runs and topics is None:
        raise FeedbackError("--run: TREC runs name topics by id; pass --topics FILE too")
    depth = config["feedback.pool_depth"]
    runs = {Path(p).stem: read_run(p, topics, depth) for p in request.runs}
    judgments = read_judgments(request.judgments, Sources(
        topics=topics, topic_applications=(read_topic_applications(request.topic_applications)
                                           if request.topic_applications else {})),
        config["judgments.max_grade"])
    refusal = judgments.refusal()  # graded on another scale: every exclusion would be misread
    if refusal is not None:
        raise FeedbackError(f"--judgments: {refusal}")
    curves = _curves(config, request.examination or config["clicks.examination_file"])
    return _Inputs(judgments, judgments.judgment_set().judged_queries(), runs, curves)


def _mine(config: Config, request: FeedbackRequest, inputs: _Inputs, store: QueryStore,
          steps: tqdm) -> _Mined:
    """The steps on the store: load, signals and strata, exclusions, selection, pooling."""
    steps.set_postfix_str("loading")
    since, until = period_of(store, request.store, request.since, request.until,
                             allow_incomplete=config["store.allow_incomplete"])
    applications = store.application_totals(since)
    if applications.empty:
        raise FeedbackError(after_newest(request.store, since, until) or (
            f"store {redact(request.store)} holds no per-query aggregates since {since}: run "
            "the collector with --store first"))
    total = int(applications["searches"].sum())
    frame = store.totals(since, config["feedback.min_searches"])
    volume = store.query_volumes(since, _MIN_STRATUM_VOLUME)
    release = FeedbackRelease(
        PersonalData.from_config(config), config["feedback.min_distinct_clients"],
        lambda application, query: store.clients_of(application, query, since),
        dict(zip(zip(frame["application"], frame["query"], strict=True),
                 zip(frame["client_marks"].tolist(), frame["searches"].tolist(),
                     strict=True), strict=True)))
    steps.update()
    steps.set_postfix_str("signals and strata")
    add_signals(frame, applications, z_score(config["feedback.confidence"]))
    strata = query_strata(StrataClassifier.from_config(config), config["strata.head_share"],
                          config["strata.torso_share"], volume, total)
    frame["stratum"] = stratum_names(frame, strata)
    steps.update()
    steps.set_postfix_str("personal data and judged queries")
    frame, dropped, is_judged = _excluded(frame, release, inputs.judged)
    steps.update()
    steps.set_postfix_str("selection")
    selection = select(frame[~is_judged], rules_from(config, request.seed), release.allows)
    scored = score_judged(frame[is_judged])
    mined = mine(scored, disagreement_rules(config), release.allows)
    chosen = pd.concat([selection.chosen, mined], ignore_index=True)
    chosen.insert(0, "topic", [f"sp-{i:04d}" for i in range(1, len(chosen) + 1)])
    steps.update()
    steps.set_postfix_str("pooling")
    pooled, unsafe = _pooled(config, store, since, chosen, inputs, release)
    failing = frame[frame["failure"] >= config["feedback.failure_threshold"]]
    # before the strata: what release.allows refused, strata.csv must not list either
    top_failing = _top_failing(failing, release)
    listed = listed_strata(strata, lambda queries: release.listable(
        queries, frame.groupby("query")["client_marks"].max()))
    steps.update()
    return _Mined(since, until, total, frame, dropped, is_judged, selection, scored, mined,
                  chosen, pooled, unsafe, failing, top_failing, listed, release)


def _excluded(frame: pd.DataFrame, release: FeedbackRelease, judged: set[tuple[str, str]]
              ) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """(the queries without personal data, those with, which of the first are judged: in
    their application or, judged without one, in any)."""
    personal = np.fromiter((release.personal(q) for q in frame["query"]), bool,
                           count=len(frame))
    dropped = frame[personal]
    frame = frame[~personal]
    judged_anywhere = {query for application, query in judged if not application}
    is_judged = np.fromiter(
        ((a, q) in judged or q in judged_anywhere
         for a, q in zip(frame["application"], frame["query"], strict=True)),
        bool, count=len(frame))
    return frame, dropped, is_judged


def _pooled(config: Config, store: QueryStore, since: str, chosen: pd.DataFrame,
            inputs: _Inputs, release: FeedbackRelease) -> tuple[list[Any], Any]:
    """The documents to judge per chosen query (and the ids unsafe to hand out); adds each
    candidate's sample reformulations that may be shown."""
    pooled, items = pool_all(
        list(chosen[["topic", "query", "application"]].itertuples(index=False)),
        lambda application, query: store.items(application, query, since), inputs.runs,
        config["feedback.pool_depth"], curves=inputs.curves,
        min_impressions=config["clicks.min_impressions"])
    pooled, unsafe = outputs.safe_pool(pooled)
    chosen["sample_reformulations"] = [
        " | ".join([r for r in items[(a, q)]["reformulations"]
                    if release.allows(a, r)][:SAMPLE_REFORMULATIONS])
        for a, q in zip(chosen["application"], chosen["query"], strict=True)]
    return pooled, unsafe


def _top_failing(failing: pd.DataFrame, release: FeedbackRelease) -> pd.DataFrame:
    """The report's worst queries by impact, only those that may be shown."""
    top = failing.sort_values(["impact", "query"], ascending=[False, True])
    return top.loc[np.fromiter(
        (release.allows(a, q) for a, q in zip(top["application"], top["query"], strict=True)),
        bool, count=len(top))].head(TOP_FAILING)


def _write(config: Config, out: Path, m: _Mined) -> dict[str, Any]:
    """The files for the judges; returns the first lines of the summary (what they hold)."""
    out.mkdir(parents=True, exist_ok=True)
    strata_rows = write_strata_csv(out / "strata.csv", m.listed)
    pooled_per_topic = Counter(p.topic for p in m.pooled)
    chosen = m.chosen
    chosen["pooled_documents"] = chosen["topic"].map(pooled_per_topic).fillna(0).astype(int)
    outputs.write_candidates(out / "candidates.csv", chosen)
    title = f"candidates {m.until.isoformat()}"
    directories = handoff.prepare(out)
    handoff.write_books(directories["quepid"], m.pooled, dict(zip(chosen["topic"], (
        f"{s} query, selected as {k}: {r}" for s, k, r in
        zip(chosen["stratum"], chosen["selected_as"], chosen["reason"], strict=True)),
        strict=True)), config["judgments.max_grade"], title)
    handoff.write_trec_topics(directories["trec"], chosen[["topic", "query", "application"]]
                              .itertuples(index=False))
    handoff.write_pool(directories["trec"], m.pooled)
    outputs.write_pool_signals(out / "pool.csv", m.pooled)
    srw_withheld = handoff.write_query_sets(directories["srw"], chosen, title)
    return {"topics_without_documents": sorted(set(chosen["topic"]) - set(pooled_per_topic)),
            "srw_queries_withheld": dict(sorted(srw_withheld.items())),
            "strata_csv_rows": strata_rows}


def _summary(inputs: _Inputs, m: _Mined, written: dict[str, Any], store: str,
             seconds: float) -> dict[str, Any]:
    """The job's numbers, in the order the report and --json show them."""
    chosen, pooled = m.chosen, m.pooled
    return {
        "period": f"{m.since} to {m.until.isoformat()}",
        "days_since_newest_data": (datetime.now(UTC).date() - m.until).days,
        "store": store,
        "searches": m.total,
        "queries_considered": int(len(m.frame) + len(m.dropped)),
        "dropped_personal_data_queries": int(len(m.dropped)),
        "dropped_personal_data_searches": int(m.dropped["searches"].sum()),
        "withheld_by_reason": dict(sorted(m.release.withheld.items())),
        "unsafe_document_ids": m.unsafe,
        "judgment_rows_not_judged": dict(sorted(inputs.judgments.not_judged.items())),
        "judgment_grades_replaced": inputs.judgments.duplicates()["grades_replaced"],
        "excluded_already_judged": int(m.is_judged.sum()),
        "failing_queries": int(len(m.failing)),
        "collapsed_near_duplicates": m.selection.collapsed,
        "candidates": int(len(chosen)),
        "calibration_candidates": int((chosen["selected_as"] == "calibration").sum()),
        "judged_queries_scored": int(m.scored["judged_ndcg"].notna().sum()),
        "judged_candidates": {str(k): int(v) for k, v in
                              m.mined["reason"].value_counts().sort_index().items()},
        "pooled_documents": len(pooled),
        "examination_curves": sorted(inputs.curves),
        "pooled_by_implicit_relevance": sum("implicit" in p.sources.split("+") for p in pooled),
        "position_biased_documents": sum(p.position_bias for p in pooled),
        "topics_without_documents": written["topics_without_documents"],
        "srw_queries_withheld": written["srw_queries_withheld"],
        "shortfall": m.selection.shortfall,
        "strata_csv_rows": written["strata_csv_rows"],
        "seconds": round(seconds, 2),
    }

