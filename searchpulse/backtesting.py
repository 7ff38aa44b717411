"""``backtest``: a deployment's generated rules run over logs on a real Prometheus
(collector/backtest/, docs/backtest.md)."""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from collector.errors import ConfigError, ToolFailed, ToolMissing
from searchpulse import arguments as kind
from searchpulse.deployment import deployment_profile
from searchpulse.options import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_TOOL,
    add_common,
    add_progress,
    log,
    refused_inputs,
    show_progress,
)

_EQUAL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def scrape_labels(selector: str) -> dict[str, str]:
    """The target labels the backfilled samples get so that the rules' selector matches them:
    each ``name="value"`` matcher of it, and instance="backtest" unless it names one."""
    labels: dict[str, str] = {}
    at = 0
    while at < len(selector):
        found = _EQUAL.match(selector, at)
        if not found:
            raise ConfigError(f"alerts.deployment.selector {selector!r}: the backtest gives "
                              "its samples the labels the selector names, so it takes only "
                              'name="value" matchers (no regex or negation): use --set '
                              "alerts.deployment.selector='job=\"searchpulse\"'")
        labels[found.group(1)] = found.group(2).encode().decode("unicode_escape")
        at = found.end()
    labels.setdefault("instance", "backtest")
    return labels


def cmd_backtest(args: argparse.Namespace) -> int:
    from alerts.alertmanager import alertmanager_config
    from alerts.rules import rule_groups
    from collector.backtest.episodes import parse_incident
    from collector.backtest.inhibition import inhibit_rules
    from collector.backtest.report import report, text
    from collector.backtest.run import run

    config, profile = deployment_profile(args)
    labels = scrape_labels(profile.deployment.selector)
    refused = refused_inputs(args.files)
    if refused is not None:
        return refused
    for incident in args.incident or ():
        parse_incident(incident, 0.0)  # checked before the replay; placed after it
    with tempfile.TemporaryDirectory(prefix="searchpulse-backtest-") as scratch:
        workdir = Path(args.workdir) if args.workdir else Path(scratch)
        try:
            result = run(args.files, config, rule_groups(profile), labels, workdir,
                         show_progress(args), keep_scrapes=bool(args.workdir))
        except (ToolMissing, ToolFailed) as error:
            log.error("%s", error)
            return EXIT_TOOL
    if "input_error" in result.summary:
        log.error("%s", result.summary["input_error"])
        return EXIT_INPUT
    if not result.summary["records"]:
        log.error("input %s: no records in it (empty): nothing to backtest",
                  ", ".join(args.files))
        return EXIT_INPUT
    routing = alertmanager_config(profile.deployment, profile.routing)
    data = report(result, [parse_incident(i, result.start) for i in args.incident or ()],
                  inhibit_rules(routing))
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text(data))
    return EXIT_OK


def _incident(text: str) -> str:
    from collector.backtest.episodes import parse_incident

    try:
        parse_incident(text, 0.0)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def add_commands(sub: argparse._SubParsersAction) -> None:
    """backtest: the generated rules over logs, on a real Prometheus."""
    p = sub.add_parser(
        "backtest", help="run a deployment's generated rules over UBI logs on a real "
                         "Prometheus: episodes, pages and tickets a week, detection delays",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Replay the logs, backfill what /metrics showed at every 15 s of event\n"
                    "time into a Prometheus TSDB (promtool), evaluate the recording rules of\n"
                    "the profile (the one `generate` reads: --config, --set) over the period\n"
                    "with Prometheus itself, then every alerting rule at its group's interval,\n"
                    "with for: and keep_firing_for: as Prometheus applies them; report each\n"
                    "alert's episodes per application and, for each --incident, how long it\n"
                    "took to be detected and whether it paged (docs/backtest.md).",
        epilog="Needs prometheus and promtool (Debian/Ubuntu: apt-get install prometheus;\n"
               "or SEARCHPULSE_PROMETHEUS / SEARCHPULSE_PROMTOOL name them).\n"
               "Exit codes: 0 ok, 2 a setting or argument is invalid, 3 input unreadable or\n"
               "empty, 5 Prometheus or promtool missing or failed (the message says).")
    p.add_argument("files", nargs="+", metavar="LOG",
                   help="UBI logs (JSON lines; .gz/.bz2/.zst; several are merged by time)")
    p.add_argument("--incident", action="append", metavar="START+DURATION[@APP]",
                   type=_incident,
                   help="a known incident: START an ISO time (2026-01-05T10:00:00Z) or an "
                        "offset from the first scrape (1h), e.g. 1h+30m@web (repeatable)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--workdir", metavar="DIR", type=kind.output_directory,
                   help="keep the scrapes (a file a day), the TSDB and the rule files here "
                        "(default: a temporary directory, removed)")
    add_progress(p)
    add_common(p)
    p.set_defaults(func=cmd_backtest)
