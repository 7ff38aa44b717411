"""``searchpulse experiments``: the verdict of every experiment, at the unit of randomization.

Per application and experiment variant: units, searches, the sample-ratio test, each rate with
its 95 % interval clustered by client (Wilson-type: inside [0, 1]), each difference from the
control with its interval, p-value, Holm-adjusted p-value (the family: every difference of the
report) and a verdict (better / worse / inconclusive / guardrail breached), the ratio to the
control on the log scale, the power at the observed difference and the traffic still needed
for 80 %; and per application interleaving's Δ per variant, ``none`` included (an interleaved
log needs no variants). The clustered estimates are ``collector.series.experiment_stats``'s
(the recording rules' definition); the intervals and p-values are feedback/experiments/
intervals.py's, each pair from one computation.

The sums come from UBI logs (replayed through the engine with one bucket per client: exact
clustering, G = the clients; units are the distinct clients of the whole log) or from a /metrics
exposition (a scrape of a running collector, or `replay --metrics-out`: its counters since the
collector started over its hashed unit buckets, G = ``experiments.unit_buckets``; its units
those of its window).

The control of an application is ``experiments.control_variant``; when that is not one of its
variants and exactly one of ``CONVENTIONAL_CONTROLS`` is, that one (the report says which);
otherwise ExperimentError names the variants seen.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from collector import definitions as d
from collector.config import Config
from collector.engine import Engine
from collector.errors import ExperimentError
from collector.replay import feed
from collector.series.experiment_stats import (
    RATES,
    SAMPLE_RATIO_P,
    WITH_RESULTS,
    Estimate,
    ExperimentDesign,
    ExperimentRate,
    clustered_ratio,
    guardrail_breached,
    interleaving_preference,
    power,
    sample_ratio,
    still_needed,
    t_quantile,
)
from collector.series.labels import NONE
from collector.series.units import ExperimentUnits, merge_experiments
from feedback.experiments.intervals import (
    ALPHA,
    Tested,
    difference,
    holm,
    rate_interval,
    ratio,
    share_against_half,
)


def from_logs(paths: list[str], config: Config, progress: bool = False
              ) -> tuple[list[ExperimentUnits], str | None]:
    """The clients' sums of a replay of ``paths`` (one bucket per client, ``none`` included:
    exact clustering; units: the distinct clients of the whole log), and the message of an
    input that could not be read to its end."""
    whole_log = dict(config)
    whole_log["experiments.unit_window_s"] = math.inf
    engine = Engine(Config(whole_log, config.sources), by_client=True)
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


def bucket_pairs(experiment: ExperimentUnits, rate: ExperimentRate) -> list[tuple[float, float]]:
    def count(bucket: Any, name: str) -> float:
        if name == WITH_RESULTS:
            return bucket.searches - bucket.zero_result
        return getattr(bucket, name)

    return [(count(b, rate.numerator), count(b, rate.denominator))
            for b in experiment.filled()]


# Variant names taken as the control when the configured one is not a variant of an
# application and exactly one of these is (docs/metrics.md, "searchpulse experiments").
CONVENTIONAL_CONTROLS = ("control", "baseline", "a", "A")


def _tested(tested: Tested) -> dict[str, Any]:
    entry = {"value": tested.value, "low": tested.low, "high": tested.high,
             "stderr": tested.stderr}
    if tested.p_value is not None:
        entry["p_value"] = tested.p_value
    return entry


def verdicts(experiments: Iterable[ExperimentUnits], design: ExperimentDesign,
             by_client: bool = False) -> dict[str, Any]:
    """The report as one JSON-able dict (the shape of ``experiments --json``). ``by_client``:
    the buckets are the clients themselves (``from_logs``), else ``design.unit_buckets``
    hashed buckets (an exposition). Raises ExperimentError when an application's variants
    include no control (``CONVENTIONAL_CONTROLS``)."""
    by_application: dict[str, dict[str, ExperimentUnits]] = {}
    for experiment in merge_experiments(experiments):
        by_application.setdefault(experiment.application, {})[experiment.variant] = experiment
    applications = {application: _application_report(variants, design, by_client)
                    for application, variants in sorted(by_application.items())}
    applications = {a: found for a, found in applications.items()
                    if found["variants"] or found["interleaving"]}
    family = _adjust(applications, design)
    return {"design": {"clusters": "client" if by_client else design.unit_buckets,
                       "control_variant": design.control_variant,
                       "split": dict(design.split) or "equal", "min_units": design.min_units,
                       "min_searches": design.min_searches,
                       "multiplicity": {"method": "holm", "comparisons": family}},
            "applications": applications}


def control_of(application: str, variants: Iterable[str], configured: str
             ) -> tuple[str, str]:
    """(the control variant, "configured" or "conventional") of an application's variants."""
    seen = sorted(variants)
    if configured in seen:
        return configured, "configured"
    conventional = [name for name in CONVENTIONAL_CONTROLS if name in seen]
    if len(conventional) == 1:
        return conventional[0], "conventional"
    raise ExperimentError(
        f"{application}: the control variant {configured!r} (experiments.control_variant) "
        f"is not among the variants seen: {', '.join(seen)}; set it to one of them"
        + ("" if not conventional else f" (several conventional names: "
           f"{', '.join(conventional)})"))


