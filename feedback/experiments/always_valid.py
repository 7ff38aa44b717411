"""The always-valid 95 % intervals of `experiments --metrics`: the numbers the experiments
dashboard shows while an experiment runs (the recording rules' ``*_always_valid_*_sum``, from the
same counters since the collector started), beside the report's fixed-horizon ones, which are
valid for one look at a scrape decided in advance (collector/series/confidence_sequence.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from collector.series.confidence_sequence import (
    HORIZON,
    MIXTURE,
    always_valid,
    always_valid_difference,
)
from collector.series.experiment_stats import RATES, ExperimentDesign, clustered_ratio
from collector.series.units import ExperimentUnits, merge_experiments
from feedback.experiments.verdicts import bucket_pairs, control_of


def report(experiments: Iterable[ExperimentUnits], design: ExperimentDesign) -> dict[str, Any]:
    """Per application, variant and rate: the rate with its always-valid interval and, for a
    variant other than the control (when both have data), its difference from the control's."""
    by_application: dict[str, dict[str, ExperimentUnits]] = {}
    for experiment in merge_experiments(experiments):
        by_application.setdefault(experiment.application, {})[experiment.variant] = experiment
    found: dict[str, Any] = {}
    for application, variants in sorted(by_application.items()):
        # the control as the report takes it (the configured one, else the conventional name)
        control_variant, _ = control_of(application, variants, design.control_variant)
        rates: dict[str, Any] = {}
        for rate in RATES:
            pairs = {v: bucket_pairs(e, rate) for v, e in variants.items()}
            totals = {v: sum(n for _, n in p) for v, p in pairs.items()}
            estimates = {v: clustered_ratio(p, design.unit_buckets, design.t)
                         for v, p in pairs.items()}
            control = estimates.get(control_variant)
            shown: dict[str, Any] = {}
            for variant, estimate in sorted(estimates.items()):
                if estimate is None:
                    continue
                interval = always_valid(estimate, totals[variant])
                shown[variant] = {"value": interval.value, "low": interval.low,
                                  "high": interval.high}
                if variant != control_variant and control is not None:
                    diff = always_valid_difference(estimate, control, totals[variant],
                                                   totals[control_variant])
                    shown[variant]["difference"] = {"value": diff.value, "low": diff.low,
                                                    "high": diff.high}
            rates[rate.ratio] = shown
        found[application] = rates
    return {"mixture": MIXTURE, "horizon": HORIZON, "applications": found}


def text(section: dict[str, Any]) -> str:
    """The always-valid intervals for a terminal, per application and rate."""
    titles = {rate.ratio: rate.title for rate in RATES}
    lines = ["", f"always-valid 95 % intervals (confidence sequence, normal mixture ρ = "
                 f"{section['mixture']:,.0f} searches: narrowest at {section['horizon']:,} per "
                 "variant): valid at every scrape at once, as the dashboards show them"]
    for application, rates in section["applications"].items():
        lines.append(f"{application}:")
        for ratio, variants in rates.items():
            lines.append(f"  {titles[ratio]}")
            for variant, shown in variants.items():
                line = (f"    {variant:<14}{shown['value']:.2%} [{shown['low']:.2%}, "
                        f"{shown['high']:.2%}]")
                diff = shown.get("difference")
                if diff is not None:
                    line = (f"{line:<48}Δ {diff['value'] * 100:+.2f} [{diff['low'] * 100:+.2f}, "
                            f"{diff['high'] * 100:+.2f}] pts")
                lines.append(line)
    return "\n".join(lines) + "\n"
