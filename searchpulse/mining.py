"""Mining the per-query store: failing queries (``feedback``), the click model (``clicks``).
"""

from __future__ import annotations

import argparse
import sys

from collector.config import Config
from collector.errors import ClicksError, ConfigError, FeedbackError, JudgmentsError, StoreError
from searchpulse import arguments as kind
from searchpulse.options import (
    EXIT_INPUT,
    EXIT_OK,
    add_common,
    add_progress,
    add_store,
    add_topic_files,
    log,
    print_result,
    read_settings,
    show_progress,
)


def _store_settings(args: argparse.Namespace, job: str) -> Config:
    """The settings of a job that reads the per-query store, which it cannot do without."""
    config = read_settings(args, **{"store.url": args.store,
                                    "store.allow_incomplete": args.allow_incomplete})
    if not config["store.url"]:
        raise ConfigError(f"store.url: {job} needs a store (--store URL)")
    return config


def cmd_feedback(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback.candidates.job import FeedbackRequest, run_feedback

    config = _store_settings(args, "the feedback job")
    request = FeedbackRequest(
        store=config["store.url"], out=Path(args.out), since=args.since,
        judgments=args.judgments or [], topics=args.topics,
        topic_applications=args.topic_applications, runs=args.run or [],
        seed=args.seed, examination=args.examination,
        progress=show_progress(args))
    try:
        summary = run_feedback(config, request)
    except (FeedbackError, JudgmentsError, StoreError) as exc:
        log.error("%s", exc)
        return EXIT_INPUT
    print_result(summary, args.json)
    if not args.json:
        print(f"{'written to':<28} {args.out}")
    return EXIT_OK


def cmd_clicks(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback.clicks.job import ClicksRequest, run_clicks

    config = _store_settings(args, "the click model")
    request = ClicksRequest(
        store=config["store.url"], out=Path(args.out), since=args.since,
        warm_start=Path(args.warm_start) if args.warm_start else None,
        progress=show_progress(args))
    try:
        summary = run_clicks(config, request)
    except (ClicksError, StoreError) as exc:
        log.error("%s", exc)
        return EXIT_INPUT
    print_result(summary, args.json)
    print(f"{'written to':<28} {args.out}", file=sys.stderr if args.json else sys.stdout)
    return EXIT_OK


def _allow_incomplete(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-incomplete", action="store_true", default=None,
                        help="use a store that an interrupted `replay` left (part of an input "
                             "counted; refused otherwise, exit 3) as it is "
                             "(store.allow_incomplete)")


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Mining the per-query store: failing queries (feedback), the click model (clicks)."""
    p = sub.add_parser(
        "feedback", help="mine failing queries into candidates for the next judgment set",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read the per-query aggregates of a period from the store; score each\n"
                    "query (zero-result, reformulation, abandonment and no-click rates with\n"
                    "Wilson lower bounds; impact = searches × failure); split them into\n"
                    "strata; drop queries holding personal data and queries already judged;\n"
                    "select per-stratum quotas of failing queries plus a calibration sample;\n"
                    "pool the documents to judge; write the files for the judges.",
        epilog="Writes to --out: candidates.csv, pool.csv, strata.csv, report.html,\n"
               "quepid/APP.book.json,\n"
               "trec/pool.txt, trec/topics.tsv, trec/topic-applications.tsv,\n"
               "srw/APP.query-set.json (docs/judgments.md).\n"
               "Quotas, thresholds and depths: the feedback.* settings "
               "(searchpulse --help).\nExit codes: 0 ok, 2 configuration error, 3 store, "
               "judgments or runs unusable, no data\nin the period, or a store an "
               "interrupted replay left (without --allow-incomplete).")
    p.add_argument("--since", default="90d", type=kind.period,
                   help="period: days back from the newest day in the store (90d) or a date "
                        "(2026-09-01); default 90d")
    p.add_argument("--judgments", action="append", metavar="FILE",
                   help="current judgment set, its judged queries are excluded: judgments.csv, "
                        "a Quepid book export or ratings CSV, SRW judgments, TREC qrels (with "
                        "--topics); unrated rows and -1 are not judged; repeatable")
    add_topic_files(p)
    p.add_argument("--run", action="append", metavar="FILE",
                   help="TREC run of a candidate ranker; its top documents join the pool; "
                        "repeatable")
    p.add_argument("--examination", metavar="FILE",
                   help="examination curves of `searchpulse clicks`: pool documents ranked by "
                        "debiased relevance, position-biased ones flagged in pool.csv "
                        "(default clicks.examination_file)")
    p.add_argument("--out", required=True, metavar="DIR", type=kind.output_directory,
                   help="directory for the files")
    p.add_argument("--seed", type=kind.count, default=1,
                   help="seed of the calibration sample (same seed, same output; >= 0)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_progress(p)
    add_store(p, "the per-query aggregates to mine (read only):")
    _allow_incomplete(p)
    add_common(p)
    p.set_defaults(func=cmd_feedback)

    p = sub.add_parser(
        "clicks", help="fit the position-based click model: examination curve, implicit "
                       "judgments",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read impressions and clicks per (query, document, position) of a period\n"
                    "from the store and fit the position-based model P(click) = θ_k · γ_qd\n"
                    "by EM, warm-started from the previous curve: θ per application is how\n"
                    "often each position is looked at (θ_1 = 1), γ how attractive a document\n"
                    "is for a query once looked at (docs/click-model.md).",
        epilog="Writes to --out: examination.json (read by collect --examination and by\n"
               "feedback --examination), implicit-judgments.csv (PBM relevance beside SRW's\n"
               "COEC), srw/APP.implicit-judgments.json (SRW's judgment import).\n"
               "Settings: clicks.* (searchpulse --help).\n"
               "Exit codes: 0 ok, 2 configuration error, 3 store unusable or no positions\n"
               "(also: a store an interrupted replay left, without --allow-incomplete).")
    p.add_argument("--since", default="30d", type=kind.period,
                   help="period: days back from the newest day in the store or a date; "
                        "default 30d")
    p.add_argument("--out", required=True, metavar="DIR", type=kind.output_directory,
                   help="directory for the files")
    p.add_argument("--warm-start", metavar="FILE",
                   help="start EM from this examination.json (default: the one in --out)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_progress(p)
    add_store(p, "the per-query aggregates to fit on (read only):")
    _allow_incomplete(p)
    add_common(p)
    p.set_defaults(func=cmd_clicks)
