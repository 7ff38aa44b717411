"""``searchpulse``: one command, a subcommand per job. Wiring only: the work lives elsewhere.

Exit codes: 0 success · 1 unexpected failure · 2 usage or configuration error · 3 input
unreadable · 4 evaluate's gate: a significant regression · 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from collector import __version__, redaction
from collector import arguments as kind
from collector.config import Setting, describe, load_config
from collector.errors import (
    ClicksError,
    ConfigError,
    FeedbackError,
    JudgmentsError,
    StoreError,
    StrataError,
)

# 1 is Python's own, for an unexpected failure (with its traceback).
EXIT_OK, EXIT_USAGE, EXIT_INPUT, EXIT_REGRESSION, EXIT_INTERRUPTED = 0, 2, 3, 4, 130
log = logging.getLogger("searchpulse")


def _settings(args: argparse.Namespace, extra: tuple[Setting, ...] = (), strict: bool = False,
              **flags: Any) -> Any:
    """The settings of a subcommand: defaults < --config < SEARCHPULSE_* < flags and --set;
    ``extra``: settings of other programs' sections the subcommand also reads (alerts.*).
    A SEARCHPULSE_* variable that names no setting is a warning (one environment may serve
    collectors of two versions during a rollout), an error when ``strict`` (config check)."""
    overrides = dict(flags)
    for item in args.set or ():
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE")
        overrides[key.strip()] = value
    config = load_config(args.config or os.environ.get("SEARCHPULSE_CONFIG"), overrides,
                         extra=extra)
    if strict and config.unknown_environment:
        raise ConfigError("; ".join(config.unknown_environment))
    for message in config.unknown_environment:
        log.warning("%s (ignored)", message)
    return config


def cmd_replay(args: argparse.Namespace) -> int:
    from collector.replay import replay

    config = _settings(args, **{"strata.file": args.strata_file, "store.url": args.store,
                                "judgments.file": args.judgments,
                                "clicks.examination_file": args.examination})
    for path in args.files:
        problem = kind.unreadable(path)
        if problem:
            log.error("input %s: %s", path, problem)
            return EXIT_INPUT
    progress = args.progress if args.progress is not None else sys.stderr.isatty()
    started = time.perf_counter()
    summary = replay(args.files, config, dlq=args.dlq, metrics_out=args.metrics_out,
                     progress=progress)
    elapsed = time.perf_counter() - started
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_summary(summary)
    log.info("replayed %d records in %.2f s (%.0f records/s)", summary["records"], elapsed,
             summary["records"] / elapsed if elapsed else 0.0)
    if "input_error" in summary:  # what was read before it is counted above and kept
        log.error("%s", summary["input_error"])
        return EXIT_INPUT
    return EXIT_OK


def _print_summary(summary: dict[str, Any]) -> None:
    for key, value in summary.items():
        if key == "by_application":
            continue
        if isinstance(value, float):
            value = f"{value:.4f}"
        print(f"{key:<28} {'no data' if value is None else value}")


def _spec(args: argparse.Namespace) -> Any:
    from collector.sources.simulator import Incident, SimulationSpec, parse_duration, parse_lull

    try:
        spec = SimulationSpec(seed=args.seed, sessions=args.sessions,
                              sessions_per_second=args.sessions_per_second,
                              invalid_rate=args.invalid_rate,
                              incidents=[Incident.parse(text) for text in args.incident or ()],
                              interleaving_preference=args.interleaving, users=args.users,
                              user_activity_sigma=args.user_activity_sigma,
                              user_click_sigma=args.user_click_sigma,
                              treatment_click_effect=args.treatment_click_effect,
                              diurnal=args.diurnal,
                              lulls=[parse_lull(text) for text in args.lull or ()])
        if args.start == "now":
            spec.start = time.time()
        elif args.start:
            spec.start = time.time() - parse_duration(args.start.removeprefix("-"))
        if getattr(args, "duration", None):
            parse_duration(args.duration)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return spec


def cmd_simulate(args: argparse.Namespace) -> int:
    from collector.sources.simulator import Simulator

    simulator = Simulator(_spec(args))
    if args.kafka:
        from collector.sources.kafka.producer import produce

        if args.pace:
            simulator.spec.start = time.time()
        records = simulator.paced(args.pace) if args.pace else simulator.records()
        produce(records, args.kafka, args.topic or "ubi", args.security_config, _settings(args))
    else:
        out = sys.stdout.buffer if args.out == "-" else open(args.out, "wb")
        try:
            for line in simulator.records():
                out.write(line)
        finally:
            if out is not sys.stdout.buffer:
                out.close()
    if args.strata_out:
        with open(args.strata_out, "w", encoding="utf-8") as handle:
            handle.write(simulator.strata_csv())
    if args.judgments_out:
        with open(args.judgments_out, "w", encoding="utf-8") as handle:
            handle.write(simulator.judgments_csv())
    truth = json.dumps(simulator.truth.summary(), indent=2) + "\n"
    if args.truth:
        with open(args.truth, "w", encoding="utf-8") as handle:
            handle.write(truth)
    else:
        (sys.stderr if args.out == "-" else sys.stdout).write(truth)
    return EXIT_OK


def cmd_collect(args: argparse.Namespace) -> int:
    from collector.sources.kafka.run import run_collector

    config = _settings(args, **{
        "kafka.bootstrap_servers": args.bootstrap_servers,
        "kafka.topics": ",".join(args.topic) if args.topic else None,
        "kafka.group_id": args.group_id, "kafka.instance_id": args.instance_id,
        "http.port": args.metrics_port, "ordering.idle_s": args.idle,
        "store.url": args.store, "judgments.file": args.judgments,
        "clicks.examination_file": args.examination, **_web(args)})
    run_collector(config)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from collector.demo import run_demo
    from collector.sources.simulator import parse_duration

    config = _settings(args, **{"http.port": args.port, "store.url": args.store,
                                "judgments.file": args.judgments,
                                "clicks.examination_file": args.examination, **_web(args)})
    spec = _spec(args)
    spec.start = time.time()
    duration = parse_duration(args.duration) if args.duration else None
    engine = run_demo(config, spec, args.speed, duration)
    from collector.summary import replay_summary

    summary = replay_summary(engine)
    summary.pop("by_application")
    print("final summary:")
    _print_summary(summary)
    return EXIT_OK


def cmd_feedback(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback.job import FeedbackRequest, run_feedback

    config = _settings(args, **{"store.url": args.store,
                                "store.allow_incomplete": args.allow_incomplete})
    if not config["store.url"]:
        raise ConfigError("store.url: the feedback job needs a store (--store URL)")
    request = FeedbackRequest(
        store=config["store.url"], out=Path(args.out), since=args.since,
        judgments=args.judgments or [], topics=args.topics,
        topic_applications=args.topic_applications, runs=args.run or [],
        seed=args.seed, examination=args.examination,
        progress=args.progress if args.progress is not None else sys.stderr.isatty())
    try:
        summary = run_feedback(config, request)
    except (FeedbackError, JudgmentsError, StoreError) as exc:
        log.error("%s", exc)
        return EXIT_INPUT
    _print_result(summary, args.json)
    if not args.json:
        print(f"{'written to':<28} {args.out}")
    return EXIT_OK


def cmd_clicks(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback.clicks_job import ClicksRequest, run_clicks

    config = _settings(args, **{"store.url": args.store,
                                "store.allow_incomplete": args.allow_incomplete})
    if not config["store.url"]:
        raise ConfigError("store.url: the click model needs a store (--store URL)")
    request = ClicksRequest(
        store=config["store.url"], out=Path(args.out), since=args.since,
        warm_start=Path(args.warm_start) if args.warm_start else None,
        progress=args.progress if args.progress is not None else sys.stderr.isatty())
    try:
        summary = run_clicks(config, request)
    except (ClicksError, StoreError) as exc:
        log.error("%s", exc)
        return EXIT_INPUT
    _print_result(summary, args.json)
    print(f"{'written to':<28} {args.out}", file=sys.stderr if args.json else sys.stdout)
    return EXIT_OK


def _print_result(summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_summary(summary)


def _judgments_request(args: argparse.Namespace, files: Sequence[str] | None = None) -> Any:
    from feedback.judgments_job import JudgmentsRequest

    return JudgmentsRequest(files=args.files if files is None else files, topics=args.topics,
                            topic_applications=args.topic_applications, rater=args.rater,
                            application=args.application)


def cmd_judgments_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback.judgments_job import dump, run_import

    config = _settings(args)
    try:
        summary = run_import(config, _judgments_request(args), Path(args.out))
    except JudgmentsError as exc:
        log.error("%s", exc)
        return EXIT_INPUT
    if args.json:
        print(dump(summary))
    else:
        _print_summary(summary)
    return EXIT_OK


def cmd_judgments_agreement(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback.judgments_job import AgreementOutputs, dump, run_agreement, text_table

    config = _settings(args)
    outputs = AgreementOutputs(Path(args.html) if args.html else None,
                               Path(args.disputed) if args.disputed else None, args.top)
    try:
        result = run_agreement(config, _judgments_request(args), args.strata,
                               args.automatic or [], outputs)
    except JudgmentsError as exc:
        log.error("%s", exc)
        return EXIT_INPUT
    print(dump(result) if args.json else text_table(result))
    return EXIT_OK


def cmd_evaluate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from feedback import evaluate_text
    from feedback.evaluate import as_json
    from feedback.evaluate_job import (
        EvaluateOutputs,
        EvaluateRequest,
        labels,
        run_evaluate,
        write,
    )

    config = _settings(args, **{"evaluate.depth": args.k, "evaluate.margin": args.margin,
                                "evaluate.measures": args.measure, "evaluate.gate": args.gate})
    request = EvaluateRequest(_judgments_request(args, args.judgments), args.run, args.strata,
                              args.top, gate_files=bool(args.junit or args.summary))
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
            print(f"{name}: {run['judged_rankings']:,} judged of {run['rankings']:,} rankings")
            print(evaluate_text.summary_text(run["summary"], result["measures"]))
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


# generate's flags that are shorthands for one alerts.deployment setting each
DEPLOYMENT_FLAGS = ("runbook_base", "grafana_base", "pager_url", "ticket_url", "selector")


def _profile(args: argparse.Namespace, strict: bool = False, **flags: Any) -> tuple[Any, Any]:
    """The settings with every alerts.* setting, and the deployment profile they describe
    (validated: a contradicting window pair or an impossible threshold is a ConfigError)."""
    from alerts.config import SETTINGS as ALERT_SETTINGS
    from alerts.config import from_config

    config = _settings(args, extra=ALERT_SETTINGS, strict=strict, **flags)
    return config, from_config(config)


def cmd_generate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from alerts import build as rules
    from dashboards import build as dashboards

    _, profile = _profile(args, **{f"alerts.deployment.{flag}": getattr(args, flag)
                                   for flag in DEPLOYMENT_FLAGS})
    out = Path(args.out)
    boards = Path(args.dashboards_out) if args.dashboards_out else out / "dashboards"
    for path in (*rules.build(out, profile), *dashboards.build(boards, profile)):
        print(path)
    return EXIT_OK


def cmd_experiments(args: argparse.Namespace) -> int:
    from collector.experiment_stats import ExperimentDesign
    from feedback.experiments import from_exposition, from_logs, text, verdicts
    from feedback.experiments_report import page

    config = _settings(args)
    design = ExperimentDesign.from_config(config)
    input_error = None
    for path in [args.metrics] if args.metrics else args.files:
        problem = kind.unreadable(path)
        if problem:
            log.error("input %s: %s", path, problem)
            return EXIT_INPUT
    if args.metrics:
        with open(args.metrics, encoding="utf-8") as handle:
            experiments = from_exposition(handle.read(), design.unit_buckets)
    else:
        progress = args.progress if args.progress is not None else sys.stderr.isatty()
        experiments, input_error = from_logs(args.files, config, progress)
    report = verdicts(experiments, design)
    if args.html:
        with open(args.html, "w", encoding="utf-8") as handle:
            handle.write(page(report))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text(report))
    if input_error:
        log.error("%s", input_error)
        return EXIT_INPUT
    if not report["applications"]:
        log.error("no experiment in the input: no search has a variant other than none")
        return EXIT_INPUT
    return EXIT_OK


def cmd_config_check(args: argparse.Namespace) -> int:
    config, _ = _profile(args, strict=True)
    width = max(len(key) for key in config)
    for key in config:
        print(f"{key:<{width}}  {json.dumps(config.printable(key)):<24} ({config.sources[key]})")
    print("configuration ok", file=sys.stderr)
    return EXIT_OK


def _web(args: argparse.Namespace) -> dict[str, Any]:
    """The settings of the exporter-style flags --web.listen-address and --web.config.file."""
    from collector.http import listen_address

    settings: dict[str, Any] = {"http.web_config_file": args.web_config_file}
    if args.listen_address:
        settings["http.host"], settings["http.port"] = listen_address(args.listen_address)
    return settings


def _serving(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--web.listen-address", dest="listen_address", metavar="HOST:PORT",
                        help="where /metrics is served, e.g. 127.0.0.1:9464 or :9464 (all "
                             "interfaces, the default: http.host, http.port)")
    parser.add_argument("--web.config.file", dest="web_config_file", metavar="FILE",
                        help="TLS and basic auth, exporter-toolkit format "
                             "(http.web_config_file)")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="TOML settings file (env SEARCHPULSE_CONFIG)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="override one setting, e.g. --set windows.abandonment_s=600")


def _topic_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topics", metavar="FILE",
                        help="TOPIC<TAB>QUERY lines naming the topics of TREC qrels and runs")
    parser.add_argument("--topic-applications", metavar="FILE",
                        help="TOPIC<TAB>APPLICATION lines: the application of each TREC topic")


def _judgment_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="Quepid book export (.json) or ratings CSV, SRW judgments, TREC "
                             "qrels, judgments.csv")
    _topic_files(parser)
    parser.add_argument("--rater", help="rater of files that name none (CSV, qrels, SRW); "
                                        "default: the file's name")
    parser.add_argument("--application",
                        help="application of rows whose file names none (default: the one a "
                             "searchpulse book names, else every application)")


def _store(parser: argparse.ArgumentParser,
           purpose: str = "also keep per-query aggregates for `searchpulse feedback` in") -> None:
    parser.add_argument("--store", metavar="URL",
                        help=f"{purpose} sqlite:///PATH or postgresql://… (store.url)")


def _allow_incomplete(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-incomplete", action="store_true", default=None,
                        help="use a store that an interrupted `replay` left (part of an input "
                             "counted; refused otherwise, exit 3) as it is "
                             "(store.allow_incomplete)")


def _live_judgments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judgments", metavar="FILE",
                        help="judgment set to score the rankings production shows: judged "
                             "NDCG@10, ERR@10, coverage@10 (judgments.file; reloaded on change)")
    parser.add_argument("--examination", metavar="FILE",
                        help="examination curves of `searchpulse clicks` (examination.json): "
                             "published per position and used for the debiased clicks "
                             "(clicks.examination_file; reloaded on change)")


def _simulation(parser: argparse.ArgumentParser, sessions: int,
                default_interleaving: float | None = None, default_users: int = 0) -> None:
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--sessions", type=kind.positive_int, default=sessions,
                        help=f"user sessions to simulate (default {sessions:,})")
    parser.add_argument("--sessions-per-second", type=kind.positive, default=5.0,
                        help="session arrival rate in event time (default 5)")
    parser.add_argument("--invalid-rate", type=kind.share, default=0.0,
                        help="share of sessions followed by one malformed record")
    parser.add_argument("--incident", action="append", metavar="KIND[@APP]:xF:START+DUR",
                        help="inject an incident, e.g. zero_results:x5:30m+10m "
                             "(kinds: zero_results, known_item_zero_results, clicks, latency)")
    parser.add_argument("--interleaving", type=kind.preference, metavar="PREFERENCE",
                        default=default_interleaving,
                        help="interleave a third of the experiment's sessions (team-draft); "
                             "each click goes to ranker-b with probability 0.5 + PREFERENCE "
                             f"(default {default_interleaving or 'off'})")
    parser.add_argument("--diurnal", action="store_true",
                        help="quiet nights: session starts follow a daily profile (UTC), 2 %% "
                             "of --sessions-per-second from 00:00 to 06:00, all of it at 15:00")
    parser.add_argument("--lull", action="append", metavar="START+DURATION",
                        help="traffic stops at START (event time) for DURATION, e.g. 10m+20m; "
                             "sessions already started run on (repeatable)")
    parser.add_argument("--users", type=kind.count, default=default_users,
                        help="returning users the sessions are drawn from, each in one "
                             "variant, with log-normal activity and its own click propensity "
                             "(clustered traffic); 0: a new client per session (default "
                             f"{default_users:,})")
    parser.add_argument("--user-activity-sigma", type=kind.non_negative, default=1.0,
                        help="σ of the users' log-normal activity (default 1)")
    parser.add_argument("--user-click-sigma", type=kind.non_negative, default=0.8,
                        help="σ of the users' click propensity on the logit scale (default 0.8)")
    parser.add_argument("--treatment-click-effect", type=kind.click_effect, default=0.0,
                        help="a known effect: the treatment's click probability plus this "
                             "(default 0)")
    parser.add_argument("--start", metavar="now|-DURATION",
                        help="event time of the first session: now, or e.g. --start=-2h "
                             "(default: a fixed date, so output is reproducible)")


def _profile_settings() -> tuple[Setting, ...]:
    """The settings a deployment profile is read from: every alerts.* setting, the latency
    guardrail and the experiment design (the collector's, which the rules must agree with)."""
    from alerts.config import SETTINGS
    from collector.experiment_stats import ExperimentDesign

    collector = {s.key: s for s in describe()}
    return (*SETTINGS, collector["metrics.latency_guardrail_s"],
            *(collector[key] for key in ExperimentDesign.keys()))


def _live_commands(sub: argparse._SubParsersAction) -> None:
    """The engine's inputs: logs (replay), synthetic traffic (simulate), Kafka (collect),
    both at once with a live view (demo)."""
    p = sub.add_parser("replay", help="run the engine over JSON-lines UBI logs",
                       description="Replay UBI logs (JSON lines, plain or gzip / bzip2 / "
                                   "zstd; - for stdin) through the engine, close all windows "
                                   "at the end of input and print the totals. With --store, "
                                   "the store records how far each input got: the same "
                                   "command after a crash finishes the replay, and records "
                                   "the store already holds (in any file or compression) are "
                                   "not counted again (docs/delivery.md).")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--metrics-out", metavar="FILE", type=kind.output_file,
                   help="write the final /metrics exposition to FILE")
    p.add_argument("--dlq", metavar="FILE", type=kind.output_file,
                   help="append rejected, orphan and late records with reasons (JSON lines)")
    p.add_argument("--strata-file", metavar="CSV", help="query,stratum file (strata.file)")
    _store(p)
    _live_judgments(p)
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    _common(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("simulate", help="write realistic synthetic UBI traffic",
                       description="Write simulated UBI records as JSON lines and print the "
                                   "ground-truth totals (the shape of `replay --json`).")
    _simulation(p, 10_000)
    p.add_argument("--out", default="-", metavar="FILE", type=kind.output_file,
                   help="output file (default stdout)")
    p.add_argument("--truth", metavar="FILE", type=kind.output_file,
                   help="write the ground truth here instead")
    p.add_argument("--strata-out", metavar="CSV", type=kind.output_file,
                   help="write the simulated vocabulary's query,stratum file")
    p.add_argument("--judgments-out", metavar="CSV", type=kind.output_file,
                   help="write a judgment set of the simulated vocabulary (judgments.csv: "
                        "80 %% of the queries, 20 documents each)")
    p.add_argument("--kafka", metavar="BOOTSTRAP",
                   help="produce to Kafka instead, keyed by client_id")
    p.add_argument("--topic", help="topic to produce to (default ubi)")
    p.add_argument("--pace", type=kind.positive, metavar="SPEED",
                   help="produce in real time from now, event time SPEED × the clock")
    p.add_argument("--security-config", action="store_true",
                   help="take the kafka.security_* / sasl / ssl settings from the config")
    _common(p)
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("collect", help="consume UBI records from Kafka as a consumer group",
                       description="Consume UBI records from Kafka (one engine per partition), "
                                   "checkpoint counters and offsets, serve /metrics. SIGTERM "
                                   "finishes the batch, checkpoints and leaves the group.")
    p.add_argument("--bootstrap-servers", help="kafka.bootstrap_servers")
    p.add_argument("--topic", action="append", help="kafka.topics (repeatable)")
    p.add_argument("--group-id", help="kafka.group_id")
    p.add_argument("--instance-id", help="kafka.instance_id (default: host name)")
    p.add_argument("--metrics-port", type=int, help="http.port (default 9464)")
    p.add_argument("--idle", type=kind.positive, help="ordering.idle_s (default 30)")
    _serving(p)
    _store(p)
    _live_judgments(p)
    _common(p)
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("demo", help="simulated traffic → engine → /metrics, live view",
                       description="The embedded default: no Kafka, no Prometheus. Simulates "
                                   "traffic, serves /metrics and shows the headline rates.")
    _simulation(p, 10**9, default_interleaving=0.1, default_users=20_000)
    p.add_argument("--speed", type=kind.positive, default=20.0,
                   help="event time runs this many times faster than the clock (default 20)")
    p.add_argument("--duration", metavar="DURATION",
                   help="stop after this much wall time, e.g. 2m (default: until Ctrl-C)")
    p.add_argument("--port", type=int, help="metrics port (http.port, default 9464)")
    _serving(p)
    _store(p)
    _live_judgments(p)
    _common(p)
    p.set_defaults(func=cmd_demo)


def _mining_commands(sub: argparse._SubParsersAction) -> None:
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
    _topic_files(p)
    p.add_argument("--run", action="append", metavar="FILE",
                   help="TREC run of a candidate ranker; its top documents join the pool; "
                        "repeatable")
    p.add_argument("--examination", metavar="FILE",
                   help="examination curves of `searchpulse clicks`: pool documents ranked by "
                        "debiased relevance, position-biased ones flagged in pool.csv "
                        "(default clicks.examination_file)")
    p.add_argument("--out", required=True, metavar="DIR", type=kind.output_directory,
                   help="directory for the files")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of the calibration sample (same seed, same output)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    _store(p, "the per-query aggregates to mine (read only):")
    _allow_incomplete(p)
    _common(p)
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
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    _store(p, "the per-query aggregates to fit on (read only):")
    _allow_incomplete(p)
    _common(p)
    p.set_defaults(func=cmd_clicks)


def _judgment_commands(sub: argparse._SubParsersAction) -> None:
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
        epilog="Exit codes: 0 ok, 2 configuration error, 3 a file unreadable or malformed.")
    _judgment_files(j)
    j.add_argument("--out", required=True, metavar="DIR", type=kind.output_directory,
                   help="directory for the files")
    j.add_argument("--json", action="store_true", help="print the summary as JSON")
    _common(j)
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
    _common(j)
    j.set_defaults(func=cmd_judgments_agreement)


