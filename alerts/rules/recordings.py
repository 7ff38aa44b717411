"""The recording rules every alert group reads, and how an alert's builder is registered.

``Recordings`` adds each rule once, when something first reads it (the naming and the
no-data rule of every ratio: alerts/rules/__init__.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from alerts.config import (
    OVERVIEW_DASHBOARD,
    AlertRow,
    Profile,
    percentile,
    seconds,
)
from alerts.rules.names import (
    SAMPLE_RATIO_CHI2,
    baseline_name,
    count_name,
    interleaving_preference,
    operation,
    ratio_name,
    recorded,
    variant_series,
)
from collector import definitions as d
from collector.definitions import COUNTS, RATIOS
from collector.series.confidence_sequence import ALPHA, MIXTURE
from collector.series.experiment_stats import RATES, WITH_RESULTS, ExperimentRate

Rule = dict[str, Any]

# The overview's traffic-health stats, beside its headline row.
HEALTH_RATES = (d.EVENT_COVERAGE, d.AUTOMATED_SHARE, d.KEYSTROKES_PER_SEARCH)
# The overview's headline row and health stats read these counts (collector/definitions.py
# COUNTS) over the paging short window.
HEADLINE_COUNTS = tuple(dict.fromkeys(
    count for rate in (*d.HEADLINE_RATES, *HEALTH_RATES)
    for count in ("searches", rate.numerator, rate.denominator)))
# Experiment rates (collector/series/experiment_stats.py): each per variant with its always-valid
# 95 % interval and its difference from the control, since the collector started (the
# experiments dashboard: collector/series/confidence_sequence.py); the guardrails' differences
# also over the ticket window, fixed-horizon (their tickets).
GUARDRAIL_RATES = tuple(rate for rate in RATES if rate.guardrail)
LEVELS = {"application": "application", "application_stratum": "application, stratum",
          "application_variant": "application, variant",
          "application_variant_team": "application, variant, team",
          "application_variant_bucket": "application, variant, unit_bucket"}
# The sample-ratio ticket tests 2 to this many variants (p = 0.001 critical value per count).
MAX_TESTED_VARIANTS = 8
# An experiment rate's counts per unit bucket: a bucket attribute → its metric's count name.
BUCKET_COUNT_NAMES = {family.attribute: family.name.removeprefix("searchpulse_experiment_")
                      .removesuffix("_total") for family in d.BUCKET_COUNTS}
BUCKET_COUNT_NAMES[WITH_RESULTS] = d.WITH_RESULTS

# Panel ids of the dashboards (dashboards/ builds its panels with these ids).
PANELS = {
    **{rate.key: rate.panel for rate in d.RATES if rate.panel},  # the rates' headline stats
    "known_item_zero_result_rate": 3, "latency": 7, "traffic": 8,
    "experiment_traffic": 1, "experiment_zero_result_difference": 21,
    "experiment_slow_search_difference": 22,
    "throughput": 1, "consumer_lag": 2, "invalid_records": 3, "freshness": 4, "store": 9,
    "tracking": 26, "automated_traffic": 27,  # the overview's traffic-health row
}


def multiplier_expr(n: str) -> str:
    """z(n) of collector/series/confidence_sequence.py in PromQL, n a denominator series."""
    return (f"sqrt((1 + {MIXTURE!r} / ({n})) * (ln(1 + ({n}) / {MIXTURE!r}) + "
            f"{2 * math.log(1 / ALPHA)!r}))")


class Recordings:
    """The recording rules the alerts and dashboards read, each added once, dependencies first."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.rules: dict[str, Rule] = {}

    def _add(self, name: str, expr: str) -> str:
        """Records ``expr`` as ``name`` once; the same name for another expression (two
        readers that mean different things by one series) is a bug, not a rule to drop."""
        rule = self.rules.setdefault(name, {"record": name, "expr": expr})
        if rule["expr"] != expr:
            raise ValueError(f"recording rule {name} asked for as {expr!r}, recorded as "
                             f"{rule['expr']!r}")
        return name

    def count(self, level: str, count: str, window: str) -> str:
        derived = derivation(count)
        if derived:  # searches with results = searches − zero-result searches, all searches = …
            operator, parts = derived
            one, other = (self.count(level, c, window) for c in parts)
            return self._add(count_name(level, count, window), f"{one} {operator} {other}")
        definition = COUNTS[count]
        expr = (f"sum by ({LEVELS[level]}) (rate({definition.sample}"
                f"{{{self.profile.deployment.selector}}}[{window}]))")
        if definition.optional:  # 0 where a collector (of an older version) does not expose it
            expr = f"{expr} or 0 * {self.count(level, 'searches', window)}"
        return self._add(count_name(level, count, window), expr)

    def ratio(self, level: str, ratio: str, window: str) -> str:
        numerator, denominator = RATIOS[ratio].numerator, RATIOS[ratio].denominator
        above = self.count(level, numerator, window)
        below = self.count(level, denominator, window)
        return self._add(ratio_name(level, ratio, window), f"{above} / ({below} > 0)")

    def latency_quantile(self, window: str) -> str:
        """The latency quantile the guardrail alert judges, named after it (p99, p95, p99_9)."""
        quantile = percentile(self.profile.thresholds.latency_quantile).replace(".", "_")
        return self._add(
            recorded("application", "search_latency_seconds", f"{quantile}_rate{window}"),
            f"histogram_quantile({self.profile.thresholds.latency_quantile}, sum by "
            f"(application, le) (rate({d.SEARCH_LATENCY.name}_bucket"
            f"{{{self.profile.deployment.selector}}}[{window}])))")

    def interleaving(self, window: str) -> tuple[str, str]:
        """Δ of each team against the rest (for two teams: Δ_AB) and the half-width of its
        95 % interval, per application and variant (collector/sessions/interleaving.py), clustered
        by client: the score of team a in unit bucket b is y_b = wins_a,b + ties_b / 2 of n_b =
        contests_b, and Δ + ½ = Σy / Σn with the buckets' variance (experiment_stats.py),
        expanded as Σy² − 2p·Σyn + p²·Σn² (a bucket where a team won nothing has no series)."""
        sel = self.profile.deployment.selector
        design = self.profile.experiments
        factor = design.unit_buckets / (design.unit_buckets - 1)
        in_bucket = "on (application, variant, unit_bucket) group_left"
        by = "on (application, variant) group_left"
        wins = self._add(
            recorded("application_variant_team_bucket", "experiment_interleaving_wins",
                     f"increase{window}"),
            f"sum by (application, variant, team, unit_bucket) (increase("
            f"{d.EXPERIMENT_INTERLEAVING_WINS.name}{{{sel}}}[{window}]))")
        ties = self._add(
            recorded("application_variant_bucket", "experiment_interleaving_ties",
                     f"increase{window}"),
            f"sum by (application, variant, unit_bucket) (increase("
            f"{d.EXPERIMENT_INTERLEAVING_TIES.name}{{{sel}}}[{window}]))")
        contests_b = self._add(
            recorded("application_variant_bucket", "experiment_interleaving_contests",
                     f"increase{window}"),
            f"sum by (application, variant, unit_bucket) ({wins}) + {ties}")
        score = self._add(
            recorded("application_variant_team_bucket", "experiment_interleaving_score",
                     f"increase{window}"), f"{wins} + {in_bucket} {ties} / 2")
        contests = self._add(
            recorded("application_variant", "interleaving_contests", f"increase{window}"),
            f"sum by (application, variant) ({contests_b}) > 0")
        preference_name, interval_name = interleaving_preference(window)
        preference = self._add(
            preference_name,
            f"sum by (application, variant, team) ({score}) / {by} {contests} - 0.5")
        share = f"({preference} + 0.5)"
        spread = (f"sum by (application, variant, team) ({score} ^ 2) - 2 * {share} * sum by "
                  f"(application, variant, team) ({score} * {in_bucket} {contests_b}) + "
                  f"{share} ^ 2 * {by} sum by (application, variant) ({contests_b} ^ 2)")
        interval = self._add(
            interval_name,
            f"{design.t!r} * sqrt(clamp_min({factor!r} * ({spread}) / {by} {contests} ^ 2, 0))")
        return preference, interval

    def variant_count(self, count: str, window: str) -> str:
        """A count per application and experiment variant (every variant but none and
        other): its increase over the window."""
        return self._count_of("application_variant", count, window, lambda c: (
            c, COUNTS[c].sample, ',variant!~"none|other"'))

    def variant_ratio(self, ratio: str, window: str) -> str:
        """A ratio per application and experiment variant over the window."""
        numerator, denominator = RATIOS[ratio].numerator, RATIOS[ratio].denominator
        above = self.variant_count(numerator, window)
        below = self.variant_count(denominator, window)
        return self._add(variant_series(ratio, f"ratio_increase{window}"),
                         f"{above} / ({below} > 0)")

    # -- experiments at the unit of randomization (collector/series/experiment_stats.py) -----------
    def bucket_count(self, count: str, window: str | None) -> str:
        """An experiment count per application, variant and unit bucket (collector/series/units.py)
        over the window (None: since the collector started)."""
        return self._count_of("application_variant_bucket", count, window, lambda c: (
            f"experiment_{c}", f"{d.PREFIX}experiment_{c}_total", ""))

    def _count_of(self, level: str, count: str, window: str | None,
                  source: Callable[[str], tuple[str, str, str]]) -> str:
        """``count``'s increase over the window (None: the counter as it stands, counted since
        the collector started) summed by ``level``; ``source(count)`` gives its recorded name,
        its counter and extra matchers. A derived count (``derivation``) is the sum or
        difference of its two counts of the same level."""
        name = recorded(level, source(count)[0], operation(window))
        derived = derivation(count)
        if derived:
            operator, parts = derived
            one, other = (self._count_of(level, c, window, source) for c in parts)
            return self._add(name, f"{one} {operator} {other}")
        _, counter, matchers = source(count)
        series = f"{counter}{{{self.profile.deployment.selector}{matchers}}}"
        expr = (f"sum by ({LEVELS[level]}) "
                f"({series if window is None else f'increase({series}[{window}])'})")
        if COUNTS[count].optional:  # 0 where a collector (of an older version) does not expose it
            expr = f"{expr} or 0 * {self._count_of(level, 'searches', window, source)}"
        return self._add(name, expr)

    def experiment_count(self, count: str, window: str | None) -> str:
        """An experiment count per application and variant: the sum of its buckets."""
        return self._add(recorded("application_variant", f"experiment_{count}",
                                  operation(window)),
                         f"sum by (application, variant) ({self.bucket_count(count, window)})")

    def estimate(self, rate: ExperimentRate, window: str | None) -> tuple[str, str, str]:
        """(rate, variance, denominator) per application and variant: R = Σy / Σn over the
        unit buckets, Var = B/(B−1) · Σ_b (y_b − R·n_b)² / (Σn)², and Σn."""
        factor = self.profile.experiments.unit_buckets / (
            self.profile.experiments.unit_buckets - 1)
        y = self.bucket_count(BUCKET_COUNT_NAMES[rate.numerator], window)
        n = self.bucket_count(BUCKET_COUNT_NAMES[rate.denominator], window)
        total = self.experiment_count(BUCKET_COUNT_NAMES[rate.denominator], window)
        above = self.experiment_count(BUCKET_COUNT_NAMES[rate.numerator], window)
        ratio = self._add(variant_series(rate.ratio, f"ratio_{operation(window)}"),
                          f"{above} / ({total} > 0)")
        variance = self._add(
            variant_series(rate.ratio, f"clustered_variance_{operation(window)}"),
            f"{factor!r} * sum by (application, variant) (({y} - {n} * on (application, "
            f"variant) group_left {ratio}) ^ 2) / {total} ^ 2")
        return ratio, variance, total

    def difference(self, rate: ExperimentRate, window: str) -> tuple[str, str, str]:
        """(difference, 95 % low, 95 % high) of each variant's rate from the control's over the
        window, per application: d = R_v − R_c, Var(d) = Var(R_v) + Var(R_c), d ± t·√Var(d)
        (t: Student, B − 1 degrees of freedom): fixed-horizon, what the guardrail tickets
        judge once per evaluation (the dashboards show ``always_valid_difference``)."""
        design = self.profile.experiments
        control, others = self._variants()
        ratio, variance, _ = self.estimate(rate, window)
        value = self._add(variant_series(rate.ratio, f"difference_increase{window}"),
                          f"{ratio}{others} - on (application) group_left {ratio}{control}")
        half = (f"{design.t!r} * sqrt({variance}{others} + on (application) group_left "
                f"{variance}{control})")
        low = self._add(variant_series(rate.ratio, f"difference_low_increase{window}"),
                        f"{value} - {half}")
        high = self._add(variant_series(rate.ratio, f"difference_high_increase{window}"),
                         f"{value} + {half}")
        return value, low, high

    # -- always-valid intervals since the collector started (series/confidence_sequence.py) -----
    def always_valid(self, rate: ExperimentRate) -> tuple[str, str, str]:
        """(rate, always-valid 95 % low, high) per application and variant, from the counters
        as they stand (since the collector started: what ``experiments --metrics`` reads from a
        scrape): R ± z(n)·√Var inside [0, 1], n = Σn."""
        ratio, variance, total = self.estimate(rate, None)
        half = f"{multiplier_expr(total)} * sqrt({variance})"
        low = self._add(variant_series(rate.ratio, "always_valid_low_sum"),
                        f"clamp_min({ratio} - {half}, 0)")
        high = self._add(variant_series(rate.ratio, "always_valid_high_sum"),
                         f"clamp_max({ratio} + {half}, 1)")
        return ratio, low, high

    def always_valid_difference(self, rate: ExperimentRate) -> tuple[str, str, str]:
        """(difference, always-valid 95 % low, high) of each variant's rate from the
        control's since the collector started: d ± z(n)·√(Var_v + Var_c) inside [−1, 1], n the
        mean of the two denominators."""
        ratio, variance, total = self.estimate(rate, None)
        control, others = self._variants()
        value = self._add(variant_series(rate.ratio, "difference_sum"),
                          f"{ratio}{others} - on (application) group_left {ratio}{control}")
        n = f"({total}{others} + on (application) group_left {total}{control}) / 2"
        half = (f"{multiplier_expr(n)} * sqrt({variance}{others} + on (application) "
                f"group_left {variance}{control})")
        low = self._add(variant_series(rate.ratio, "difference_always_valid_low_sum"),
                        f"clamp_min({value} - {half}, -1)")
        high = self._add(variant_series(rate.ratio, "difference_always_valid_high_sum"),
                         f"clamp_max({value} + {half}, 1)")
        return value, low, high

    def _variants(self) -> tuple[str, str]:
        """The selectors of the control variant and of every other."""
        control = self.profile.experiments.control_variant
        return f'{{variant="{control}"}}', f'{{variant!="{control}"}}'

    def sample_ratio(self) -> tuple[str, str, str]:
        """(χ² per application, units per application, variants tested per application) of
        the units against the designed split (experiments.split, renormalized over the
        designed variants present) or an equal split of the variants present."""
        design = self.profile.experiments
        units = self._add(recorded("application_variant", "experiment_units", "sum"),
                          f"sum by (application, variant) ({d.EXPERIMENT_UNITS.name}"
                          f"{{{self.profile.deployment.selector}}})")
        shares = (" or ".join(f'{units}{{variant="{variant}"}} * 0 + {share!r}'
                              for variant, share in design.split)
                  if design.split else f"{units} * 0 + 1")
        share = self._add(recorded("application_variant", "experiment_design_share", "ratio"),
                          shares)
        total = self._add(recorded("application", "experiment_units", "sum"),
                          f"sum by (application) ({units} and {share})")
        expected = self._add(
            recorded("application_variant", "experiment_units_expected", "sum"),
            f"{share} / on (application) group_left () (sum by (application) ({share}) > 0) * on "
            f"(application) group_left {total}")
        chi2 = self._add(SAMPLE_RATIO_CHI2,
                         f"sum by (application) (({units} - {expected}) ^ 2 / ({expected} > 0))")
        return chi2, total, f"count by (application) ({share})"

    def baseline(self, name: str, offsets: tuple[str, ...] | None = None) -> str:
        """The median of the same window at ``offsets`` earlier, of those that exist: by default
        ``alerts.windows.baseline_offsets`` (1, 2 and 3 weeks); the traffic-health alerts pass
        ``health_baseline_offsets`` (a day too). One series has one baseline: ``_add`` refuses
        a second set of offsets under the same name."""
        offsets = offsets or self.profile.windows.baseline_offsets
        earlier = " or ".join(
            f'label_replace({name} offset {offset}, "baseline_offset", "{offset}", "", "")'
            for offset in offsets)
        return self._add(baseline_name(name),
                         f"quantile by (application) (0.5, {earlier})")


