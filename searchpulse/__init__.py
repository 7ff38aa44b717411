"""``searchpulse``: one command, a subcommand per job. Wiring only: the work lives elsewhere.

Exit codes: 0 success · 1 unexpected failure · 2 usage or configuration error · 3 input
unreadable · 4 evaluate's gate: a significant regression · 5 backtest: Prometheus or promtool
missing or failed · 130 interrupted.

One module per subcommand group (live, mining, judgments, evaluation, deployment, configuration),
each adding its subcommands to the parser and holding their handlers; ``options`` holds what they
share.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from collector import __version__
from collector.config import describe
from collector.errors import (
    ConfigError,
    OutputError,
    StoreError,
    StoreIncomplete,
    StrataError,
    WorkerFailed,
)
from collector.privacy import redaction
from searchpulse import (
    arguments as kind,
)
from searchpulse import (
    backtesting,
    configuration,
    deployment,
    evaluation,
    judgments,
    live,
    mining,
)
from searchpulse.options import (
    EXIT_FAILED,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REGRESSION,
    EXIT_USAGE,
    log,
)

__all__ = ["EXIT_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_REGRESSION", "EXIT_USAGE",
           "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    settings_help = "\n".join(f"  {s.key:<34} {s.env}" for s in describe())
    parser = kind.Parser(
        prog="searchpulse",
        description="Search-quality monitoring from OpenSearch UBI events.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Settings (config file key, environment variable):\n" + settings_help
        + "\n\nExit codes: 0 ok, 1 failure, 2 usage/configuration error, 3 input unreadable, "
        "5 Prometheus or promtool missing or failed (backtest).",
    )
    parser.add_argument("--version", action="version", version=f"searchpulse {__version__}")
    parser.add_argument("--log-level", default=os.environ.get("SEARCHPULSE_LOG_LEVEL", "INFO"),
                        type=kind.log_level,
                        help="DEBUG, INFO, WARNING or ERROR (env SEARCHPULSE_LOG_LEVEL)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    live.add_commands(sub)
    mining.add_commands(sub)
    judgments.add_commands(sub)
    evaluation.add_commands(sub)
    deployment.add_commands(sub)
    backtesting.add_commands(sub)
    configuration.add_commands(sub)
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
    except StoreIncomplete as exc:  # not a usage error: the command could not finish
        log.error("%s", exc)
        return EXIT_FAILED
    except (ConfigError, StrataError, StoreError, OutputError) as exc:
        # one line, no timestamp: the message names the setting or argument and what it needs
        command = (args.command, getattr(args, "judgments_command", None),
                   getattr(args, "config_command", None))
        print(f"{parser.prog} {' '.join(filter(None, command))}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # a file the command reads or writes, named with the reason
        where = f"{exc.filename}: " if exc.filename else ""
        log.error("%s%s", where, exc.strerror or exc)
        return EXIT_INPUT
    except WorkerFailed as exc:  # one line: what it was not given is the worker's own end
        log.error("%s", exc)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