def _evaluation_commands(sub: argparse._SubParsersAction) -> None:
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
    _topic_files(p)
    p.add_argument("--rater", help="rater of judgment files that name none")
    p.add_argument("--application", help="application of judgment rows whose file names none")
    p.add_argument("--strata", metavar="FILE",
                   help="query,stratum CSV (the feedback job's strata.csv; default strata.file)")
    p.add_argument("--k", type=int, metavar="K",
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
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="queries listed as worse and as better per gated slice (default 10; "
                        "--json lists every changed ranking)")
    p.add_argument("--html", metavar="FILE", help="also write an HTML page")
    p.add_argument("--junit", metavar="FILE",
                   help="JUnit XML for CI: a test case per gated measure and slice")
    p.add_argument("--summary", metavar="FILE",
                   help="append the verdict as Markdown (e.g. \"$GITHUB_STEP_SUMMARY\")")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    _common(p)
    p.set_defaults(func=cmd_evaluate, files=[])


def _deployment_commands(sub: argparse._SubParsersAction) -> None:
    """What a deployment runs: its rules and dashboards (generate), its experiment
    verdicts (experiments)."""
    p = sub.add_parser(
        "generate", help="write the alert rules, Alertmanager config and dashboards of a "
                         "deployment",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Generate, from one deployment profile (the config file's [metrics],\n"
                    "[experiments] and [alerts.*] tables, SEARCHPULSE_*, --set), the\n"
                    "Prometheus rules, the Alertmanager configuration and the Grafana\n"
                    "dashboards: every recording rule a panel reads is generated, every\n"
                    "threshold a panel draws is the one its alert fires at; the experiment\n"
                    "rules read the design `searchpulse experiments` reads (experiments.*).",
        epilog="Writes to --out: searchpulse-rules.yml (Prometheus rule_files),\n"
               "alertmanager.yml, dashboards/overview.json, dashboards/experiments.json,\n"
               "dashboards/collector-health.json (Grafana file provisioning).\n"
               "Settings (config file key, environment variable):\n"
               + "\n".join(f"  {s.key:<50} {s.env}" for s in _profile_settings())
               + "\nExit codes: 0 ok, 2 a setting is invalid (the message names it).")
    p.add_argument("--out", required=True, metavar="DIR", type=kind.output_directory,
                   help="directory for the files")
    p.add_argument("--dashboards-out", metavar="DIR", type=kind.output_directory,
                   help="directory for the dashboards (default OUT/dashboards)")
    p.add_argument("--runbook-base", help="runbook page; each alert links to #its-name "
                                          "(alerts.deployment.runbook_base)")
    p.add_argument("--grafana-base", help="Grafana's URL; alerts link to their panel "
                                          "(alerts.deployment.grafana_base)")
    p.add_argument("--pager-url", help="webhook that receives critical alerts "
                                       "(alerts.deployment.pager_url)")
    p.add_argument("--ticket-url", help="webhook that receives warning alerts "
                                        "(alerts.deployment.ticket_url)")
    p.add_argument("--selector", help='the collector\'s series, e.g. job="searchpulse" '
                                      "(alerts.deployment.selector)")
    _common(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser(
        "experiments", help="experiment verdicts at the unit of randomization (clients)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Per application and experiment variant (query_attributes.variant): units\n"
                    "(distinct clients), searches, the sample-ratio test (chi-square of units\n"
                    "against experiments.split, else an equal split), every rate with its 95 %\n"
                    "interval clustered by client (delta method over experiments.unit_buckets\n"
                    "hashed client buckets), its difference from experiments.control_variant\n"
                    "with its interval and a verdict (better / worse / inconclusive /\n"
                    "guardrail breached), the power at the observed difference and the\n"
                    "searches and units still needed for 80 %, interleaving's wins and Δ.\n"
                    "The same numbers the recording rules compute (docs/metrics.md).",
        epilog="From UBI logs (units: the distinct clients of the whole log) or, with\n"
               "--metrics, from a /metrics exposition (a scrape of a collector, or replay\n"
               "--metrics-out). Settings: experiments.* (searchpulse --help).\n"
               "Exit codes: 0 ok, 2 configuration error, 3 input unreadable or no experiment.")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="UBI logs (JSON lines; .gz accepted; - for stdin)")
    p.add_argument("--metrics", metavar="FILE",
                   help="read the unit-bucket sums from this /metrics exposition instead")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--html", metavar="FILE", type=kind.output_file,
                   help="also write the report as an HTML page")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    _common(p)
    p.set_defaults(func=cmd_experiments)


