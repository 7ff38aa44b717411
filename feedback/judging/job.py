"""``searchpulse judgments``: bring what the judges returned back into one judgment set
(``import``), and measure whether they agree (``agreement``)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from collector.config import Config
from collector.control_characters import json_text, visible
from collector.errors import JudgmentsError, StrataError
from collector.judgments.judgment_set import JudgmentSet, round_half_up
from collector.judgments.readers import (
    REJECTED_COLUMNS,
    Reading,
    Sources,
    read_judgments,
    read_topic_applications,
    read_topics,
)
from collector.output_files import writing
from collector.progress import Steps
from collector.series.quality import STRATA
from collector.series.strata import StrataClassifier, load_strata_csv
from feedback.candidates import handoff
from feedback.judging import agreement_report
from feedback.judging.agreement import agreement, pairwise_alpha
from feedback.judging.disputes import disputed
from feedback.judging.disputes import write_csv as write_disputed

UNCLASSIFIED = "unclassified"


@dataclass
class JudgmentsRequest:
    files: Sequence[str]
    topics: str | None = None
    topic_applications: str | None = None
    rater: str | None = None
    application: str | None = None


def sources_of(request: JudgmentsRequest) -> Sources:
    """The topic files read once, with the rater and application flags."""
    return Sources(
        topics=read_topics(request.topics) if request.topics else None,
        topic_applications=(read_topic_applications(request.topic_applications)
                            if request.topic_applications else {}),
        rater=request.rater, application=request.application)


def read(config: Config, request: JudgmentsRequest, sources: Sources | None = None) -> Reading:
    """The judgments to measure or score with; grades above the scale refuse them (exit 3):
    measured on the wrong scale, every gain would be misread."""
    reading = read_all(config, request, sources)
    refusal = reading.refusal()
    if refusal is not None:
        raise JudgmentsError(refusal)
    return reading


def read_all(config: Config, request: JudgmentsRequest,
             sources: Sources | None = None) -> Reading:
    """Every file of the request, its rejected rows kept in the reading."""
    return read_judgments(request.files, sources or sources_of(request),
                          config["judgments.max_grade"])


REJECTED_FILE = "rejected.csv"


def write_rejected(path: Path, reading: Reading) -> None:
    """The rows refused as bad input, as read (control characters as ``\\xNN``), so that the
    judges' file can be fixed and imported again."""
    with writing(str(path), "--out", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(REJECTED_COLUMNS)
        out.writerows([visible(str(cell)) for cell in row] for row in reading.rejected_rows)


def _topic_ids(final: pd.DataFrame, sources: Sources) -> dict[tuple[str, str], str]:
    """TREC topic ids: the ones the inputs used where known, else ``j-0001``… in order."""
    ids: dict[tuple[str, str], str] = {}
    for topic, query in (sources.topics or {}).items():
        ids.setdefault((sources.topic_applications.get(topic, ""), query), topic)
    taken = set(ids.values())
    number = 0
    for key in sorted(set(zip(final["application"], final["query"], strict=True))):
        if key in ids:
            continue
        number += 1
        while f"j-{number:04d}" in taken:
            number += 1
        ids[key] = f"j-{number:04d}"
    present = set(zip(final["application"], final["query"], strict=True))
    return {key: topic for key, topic in ids.items() if key in present}


def run_import(config: Config, request: JudgmentsRequest, out: Path,
               progress: bool = False) -> dict[str, Any]:
    """Read every file into one set; write ``judgments.csv`` and the final grades for each
    tool; the rows refused as bad input (``rejected``: a grade above the scale) are kept in
    ``rejected.csv``, and the summary's ``refused`` line makes the command exit 3. Returns the
    summary. ``progress``: a bar of the steps on stderr."""
    with Steps("judgments import", ["reading", "final grades", "writing"], progress) as steps:
        steps.begin(f"reading {len(request.files)} files")
        sources = sources_of(request)
        reading = read_all(config, request, sources)
        judgments = reading.judgment_set()
        out.mkdir(parents=True, exist_ok=True)
        judgments.write(out / "judgments.csv")
        steps.begin("final grades")
        final = judgments.final()
        steps.begin("writing")
        directories = handoff.prepare(out)
        written = handoff.write_ratings(directories, final, _topic_ids(final, sources),
                                        "imported judgments")
        if reading.rejected_rows:
            write_rejected(out / REJECTED_FILE, reading)
    return {
        "files": len(request.files),
        "grades": len(judgments),
        "raters": judgments.raters,
        "anonymous_grades": int((judgments.grades["rater"] == "").sum()),
        "judged_documents": len(final),
        "judged_queries": len(judgments.judged_queries()),
        "not_judged": dict(sorted(reading.not_judged.items())),
        "duplicate_grades": reading.duplicates(),
        "final_grades": {str(g): int(n) for g, n in
                         final["grade"].value_counts().sort_index().items()},
        "quepid_rows_refused": written["quepid_refused"],
        "rejected": dict(sorted(reading.rejected.items())),
        **({"rejected_rows_in": str(out / REJECTED_FILE), "refused": reading.refusal()}
           if reading.rejected_rows else {}),
        "written_to": str(out),
    }


def query_strata(config: Config, queries: pd.Index, strata_file: str | None) -> pd.Series:
    """Stratum name per query: known-item by the collector's patterns, head/torso by the
    strata file (the feedback job's ``strata.csv`` or ``strata.file``), other listed-file
    queries tail; without a strata file, "unclassified"."""
    classifier = StrataClassifier.from_config(config)
    if strata_file:
        try:  # the command's input file (not strata.file, a setting): unusable is exit 3
            classifier.table = load_strata_csv(strata_file)
        except StrataError as error:
            raise JudgmentsError(str(error)) from None
        except OSError as error:
            raise JudgmentsError(f"{strata_file}: {error.strerror}") from None
    codes = [classifier.text(q).fixed_stratum for q in queries]
    return pd.Series([STRATA[c] if c >= 0 else UNCLASSIFIED for c in codes], index=queries,
                     dtype=object)


def measure(config: Config, judgments: JudgmentSet, strata_file: str | None,
            automatic: Sequence[str]) -> agreement_report.Panel:
    """Agreement rows, pairwise alpha, the disputed items, and how many anonymous grades could
    not be paired."""
    grades = judgments.grades.copy()
    grades["grade"] = grades["grade"].map(round_half_up)
    strata = query_strata(config, pd.Index(grades["query"].unique()), strata_file)
    scale, min_pairs = config["judgments.max_grade"], config["judgments.min_pairs"]
    automatic_raters = frozenset(automatic or config["judgments.automatic_raters"])
    rows = agreement(grades, strata, scale, min_pairs, automatic_raters)
    raters, pairwise = pairwise_alpha(grades, scale, min_pairs)
    return agreement_report.Panel(rows, int((grades["rater"] == "").sum()), raters, pairwise,
                                  disputed(grades, automatic_raters), scale)


@dataclass
class AgreementOutputs:
    """Where ``judgments agreement`` writes besides its printed result."""

    html: Path | None = None
    disputed_csv: Path | None = None
    shown: int = agreement_report.DISPUTED_SHOWN  # disputed pairs on the page


def run_agreement(config: Config, request: JudgmentsRequest, strata_file: str | None,
                  automatic: Sequence[str], outputs: AgreementOutputs,
                  progress: bool = False) -> dict[str, Any]:
    """The agreement result; the page and the disputed pairs' CSV when ``outputs`` asks.
    ``progress``: a bar of the steps on stderr."""
    with Steps("judgments agreement", ["reading", "measuring", "writing"], progress) as steps:
        steps.begin(f"reading {len(request.files)} files")
        reading = read(config, request)
        judgments = reading.judgment_set()
        steps.begin("measuring")
        panel = measure(config, judgments, strata_file, automatic)
        steps.begin("writing")
        return _agreement_result(config, reading, judgments, panel, automatic, outputs)


def _agreement_result(config: Config, reading: Reading, judgments: JudgmentSet,
                      panel: agreement_report.Panel, automatic: Sequence[str],
                      outputs: AgreementOutputs) -> dict[str, Any]:
    summary = {"grades": len(judgments), "raters": judgments.raters,
               "automatic_raters": sorted(automatic or config["judgments.automatic_raters"]),
               "min_pairs": config["judgments.min_pairs"],
               "scale": f"0..{config['judgments.max_grade']}",
               "not_judged": dict(sorted(reading.not_judged.items())),
               "duplicate_grades": reading.duplicates(),
               "anonymous_grades": panel.not_paired,
               "disputed_pairs": len(panel.disputed)}
    if outputs.html is not None:
        with writing(str(outputs.html), "--html") as handle:
            handle.write(agreement_report.page(agreement_report.worded(summary), panel,
                                               outputs.shown))
    if outputs.disputed_csv is not None:
        write_disputed(outputs.disputed_csv, panel.disputed)
    return {**summary, "agreement": [{**row.as_dict(), "reading": agreement_report.band(
                row.alpha)} for row in panel.rows],
            "pairwise_alpha": {"raters": panel.raters, "alpha": panel.pairwise}}


def text_table(result: dict[str, Any]) -> str:
    """The agreement rows as a fixed-width table for a terminal."""
    lines = [f"{'stratum':<13} {'reference':<22} {'judge':<22} {'pairs':>6} {'alpha':>6} "
             f"{'reading':<12} {'kappa':>6} {'exact':>6} {'±1':>6} {'diff':>6}  note"]

    def number(value: float | None) -> str:
        return f"{value:6.3f}" if value is not None else f"{'—':>6}"

    for row in result["agreement"]:
        lines.append(
            f"{row['stratum']:<13} {row['reference']:<22} {row.get('judge') or '(all)':<22} "
            f"{row['pairs']:>6} {number(row.get('alpha'))} {row['reading']:<12} "
            f"{number(row.get('kappa'))} "
            f"{number(row.get('exact'))} {number(row.get('within_one'))} "
            f"{number(row.get('mean_difference'))}  {row.get('note', '')}")
    return "\n".join(lines)


def dump(result: dict[str, Any]) -> str:
    return json_text(result)
