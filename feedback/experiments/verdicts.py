"""``searchpulse experiments``: the verdict of every experiment, at the unit of randomization.

Per application and experiment variant: units, searches, the sample-ratio test, each rate with
its 95 % interval clustered by client, each difference from the control with its interval and
a verdict (better / worse / inconclusive / guardrail breached), the power at the observed
difference and the traffic still needed for 80 %, and interleaving's Δ. Every number is
``collector.series.experiment_stats`` applied to the unit buckets the collector counts
(collector/series/units.py) — the same definition the recording rules compute in PromQL; a test runs
both on one exposition and compares them.

The sums come from UBI logs (replayed through the engine; units are then the distinct clients
of the whole log) or from a /metrics exposition (a scrape of a running collector, or
`replay --metrics-out`: its counters since the collector started, its units those of its
window).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from collector import definitions as d
from collector.config import Config
from collector.engine import Engine
from collector.replay import feed
from collector.series.experiment_stats import (
    RATES,
    SAMPLE_RATIO_P,
    WITH_RESULTS,
    ExperimentDesign,
    Rate,
    clustered_ratio,
    difference,
    interleaving_preference,
    power,
    sample_ratio,
    still_needed,
    verdict,
)
from collector.series.units import ExperimentUnits, merge_experiments


def from_logs(paths: list[str], config: Config, progress: bool = False
              ) -> tuple[list[ExperimentUnits], str | None]:
    """The unit buckets of a replay of ``paths`` (units: the distinct clients of the whole
    log), and the message of an input that could not be read to its end."""
    whole_log = dict(config)
    whole_log["experiments.unit_window_s"] = math.inf
    engine = Engine(Config(whole_log, config.sources))
    error = feed(engine, paths, progress, label="experiments")
    return engine.view(release=False).experiments, error


_ATTRIBUTES = {family.name: family.attribute for family in d.BUCKET_COUNTS}


def from_exposition(text: str, unit_buckets: int) -> list[ExperimentUnits]:
    """The unit buckets and units of a /metrics exposition (several scrapes concatenated, e.g.
    one per collector, add up)."""
    found: dict[tuple[str, str], ExperimentUnits] = {}

    def experiment(labels: dict[str, str]) -> ExperimentUnits:
        key = (labels["application"], labels["variant"])
        if key not in found:
            found[key] = ExperimentUnits(*key, unit_buckets)
        return found[key]

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == d.EXPERIMENT_UNITS.name:
                experiment(labels).units += int(sample.value)
                continue
            if sample.name == d.EXPERIMENT_WITHOUT_CLIENT_ID.name:
                experiment(labels).without_client_id += int(sample.value)
                continue
            attribute = _ATTRIBUTES.get(sample.name)
            if attribute is None and not sample.name.startswith(
                    "searchpulse_experiment_interleaving_"):
                continue
            counts = experiment(labels).bucket(int(labels["unit_bucket"]) % unit_buckets)
            value = int(sample.value)
            if attribute is not None:
                setattr(counts, attribute, getattr(counts, attribute) + value)
            elif sample.name == d.EXPERIMENT_INTERLEAVING_TIES.name:
                counts.interleaving_ties += value
            elif sample.name == d.EXPERIMENT_INTERLEAVING_WINS.name:
                wins = counts.interleaving_wins = counts.interleaving_wins or {}
                wins[labels["team"]] = wins.get(labels["team"], 0) + value
    return list(found.values())


def _pairs(experiment: ExperimentUnits, rate: Rate) -> list[tuple[float, float]]:
    def count(bucket: Any, name: str) -> float:
        if name == WITH_RESULTS:
            return bucket.searches - bucket.zero_result
        return getattr(bucket, name)

    return [(count(b, rate.numerator), count(b, rate.denominator))
            for b in experiment.filled()]


def _interval(estimate: Any) -> dict[str, float] | None:
    if estimate is None:
        return None
    return {"value": estimate.value, "low": estimate.low, "high": estimate.high,
            "stderr": estimate.stderr}


def verdicts(experiments: Iterable[ExperimentUnits], design: ExperimentDesign
             ) -> dict[str, Any]:
    """The report as one JSON-able dict (the shape of ``experiments --json``)."""
    by_application: dict[str, dict[str, ExperimentUnits]] = {}
    for experiment in merge_experiments(experiments):
        by_application.setdefault(experiment.application, {})[experiment.variant] = experiment
    return {"design": {"unit_buckets": design.unit_buckets, "t": design.t,
                       "control_variant": design.control_variant,
                       "split": dict(design.split) or "equal", "min_units": design.min_units,
                       "min_searches": design.min_searches},
            "applications": {application: _application_report(variants, design)
                             for application, variants in sorted(by_application.items())}}


def _application_report(variants: dict[str, ExperimentUnits], design: ExperimentDesign
                        ) -> dict[str, Any]:
    """One application's sample-ratio test and its variants, the control first (the others'
    differences are read against it)."""
    units = {v: e.units for v, e in variants.items()}
    tested = sample_ratio(units, dict(design.split))
    total = sum(units[v] for v in units if not design.split or v in dict(design.split))
    estimates = {v: {rate.ratio: clustered_ratio(_pairs(e, rate), design.unit_buckets, design.t)
                     for rate in RATES} for v, e in variants.items()}
    control = design.control_variant
    return {
        "sample_ratio": None if tested is None else {
            "chi2": tested[0], "df": tested[1], "p_value": tested[2], "units": total,
            "mismatch": tested[2] < SAMPLE_RATIO_P and total >= design.min_units},
        "variants": {variant: _variant_report(variant, variants, estimates, design)
                     for variant in sorted(variants, key=lambda v: (v != control, v))}}


def _variant_report(variant: str, variants: dict[str, ExperimentUnits],
                    estimates: dict[str, dict[str, Any]], design: ExperimentDesign
                    ) -> dict[str, Any]:
    """A variant's units and searches, each rate's interval and (for a variant other than the
    control, when both have an estimate) its difference from the control, and its
    interleaving wins if it interleaves."""
    control = design.control_variant
    experiment = variants[variant]
    searches = sum(b.searches for b in experiment.filled())
    entry: dict[str, Any] = {"units": experiment.units, "searches": searches,
                             "searches_without_client_id": experiment.without_client_id,
                             "rates": {}}
    for rate in RATES:
        mine = estimates[variant][rate.ratio]
        rated = {"title": rate.title, **(_interval(mine) or {"value": None})}
        theirs = estimates.get(control, {}).get(rate.ratio)
        if variant != control and mine is not None and theirs is not None:
            rated["difference"] = _compare(rate, mine, theirs, experiment,
                                           variants[control], design)
        entry["rates"][rate.ratio] = rated
    interleaved = _interleaving(experiment, design)
    if interleaved:
        entry["interleaving"] = interleaved
    return entry


def _compare(rate: Rate, mine: Any, theirs: Any, experiment: ExperimentUnits,
             control: ExperimentUnits, design: ExperimentDesign) -> dict[str, Any]:
    diff = difference(mine, theirs, design.t)
    denominator = sum(n for _, n in _pairs(experiment, rate))
    searches = sum(b.searches for b in (*experiment.filled(), *control.filled()))
    units = experiment.units + control.units
    return {**(_interval(diff) or {}),
            "verdict": verdict(rate, diff, denominator, design),
            "power": power(diff.value, diff.stderr, design.t),
            "searches_needed": still_needed(searches, diff.value, diff.stderr, design.t),
            "units_needed": still_needed(units, diff.value, diff.stderr, design.t)}


def _interleaving(experiment: ExperimentUnits, design: ExperimentDesign) -> dict[str, Any]:
    buckets = [(b.interleaving_wins, b.interleaving_ties) for b in experiment.filled()
               if b.interleaving_wins is not None]
    if not buckets:
        return {}
    teams = sorted({team for wins, _ in buckets for team in wins or {}})
    wins = {team: sum((w or {}).get(team, 0) for w, _ in buckets) for team in teams}
    return {"wins": wins, "ties": sum(ties for _, ties in buckets),
            "delta": {team: _interval(interleaving_preference(
                buckets, team, design.unit_buckets, design.t)) for team in teams}}


# -- text ------------------------------------------------------------------------------------
def _percent(value: float | None) -> str:
    return "no data" if value is None else f"{value:.2%}"


def _points(value: float) -> str:
    return f"{value * 100:+.2f}"


def text(report: dict[str, Any]) -> str:
    """The report for a terminal: per application, its sample ratio, then per rate each
    variant's value [95 % interval] and its difference from the control with a verdict."""
    design = report["design"]
    lines = [f"95 % intervals clustered by client ({design['unit_buckets']} unit buckets, "
             f"t = {design['t']:.4f}); control: {design['control_variant']}; design: "
             f"{_split(design['split'])}; a unit is a client_id (searches without one are in "
             "no statistic)"]
    for application, found in report["applications"].items():
        srm = found["sample_ratio"]
        lines.append("")
        if srm is None:
            lines.append(f"{application}: one variant, no sample-ratio test")
        else:
            flag = "  SAMPLE-RATIO MISMATCH" if srm["mismatch"] else ""
            lines.append(f"{application}: sample ratio chi² {srm['chi2']:.2f} ({srm['df']} df), "
                         f"p = {srm['p_value']:.4g} over {srm['units']:,} units{flag}")
        variants = found["variants"]
        lines.append(f"  {'variant':<16}{'units':>10}{'searches':>12}{'no client_id':>14}")
        for variant, entry in variants.items():
            lines.append(f"  {variant:<16}{entry['units']:>10,}{entry['searches']:>12,}"
                         f"{entry['searches_without_client_id']:>14,}")
        for rate in RATES:
            lines.append(f"  {rate.title}")
            for variant, entry in variants.items():
                rated = entry["rates"][rate.ratio]
                shown = _percent(rated["value"])
                if rated["value"] is not None:
                    shown += f" [{_percent(rated['low'])}, {_percent(rated['high'])}]"
                line = f"    {variant:<14}{shown:<30}"
                diff = rated.get("difference")
                if diff is not None:
                    line += (f"Δ {_points(diff['value'])} [{_points(diff['low'])}, "
                             f"{_points(diff['high'])}] pts  {diff['verdict']:<12}  power "
                             f"{diff['power']:.0%}{_needed(diff)}")
                lines.append(line.rstrip())
        for variant, entry in variants.items():
            if "interleaving" in entry:
                inter = entry["interleaving"]
                wins = ", ".join(f"{team} {n:,}" for team, n in inter["wins"].items())
                lines.append(f"  interleaving ({variant}): wins {wins}, ties "
                             f"{inter['ties']:,}")
                for team, delta in inter["delta"].items():
                    lines.append(f"    Δ {team:<12}{delta['value']:+.4f} "
                                 f"[{delta['low']:+.4f}, {delta['high']:+.4f}]")
    return "\n".join(lines) + "\n"


def _split(split: Any) -> str:
    return split if isinstance(split, str) else ", ".join(f"{v} {s:.0%}"
                                                         for v, s in split.items())


def _needed(diff: dict[str, Any]) -> str:
    if diff["searches_needed"] is None:
        return ""
    if not diff["searches_needed"]:
        return ", 80 % power reached"
    return (f", 80 % power with {diff['searches_needed']:,} more searches "
            f"({diff['units_needed']:,} more units)")