def _config_commands(sub: argparse._SubParsersAction) -> None:
    """Configuration tools (config check)."""
    p = sub.add_parser("config", help="configuration tools")
    config_sub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    c = config_sub.add_parser(
        "check", help="validate every setting (the collector's and alerts.*) and print the "
                      "effective values")
    _common(c)
    c.set_defaults(func=cmd_config_check)

def build_parser() -> argparse.ArgumentParser:
    settings_help = "\n".join(f"  {s.key:<34} {s.env}" for s in describe())
    parser = kind.Parser(
        prog="searchpulse",
        description="Search-quality monitoring from OpenSearch UBI events.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Settings (config file key, environment variable):\n" + settings_help
        + "\n\nExit codes: 0 ok, 1 failure, 2 usage/configuration error, 3 input unreadable.",
    )
    parser.add_argument("--version", action="version", version=f"searchpulse {__version__}")
    parser.add_argument("--log-level", default=os.environ.get("SEARCHPULSE_LOG_LEVEL", "INFO"),
                        type=kind.log_level,
                        help="DEBUG, INFO, WARNING or ERROR (env SEARCHPULSE_LOG_LEVEL)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    _live_commands(sub)
    _mining_commands(sub)
    _judgment_commands(sub)
    _evaluation_commands(sub)
    _deployment_commands(sub)
    _config_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    redaction.install()  # every log line, ours or a library's, without passwords
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("kafka").setLevel(max(logging.WARNING, logging.root.level))
    try:
        return args.func(args)
    except (ConfigError, StrataError, StoreError) as exc:
        # one line, no timestamp: the message names the setting or argument and what it needs
        command = (args.command, getattr(args, "judgments_command", None),
                   getattr(args, "config_command", None))
        print(f"{parser.prog} {' '.join(filter(None, command))}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # a file the command reads or writes, named with the reason
        where = f"{exc.filename}: " if exc.filename else ""
        log.error("%s%s", where, exc.strerror or exc)
        return EXIT_INPUT
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
