"""What every subcommand shares: the exit codes, a command line's settings (defaults <
--config < SEARCHPULSE_* < flags and --set), the flags several subcommands take, and the printed
summary.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Any

from collector.config import Setting, load_config
from collector.errors import ConfigError

# 1 is Python's own, for an unexpected failure (with its traceback).
EXIT_OK, EXIT_USAGE, EXIT_INPUT, EXIT_REGRESSION, EXIT_INTERRUPTED = 0, 2, 3, 4, 130
EXIT_TOOL = 5  # a program the command runs (Prometheus, promtool) is missing or failed
EXIT_FAILED = 1  # the command could not finish (a replay worker killed): nothing half-written


log = logging.getLogger("searchpulse")


def refused_inputs(paths: list[str]) -> int | None:
    """The exit code of a command whose inputs cannot all be read, each refusal logged in one
    line before any work: standard input named twice is a usage error (it is read once; the
    second would read what the first left), an unreadable file an input error. None: go on."""
    from searchpulse.arguments import unreadable

    if paths.count("-") > 1:
        log.error("input -: standard input named %d times: it is read once (save it to a file "
                  "to give it twice)", paths.count("-"))
        return EXIT_USAGE
    for path in paths:
        problem = unreadable(path)
        if problem:
            log.error("input %s: %s", path, problem)
            return EXIT_INPUT
    return None


def read_settings(args: argparse.Namespace, extra: tuple[Setting, ...] = (), strict: bool = False,
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


def print_summary(summary: dict[str, Any]) -> None:
    for key, value in summary.items():
        if key == "by_application":
            continue
        if isinstance(value, float):
            value = f"{value:.4f}"
        print(f"{key:<28} {'no data' if value is None else value}")


def print_result(summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_summary(summary)


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="TOML settings file (env SEARCHPULSE_CONFIG)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="override one setting, e.g. --set windows.abandonment_s=600")


def add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar on stderr (default: when stderr is a terminal)")


def show_progress(args: argparse.Namespace) -> bool:
    """--progress / --no-progress, else a bar only when someone watches the terminal."""
    return args.progress if args.progress is not None else sys.stderr.isatty()


def add_topic_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topics", metavar="FILE",
                        help="TOPIC<TAB>QUERY lines naming the topics of TREC qrels and runs")
    parser.add_argument("--topic-applications", metavar="FILE",
                        help="TOPIC<TAB>APPLICATION lines: the application of each TREC topic")


def add_store(parser: argparse.ArgumentParser,
              purpose: str = "also keep per-query aggregates for `searchpulse feedback` in"
              ) -> None:
    parser.add_argument("--store", metavar="URL",
                        help=f"{purpose} sqlite:///PATH or postgresql://… (store.url)")
