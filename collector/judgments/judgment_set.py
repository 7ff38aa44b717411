"""One judgment set: every grade each rater gave a (application, query, document), and the final
grade that several raters' grades combine into.

A row is *judged* only when it carries a real grade on the scale: an empty rating, an unrateable
or judge-later judgement and TREC's ``-1`` are "not judged" wherever a set is read, so a
half-filled template never passes for a judgment. ``application`` is empty when the source does
not say (a Quepid CSV, SRW, qrels without a topic→application map): such a row stands for every
application.

Final grade — Quepid's rule (``RatingsManager#calculate_rating_from_judgements``), so a set
graded in Quepid and one combined here agree: fewer than three grades → their mean; otherwise
the three highest: their common value if they agree, else the lowest of the three (trust the
pessimist). Explicit scales take the result rounded half up, as Quepid does.

The set's own file, ``judgments.csv``, has one row per grade: ``application,query,doc_id,
rater,grade`` (``rater`` empty for an anonymous grade).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

COLUMNS = ("application", "query", "doc_id", "rater", "grade")
ITEM = ["application", "query", "doc_id"]


def combine(grades: Iterable[float]) -> float:
    """Quepid's final grade of one item's grades (unrounded)."""
    ranked = sorted(grades, reverse=True)
    if len(ranked) < 3:
        return sum(ranked) / len(ranked)
    top = ranked[:3]
    return top[0] if top[0] == top[2] else top[2]


def round_half_up(value: float) -> int:
    """Ruby's ``Float#round`` on the non-negative grades of a scale (2.5 → 3, not 2)."""
    return int(np.floor(value + 0.5))


@dataclass
class JudgmentSet:
    """Per-rater grades; ``grades`` has the columns of :data:`COLUMNS`."""

    grades: pd.DataFrame

    @classmethod
    def of(cls, rows: Iterable[tuple[str, str, str, str, float]]) -> JudgmentSet:
        frame = pd.DataFrame(list(rows), columns=list(COLUMNS))
        frame["grade"] = frame["grade"].astype(float)
        return cls(frame).deduplicated()

    @classmethod
    def merged(cls, sets: Iterable[JudgmentSet]) -> JudgmentSet:
        frames = [s.grades for s in sets]
        if not frames:
            return cls.of(())
        return cls(pd.concat(frames, ignore_index=True)).deduplicated()

    def deduplicated(self) -> JudgmentSet:
        """A named rater's later grade of an item replaces the earlier one (Quepid upserts a
        judgement by user); anonymous grades are all kept, as Quepid keeps them."""
        named = self.grades["rater"] != ""
        kept = pd.concat([
            self.grades[named].drop_duplicates([*ITEM, "rater"], keep="last"),
            self.grades[~named]], ignore_index=True)
        return JudgmentSet(kept.reset_index(drop=True))

    def __len__(self) -> int:
        return len(self.grades)

    @property
    def raters(self) -> list[str]:
        return sorted(r for r in self.grades["rater"].unique() if r)

    def final(self) -> pd.DataFrame:
        """One row per item: ``application, query, doc_id, grade`` (rounded), ``raters``."""
        if self.grades.empty:
            return pd.DataFrame(columns=[*ITEM, "grade", "raters"])
        grouped = self.grades.groupby(ITEM, sort=True)["grade"]
        raters = grouped.size().rename("raters")
        final = grouped.first().rename("grade")  # one grade: itself (most items)
        several = raters > 1
        if several.any():  # Quepid's rule, per item, only where several raters graded
            rows = self.grades.set_index(ITEM).loc[raters[several].index, "grade"]
            final[several] = rows.groupby(level=ITEM, sort=True).agg(combine)
        final = np.floor(final + 0.5).astype("int64")  # round_half_up, vectorised
        return pd.concat([final, raters], axis=1).reset_index()

    def judged_queries(self) -> set[tuple[str, str]]:
        """(application, query) pairs with at least one grade; application "" = any."""
        return set(zip(self.grades["application"], self.grades["query"], strict=True))

    def write(self, path: Path) -> None:
        self.grades.sort_values([*ITEM, "rater"], kind="stable").to_csv(
            path, index=False, columns=list(COLUMNS), float_format="%g")