@dataclass(frozen=True)
class Built:
    """What an alert's builder returns: the expression, its texts and where it links."""

    expr: str
    summary: str
    description: str
    panel: str
    kind: str = "quality"
    dashboard: str = OVERVIEW_DASHBOARD
    per_application: bool = True
    # Whether the alert's number rests on the front end's events, so that SearchTrackingBroken
    # of its application mutes it (its rule carries the label NEEDS_TRACKING). Every builder
    # says so: True for what people did after a search (clicks end an abandonment and forestall
    # a reformulation; the automated rules `silent` and `repetitive` read "no interaction")
    # and for the verdicts on rankings (judged relevance, experiment guardrails), whose sample
    # — the intents and the people — events decide; False for failures seen without any event
    # (zero results, known items, latency, traffic) and for the pipeline.
    needs_tracking: bool = field(kw_only=True)


Builder = Callable[[Profile, AlertRow, Recordings], Built]
BUILDERS: dict[str, Builder] = {}


def builds(name: str) -> Callable[[Builder], Builder]:
    def register(builder: Builder) -> Builder:
        BUILDERS[name] = builder
        return builder
    return register


def guarded(rec: Recordings, condition: str, window: str, minimum: int,
             baseline_minimum: bool = False, traffic: str = "searches",
             offsets: tuple[str, ...] | None = None) -> str:
    """Adds the minimum-traffic guard (and for baseline alerts: enough baseline traffic, over
    the baseline's ``offsets``); ``traffic``: the recorded count that must reach ``minimum`` in
    ``window``."""
    searches = rec.count("application", traffic, window)
    expr = f"({condition})\nand on (application) {searches} * {seconds(window)} >= {minimum}"
    if baseline_minimum:
        expr += f"\nand on (application) {enough_baseline(rec, traffic, window, minimum, offsets)}"
    return expr