def _clusters(denominators: Iterable[float], design: ExperimentDesign, by_client: bool
              ) -> int:
    """G of the clustered variance: the clients with a denominator (those a regression on
    the rate's searches would see), or the hashed buckets."""
    return sum(1 for n in denominators if n) if by_client else design.unit_buckets


_Clustered = tuple[Estimate | None, int]  # a clustered rate (None: no variance) and its G


def _application_report(variants: dict[str, ExperimentUnits], design: ExperimentDesign,
                        by_client: bool) -> dict[str, Any]:
    """One application's sample-ratio test, its variants (the control first: the others'
    differences are read against it) and its interleaving, ``none`` included."""
    interleaving = {v: found for v, e in sorted(variants.items())
                    if (found := _interleaving(e, design, by_client))}
    variants = {v: e for v, e in variants.items() if v != NONE}
    if not variants:
        return {"control": None, "sample_ratio": None, "variants": {},
                "interleaving": interleaving}
    control, chosen = control_of(next(iter(variants.values())).application, variants,
                               design.control_variant)
    units = {v: e.units for v, e in variants.items()}
    tested = sample_ratio(units, dict(design.split))
    total = sum(units[v] for v in units if not design.split or v in dict(design.split))
    estimates = {v: {rate.ratio: _estimate(bucket_pairs(e, rate), design, by_client)
                     for rate in RATES} for v, e in variants.items()}
    return {
        "control": {"variant": control, "chosen": chosen},
        "sample_ratio": None if tested is None else {
            "chi2": tested[0], "df": tested[1], "p_value": tested[2], "units": total,
            "mismatch": tested[2] < SAMPLE_RATIO_P and total >= design.min_units},
        "variants": {variant: _variant_report(variant, control, variants, estimates, design)
                     for variant in sorted(variants, key=lambda v: (v != control, v))},
        "interleaving": interleaving}


def _estimate(pairs: list[tuple[float, float]], design: ExperimentDesign, by_client: bool
              ) -> _Clustered:
    """The clustered rate (None without data or with one cluster: no variance) and its G."""
    clusters = _clusters((n for _, n in pairs), design, by_client)
    if clusters < 2:
        return None, clusters
    return clustered_ratio(pairs, clusters, t_quantile(clusters - 1)), clusters


def _variant_report(variant: str, control: str, variants: dict[str, ExperimentUnits],
                    estimates: dict[str, dict[str, _Clustered]], design: ExperimentDesign
                    ) -> dict[str, Any]:
    """A variant's units and searches, each rate's interval and (for a variant other than the
    control, when both have an estimate) its difference from the control."""
    experiment = variants[variant]
    searches = sum(b.searches for b in experiment.filled())
    entry: dict[str, Any] = {"units": experiment.units, "searches": searches,
                             "searches_without_client_id": experiment.without_client_id,
                             "rates": {}}
    for rate in RATES:
        mine, clusters = estimates[variant][rate.ratio]
        denominator = sum(n for _, n in bucket_pairs(experiment, rate))
        rated: dict[str, Any] = {"title": rate.title, "value": None, "clusters": clusters}
        if mine is not None:
            rated.update(_tested(rate_interval(mine, denominator, clusters - 1)))
        theirs, control_clusters = estimates[control][rate.ratio]
        if variant != control and mine is not None and theirs is not None:
            df = min(clusters, control_clusters) - 1
            rated["difference"] = _compare(rate, mine, theirs, df, experiment,
                                           variants[control], design)
            relative = ratio(mine, theirs, df)
            if relative is not None:
                rated["ratio"] = _tested(relative)
        entry["rates"][rate.ratio] = rated
    return entry


