"""Do the judges agree? Per pair of raters, over all raters, per stratum, and for an automatic
judge (an LLM imported as a rater) against the humans: its calibration.

For a pair (reference, judge) over the items both graded:

* Krippendorff's alpha, ordinal metric over the whole scale (the ``krippendorff`` library);
* quadratic weighted Cohen's kappa, κ = 1 − Σ w·O / Σ w·E with w = (i − j)², E the product of
  the marginals, every grade of the scale a category;
* exact and within-one shares, mean signed difference (judge − reference), and the confusion
  matrix (rows: reference grade, columns: judge grade).

Over all human raters: alpha over every named human rater's grades, and the exact and
within-one shares over every pair of grades two of them gave the same item. Nothing is reported
below ``min_pairs`` compared pairs (Quepid's threshold is 30); alpha is left out when undefined
(every grade equal). The row's note says why. Anonymous grades cannot be paired by rater and
are left out (counted).

Calibration of an automatic rater: the reference is the humans' final grade of each item
(Quepid's rule over the human raters only), the judge is the automatic rater.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import krippendorff
import numpy as np
import pandas as pd

from collector.judgments.judgment_set import ITEM, combine, round_half_up

ALL = "all"
HUMANS = "humans"


@dataclass(frozen=True)
class Agreement:
    reference: str  # a rater, HUMANS (calibration) or ALL (every rater)
    judge: str  # a rater, or "" for ALL
    stratum: str
    pairs: int
    alpha: float | None = None
    kappa: float | None = None
    exact: float | None = None
    within_one: float | None = None
    mean_difference: float | None = None
    confusion: list[list[int]] | None = None
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None and v != ""}


def weighted_kappa(reference: np.ndarray, judge: np.ndarray, scale: int) -> float | None:
    """Quadratic weighted Cohen's kappa over grades 0..scale (None when undefined)."""
    observed = confusion(reference, judge, scale).astype(float)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    grades = np.arange(scale + 1)
    weights = (grades[:, None] - grades[None, :]) ** 2
    disagreement = (weights * expected).sum()
    return None if disagreement == 0 else float(1 - (weights * observed).sum() / disagreement)


def confusion(reference: np.ndarray, judge: np.ndarray, scale: int) -> np.ndarray:
    matrix = np.zeros((scale + 1, scale + 1), dtype=int)
    np.add.at(matrix, (reference.astype(int), judge.astype(int)), 1)
    return matrix


def ordinal_alpha(reliability: np.ndarray, scale: int) -> float | None:
    """Krippendorff's alpha (ordinal) of a raters × items matrix with NaN for "not graded"."""
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            value = krippendorff.alpha(reliability_data=reliability,
                                       level_of_measurement="ordinal",
                                       value_domain=list(range(scale + 1)))
    except ValueError:  # a single distinct grade: no variation to agree on
        return None
    return None if np.isnan(value) else float(value)


def _pair(reference_name: str, judge_name: str, stratum: str, reference: np.ndarray,
          judge: np.ndarray, scale: int, min_pairs: int) -> Agreement:
    pairs = len(reference)
    if pairs < min_pairs:
        return Agreement(reference_name, judge_name, stratum, pairs,
                         note=f"fewer than {min_pairs} compared pairs")
    difference = judge - reference
    alpha = ordinal_alpha(np.vstack([reference, judge]).astype(float), scale)
    return Agreement(
        reference_name, judge_name, stratum, pairs, alpha=alpha,
        kappa=weighted_kappa(reference, judge, scale),
        exact=float(np.mean(difference == 0)),
        within_one=float(np.mean(np.abs(difference) <= 1)),
        mean_difference=float(np.mean(difference)),
        confusion=confusion(reference, judge, scale).tolist(),
        note="" if alpha is not None else "alpha undefined: a single grade")


