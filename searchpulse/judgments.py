"""``searchpulse judgments``: import the judges' files into one judgment set, and their agreement.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from collector.errors import JudgmentsError
from searchpulse import arguments as kind
from searchpulse.options import (
    EXIT_INPUT,
    EXIT_OK,
    add_common,
    add_progress,
    add_topic_files,
    log,
    print_summary,
    read_settings,
    show_progress,
)


def judgments_request(args: argparse.Namespace, files: Sequence[str] | None = None) -> Any:
    from feedback.judging.job import JudgmentsRequest

    return JudgmentsRequest(files=args.files if files is None else files, topics=args.topics,
                            topic_applications=args.topic_applications, rater=args.rater,
                            application=args.application)


def cmd_judgments_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback.judging.job import dump, run_import

    config = read_settings(args)
    try:
        summary = run_import(config, judgments_request(args), Path(args.out),
                             show_progress(args))
    except JudgmentsError as exc:
        log.error("%s", exc)
        return EXIT_INPUT
    if args.json:
        print(dump(summary))
    else:
        print_summary(summary)
    if summary.get("refused"):  # bad input, kept in rejected.csv: not a success
        log.error("%s (the rows are in %s)", summary["refused"], summary["rejected_rows_in"])
        return EXIT_INPUT
    return EXIT_OK


def cmd_judgments_agreement(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback.judging.job import AgreementOutputs, dump, run_agreement, text_table

    config = read_settings(args)
    outputs = AgreementOutputs(Path(args.html) if args.html else None,
                               Path(args.disputed) if args.disputed else None, args.top)
    try:
        result = run_agreement(config, judgments_request(args), args.strata,
                               args.automatic or [], outputs, show_progress(args))
    except JudgmentsError as exc:
        log.error("%s", exc)
        return EXIT_INPUT
    print(dump(result) if args.json else text_table(result))
    return EXIT_OK


def _judgment_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="Quepid book export (.json) or ratings CSV, SRW judgments, TREC "
                             "qrels, judgments.csv")
    add_topic_files(parser)
    parser.add_argument("--rater", help="rater of files that name none (CSV, qrels, SRW); "
                                        "default: the file's name")
    parser.add_argument("--application",
                        help="application of rows whose file names none (default: the one a "
                             "searchpulse book names, else every application)")


def add_commands(sub: argparse._SubParsersAction) -> None:
    """The judges' grades back in (judgments import) and their agreement (judgments
    agreement)."""
    p = sub.add_parser(
        "judgments", help="bring the judges' grades back; measure whether the judges agree",
        description="One judgment set from what the judges' tools return: Quepid book exports "
                    "(a grade per rater)\nand ratings CSVs, TREC qrels, SRW judgments, "
                    "judgments.csv. Unrated rows, unrateable\nand judge-later judgements and "
                    "negative grades (-1) are not judged, counted by reason.")
    judgments_sub = p.add_subparsers(dest="judgments_command", metavar="ACTION", required=True)
    j = judgments_sub.add_parser(
        "import", help="merge judgment files into judgments.csv and each tool's format",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read the files into one judgment set; write --out/judgments.csv (one row "
                    "per rater's grade)\nand the final grades (Quepid's rule: fewer than 3 "
                    "grades: their mean; else the top 3:\ntheir value if equal, else the "
                    "lowest; rounded half up) as quepid/APP.ratings.csv,\n"
                    "trec/qrels.txt (+ topics.tsv, topic-applications.tsv) and "
                    "srw/APP.judgments.json.",
        epilog="Exit codes: 0 ok, 2 configuration error, 3 a file unreadable or malformed, or a "
               "grade above judgments.max_grade\n(the other rows are written; those in "
               "--out/rejected.csv).")
    _judgment_files(j)
    j.add_argument("--out", required=True, metavar="DIR", type=kind.output_directory,
                   help="directory for the files")
    j.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_progress(j)
    add_common(j)
    j.set_defaults(func=cmd_judgments_import)
    j = judgments_sub.add_parser(
        "agreement", help="inter-rater agreement and an automatic judge's calibration",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Per pair of raters, over all raters and per stratum: Krippendorff's alpha "
                    "(ordinal),\nquadratic weighted Cohen's kappa, exact and within-one "
                    "shares, mean signed difference,\nconfusion matrix. Nothing below "
                    "judgments.min_pairs compared pairs (default 30).\nAn automatic rater "
                    "(--automatic) is compared with the humans' final grade.",
        epilog="Exit codes: 0 ok, 2 configuration error, 3 a file unreadable or malformed.")
    _judgment_files(j)
    j.add_argument("--strata", metavar="FILE",
                   help="query,stratum CSV (the feedback job's strata.csv; default strata.file)")
    j.add_argument("--automatic", action="append", metavar="RATER",
                   help="a rater that is an automatic judge (judgments.automatic_raters); "
                        "repeatable")
    j.add_argument("--html", metavar="FILE", type=kind.output_file,
                   help="also write an HTML page: pairwise alpha as a heat map in Krippendorff's "
                        "reading bands, confusion matrices, the automatic judge's bias, the "
                        "most disputed pairs, every statistic")
    j.add_argument("--disputed", metavar="CSV", type=kind.output_file,
                   help="write every query-document pair the human raters graded differently, "
                        "most disputed first, a column per rater (for the rubric meeting)")
    j.add_argument("--top", type=kind.positive_int, default=20, metavar="N",
                   help="disputed pairs shown on the page (default 20; the CSV has all)")
    j.add_argument("--json", action="store_true", help="print the result as JSON")
    add_progress(j)
    add_common(j)
    j.set_defaults(func=cmd_judgments_agreement)
