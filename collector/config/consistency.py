"""Checks across settings, on the merged values: windows that nest, strata shares in order, a
control variant of the designed split, files that exist."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from collector.errors import ConfigError


def check_consistency(values: dict[str, Any], sources: dict[str, str]) -> None:
    if values["windows.reformulation_s"] > values["windows.abandonment_s"]:
        raise ConfigError(
            "windows.reformulation_s (from {}) must not exceed windows.abandonment_s: a search "
            "could otherwise be both abandoned and reformulated".format(
                sources["windows.reformulation_s"])
        )
    if values["windows.abandonment_s"] > values["windows.attribution_s"]:
        raise ConfigError(
            "windows.abandonment_s (from {}) must not exceed windows.attribution_s".format(
                sources["windows.abandonment_s"])
        )
    if values["intents.keystroke_gap_s"] > values["windows.abandonment_s"]:
        raise ConfigError(
            "intents.keystroke_gap_s (from {}) must not exceed windows.abandonment_s: a query "
            "record is decided, keystroke or search, at its abandonment deadline".format(
                sources["intents.keystroke_gap_s"])
        )
    if values["automated.window_s"] > values["windows.abandonment_s"] + values[
            "windows.attribution_s"]:
        raise ConfigError(
            "automated.window_s (from {}) must not exceed windows.abandonment_s + "
            "windows.attribution_s: a restarted partition rebuilds what its undecided "
            "searches' rules read from that far back".format(sources["automated.window_s"]))
    if values["ordering.clock_tolerance_s"] > values["ordering.max_ahead_s"]:
        raise ConfigError(
            "ordering.clock_tolerance_s (from {}) must not exceed ordering.max_ahead_s".format(
                sources["ordering.clock_tolerance_s"])
        )
    if values["strata.head_share"] >= values["strata.torso_share"]:
        raise ConfigError(
            "strata.head_share (from {}) must be below strata.torso_share".format(
                sources["strata.head_share"])
        )
    split = [item.partition("=")[0].strip() for item in values["experiments.split"]]
    if split and values["experiments.control_variant"] not in split:
        raise ConfigError(
            "experiments.control_variant (from {}) must be one of the variants of "
            "experiments.split ({}): the differences are read against it".format(
                sources["experiments.control_variant"], ", ".join(split)))
    for key in ("strata.file", "strata.known_item_titles_file"):
        if values[key] and not Path(values[key]).is_file():
            raise ConfigError(f"{key} (from {sources[key]}): no such file {values[key]!r}")
    if values["store.spill_dir"] and not Path(values["store.spill_dir"]).is_dir():
        raise ConfigError(f"store.spill_dir (from {sources['store.spill_dir']}): no such "
                          f"directory {values['store.spill_dir']!r}")