def enough_baseline(rec: Recordings, traffic: str, window: str, minimum: int,
                    offsets: tuple[str, ...] | None = None) -> str:
    """The applications whose baseline of ``traffic`` reaches ``minimum`` in ``window``."""
    searches = rec.count("application", traffic, window)
    return f"{rec.baseline(searches, offsets)} * {seconds(window)} >= {minimum}"


def baseline_text(name: str, fmt: str = "humanizePercentage") -> str:
    return (f'{{{{ with printf "{baseline_name(name)}{{application=%q}}" $labels.application '
            f"| query }}}}{{{{ . | first | value | {fmt} }}}}{{{{ else }}}}none yet{{{{ end }}}}")


def weeks_ago(profile: Profile, offsets: tuple[str, ...] | None = None) -> str:
    return ", ".join(offsets or profile.windows.baseline_offsets) + " earlier"


def derivation(count: str) -> tuple[str, tuple[str, str]] | None:
    """How a count without a series of its own is made from two that have one: ``("-",
    Count.difference)`` (searches with results) or ``("+", Count.total)`` (all searches);
    None for a counted one. The recording rules and the panels build it the same way."""
    definition = COUNTS[count]
    if definition.difference:
        return "-", definition.difference
    if definition.total:
        return "+", definition.total
    return None
