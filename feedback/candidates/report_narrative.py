"""The opening of ``report.html`` in sentences a relevance team reads — the period, how many
queries were read, what was selected per stratum and why, what was withheld and what to do
about it — and the job's summary as worded facts (no Python reprs: a count per reason reads
"865 typed by fewer distinct clients", a list of forty topics shows a few and says how many)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import pandas as pd

from collector.series.quality import STRATA

STALE_AFTER_DAYS = 2  # the period's end lags the calendar by more: say so (log and report)
LISTED = 5  # items of a long list shown before "and N more"
LIST_ITEMS = {"topics_without_documents": "topics", "examination_curves": "applications"}

# What a withheld query's reason means, and what to do about it.
WITHHELD = {
    "fewer_distinct_clients": (
        "typed by fewer distinct clients than feedback.min_distinct_clients",
        "they come back once enough people type them; lowering the setting weakens the "
        "k-anonymity the files promise, a decision for whoever owns the privacy policy"),
    "spreadsheet_formula": (
        "starting like a spreadsheet formula (= or +)",
        "nothing: a judge's spreadsheet would run them"),
    "too_long": ("too long to be a query", "nothing: such text is pasted, not searched"),
    "custom_pattern": ("matching a personal-data pattern of privacy.patterns",
                       "check the pattern if real queries are caught"),
}
PERSONAL = ("holding personal data", "nothing: they never leave the system; if many, look at "
            "the search box (people pasting addresses or numbers)")


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def listed(items: Sequence[Any], what: str) -> str:
    """``"3 topics: a, b, c"`` or ``"40 topics: a, b, c, d, e and 35 more"``; ``"none"``."""
    if not items:
        return "none"
    shown = ", ".join(str(i) for i in items[:LISTED])
    more = f" and {len(items) - LISTED:,} more" if len(items) > LISTED else ""
    return f"{len(items):,} {what}: {shown}{more}"


def counts(by_reason: Mapping[str, Any]) -> str:
    """``{"fewer_distinct_clients": 865}`` → ``"865 fewer distinct clients"``; nested counts
    (stratum → kind → n) as ``"tail: 5 calibration"``."""
    if not by_reason:
        return "none"
    parts = []
    for reason, value in by_reason.items():
        name = str(reason).replace("_", " ")
        parts.append(f"{name}: {counts(value)}" if isinstance(value, Mapping)
                     else f"{value:,} {name}")
    return ", ".join(parts)


def worded_facts(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every summary entry as (label, text)."""
    out = []
    for key, value in summary.items():
        label = key.replace("_", " ")
        if isinstance(value, Mapping):
            text = counts(value)
        elif isinstance(value, (list, tuple)):
            text = listed(value, LIST_ITEMS.get(key, "items"))
        elif isinstance(value, bool):
            text = "yes" if value else "no"
        elif isinstance(value, int):
            text = f"{value:,}"
        else:
            text = str(value)
        out.append((label, text))
    return out


def _selected(chosen: pd.DataFrame) -> str:
    if chosen.empty:
        return "No query was selected for judging."
    counts_by = chosen.groupby(["stratum", "selected_as"]).size()
    parts = []
    for stratum in (*STRATA, *sorted(set(chosen["stratum"]) - set(STRATA))):
        if stratum not in counts_by.index.get_level_values(0):
            continue
        kinds = counts_by[stratum]
        ordered = sorted(kinds.items(), key=lambda item: (item[0] == "calibration", item[0]))
        described = ", ".join(f"{n:,} {kind}" for kind, n in ordered)
        parts.append(f"{stratum.replace('_', '-')} {sum(kinds):,} ({described})")
    return (f"{_count(len(chosen), 'query', 'queries')} go to the judges: "
            + "; ".join(parts) + ".")


def narrative(summary: Mapping[str, Any], chosen: pd.DataFrame) -> str:
    """The report's opening paragraphs (HTML)."""
    paragraphs = []
    start, _, end = str(summary["period"]).partition(" to ")
    age = summary.get("days_since_newest_data", 0)
    stale = (f" The newest data is {_count(age, 'day')} old: is the collector still writing "
             "to this store?" if age > STALE_AFTER_DAYS else "")
    paragraphs.append(
        f"From {start} to {end}, {summary['searches']:,} searches. "
        f"{_count(summary['queries_considered'], 'query', 'queries')} were read (those searched "
        f"at least feedback.min_searches times); "
        f"{_count(summary['failing_queries'], 'fails for its users', 'fail for their users')}"
        " by the Wilson "
        f"lower bound of its zero-result, reformulation, abandonment or no-click rate "
        f"(feedback.failure_threshold above its application's rate); "
        f"{_count(summary['excluded_already_judged'], 'was', 'were')} already judged and left "
        f"out.{stale}")
    judged = summary.get("judged_candidates") or {}
    mined = (f" Of the judged queries, {counts(judged)}: the judgment set should hear about "
             "them again." if judged else "")
    shortfall = summary.get("shortfall") or {}
    short = (f" Quotas not filled (not enough queries qualified): {counts(shortfall)}."
             if shortfall else "")
    calibration = _count(summary.get("calibration_candidates", 0), "calibration query",
                         "calibration queries")
    topics = listed(summary.get("topics_without_documents") or [], "topics")
    paragraphs.append(
        f"{_selected(chosen)} In each stratum the failing queries of highest impact "
        "(searches × failure) are chosen, near-duplicates of one already chosen collapsed "
        f"({summary.get('collapsed_near_duplicates', 0):,}), plus {calibration} drawn at "
        f"random by traffic, so the judges also grade queries that work.{mined}{short} "
        f"{summary.get('pooled_documents', 0):,} documents were pooled for them; topics "
        f"without any: {topics}.")
    withheld = summary.get("withheld_by_reason") or {}
    if withheld:
        sentences = [f"{_count(n, 'query', 'queries')} {WITHHELD[reason][0]} — "
                     f"{WITHHELD[reason][1]}"
                     for reason, n in sorted(withheld.items(), key=lambda item: -item[1])
                     if reason in WITHHELD]
        personal = {r: n for r, n in sorted(withheld.items()) if r not in WITHHELD}
        if personal:  # the personal-data detectors' reasons, one sentence
            sentences.append(f"{_count(sum(personal.values()), 'query', 'queries')} "
                             f"{PERSONAL[0]} ({counts(personal)}) — {PERSONAL[1]}")
        paragraphs.append("Withheld from every file and from this page: "
                          + "; ".join(sentences) + ".")
    else:
        paragraphs.append("No query was withheld.")
    return '<div class="narrative">' + "".join(f"<p>{escape(p)}</p>" for p in paragraphs) + \
        "</div>"