def _compare(rate: ExperimentRate, mine: Estimate, theirs: Estimate, df: int,
             experiment: ExperimentUnits, control: ExperimentUnits, design: ExperimentDesign
             ) -> dict[str, Any]:
    """The difference with its interval and p-value; the verdict waits for the family's
    adjustment (``_adjust``)."""
    diff = difference(mine, theirs, df)
    denominator = sum(n for _, n in bucket_pairs(experiment, rate))
    searches = sum(b.searches for b in (*experiment.filled(), *control.filled()))
    units = experiment.units + control.units
    t = t_quantile(df)
    return {**_tested(diff),
            "guardrail_breached": guardrail_breached(rate, diff.low, denominator, design),
            "power": power(diff.value, diff.stderr, t),
            "searches_needed": still_needed(searches, diff.value, diff.stderr, t),
            "units_needed": still_needed(units, diff.value, diff.stderr, t)}


def _adjust(applications: dict[str, Any], design: ExperimentDesign) -> int:
    """Holm's adjustment over every difference of the report (metrics × applications ×
    variants), and each one's verdict from it: a guardrail breached (non-inferiority fails,
    read on the unadjusted interval), better / worse when the adjusted p < 0.05, else
    inconclusive. Returns the family's size."""
    family = [(rate, rated["difference"]) for found in applications.values()
              for entry in found["variants"].values() for rate in RATES
              if "difference" in (rated := entry["rates"][rate.ratio])]
    for (rate, diff), adjusted in zip(family, holm([found["p_value"] for _, found in family]),
                                      strict=True):
        diff["p_holm"] = adjusted
        if diff.pop("guardrail_breached"):
            diff["verdict"] = "guardrail breached"
        elif adjusted >= ALPHA:
            diff["verdict"] = "inconclusive"
        else:
            diff["verdict"] = "better" if (diff["value"] > 0) == rate.higher_is_better \
                else "worse"
    return len(family)


def _interleaving(experiment: ExperimentUnits, design: ExperimentDesign, by_client: bool
                  ) -> dict[str, Any]:
    """Wins and ties per team, and each team's Δ with its interval and p-value (the score
    test of a share of ½), clustered like the rates."""
    buckets = [(b.interleaving_wins, b.interleaving_ties) for b in experiment.filled()
               if b.interleaving_wins is not None]
    if not buckets:
        return {}
    teams = sorted({team for wins, _ in buckets for team in wins or {}})
    wins = {team: sum((w or {}).get(team, 0) for w, _ in buckets) for team in teams}
    per_bucket = [sum((w or {}).values()) + ties for w, ties in buckets]
    contests = sum(per_bucket)
    clusters = _clusters(per_bucket, design, by_client)
    found: dict[str, Any] = {"wins": wins, "ties": sum(ties for _, ties in buckets),
                             "clusters": clusters, "delta": {}}
    if clusters < 2:
        return found
    for team in teams:
        delta = interleaving_preference(buckets, team, clusters, t_quantile(clusters - 1))
        if delta is not None:
            share = Estimate(delta.value + 0.5, delta.variance, delta.low + 0.5,
                             delta.high + 0.5)
            found["delta"][team] = _tested(share_against_half(share, contests, clusters - 1))
    return found


# -- text ------------------------------------------------------------------------------------
def _percent(value: float | None) -> str:
    return "no data" if value is None else f"{value:.2%}"


def _points(value: float) -> str:
    return f"{value * 100:+.2f}"


