"""The judges' agreement as a page people read: who disagrees with whom (pairwise alpha as a heat
map, in Krippendorff's reading bands), how (confusion matrices), on what (the most disputed
query–document pairs, for the rubric meeting) and how an automatic judge leans (its signed
difference from the humans per grade and per stratum). A section of the feedback report, and
the page ``searchpulse judgments agreement --html`` writes.

Reading bands (Krippendorff, *Content Analysis*, 2004, §12.8): α ≥ 0.800 reliable; 0.667 ≤ α <
0.800 tentative conclusions only; α < 0.667 not reliable enough to use (discard, or fix the
rubric and re-judge).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import pandas as pd

from feedback.judging.agreement import ALL, HUMANS, Agreement, bias_by_grade
from feedback.pages.charts import diverging_bars, grid
from feedback.pages.page import document, facts, table

RELIABLE, TENTATIVE = 0.800, 0.667
BANDS = (("reliable", "#b7e4c7"), ("tentative", "#ffe8a3"), ("discard", "#f5b7b1"))
DISPUTED_SHOWN = 20


@dataclass
class Panel:
    """Everything the agreement pages show."""

    rows: list[Agreement]
    not_paired: int  # anonymous grades: no rater to pair them by
    raters: list[str]  # of the pairwise matrix
    pairwise: list[list[float | None]]  # alpha per pair of raters (None: not reported)
    disputed: pd.DataFrame  # feedback/judging/disputes.py
    scale: int


def band(alpha: float | None) -> str:
    """Krippendorff's reading of an alpha."""
    if alpha is None or alpha != alpha:
        return "not reported"
    return "reliable" if alpha >= RELIABLE else "tentative" if alpha >= TENTATIVE else "discard"


def _band_colour(alpha: float | None) -> str:
    return dict(BANDS).get(band(alpha), "#eeeeee")


def bands_legend() -> str:
    items = "".join(f'<span class="band" style="background:{colour}">{name}</span> '
                    for name, colour in BANDS)
    return (f"<p>Reading of Krippendorff's α (ordinal): {items}— α ≥ 0.800 reliable; "
            "0.667–0.800 tentative conclusions only; below 0.667 discard the grades (or fix "
            "the rubric and re-judge). Grey: fewer compared items than judgments.min_pairs.</p>")


def _heat_map(panel: Panel) -> str:
    if len(panel.raters) < 2:
        return "<p>Fewer than two named raters: no pair to compare.</p>"

    def fill(value: float | None, i: int, j: int) -> str:
        return "#ffffff" if i == j else _band_colour(value)

    def text(value: float | None) -> str:
        return "—" if value is None else f"{value:.2f}"

    chart = grid(panel.pairwise, panel.raters, panel.raters, fill, text,
                 "Krippendorff α (ordinal) per pair of raters", cell=48)
    return (f"<figure>{chart}<figcaption>α (ordinal) of each pair of raters over the items "
            "both graded, all strata; colour: its reading band</figcaption></figure>")


def _confusion(row: Agreement) -> str:
    top = max((v for r in row.confusion or [] for v in r), default=0) or 1
    size = len(row.confusion or [])

    def fill(value: float | None, i: int, j: int) -> str:
        shade = int(255 - 200 * (value or 0) / top)
        return f"rgb({shade},255,{shade})" if i == j else f"rgb({shade},{shade},255)"

    grades = [str(g) for g in range(size)]
    reference = "humans' final grade" if row.reference == HUMANS else row.reference
    chart = grid(row.confusion or [], grades, grades, fill, lambda v: f"{int(v or 0)}",
                 f"{reference} (rows) × {row.judge} (columns)", row_axis=reference,
                 column_axis=row.judge)
    return (f"<figure>{chart}<figcaption>{escape(reference)} (rows) × {escape(row.judge)} "
            f"(columns): {row.pairs:,} items; the diagonal agrees</figcaption></figure>")


def _bias(rows: Sequence[Agreement], scale: int) -> str:
    """Each automatic rater's signed difference from the humans, per grade and per stratum."""
    parts = []
    for judge in sorted({r.judge for r in rows if r.reference == HUMANS}):
        parts += _judge_bias(judge, [r for r in rows if r.reference == HUMANS and r.judge == judge],
                             scale)
    if not parts:
        return ""
    return "<h3>The automatic judge's bias</h3>" + "".join(parts)


