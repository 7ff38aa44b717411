"""The query–document pairs the judges disagree on most: what a rubric meeting goes through
("which grade did each of us give, and why?"), on the page and as ``disputed.csv``.

An item (application, query, document) is disputed when two named raters gave it different
grades. Most disputed first: the widest spread (highest − lowest grade), then the most raters
off the item's median grade, then the most raters; ties by application, query, document so the
order is reproducible. Automatic raters' grades are listed beside the humans' but do not make an
item disputed (the rubric is the humans'; the automatic judge's calibration has its own table).
"""

from __future__ import annotations

import csv
from collections.abc import Collection
from pathlib import Path

import numpy as np
import pandas as pd

from collector.judgments.judgment_set import ITEM
from collector.output_files import writing
from feedback.candidates.outputs import neutralized


def disputed(grades: pd.DataFrame, automatic: Collection[str] = ()) -> pd.DataFrame:
    """One row per disputed item — ``application, query, doc_id, raters, spread,
    off_median, grades`` (rater → grade, of those who graded it) — most disputed first."""
    columns = [*ITEM, "raters", "spread", "off_median", "grades"]
    named = grades[grades["rater"] != ""]
    wide = named.pivot_table(index=ITEM, columns="rater", values="grade", aggfunc="last")
    humans = [r for r in wide.columns if r not in set(automatic)]
    if wide.empty or not humans:
        return pd.DataFrame(columns=columns)
    values = wide[humans].to_numpy(dtype=float)
    graded = ~np.isnan(values)
    with np.errstate(all="ignore"):
        spread = np.nanmax(values, axis=1) - np.nanmin(values, axis=1)
        median = np.nanmedian(values, axis=1)
    keep = (graded.sum(axis=1) >= 2) & (spread > 0)
    everyone = wide.to_numpy(dtype=float)
    raters = list(wide.columns)
    frame = pd.DataFrame(list(wide.index[keep]), columns=ITEM)
    frame["raters"] = graded.sum(axis=1)[keep]
    frame["spread"] = spread[keep].astype(int)
    frame["off_median"] = (graded & (np.abs(values - median[:, None]) > 0)).sum(axis=1)[keep]
    frame["grades"] = [{r: int(g) for r, g in zip(raters, row, strict=True) if g == g}
                       for row in everyone[keep]]
    frame = frame.sort_values(["spread", "off_median", "raters", *ITEM],
                              ascending=[False, False, False, True, True, True], kind="stable")
    return frame[columns].reset_index(drop=True)


def write_csv(path: Path, table: pd.DataFrame) -> int:
    """``disputed.csv`` for a spreadsheet: a column per rater, blank where it gave no grade;
    text cells neutralized against formula injection. Returns the rows written."""
    raters = sorted({r for grades in table["grades"] for r in grades})
    with writing(str(path), "--disputed", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["application", "query", "doc_id", "raters", "spread",
                         *(neutralized(r) for r in raters)])
        for application, query, document, count, spread, grades in zip(
                table["application"], table["query"], table["doc_id"], table["raters"],
                table["spread"], table["grades"], strict=True):
            writer.writerow([neutralized(application), neutralized(query),
                             neutralized(document), int(count), int(spread),
                             *(grades.get(r, "") for r in raters)])
    return len(table)
