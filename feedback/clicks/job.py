"""``searchpulse clicks``: fit the position-based click model on the per-query store and write
what it learns — the examination curve per application (``examination.json``, read by the
collector for the debiased click-through and by the feedback job for pooling) and a debiased
relevance estimate per (query, document) as implicit judgments (``implicit-judgments.csv`` and,
per application, ``srw/APP.implicit-judgments.json`` for the Search Relevance Workbench).

Query text leaves the system here, so it passes the feedback job's two rules
(feedback/candidates/release.py); document ids pass its safety rule
(feedback/candidates/outputs.py).
"""

from __future__ import annotations

import csv
import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from collector.config import Config
from collector.errors import ClicksError
from collector.privacy.personal_data import PersonalData
from collector.privacy.redaction import redact
from collector.store.query_stats import position_key
from collector.store.query_store import QueryPositions, open_store
from feedback.candidates import handoff, outputs
from feedback.candidates.job import after_newest, period_of, since_day
from feedback.candidates.release import FeedbackRelease
from feedback.clicks import click_model

log = logging.getLogger(__name__)
EXAMINATION_FILE = "examination.json"
IMPLICIT_COLUMNS = ("application", "query", "document", "impressions", "clicks",
                    "best_position", "pbm_relevance", "coec", "top_position_clicks")



@dataclass
class ClicksRequest:
    store: str
    out: Path
    since: str = "30d"
    until: date | None = None
    warm_start: Path | None = None  # default: OUT/examination.json when it exists
    progress: bool = False


@dataclass
class _Pairs:
    """The store's counts flattened into the model's cells, with what names each pair."""

    keys: list[tuple[str, str, str]]  # (application, query, document) per pair
    applications: list[str]
    cells: click_model.Cells
    queries: dict[tuple[str, str], tuple[int, int]]  # → (client marks, searches)


def read_pairs(positions: Any, depth: int) -> _Pairs:
    """Cells of every (application, query, document, position ≤ depth) the store holds."""
    index: dict[tuple[str, str, str], int] = {}
    applications: dict[str, int] = {}
    queries: dict[tuple[str, str], tuple[int, int]] = {}
    pair, position, shown, clicked, group = [], [], [], [], []
    for row in positions:
        row: QueryPositions
        queries[(row.application, row.query)] = (row.client_marks, row.searches)
        app = applications.setdefault(row.application, len(applications))
        for key, impressions in row.shown_at.items():
            parsed = position_key(key)
            if parsed is None or not 1 <= parsed[0] <= depth:
                continue
            k, document = parsed
            name = (row.application, row.query, document)
            number = index.get(name)
            if number is None:
                number = index[name] = len(index)
                group.append(app)
            pair.append(number)
            position.append(k)
            shown.append(impressions)
            clicked.append(row.clicked_at.get(key, 0))
    cells = click_model.Cells(
        np.array(pair, dtype=np.int64), np.array(position, dtype=np.int64),
        np.array(shown, dtype=float), np.array(clicked, dtype=float),
        np.array(group, dtype=np.int64), max(len(applications), 1), depth)
    return _Pairs(list(index), list(applications), cells, queries)