def _judge_bias(judge: str, mine: list[Agreement], scale: int) -> list[str]:
    """One rater's bias figures against the humans (``mine``: its rows, overall and per
    stratum): per human grade, then per stratum; a sentence instead when the overall row has
    too few items for a confusion matrix."""
    overall = next((r for r in mine if r.stratum == ALL), None)
    if overall is None or overall.confusion is None:
        return [f"<p>{escape(judge)}: too few items graded by it and the humans to "
                "show its bias.</p>"]
    chart = diverging_bars([f"humans gave {g}" for g in range(scale + 1)],
                           bias_by_grade(overall.confusion),
                           f"{judge}: mean grade minus the humans, per human grade",
                           "its grade − the humans' (0 = no bias)")
    parts = [
        f"<figure>{chart}<figcaption>{escape(judge)} against the humans' final grade, per "
        f"grade they gave: right (red) it grades higher, left (blue) lower. Overall "
        f"{overall.mean_difference:+.2f}.</figcaption></figure>"]
    by_stratum = [r for r in mine if r.stratum != ALL]
    if by_stratum:
        chart = diverging_bars([r.stratum for r in by_stratum],
                               [r.mean_difference for r in by_stratum],
                               f"{judge}: mean grade minus the humans, per stratum",
                               "its grade − the humans'")
        parts.append(
            f"<figure>{chart}<figcaption>{escape(judge)} per stratum (no bar: fewer than "
            "judgments.min_pairs items)</figcaption></figure>")
    return parts


_COLUMNS = {"stratum": "stratum", "reference": "reference", "judge": "judge",
            "pairs": "compared pairs", "alpha": "Krippendorff α (ordinal)", "reading": "reading",
            "kappa": "weighted κ (quadratic)", "exact": "exact", "within_one": "within one",
            "mean_difference": "mean difference (judge − reference)", "note": "note"}


def _disputed(panel: Panel, shown: int) -> str:
    if panel.disputed.empty:
        return ("<h3>Most disputed pairs</h3><p>No query–document pair got different grades "
                "from two named raters.</p>")
    top = panel.disputed.head(shown)
    frame = top.assign(grades=[" · ".join(f"{r} {g}" for r, g in grades.items())
                               for grades in top["grades"]])
    columns = {"query": "query", "doc_id": "document", "application": "application",
               "grades": "grades (rater grade)", "spread": "spread", "raters": "raters"}
    return (f"<h3>Most disputed pairs</h3><p>The {len(top):,} of {len(panel.disputed):,} "
            "pairs the human raters disagree on most (widest spread of grades, then most "
            "raters off the median): the rubric meeting's agenda. Every one is in the CSV "
            "(<code>--disputed FILE</code>).</p>"
            f"{table(frame, columns, sortable=True)}")


def section(panel: Panel, shown: int = DISPUTED_SHOWN) -> str:
    """The agreement part of a page."""
    if not panel.rows:
        return "<h2>Judges' agreement</h2><p>No judgment set with named raters.</p>"
    frame = pd.DataFrame([{k: getattr(r, k) for k in _COLUMNS if k != "reading"}
                          for r in panel.rows])
    frame["reading"] = [band(r.alpha) for r in panel.rows]
    frame["judge"] = frame["judge"].replace("", "(every rater)")
    frame = frame.astype({c: float for c in ("alpha", "kappa", "exact", "within_one",
                                             "mean_difference")})
    frame["pairs"] = frame["pairs"].astype(int)
    maps = "".join(_confusion(r) for r in panel.rows
                   if r.stratum == ALL and r.confusion is not None and r.reference != ALL)
    return (f"<h2>Judges' agreement</h2>{bands_legend()}<h3>Who agrees with whom</h3>"
            f"{_heat_map(panel)}<h3>Confusion matrices (all strata)</h3>"
            f"{maps or '<p>No pair with enough compared items.</p>'}"
            f"{_bias(panel.rows, panel.scale)}{_disputed(panel, shown)}"
            f"<h3>Every statistic</h3><p>Per pair of raters and over all raters; an automatic "
            f"rater against the humans' final grade (its calibration). — marks a value not "
            f"reported (see note). {panel.not_paired:,} anonymous grades cannot be paired by "
            f"rater and are not counted.</p>{table(frame, _COLUMNS)}")


def page(summary: Sequence[tuple[str, str]], panel: Panel, shown: int) -> str:
    body = f"<h1>searchpulse judgments agreement</h1>{facts(summary)}{section(panel, shown)}"
    return document("searchpulse — judges' agreement", body, script=True)


def worded(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The agreement summary as (label, sentence-like value) pairs, no Python reprs."""
    not_judged = summary["not_judged"]
    return [
        ("grades", f"{summary['grades']:,}"),
        ("raters", ", ".join(summary["raters"]) or "none named"),
        ("automatic raters", ", ".join(summary["automatic_raters"]) or "none"),
        ("scale", summary["scale"]),
        ("reported from", f"{summary['min_pairs']} compared items (judgments.min_pairs)"),
        ("rows not judged", ", ".join(f"{n:,} {reason.replace('_', ' ')}"
                                      for reason, n in not_judged.items()) or "none"),
        ("anonymous grades", f"{summary['anonymous_grades']:,} (no rater: not paired)"),
    ]
