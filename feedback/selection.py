"""Which queries go to the judges: per stratum, mostly the highest-impact failing queries, plus
a share of non-failing queries sampled in proportion to their traffic for calibration (a
judgment set must represent real traffic, not only failures). Near-duplicates of a query already
chosen for the same application (same words in another order, a typo) are collapsed into it.
Deterministic: ties break on the query text, and the sample uses ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from rapidfuzz import fuzz, process

from collector.quality import STRATA

FAILING, CALIBRATION = "failing", "calibration"


@dataclass(frozen=True)
class SelectionRules:
    quotas: dict[str, int]  # stratum → candidates
    calibration_share: float  # of each quota, sampled from non-failing queries
    failure_threshold: float  # failing: the largest failure lower bound reaches this
    similarity: float  # token-order-insensitive similarity (0–100) that makes a near-duplicate
    seed: int


@dataclass
class Selection:
    chosen: pd.DataFrame
    collapsed: int = 0  # near-duplicates skipped
    shortfall: dict[str, dict[str, int]] = field(default_factory=dict)  # stratum → kind → n


class _Picker:
    """Chosen queries per application, for the near-duplicate test."""

    def __init__(self, similarity: float) -> None:
        self.similarity = similarity
        self.by_application: dict[str, list[str]] = {}
        self.collapsed = 0

    def take(self, application: str, query: str) -> bool:
        chosen = self.by_application.setdefault(application, [])
        if process.extractOne(query, chosen, scorer=fuzz.token_sort_ratio,
                              score_cutoff=self.similarity) is not None:
            self.collapsed += 1
            return False
        chosen.append(query)
        return True


def _walk(rows: pd.DataFrame, picker: _Picker, wanted: int) -> list[int]:
    taken: list[int] = []
    for index, application, query in zip(rows.index, rows["application"], rows["query"],
                                         strict=True):
        if len(taken) == wanted:
            break
        if picker.take(application, query):
            taken.append(index)
    return taken


def select(frame: pd.DataFrame, rules: SelectionRules) -> Selection:
    """``frame``: eligible per-(application, query) rows with stratum, failure and impact."""
    rng = np.random.default_rng(rules.seed)
    picker = _Picker(rules.similarity)
    failing = frame["failure"] >= rules.failure_threshold
    parts = []
    shortfall: dict[str, dict[str, int]] = {}
    for stratum in STRATA:
        quota = rules.quotas.get(stratum, 0)
        if quota <= 0:
            continue
        calibration_quota = round(quota * rules.calibration_share)
        in_stratum = frame["stratum"] == stratum
        worst = frame[in_stratum & failing].sort_values(["impact", "query", "application"],
                                                         ascending=[False, True, True])
        taken = _walk(worst, picker, quota - calibration_quota)
        # Efraimidis–Spirakis: sorting by u^(1/w) samples without replacement ∝ w.
        healthy = frame[in_stratum & ~failing].sort_values(["query", "application"])
        keys = rng.random(len(healthy)) ** (1.0 / healthy["searches"].to_numpy(dtype=float))
        sampled = _walk(healthy.iloc[np.argsort(-keys, kind="stable")], picker,
                        calibration_quota)
        missing = {FAILING: quota - calibration_quota - len(taken),
                   CALIBRATION: calibration_quota - len(sampled)}
        if any(missing.values()):
            shortfall[stratum] = {k: v for k, v in missing.items() if v}
        parts.append(frame.loc[taken].assign(selected_as=FAILING))
        parts.append(frame.loc[sampled].assign(selected_as=CALIBRATION))
    chosen = (pd.concat(parts) if parts else frame.iloc[:0].assign(selected_as=""))
    return Selection(chosen.reset_index(drop=True), picker.collapsed, shortfall)
