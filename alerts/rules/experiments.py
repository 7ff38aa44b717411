"""Alerts on experiments at the unit of randomization (alerts/tests/experiments.test.yml):
sample ratio, guardrails."""

from __future__ import annotations

from alerts.config import (
    EXPERIMENTS_DASHBOARD,
    AlertRow,
    Profile,
    duration,
)
from alerts.rules.recordings import (
    BUCKET_COUNT_NAMES,
    BUILDERS,
    GUARDRAIL_RATES,
    MAX_TESTED_VARIANTS,
    Builder,
    Built,
    Recordings,
    builds,
)
from collector.series.experiment_stats import ExperimentRate, chi2_critical


@builds("SearchExperimentSampleRatioMismatch")
def _sample_ratio(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    design = profile.experiments
    chi2, units, variants = rec.sample_ratio()
    tests = "\nor ".join(
        f"({chi2} > {chi2_critical(df)!r} and on (application) {variants} == {df + 1})"
        for df in range(1, MAX_TESTED_VARIANTS))
    split = (", ".join(f"{variant} {share:.0%}" for variant, share in design.split)
             if design.split else "an equal split")
    window = duration(design.unit_window_s)
    return Built(
        f"({tests})\nand on (application) {units} >= {design.min_units}",
        "The experiment traffic of {{ $labels.application }} is not split as designed.",
        f"The units (distinct clients) of {{{{ $labels.application }}}} seen over the last "
        f"{window} are split across its variants so unevenly that the design ({split}) "
        f"explains it with p < 0.001 (chi-square {{{{ $value | printf \"%.1f\" }}}}): a "
        f"sample-ratio mismatch. Assignment or logging is broken for one variant, and every "
        f"comparison between them is biased until fixed.",
        "experiment_traffic", dashboard=EXPERIMENTS_DASHBOARD, needs_tracking=False)


def _non_inferiority(rate: ExperimentRate, noun: str, summary: str, panel: str) -> Builder:
    """Guardrails are read for non-inferiority, not lift: a variant fails when even the low end
    of the clustered 95 % interval of its difference from the control is worse than the margin,
    with experiments.min_searches (the rate's denominator) in the variant."""

    def build(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
        design = profile.experiments
        margin = getattr(design, rate.guardrail or "")
        _, window = profile.windows.pair(row.windows)
        _, low, _ = rec.difference(rate, window)
        searches = rec.experiment_count(BUCKET_COUNT_NAMES[rate.denominator], window)
        return Built(
            f"{low} > {margin}\nand on (application, variant) {searches} >= "
            f"{design.min_searches}",
            f"Variant {{{{ $labels.variant }}}} of {{{{ $labels.application }}}} {summary} "
            "than the control.",
            f"Even the low end of the 95 % interval (clustered by client) of the difference in "
            f"the {noun} between variant {{{{ $labels.variant }}}} and the "
            f"{design.control_variant} variant ({{{{ $value | humanizePercentage }}}} over "
            f"{window}) is above the non-inferiority margin ({margin:.0%}): the variant is "
            f"worse on a guardrail, whatever it wins elsewhere.",
            panel, dashboard=EXPERIMENTS_DASHBOARD, needs_tracking=True)

    return build


_ZERO_RATE, _SLOW_RATE = GUARDRAIL_RATES
BUILDERS["SearchExperimentGuardrailWorse"] = _non_inferiority(
    _ZERO_RATE, "zero-result rate", "finds nothing more often",
    "experiment_zero_result_difference")
BUILDERS["SearchExperimentLatencyGuardrailWorse"] = _non_inferiority(
    _SLOW_RATE, "share of searches slower than the latency guardrail", "is slow more often",
    "experiment_slow_search_difference")