def read_warm_start(path: Path | None, applications: list[str], depth: int) -> np.ndarray | None:
    """Yesterday's curves in this run's application order (1/k for a new application)."""
    if path is None or not path.exists():
        return None
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))["applications"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ClicksError(f"warm start {path}: not an examination file ({error})") from None
    theta = np.tile(1.0 / np.arange(1, depth + 1), (max(len(applications), 1), 1))
    for i, application in enumerate(applications):
        curve = (previous.get(application) or {}).get("examination") or []
        for k, value in enumerate(curve[:depth]):
            if isinstance(value, int | float) and value > 0:
                theta[i, k] = value
    return theta


def _curves(pairs: _Pairs, fit: click_model.Fit, min_moving: int) -> dict[str, Any]:
    cells = pairs.cells
    depth = cells.depth
    flat = pairs.cells.group[cells.pair] * depth + cells.position - 1
    size = cells.groups * depth
    shown = np.bincount(flat, cells.impressions, size).reshape(cells.groups, depth)
    clicked = np.bincount(flat, cells.clicks, size).reshape(cells.groups, depth)
    curves = {}
    for i, application in enumerate(pairs.applications):
        identified = bool(fit.fitted[i])
        curves[application] = {
            # null where nothing was shown: no estimate, not "never examined"; null as a whole
            # when not identified: no curve rather than EM's starting point
            "examination": [round(float(t), 6) if n > 0 else None
                            for t, n in zip(fit.theta[i], shown[i], strict=True)]
            if identified else None,
            "ctr_at": [round(float(c / n), 6) if n > 0 else None
                       for c, n in zip(clicked[i], shown[i], strict=True)],
            "impressions": int(shown[i].sum()),
            "clicks": int(clicked[i].sum()),
            "pairs": int((cells.group == i).sum()),
            "moving_pairs": int(fit.moving_pairs[i]),
            "min_moving_pairs": min_moving,
            "identified": identified,
        }
    return curves


def unidentified_reason(application: str, curve: dict[str, Any]) -> str:
    """What would identify an application's curve, in the words on-call reads."""
    return (f"application {application!r}: no examination curve: {curve['moving_pairs']} of "
            f"its {curve['pairs']} (query, document) pairs were shown at two positions or "
            f"more, clicks.min_moving_pairs needs {curve['min_moving_pairs']} (interleaving, "
            "a ranking experiment or a longer --since moves documents between positions)")


def implicit_judgments(pairs: _Pairs, fit: click_model.Fit, min_impressions: int
                       ) -> list[dict[str, Any]]:
    """Per pair with enough impressions: its counts, PBM relevance and SRW's COEC; and the
    share of its clicks taken at position 1 (high with a low relevance: clicked because it
    sits first)."""
    cells = pairs.cells
    n_pairs = len(pairs.keys)
    impressions = np.bincount(cells.pair, cells.impressions, n_pairs)
    clicks = np.bincount(cells.pair, cells.clicks, n_pairs)
    first = np.bincount(cells.pair, np.where(cells.position == 1, cells.clicks, 0), n_pairs)
    best = np.full(n_pairs, cells.depth + 1, dtype=np.int64)
    np.minimum.at(best, cells.pair, cells.position)
    flat = cells.group[cells.pair] * cells.depth + cells.position - 1
    size = cells.groups * cells.depth
    shown_at = np.bincount(flat, cells.impressions, size)
    ctr_at = np.divide(np.bincount(flat, cells.clicks, size), shown_at,
                       out=np.zeros(size), where=shown_at > 0).reshape(cells.groups, -1)
    rating = click_model.coec(impressions, clicks, ctr_at[pairs.cells.group, best - 1])
    rows = []
    for number in np.flatnonzero(impressions >= min_impressions):
        application, query, document = pairs.keys[number]
        rows.append({
            "application": application, "query": query, "document": document,
            "impressions": int(impressions[number]), "clicks": int(clicks[number]),
            "best_position": int(best[number]),
            "pbm_relevance": (round(float(fit.gamma[number]), 3)
                              if not np.isnan(fit.gamma[number]) else None),
            "coec": round(float(rating[number]), 3),
            "top_position_clicks": (round(float(first[number] / clicks[number]), 3)
                                    if clicks[number] else None)})
    return rows


def _write_outputs(out: Path, rows: list[dict[str, Any]], title: str) -> None:
    with open(out / "implicit-judgments.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, IMPLICIT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: outputs.neutralized(v) for k, v in row.items()} for row in rows)
    srw = out / "srw"
    srw.mkdir(exist_ok=True)
    for stale in srw.glob("*.implicit-judgments.json"):
        stale.unlink()
    by_application: dict[str, dict[str, list[tuple[str, float]]]] = {}
    for row in rows:
        if row["pbm_relevance"] is None:  # no curve identified: no debiased relevance
            continue
        by_application.setdefault(row["application"], {}).setdefault(row["query"], []).append(
            (row["document"], row["pbm_relevance"]))
    for application, queries in sorted(by_application.items()):
        handoff.write_srw_judgments(
            srw / f"{handoff.file_stem(application)}.implicit-judgments.json", application, title,
            "Implicit judgments: position-debiased click relevance (PBM) by searchpulse",
            sorted(queries.items()))


def run_clicks(config: Config, request: ClicksRequest) -> dict[str, Any]:
    """Fit the model and write its outputs; returns the summary."""
    started = time.perf_counter()
    since_day(request.since, date.today())
    depth = config["clicks.depth"]
    steps = tqdm(total=4, desc="clicks", unit="step", disable=not request.progress)
    store = open_store(request.store, read_only=True)
    try:
        steps.set_postfix_str("reading")
        since, until = period_of(store, request.store, request.since, request.until,
                                 ClicksError, config["store.allow_incomplete"])
        pairs = read_pairs(store.positions(since), depth)
        steps.update()
        if not pairs.keys:
            raise ClicksError(after_newest(request.store, since, until) or (
                f"store {redact(request.store)} holds no impressions per position since "
                f"{since} (written by searchpulse ≥ 0.6)"))
        steps.set_postfix_str("fitting")
        warm_path = request.warm_start or request.out / EXAMINATION_FILE
        warm = read_warm_start(warm_path, pairs.applications, depth)
        fit = click_model.fit(pairs.cells, warm, min_moving=config["clicks.min_moving_pairs"])
        steps.update()
        steps.set_postfix_str("releasing")
        release = FeedbackRelease(
            PersonalData.from_config(config), config["feedback.min_distinct_clients"],
            lambda application, query: store.clients_of(application, query, since),
            pairs.queries)
        rows = [row for row in implicit_judgments(pairs, fit, config["clicks.min_impressions"])
                if outputs.safe_document(row["document"])
                and release.allows(row["application"], row["query"])]
        steps.update()
    finally:
        store.close()
    request.out.mkdir(parents=True, exist_ok=True)
    curves = _curves(pairs, fit, config["clicks.min_moving_pairs"])
    period = f"{since} to {until.isoformat()}"
    examination = {
        "model": "position-based", "period": period,
        "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "warm_start": str(warm_path) if warm is not None else None,
        "iterations": fit.iterations, "converged": fit.converged,
        "log_likelihood": (round(fit.log_likelihood, 3) if fit.log_likelihood is not None
                           else None), "depth": depth,
        "applications": curves}
    (request.out / EXAMINATION_FILE).write_text(json.dumps(examination, indent=2) + "\n",
                                                encoding="utf-8")
    _write_outputs(request.out, rows, f"implicit {until.isoformat()}")
    for application, curve in curves.items():
        if not curve["identified"]:
            log.warning("%s", unidentified_reason(application, curve))
    steps.update()
    steps.close()
    return {
        "period": period, "store": redact(request.store), "pairs": len(pairs.keys),
        "cells": len(pairs.cells.pair), "iterations": fit.iterations,
        "converged": fit.converged, "warm_start": examination["warm_start"],
        "applications": {a: {k: c[k] for k in ("examination", "moving_pairs",
                                               "min_moving_pairs", "identified")}
                         for a, c in curves.items()},
        "implicit_judgments": len(rows),
        "withheld_by_reason": dict(sorted(release.withheld.items())),
        "seconds": round(time.perf_counter() - started, 2)}