def _overall(wide: pd.DataFrame, stratum: str, scale: int, min_pairs: int) -> Agreement:
    values = wide.to_numpy(dtype=float)
    graded = ~np.isnan(values)
    per_item = graded.sum(axis=1)
    pairs = int((per_item * (per_item - 1) // 2).sum())
    if pairs < min_pairs:
        return Agreement(ALL, "", stratum, pairs, note=f"fewer than {min_pairs} compared pairs")
    exact = within = 0
    for first, second in combinations(range(values.shape[1]), 2):
        both = graded[:, first] & graded[:, second]
        difference = np.abs(values[both, first] - values[both, second])
        exact += int((difference == 0).sum())
        within += int((difference <= 1).sum())
    alpha = ordinal_alpha(values.T, scale)
    return Agreement(ALL, "", stratum, pairs, alpha=alpha, exact=exact / pairs,
                     within_one=within / pairs,
                     note="" if alpha is not None else "alpha undefined: a single grade")


def agreement(grades: pd.DataFrame, strata: pd.Series, scale: int, min_pairs: int,
              automatic: frozenset[str] = frozenset()) -> list[Agreement]:
    """Every agreement row: overall and per pair of human raters, then each automatic rater's
    calibration against the humans; each for all strata and per stratum.

    ``grades``: a judgment set's rows with integer grades on 0..scale; ``strata``: the stratum
    name of each query (queries absent: "unclassified")."""
    named = grades[grades["rater"] != ""]
    wide = named.pivot_table(index=ITEM, columns="rater", values="grade", aggfunc="last")
    item_strata = strata.reindex(wide.index.get_level_values("query")).fillna("unclassified")
    item_strata.index = wide.index
    humans = [r for r in wide.columns if r not in automatic]
    rows: list[Agreement] = []
    slices = [(ALL, wide)] + [(name, wide[item_strata == name])
                              for name in sorted(item_strata.unique())]
    for stratum, part in slices:
        rows.append(_overall(part[humans], stratum, scale, min_pairs))
        for reference, judge in combinations(humans, 2):
            both = part[[reference, judge]].dropna()
            rows.append(_pair(reference, judge, stratum, both[reference].to_numpy(),
                              both[judge].to_numpy(), scale, min_pairs))
        for judge in sorted(automatic & set(part.columns)):
            human_grades = part[humans]
            graded = human_grades.notna().any(axis=1) & part[judge].notna()
            reference = np.array([round_half_up(combine(row[~np.isnan(row)]))
                                  for row in human_grades[graded].to_numpy(dtype=float)],
                                 dtype=float)
            rows.append(_pair(HUMANS, judge, stratum, reference,
                              part.loc[graded, judge].to_numpy(dtype=float), scale, min_pairs))
    return rows


def pairwise_alpha(grades: pd.DataFrame, scale: int, min_pairs: int
                   ) -> tuple[list[str], list[list[float | None]]]:
    """Krippendorff's alpha (ordinal) of every pair of named raters, automatic ones included,
    over the items both graded: (raters, symmetric matrix; None on the diagonal, below
    ``min_pairs`` compared items, or where alpha is undefined)."""
    named = grades[grades["rater"] != ""]
    wide = named.pivot_table(index=ITEM, columns="rater", values="grade", aggfunc="last")
    raters = sorted(wide.columns)
    matrix: list[list[float | None]] = [[None] * len(raters) for _ in raters]
    for i, j in combinations(range(len(raters)), 2):
        both = wide[[raters[i], raters[j]]].dropna()
        if len(both) >= min_pairs:
            matrix[i][j] = matrix[j][i] = ordinal_alpha(both.to_numpy(dtype=float).T, scale)
    return raters, matrix


def bias_by_grade(confusion_matrix: list[list[int]]) -> list[float | None]:
    """Per reference grade (a row of the confusion matrix), the judge's mean signed difference
    from it: how far it grades above (+) or below (−) what the reference gave."""
    out: list[float | None] = []
    for reference, row in enumerate(confusion_matrix):
        total = sum(row)
        out.append(None if total == 0 else
                   sum((judge - reference) * n for judge, n in enumerate(row)) / total)
    return out