def clustering(design: dict[str, Any]) -> str:
    """How the report's intervals are clustered and adjusted, in one phrase."""
    clusters = ("clustered by client exactly (one cluster per client)"
                if design["clusters"] == "client"
                else f"clustered over {design['clusters']} hashed client buckets")
    return (f"95 % intervals {clusters}; verdicts at Holm-adjusted p < 0.05 over the "
            f"{design['multiplicity']['comparisons']} differences of the report")


def lone_controls(report: dict[str, Any]) -> dict[str, str]:
    """The applications of a report whose control is their only variant and which have no
    interleaving: application → its control (the report compares nothing there)."""
    return {application: found["control"]["variant"]
            for application, found in report["applications"].items()
            if found["control"] is not None and len(found["variants"]) == 1
            and not found["interleaving"]}


def control_note(found: dict[str, Any], configured: str) -> str:
    """Which variant is the application's control, and why when it is not the configured."""
    control = found["control"]
    if control is None:
        return "no variant: interleaving only"
    if control["chosen"] == "conventional":
        return (f"control: {control['variant']} (the one conventional control name among "
                f"the variants; {configured!r} is not one)")
    return f"control: {control['variant']}"


def text(report: dict[str, Any]) -> str:
    """The report for a terminal: per application, its sample ratio, then per rate each
    variant's value [95 % interval] and its difference from the control with its p-values
    and a verdict, then interleaving's Δ."""
    design = report["design"]
    lines = [f"{clustering(design)}; design: {_split(design['split'])}; a unit is a "
             "client_id (searches without one are in no statistic)"]
    for application, found in report["applications"].items():
        srm = found["sample_ratio"]
        lines.append("")
        lines.append(f"{application}: {control_note(found, design['control_variant'])}")
        if srm is None:
            lines.append("  no sample-ratio test (fewer than two variants)")
        else:
            flag = "  SAMPLE-RATIO MISMATCH" if srm["mismatch"] else ""
            lines.append(f"  sample ratio chi² {srm['chi2']:.2f} ({srm['df']} df), "
                         f"p = {srm['p_value']:.4g} over {srm['units']:,} units{flag}")
        variants = found["variants"]
        if variants:
            lines.append(f"  {'variant':<16}{'units':>10}{'searches':>12}{'no client_id':>14}")
        for variant, entry in variants.items():
            lines.append(f"  {variant:<16}{entry['units']:>10,}{entry['searches']:>12,}"
                         f"{entry['searches_without_client_id']:>14,}")
        for rate in RATES if variants else ():
            lines.append(f"  {rate.title}")
            for variant, entry in variants.items():
                lines.append(_rate_line(variant, entry["rates"][rate.ratio]))
        for variant, inter in found["interleaving"].items():
            wins = ", ".join(f"{team} {n:,}" for team, n in inter["wins"].items())
            lines.append(f"  interleaving ({variant}): wins {wins}, ties {inter['ties']:,}")
            for team, delta in inter["delta"].items():
                lines.append(f"    Δ {team:<12}{delta['value']:+.4f} "
                             f"[{delta['low']:+.4f}, {delta['high']:+.4f}]  "
                             f"p = {delta['p_value']:.3g}")
    return "\n".join(lines) + "\n"


def _rate_line(variant: str, rated: dict[str, Any]) -> str:
    shown = _percent(rated["value"])
    if rated["value"] is not None and "low" in rated:
        shown += f" [{_percent(rated['low'])}, {_percent(rated['high'])}]"
    line = f"    {variant:<14}{shown:<30}"
    diff = rated.get("difference")
    if diff is not None:
        line += (f"Δ {_points(diff['value'])} [{_points(diff['low'])}, "
                 f"{_points(diff['high'])}] pts  p = {diff['p_value']:.3g} "
                 f"(Holm {diff['p_holm']:.3g})  {diff['verdict']:<12}")
        if "ratio" in rated:
            relative = rated["ratio"]
            line += (f"  ×{relative['value']:.3f} [{relative['low']:.3f}, "
                     f"{relative['high']:.3f}]")
        line += f"  power {diff['power']:.0%}{_needed(diff)}"
    return line.rstrip()


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
