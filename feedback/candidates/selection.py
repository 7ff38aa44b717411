"""Which queries go to the judges: per stratum, mostly the highest-impact failing queries, plus
a share of non-failing queries sampled in proportion to their traffic for calibration (a
judgment set must represent real traffic, not only failures). Near-duplicates of a query already
chosen for the same application (same words in another order, a typo) are collapsed into it;
queries with different numbers are never near-duplicates ("iphone 13" is not "iphone 14").
Deterministic: ``frame`` comes in (application, query) order, ties keep that order (stable
sorts), and the sample uses ``seed``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from rapidfuzz import fuzz, process

from collector.series.quality import STRATA

FAILING, CALIBRATION = "failing", "calibration"
_DIGITS = re.compile(r"\d+")


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
    """Chosen queries per application and numbers, for the near-duplicate test."""

    def __init__(self, similarity: float) -> None:
        self.similarity = similarity
        self.chosen: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        self.collapsed = 0

    def take(self, application: str, query: str) -> bool:
        chosen = self.chosen.setdefault((application, tuple(_DIGITS.findall(query))), [])
        if process.extractOne(query, chosen, scorer=fuzz.token_sort_ratio,
                              score_cutoff=self.similarity) is not None:
            self.collapsed += 1
            return False
        chosen.append(query)
        return True


Admits = Callable[[str, str], bool]  # may (application, query) be handed out at all


def _walk(rows: pd.DataFrame, picker: _Picker, wanted: int, admits: Admits) -> list[int]:
    taken: list[int] = []
    for index, application, query in zip(rows.index, rows["application"], rows["query"],
                                         strict=True):
        if len(taken) == wanted:
            break
        if admits(application, query) and picker.take(application, query):
            taken.append(index)
    return taken


def select(frame: pd.DataFrame, rules: SelectionRules,
           admits: Admits = lambda application, query: True) -> Selection:
    """``frame``: eligible per-(application, query) rows with stratum, failure and impact, in
    (application, query) order; ``admits``: the privacy rule, asked only of the rows a quota
    reaches. Failing queries are chosen first in every stratum, so the seed only moves the
    sample."""
    rng = np.random.default_rng(rules.seed)
    picker = _Picker(rules.similarity)
    failing = frame["failure"] >= rules.failure_threshold
    quotas = {s: rules.quotas.get(s, 0) for s in STRATA if rules.quotas.get(s, 0) > 0}
    calibration_quotas = {s: round(q * rules.calibration_share) for s, q in quotas.items()}
    taken: dict[str, list[int]] = {}
    for stratum, quota in quotas.items():
        worst = frame[(frame["stratum"] == stratum) & failing].sort_values(
            "impact", ascending=False, kind="stable")
        taken[stratum] = _walk(worst, picker, quota - calibration_quotas[stratum], admits)
    sampled: dict[str, list[int]] = {}
    for stratum, wanted in calibration_quotas.items():
        # Efraimidis–Spirakis: sorting by u^(1/w) samples without replacement ∝ w.
        healthy = frame[(frame["stratum"] == stratum) & ~failing]
        keys = rng.random(len(healthy)) ** (1.0 / healthy["searches"].to_numpy(dtype=float))
        sampled[stratum] = _walk(healthy.iloc[np.argsort(-keys, kind="stable")], picker,
                                 wanted, admits)
    parts, shortfall = [], {}
    for stratum, quota in quotas.items():
        missing = {FAILING: quota - calibration_quotas[stratum] - len(taken[stratum]),
                   CALIBRATION: calibration_quotas[stratum] - len(sampled[stratum])}
        if any(missing.values()):
            shortfall[stratum] = {k: v for k, v in missing.items() if v}
        parts.append(frame.loc[taken[stratum]].assign(selected_as=FAILING))
        parts.append(frame.loc[sampled[stratum]].assign(selected_as=CALIBRATION))
    chosen = pd.concat(parts) if parts else frame.iloc[:0].assign(selected_as="")
    return Selection(chosen.reset_index(drop=True), picker.collapsed, shortfall)
