"""Configuration tools (``config check``).
"""

from __future__ import annotations

import argparse
import json
import sys

from searchpulse.deployment import deployment_profile
from searchpulse.options import EXIT_OK, add_common


def cmd_config_check(args: argparse.Namespace) -> int:
    config, _ = deployment_profile(args, strict=True)
    width = max(len(key) for key in config)
    for key in config:
        print(f"{key:<{width}}  {json.dumps(config.printable(key)):<24} ({config.sources[key]})")
    print("configuration ok", file=sys.stderr)
    return EXIT_OK


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Configuration tools (config check)."""
    p = sub.add_parser("config", help="configuration tools")
    config_sub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    c = config_sub.add_parser(
        "check", help="validate every setting (the collector's and alerts.*) and print the "
                      "effective values")
    add_common(c)
    c.set_defaults(func=cmd_config_check)
