"""The offline gate: rankings scored against the judgment set (``evaluate``).
"""

from __future__ import annotations

import argparse
import json

from collector.errors import JudgmentsError
from searchpulse import arguments as kind
from searchpulse.judgments import judgments_request
from searchpulse.options import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_REGRESSION,
    add_common,
    add_progress,
    add_topic_files,
    log,
    read_settings,
    show_progress,
)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback.evaluate import text as evaluate_text
    from feedback.evaluate.job import (
        EvaluateOutputs,
        EvaluateRequest,
        labels,
        run_evaluate,
        write,
    )
    from feedback.evaluate.scoring import as_json

    config = read_settings(args, **{"evaluate.depth": args.k, "evaluate.margin": args.margin,
                                    "evaluate.measures": args.measure, "evaluate.gate": args.gate})
    request = EvaluateRequest(judgments_request(args, args.judgments), args.run, args.strata,
                              args.top, gate_files=bool(args.junit or args.summary),
                              progress=show_progress(args), ranked_only=args.ranked_only)
    try:
        result = run_evaluate(config, request)
    except JudgmentsError as exc:
        log.error("%s", exc)
        return EXIT_INPUT
    names = labels(args.run)
    write(result, names, EvaluateOutputs(*(Path(p) if p else None for p in (
        args.html, args.junit, args.summary))), args.top)
    if args.json:  # a comparison lists every changed ranking: one line, not indented
        print(json.dumps(as_json(result), indent=None if "comparison" in result else 2,
                         ensure_ascii=False))
    else:
        for name, run in zip(names, result["runs"], strict=True):
            print(evaluate_text.run_line(name, run, result["ranked_only"]))
            print(evaluate_text.summary_text(run["summary"], result["measures"],
                                             result["notes"]))
        if "comparison" in result:
            print()
            print(evaluate_text.comparison_text(result["comparison"], names,
                                                config["evaluate.depth"], args.top))
    if result.get("regression"):
        failed = result["comparison"].verdicts
        failed = failed[failed["regression"]]
        log.error("gate failed: %s", "; ".join(
            f"{v.measure} {v.slice} Δ {v.delta:+.4f}" for v in failed.itertuples()))
        return EXIT_REGRESSION
    return EXIT_OK


def add_commands(sub: argparse._SubParsersAction) -> None:
    """The offline gate: rankings scored against the judgment set (evaluate)."""
    p = sub.add_parser(
        "evaluate", help="score rankings against the judgment set; gate on a regression",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Score one ranking (a TREC run, or a UBI log: the rankings production "
                    "showed, one per search)\nagainst the judgment set: by default NDCG@k "
                    "(gain 2^g-1, ideal from all judged documents), ERR@k,\nAP, P@k, R@k, "
                    "reciprocal rank, judged@k, or the --measure list; overall, per stratum\n"
                    "and per application. TREC qrels and runs need no --topics (topic ids "
                    "match).\nWith two rankings (--run A --run B): paired differences with "
                    "95 % intervals, wins/losses/ties,\na randomization test, the queries "
                    "that got worse and better, and the gate: exit 4 when a\nrule's measure "
                    "drops by more than its margin with p below its significance\n(default: "
                    "the first measure, all and every stratum, evaluate.margin and "
                    "evaluate.significance).",
        epilog="Exit codes: 0 ok (no regression), 2 configuration error, 3 a file unreadable "
               "or malformed,\n4 the gate failed. Definitions: docs/evaluate.md.")
    p.add_argument("--judgments", action="append", required=True, metavar="FILE",
                   help="the judgment set (judgments.csv, a Quepid book export or CSV, SRW "
                        "judgments, TREC qrels: their topic ids match a TREC run's, --topics "
                        "maps them to query text); repeatable")
    p.add_argument("--run", action="append", required=True, metavar="FILE",
                   help="a TREC run, a UBI log, or a per-query store (sqlite:///PATH, "
                        "postgresql://…: per query the ranking it showed most); give two to "
                        "compare (A, then B)")
    add_topic_files(p)
    p.add_argument("--rater", help="rater of judgment files that name none")
    p.add_argument("--application", help="application of judgment rows whose file names none")
    p.add_argument("--strata", metavar="FILE",
                   help="query,stratum CSV (the feedback job's strata.csv; default strata.file)")
    p.add_argument("--k", type=kind.positive_int, metavar="K",
                   help="cut-off of the default measures, and the depth at which documents "
                        "entering or leaving a ranking are listed (evaluate.depth, default 10)")
    p.add_argument("--measure", action="append", metavar="MEASURE",
                   help="a measure as ir_measures names it (nDCG@10, R@100, P(rel=2)@5, "
                        "ERR@10, AP, RR); repeatable; replaces the default set "
                        "(evaluate.measures)")
    p.add_argument("--gate", action="append", metavar="RULE",
                   help="'MEASURE [margin=X] [significance=P] [slices=all|stratum|...]'; "
                        "repeatable; replaces evaluate.gate (default: the first measure, all "
                        "and every stratum)")
    p.add_argument("--margin", type=float,
                   help="largest tolerated drop of a rule without margin= (evaluate.margin, "
                        "default 0.01)")
    p.add_argument("--ranked-only", action="store_true",
                   help="average over the topics a TREC run ranks only; by default a judged "
                        "topic the run has no ranking for counts as 0 on every measure, as "
                        "trec_eval -c and ir_measures.calc_aggregate count it (the gate "
                        "alike)")
    p.add_argument("--top", type=kind.count, default=10, metavar="N",
                   help="queries listed as worse and as better per gated slice (default 10; "
                        "--json lists every changed ranking)")
    p.add_argument("--html", metavar="FILE", type=kind.output_file,
                   help="also write an HTML page")
    p.add_argument("--junit", metavar="FILE", type=kind.output_file,
                   help="JUnit XML for CI: a test case per gated measure and slice")
    p.add_argument("--summary", metavar="FILE", type=kind.output_file,
                   help="append the verdict as Markdown (e.g. \"$GITHUB_STEP_SUMMARY\")")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_progress(p)
    add_common(p)
    p.set_defaults(func=cmd_evaluate, files=[])
