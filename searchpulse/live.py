"""The engine's inputs: logs (``replay``), synthetic traffic (``simulate``), Kafka (``collect``),
both at once with a live view (``demo``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from typing import Any

from collector.errors import BrokersUnreachable, ConfigError
from collector.exposition.scrapes import SCRAPE_INTERVAL_S
from collector.output_files import writing
from searchpulse import arguments as kind
from searchpulse.options import (
    EXIT_INPUT,
    EXIT_OK,
    add_common,
    add_progress,
    add_store,
    log,
    print_summary,
    read_settings,
    refused_inputs,
    show_progress,
)

# The demo's web application searches as you type, and a crawler and an uptime monitor search
# it: the largest application, on the experiment, where the public finds them (README.md).
DEMO_TYPE_AHEAD = "web"
DEMO_BOTS = ("crawler@web:25/m", "monitor@web:1/m")


def cmd_replay(args: argparse.Namespace) -> int:
    from collector.replay import replay

    config = read_settings(args, **{"strata.file": args.strata_file, "store.url": args.store,
                                    "judgments.file": args.judgments,
                                    "clicks.examination_file": args.examination})
    refused = refused_inputs(args.files)
    if refused is not None:
        return refused
    progress = show_progress(args)
    started = time.perf_counter()
    scrapes = None
    if args.openmetrics_out:
        from collector.replay import ScrapeFile

        scrapes = ScrapeFile(args.openmetrics_out, args.scrape_interval,
                             dict(args.scrape_label or kind.DEFAULT_SCRAPE_LABELS))
    if args.workers is None:
        summary = replay(args.files, config, dlq=args.dlq, metrics_out=args.metrics_out,
                         progress=progress, openmetrics=scrapes)
    elif scrapes is not None:
        raise ConfigError("--workers: not with --openmetrics-out yet (the scrapes through "
                          "event time are one engine's): write them without --workers")
    else:
        from collector.replay_workers import replay_partitioned

        summary = replay_partitioned(args.files, config, args.workers, dlq=args.dlq,
                                     metrics_out=args.metrics_out, progress=progress)
    elapsed = time.perf_counter() - started
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_summary(summary)
    log.info("replayed %d records in %.2f s (%.0f records/s)", summary["records"], elapsed,
             summary["records"] / elapsed if elapsed else 0.0)
    if summary["future_records"]:
        log.warning("%d records were stamped after the wall clock (future_records): their "
                    "clients' clocks run ahead and were corrected; none moved the stream's "
                    "time or a store's days", summary["future_records"])
    if "input_error" in summary:  # what was read before it is counted above and kept
        log.error("%s", summary["input_error"])
        return EXIT_INPUT
    return _valid_records(summary, args.files, args.dlq)


def _valid_records(summary: dict[str, Any], files: list[str], dlq: str | None) -> int:
    """A replay that read nothing, or nothing valid, is no success (exit 3): the wrong file, an
    export that failed. Some invalid records among valid ones are normal in real traffic (a
    warning with the count; each is kept in --dlq with its reason)."""
    names = ", ".join(files)
    records, invalid = summary["records"], summary["invalid_records"]
    kept = (f"each kept with its reason in {dlq}" if dlq
            else "--dlq FILE keeps each with its reason")
    if not records and not summary.get("already_in_store"):
        log.error("input %s: no records in it (empty): nothing replayed", names)
        return EXIT_INPUT
    if records and invalid == records:
        log.error("input %s: none of the %d records is a valid UBI record (invalid_records; "
                  "%s): is it a UBI log?", names, records, kept)
        return EXIT_INPUT
    if invalid:
        log.warning("input %s: %d of %d records were invalid and not counted "
                    "(invalid_records; %s)", names, invalid, records, kept)
    return EXIT_OK


def _spec(args: argparse.Namespace) -> Any:
    from collector.sources.simulator import Incident, SimulationSpec, parse_duration, parse_lull

    bots = args.default_bots if args.bot is None else [bot for bot in args.bot if bot]
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
                              lulls=[parse_lull(text) for text in args.lull or ()],
                              type_ahead=args.type_ahead, bots=bots,
                              tracking_outages=args.tracking_outage or [])
        if args.start == "now":
            spec.start = time.time()
        elif args.start:
            spec.start = time.time() - parse_duration(args.start.removeprefix("-"))
            if not spec.start > 0:
                raise ValueError(f"--start {args.start}: before 1970; at most "
                                 f"{time.time() // 86400:.0f}d back")
        if getattr(args, "duration", None):
            parse_duration(args.duration)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return spec


def _sessions_shown(simulator: Any, records: Iterator[Any], shown: bool) -> Iterator[Any]:
    """``records``, with a bar of the sessions simulated so far (looked at every few thousand
    records: the bar costs nothing per record)."""
    if not shown:
        yield from records
        return
    from collector.progress import counted

    with counted("simulate", simulator.spec.sessions, "sessions", True) as bar:
        for number, record in enumerate(records):
            if not number & 0xFFF:
                bar.update(simulator.sessions_started - bar.n)
            yield record
        bar.update(simulator.spec.sessions - bar.n)


def cmd_simulate(args: argparse.Namespace) -> int:
    from collector.sources.simulator import Simulator

    config = read_settings(args)  # --config and --set checked even when only --kafka reads them
    simulator = Simulator(_spec(args))
    shown = show_progress(args)
    if args.kafka:
        from collector.sources.kafka.producer import produce

        if args.pace:
            simulator.spec.start = time.time()
        records = simulator.paced(args.pace) if args.pace else simulator.records()
        try:
            produce(_sessions_shown(simulator, records, shown), args.kafka,
                    args.topic or "ubi", args.security_config, config)
        except BrokersUnreachable as error:
            log.error("%s", error)
            return EXIT_INPUT
    else:
        lines = _sessions_shown(simulator, simulator.records(), shown)
        if args.out == "-":
            sys.stdout.buffer.writelines(lines)
        else:
            with writing(args.out, "--out", "wb") as out:
                out.writelines(lines)
    if args.strata_out:
        with writing(args.strata_out, "--strata-out") as handle:
            handle.write(simulator.strata_csv())
    if args.judgments_out:
        with writing(args.judgments_out, "--judgments-out") as handle:
            handle.write(simulator.judgments_csv())
    truth = json.dumps(simulator.truth.summary(), indent=2) + "\n"
    if args.truth:
        with writing(args.truth, "--truth") as handle:
            handle.write(truth)
    else:
        (sys.stderr if args.out == "-" else sys.stdout).write(truth)
    return EXIT_OK


def cmd_collect(args: argparse.Namespace) -> int:
    from collector.sources.kafka.run import run_collector

    config = read_settings(args, **{
        "kafka.bootstrap_servers": args.bootstrap_servers,
        "kafka.topics": ",".join(args.topic) if args.topic else None,
        "kafka.group_id": args.group_id, "kafka.instance_id": args.instance_id,
        "http.port": args.metrics_port, "ordering.idle_s": args.idle,
        "store.url": args.store, "judgments.file": args.judgments,
        "clicks.examination_file": args.examination, **_web(args)})
    try:
        run_collector(config)
    except BrokersUnreachable as error:
        log.error("%s", error)
        return EXIT_INPUT
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from collector.demo import run_demo
    from collector.sources.simulator import parse_duration

    config = read_settings(args, **{"http.port": args.port, "store.url": args.store,
                                    "judgments.file": args.judgments,
                                    "clicks.examination_file": args.examination, **_web(args)})
    spec = _spec(args)
    spec.start = time.time()
    duration = parse_duration(args.duration) if args.duration else None
    engine = run_demo(config, spec, args.speed, duration)
    from collector.exposition.summary import replay_summary

    summary = replay_summary(engine)
    summary.pop("by_application")
    print("final summary:")
    print_summary(summary)
    return EXIT_OK


def _web(args: argparse.Namespace) -> dict[str, Any]:
    """The settings of the exporter-style flags --web.listen-address and --web.config.file."""
    from collector.exposition.http import listen_address

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


def _live_judgments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judgments", metavar="FILE",
                        help="judgment set to score the rankings production shows: judged "
                             "NDCG@10, ERR@10, coverage@10 (judgments.file; reloaded on change)")
    parser.add_argument("--examination", metavar="FILE",
                        help="examination curves of `searchpulse clicks` (examination.json): "
                             "published per position and used for the debiased clicks "
                             "(clicks.examination_file; reloaded on change)")


def _type_ahead(text: str) -> frozenset[str]:
    """``--type-ahead``: applications, comma-separated, or none."""
    from collector.sources.simulator.spec import known_application

    names = [name.strip() for name in text.split(",") if name.strip()]
    if names == ["none"]:
        return frozenset()
    try:
        return frozenset(known_application(name, text) for name in names or [""])
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{error} (comma-separated, or none)") from None


def _bot(text: str) -> Any:
    """``--bot``: an automated client (``Bot.FORMAT``), or none (no bots, not the demo's)."""
    from collector.sources.simulator.spec import Bot

    if text.strip() == "none":
        return None
    return _parsed(Bot.parse, text)


def _tracking_outage(text: str) -> Any:
    from collector.sources.simulator.spec import TrackingOutage

    return _parsed(TrackingOutage.parse, text)


def _parsed(parse: Any, text: str) -> Any:
    try:
        return parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _simulation(parser: argparse.ArgumentParser, sessions: int,
                default_interleaving: float | None = None, default_users: int = 0,
                default_type_ahead: str = "none", default_bots: tuple[str, ...] = ()) -> None:
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
    parser.add_argument("--users", type=kind.users, default=default_users,
                        help="returning users the sessions are drawn from, each in one "
                             "variant, with log-normal activity and its own click propensity "
                             "(clustered traffic); 0: a new client per session (default "
                             f"{default_users:,})")
    parser.add_argument("--user-activity-sigma", type=kind.spread, default=1.0,
                        help="σ of the users' log-normal activity (default 1)")
    parser.add_argument("--user-click-sigma", type=kind.spread, default=0.8,
                        help="σ of the users' click propensity on the logit scale (default 0.8)")
    parser.add_argument("--treatment-click-effect", type=kind.click_effect, default=0.0,
                        help="a known effect: the treatment's click probability plus this "
                             "(default 0)")
    parser.add_argument("--type-ahead", type=_type_ahead, metavar="APP[,APP…]|none",
                        default=_type_ahead(default_type_ahead),
                        help="applications whose front end searches as you type: every search "
                             "comes after the keystroke records its typing sent (default "
                             f"{default_type_ahead})")
    parser.add_argument("--bot", action="append", type=_bot, metavar="KIND@APP:RATE…",
                        help="automated clients that search and never interact: "
                             "KIND@APP:[CLIENTSx]RATE/UNIT[:START+DURATION][:id=CLIENT_ID], "
                             "KIND crawler, monitor or fleet, e.g. crawler@web:25/m:0+3h, "
                             "monitor@web:1/m, fleet@web:25x4/m:1h+1h; without a window for as "
                             "long as sessions start; repeatable; none: no bots (default "
                             f"{' '.join(default_bots) or 'none'})")
    parser.set_defaults(default_bots=[_bot(text) for text in default_bots])
    parser.add_argument("--tracking-outage", action="append", type=_tracking_outage,
                        metavar="APP:START+DURATION",
                        help="the application's front end sends no events (clicks, "
                             "conversions, impressions) in this window of event time, e.g. "
                             "web:30m+10m; its query records go on (repeatable)")
    parser.add_argument("--start", metavar="now|-DURATION",
                        help="event time of the first session: now, or e.g. --start=-2h "
                             "(default: a fixed date, so output is reproducible)")


def add_commands(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--openmetrics-out", metavar="FILE", type=kind.output_file,
                   help="write what /metrics showed at every scrape through event time, as "
                        "timestamped OpenMetrics for `promtool tsdb create-blocks-from "
                        "openmetrics` (each sample with the target's labels, and up)")
    p.add_argument("--scrape-interval", metavar="DURATION", type=kind.duration,
                   default=SCRAPE_INTERVAL_S,
                   help="seconds of event time between two of those scrapes (15s, 1m; "
                        "default 15s, the interval alerts/prometheus.yml scrapes and "
                        "evaluates at)")
    p.add_argument("--scrape-label", metavar="NAME=VALUE", type=kind.label_pair,
                   action="append",
                   help="a target label of those samples (repeatable; default "
                        "job=searchpulse and instance=replay: the rules' default selector "
                        "is job=\"searchpulse\")")
    p.add_argument("--dlq", metavar="FILE", type=kind.output_file,
                   help="append rejected, orphan and late records with reasons (JSON lines)")
    p.add_argument("--strata-file", metavar="CSV", help="query,stratum file (strata.file)")
    p.add_argument("--workers", metavar="N", type=kind.positive_int,
                   help="split the records by client_id into replay.partitions partitions "
                        "(one engine each, as Kafka partitions) over N processes; the result "
                        "is the same for every N (docs/architecture.md)")
    add_store(p)
    _live_judgments(p)
    add_progress(p)
    add_common(p)
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
    p.add_argument("--kafka", metavar="BOOTSTRAP", type=kind.bootstrap,
                   help="produce to Kafka instead, keyed by client_id")
    p.add_argument("--topic", help="topic to produce to (default ubi)")
    p.add_argument("--pace", type=kind.positive, metavar="SPEED",
                   help="produce in real time from now, event time SPEED × the clock")
    p.add_argument("--security-config", action="store_true",
                   help="take the kafka.security_* / sasl / ssl settings from the config")
    add_progress(p)
    add_common(p)
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
    add_store(p)
    _live_judgments(p)
    add_common(p)
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("demo", help="simulated traffic → engine → /metrics, live view",
                       description="The embedded default: no Kafka, no Prometheus. Simulates "
                                   "traffic, serves /metrics and shows the headline rates.")
    _simulation(p, 10**9, default_interleaving=0.1, default_users=20_000,
                default_type_ahead=DEMO_TYPE_AHEAD, default_bots=DEMO_BOTS)
    p.add_argument("--speed", type=kind.positive, default=20.0,
                   help="event time runs this many times faster than the clock (default 20)")
    p.add_argument("--duration", metavar="DURATION",
                   help="stop after this much wall time, e.g. 2m (default: until Ctrl-C)")
    p.add_argument("--port", type=int, help="metrics port (http.port, default 9464)")
    _serving(p)
    add_store(p)
    _live_judgments(p)
    add_common(p)
    p.set_defaults(func=cmd_demo)
