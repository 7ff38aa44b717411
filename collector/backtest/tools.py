"""The programs a backtest runs: Prometheus (its query engine) and promtool (its backfill),
found on PATH or where the environment names them, or a message that says how to get them."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from collector.errors import ToolMissing

INSTALL = ("on Debian or Ubuntu: `sudo apt-get install prometheus` (it ships promtool too); "
           "elsewhere the release archive from https://prometheus.io/download/ has both; or "
           "name them with SEARCHPULSE_PROMETHEUS and SEARCHPULSE_PROMTOOL")


@dataclass(frozen=True)
class Tools:
    prometheus: str
    promtool: str


def find_tools() -> Tools:
    """Both programs, or ToolMissing naming each one missing and how to install it."""
    found = {name: _which(name) for name in ("prometheus", "promtool")}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        raise ToolMissing(f"{' and '.join(missing)} not found (the backtest runs the rules "
                          f"on Prometheus itself): {INSTALL}")
    return Tools(prometheus=found["prometheus"], promtool=found["promtool"])


def _which(name: str) -> str | None:
    named = os.environ.get(f"SEARCHPULSE_{name.upper()}")
    if named:
        return shutil.which(named)
    return shutil.which(name)
