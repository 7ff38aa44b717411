"""Recording and alerting rules, built from `alerts.config`: one expression builder per alert.

Recording rules are named `level:metric:operations` and generated on first use, so each one has
a consumer (an alert, another recording rule, or the dashboards' headline row). Every ratio divides
a summed numerator by a summed denominator (never an average of ratios), and a zero denominator
gives no sample (no data) instead of NaN or 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from alerts.config import (
    EXPERIMENTS_DASHBOARD,
    HEALTH_DASHBOARD,
    OVERVIEW_DASHBOARD,
    AlertRow,
    Profile,
    duration,
    percentile,
    seconds,
)
from collector import definitions as d
from collector.definitions import COUNTS, RATIOS
from collector.errors import ConfigError
from collector.experiment_stats import RATES, WITH_RESULTS, Rate, chi2_critical

Rule = dict[str, Any]

# The overview's headline row reads these counts (collector/definitions.py COUNTS).
HEADLINE_COUNTS = ("searches", "zero_result_searches", "clicked_searches",
                   "reformulated_searches", "abandoned_searches", "searches_with_results")
# Experiment rates (collector/experiment_stats.py): each per variant with its clustered 95 %
# interval and its difference from the control; the guardrails' over the ticket window, the
# rest over the paging window (the experiments dashboard).
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
}


def count_name(level: str, count: str, window: str) -> str:
    return f"{level}:searchpulse_{count}:rate{window}"


def ratio_name(level: str, ratio: str, window: str) -> str:
    return f"{level}:searchpulse_{ratio}:ratio_rate{window}"


def baseline_name(name: str) -> str:
    return f"{name}_baseline"


class Recordings:
    """The recording rules the alerts and dashboards read, each added once, dependencies first."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.rules: dict[str, Rule] = {}

    def _add(self, name: str, expr: str) -> str:
        self.rules.setdefault(name, {"record": name, "expr": expr})
        return name

    def count(self, level: str, count: str, window: str) -> str:
        definition = COUNTS[count]
        if definition.difference:  # searches with results = searches − zero-result searches
            whole, part = (self.count(level, c, window) for c in definition.difference)
            return self._add(count_name(level, count, window), f"{whole} - {part}")
        return self._add(count_name(level, count, window),
                         f"sum by ({LEVELS[level]}) (rate({definition.sample}"
                         f"{{{self.profile.deployment.selector}}}[{window}]))")

    def ratio(self, level: str, ratio: str, window: str) -> str:
        numerator, denominator = RATIOS[ratio].numerator, RATIOS[ratio].denominator
        above = self.count(level, numerator, window)
        below = self.count(level, denominator, window)
        return self._add(ratio_name(level, ratio, window), f"{above} / ({below} > 0)")

    def latency_quantile(self, window: str) -> str:
        """The latency quantile the guardrail alert judges, named after it (p99, p95, p99_9)."""
        quantile = percentile(self.profile.thresholds.latency_quantile).replace(".", "_")
        return self._add(
            f"application:searchpulse_search_latency_seconds:{quantile}_rate{window}",
            f"histogram_quantile({self.profile.thresholds.latency_quantile}, sum by "
            f"(application, le) (rate({d.SEARCH_LATENCY.name}_bucket"
            f"{{{self.profile.deployment.selector}}}[{window}])))")

    def interleaving(self, window: str) -> tuple[str, str]:
        """Δ of each team against the rest (for two teams: Δ_AB) and the half-width of its
        95 % interval, per application and variant (collector/interleaving.py), clustered by
        client: the score of team a in unit bucket b is y_b = wins_a,b + ties_b / 2 of n_b =
        contests_b, and Δ + ½ = Σy / Σn with the buckets' variance (experiment_stats.py),
        expanded as Σy² − 2p·Σyn + p²·Σn² (a bucket where a team won nothing has no series)."""
        sel = self.profile.deployment.selector
        design = self.profile.experiments
        factor = design.unit_buckets / (design.unit_buckets - 1)
        in_bucket = "on (application, variant, unit_bucket) group_left"
        by = "on (application, variant) group_left"
        wins = self._add(
            f"application_variant_team_bucket:searchpulse_experiment_interleaving_wins:"
            f"increase{window}",
            f"sum by (application, variant, team, unit_bucket) (increase("
            f"{d.EXPERIMENT_INTERLEAVING_WINS.name}{{{sel}}}[{window}]))")
        ties = self._add(
            f"application_variant_bucket:searchpulse_experiment_interleaving_ties:"
            f"increase{window}",
            f"sum by (application, variant, unit_bucket) (increase("
            f"{d.EXPERIMENT_INTERLEAVING_TIES.name}{{{sel}}}[{window}]))")
        contests_b = self._add(
            f"application_variant_bucket:searchpulse_experiment_interleaving_contests:"
            f"increase{window}",
            f"sum by (application, variant, unit_bucket) ({wins}) + {ties}")
        score = self._add(
            f"application_variant_team_bucket:searchpulse_experiment_interleaving_score:"
            f"increase{window}", f"{wins} + {in_bucket} {ties} / 2")
        contests = self._add(
            f"application_variant:searchpulse_interleaving_contests:increase{window}",
            f"sum by (application, variant) ({contests_b}) > 0")
        preference = self._add(
            f"application_variant_team:searchpulse_interleaving_preference:ratio_increase{window}",
            f"sum by (application, variant, team) ({score}) / {by} {contests} - 0.5")
        share = f"({preference} + 0.5)"
        spread = (f"sum by (application, variant, team) ({score} ^ 2) - 2 * {share} * sum by "
                  f"(application, variant, team) ({score} * {in_bucket} {contests_b}) + "
                  f"{share} ^ 2 * {by} sum by (application, variant) ({contests_b} ^ 2)")
        interval = self._add(
            f"application_variant_team:searchpulse_interleaving_preference_interval:"
            f"ratio_increase{window}",
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
        return self._add(f"application_variant:searchpulse_{ratio}:ratio_increase{window}",
                         f"{above} / ({below} > 0)")

    # -- experiments at the unit of randomization (collector/experiment_stats.py) ------------
    def bucket_count(self, count: str, window: str) -> str:
        """An experiment count per application, variant and unit bucket (collector/units.py)
        over the window."""
        return self._count_of("application_variant_bucket", count, window, lambda c: (
            f"experiment_{c}", f"{d.PREFIX}experiment_{c}_total", ""))

    def _count_of(self, level: str, count: str, window: str,
                  source: Callable[[str], tuple[str, str, str]]) -> str:
        """``count``'s increase over the window summed by ``level``; ``source(count)`` gives
        its recorded name, its counter and extra matchers. Searches with results are derived:
        searches − zero-result searches of the same level."""
        name = f"{level}:searchpulse_{source(count)[0]}:increase{window}"
        if COUNTS[count].difference:
            whole, part = (self._count_of(level, c, window, source)
                           for c in COUNTS[count].difference)
            return self._add(name, f"{whole} - {part}")
        _, counter, matchers = source(count)
        return self._add(name, f"sum by ({LEVELS[level]}) (increase({counter}"
                               f"{{{self.profile.deployment.selector}{matchers}}}[{window}]))")

    def experiment_count(self, count: str, window: str) -> str:
        """An experiment count per application and variant: the sum of its buckets."""
        return self._add(f"application_variant:searchpulse_experiment_{count}:increase{window}",
                         f"sum by (application, variant) ({self.bucket_count(count, window)})")

    def clustered(self, rate: Rate, window: str) -> tuple[str, str, str, str]:
        """(rate, variance, 95 % low, 95 % high) per application and variant: R = Σy / Σn over
        the unit buckets, Var = B/(B−1) · Σ_b (y_b − R·n_b)² / (Σn)², R ± t·√Var (t: Student,
        B − 1 degrees of freedom)."""
        design = self.profile.experiments
        factor = design.unit_buckets / (design.unit_buckets - 1)
        y = self.bucket_count(BUCKET_COUNT_NAMES[rate.numerator], window)
        n = self.bucket_count(BUCKET_COUNT_NAMES[rate.denominator], window)
        total = self.experiment_count(BUCKET_COUNT_NAMES[rate.denominator], window)
        above = self.experiment_count(BUCKET_COUNT_NAMES[rate.numerator], window)
        name = f"application_variant:searchpulse_{rate.ratio}"
        ratio = self._add(f"{name}:ratio_increase{window}", f"{above} / ({total} > 0)")
        variance = self._add(
            f"{name}:clustered_variance_increase{window}",
            f"{factor!r} * sum by (application, variant) (({y} - {n} * on (application, "
            f"variant) group_left {ratio}) ^ 2) / {total} ^ 2")
        half = f"{design.t!r} * sqrt({variance})"
        low = self._add(f"{name}:clustered_low_increase{window}", f"{ratio} - {half}")
        high = self._add(f"{name}:clustered_high_increase{window}", f"{ratio} + {half}")
        return ratio, variance, low, high

    def difference(self, rate: Rate, window: str) -> tuple[str, str, str]:
        """(difference, 95 % low, 95 % high) of each variant's rate from the control's, per
        application: d = R_v − R_c, Var(d) = Var(R_v) + Var(R_c), d ± t·√Var(d)."""
        design = self.profile.experiments
        control, others = (f'{{variant="{design.control_variant}"}}',
                           f'{{variant!="{design.control_variant}"}}')
        ratio, variance, _, _ = self.clustered(rate, window)
        name = f"application_variant:searchpulse_{rate.ratio}"
        value = self._add(f"{name}:difference_increase{window}",
                          f"{ratio}{others} - on (application) group_left {ratio}{control}")
        half = (f"{design.t!r} * sqrt({variance}{others} + on (application) group_left "
                f"{variance}{control})")
        low = self._add(f"{name}:difference_low_increase{window}", f"{value} - {half}")
        high = self._add(f"{name}:difference_high_increase{window}", f"{value} + {half}")
        return value, low, high

    def sample_ratio(self) -> tuple[str, str, str]:
        """(χ² per application, units per application, variants tested per application) of
        the units against the designed split (experiments.split, renormalized over the
        designed variants present) or an equal split of the variants present."""
        design = self.profile.experiments
        units = self._add("application_variant:searchpulse_experiment_units:sum",
                          f"sum by (application, variant) ({d.EXPERIMENT_UNITS.name}"
                          f"{{{self.profile.deployment.selector}}})")
        shares = (" or ".join(f'{units}{{variant="{variant}"}} * 0 + {share!r}'
                              for variant, share in design.split)
                  if design.split else f"{units} * 0 + 1")
        share = self._add("application_variant:searchpulse_experiment_design_share:ratio",
                          shares)
        total = self._add("application:searchpulse_experiment_units:sum",
                          f"sum by (application) ({units} and {share})")
        expected = self._add(
            "application_variant:searchpulse_experiment_units_expected:sum",
            f"{share} / on (application) group_left () (sum by (application) ({share}) > 0) * on "
            f"(application) group_left {total}")
        chi2 = self._add("application:searchpulse_experiment_sample_ratio_chi2:sum",
                         f"sum by (application) (({units} - {expected}) ^ 2 / ({expected} > 0))")
        return chi2, total, f"count by (application) ({share})"

    def baseline(self, name: str) -> str:
        """The median of the same window 1, 2 and 3 weeks ago (of those that exist)."""
        offsets = " or ".join(
            f'label_replace({name} offset {offset}, "baseline_offset", "{offset}", "", "")'
            for offset in self.profile.windows.baseline_offsets)
        return self._add(baseline_name(name),
                         f"quantile by (application) (0.5, {offsets})")


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


Builder = Callable[[Profile, AlertRow, Recordings], Built]
BUILDERS: dict[str, Builder] = {}


def builds(name: str) -> Callable[[Builder], Builder]:
    def register(builder: Builder) -> Builder:
        BUILDERS[name] = builder
        return builder
    return register


def _guarded(rec: Recordings, condition: str, window: str, minimum: int,
             baseline_minimum: bool = False, traffic: str = "searches") -> str:
    """Adds the minimum-traffic guard (and for baseline alerts: enough baseline traffic);
    ``traffic``: the recorded count that must reach ``minimum`` in ``window``."""
    searches = rec.count("application", traffic, window)
    expr = f"({condition})\nand on (application) {searches} * {seconds(window)} >= {minimum}"
    if baseline_minimum:
        expr += (f"\nand on (application) {rec.baseline(searches)} * {seconds(window)} "
                 f">= {minimum}")
    return expr


def _baseline_text(name: str, fmt: str = "humanizePercentage") -> str:
    return (f'{{{{ with printf "{baseline_name(name)}{{application=%q}}" $labels.application '
            f"| query }}}}{{{{ . | first | value | {fmt} }}}}{{{{ else }}}}none yet{{{{ end }}}}")


TOP_QUERIES = ('{{ range printf "topk(5, searchpulse_top_zero_result_queries{application=%q})" '
               '$labels.application | query }}"{{ .Labels.query }}" ({{ .Value }}) {{ end }}')
ZERO = d.ZERO_RESULT_RATE.ratio


@builds("SearchZeroResultRateHigh")
def _zero_result(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t = profile.thresholds
    short, long = profile.windows.pair(row.windows)
    threshold = (t.zero_result_rate_critical if row.severity == "critical"
                 else t.zero_result_rate_warning)
    r_short, r_long = rec.ratio("application", ZERO, short), rec.ratio("application", ZERO, long)
    base = rec.baseline(r_long)
    condition = (f"{r_short} > {threshold}\nand {r_long} > {threshold}\n"
                 f"and (\n  {r_long} > {t.zero_result_baseline_factor} * {base}\n"
                 f"  or {r_long} unless {base}\n)")
    return Built(
        _guarded(rec, condition, long, t.min_searches_long_window),
        "Searches of {{ $labels.application }} return nothing far more often than usual.",
        f"Zero-result rate of {{{{ $labels.application }}}} is {{{{ $value | humanizePercentage "
        f"}}}} over {short} (objective {threshold:.0%}, baseline over {long}: "
        f"{_baseline_text(r_long)}). Top zero-result queries now: {TOP_QUERIES}",
        "zero_result_rate")


@builds("SearchKnownItemZeroResultRateHigh")
def _known_item(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t = profile.thresholds
    short, long = profile.windows.pair(row.windows)
    known_item = '{stratum="known_item"}'
    r_short = rec.ratio("application_stratum", ZERO, short) + known_item
    r_long = rec.ratio("application_stratum", ZERO, long) + known_item
    searches = rec.count("application_stratum", "searches", long) + known_item
    threshold = t.known_item_zero_result_rate_critical
    return Built(
        f"{r_short} > {threshold}\nand {r_long} > {threshold}\n"
        f"and {searches} * {seconds(long)} >= {t.min_known_item_searches_long_window}",
        "Known-item searches of {{ $labels.application }} find nothing: products or titles that "
        "exist cannot be found.",
        f"{{{{ $value | humanizePercentage }}}} of known-item searches (SKUs, model numbers, "
        f"ISBNs, exact titles) of {{{{ $labels.application }}}} returned zero results over "
        f"{short} (objective {threshold:.0%}). Top zero-result queries now: {TOP_QUERIES}",
        "known_item_zero_result_rate")


def _baseline_drift(rate: d.Rate, factor_setting: str, direction: str, noun: str) -> Builder:
    """An online rate that moved away from its own baseline by a factor, in both windows."""
    ratio, panel = rate.ratio, rate.key

    def build(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
        factor = getattr(profile.thresholds, factor_setting)
        short, long = profile.windows.pair(row.windows)
        r_short, r_long = rec.ratio("application", ratio, short), rec.ratio("application", ratio,
                                                                            long)
        base = rec.baseline(r_long)
        condition = (f"{r_short} {direction} {factor} * {base}\n"
                     f"and {r_long} {direction} {factor} * {base}")
        return Built(
            _guarded(rec, condition, long, profile.thresholds.min_searches_long_window,
                     baseline_minimum=True),
            f"{noun} of {{{{ $labels.application }}}} moved away from its baseline.",
            f"{noun} of {{{{ $labels.application }}}} is {{{{ $value | humanizePercentage }}}} "
            f"over {short} and beyond ×{factor} of its baseline over {long} too; baseline "
            f"(median of the same {long} window {_weeks_ago(profile)}): {_baseline_text(r_long)}.",
            panel)

    return build


def _weeks_ago(profile: Profile) -> str:
    return ", ".join(profile.windows.baseline_offsets) + " earlier"


BUILDERS["SearchClickThroughRateDrop"] = _baseline_drift(
    d.CTR, "ctr_drop_factor", "<", "Click-through rate")
BUILDERS["SearchReformulationRateHigh"] = _baseline_drift(
    d.REFORMULATION_RATE, "reformulation_rise_factor", ">", d.REFORMULATION_RATE.title)
BUILDERS["SearchAbandonmentRateHigh"] = _baseline_drift(
    d.ABANDONMENT_RATE, "abandonment_rise_factor", ">", d.ABANDONMENT_RATE.title)


@builds("SearchLatencyHigh")
def _latency(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    short, long = profile.windows.pair(row.windows)
    guardrail = profile.latency_guardrail_s
    quantile = percentile(profile.thresholds.latency_quantile)
    return Built(
        _guarded(rec, f"{rec.latency_quantile(short)} > {guardrail}\n"
                      f"and {rec.latency_quantile(long)} > {guardrail}",
                 long, profile.thresholds.min_searches_long_window),
        f"Search latency {quantile} of {{{{ $labels.application }}}} is above the guardrail.",
        f"{quantile} latency of {{{{ $labels.application }}}} is {{{{ $value | humanizeDuration "
        f"}}}} over {short} and above the guardrail ({guardrail}s) over {long} too.",
        "latency")


JUDGED_NDCG = d.JUDGED_NDCG_MEAN.ratio
JUDGED_COVERAGE = d.JUDGED_COVERAGE_MEAN.ratio


@builds("SearchJudgedRelevanceDrop")
def _judged_drop(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t = profile.thresholds
    short, long = profile.windows.pair(row.windows)
    r_short, r_long = (rec.ratio("application", JUDGED_NDCG, short),
                       rec.ratio("application", JUDGED_NDCG, long))
    base = rec.baseline(r_long)
    three_digits = 'printf "%.3f"'
    condition = (f"{r_short} < {t.judged_ndcg_drop_factor} * {base}\n"
                 f"and {r_long} < {t.judged_ndcg_drop_factor} * {base}")
    return Built(
        _guarded(rec, condition, long, t.min_judged_searches_long_window,
                 baseline_minimum=True, traffic="judged_searches"),
        "The rankings {{ $labels.application }} shows score worse against the judgment set.",
        f"Judged NDCG@10 of {{{{ $labels.application }}}} is {{{{ $value | {three_digits} }}}} "
        f"over {short} and below ×{t.judged_ndcg_drop_factor} of its baseline over {long} too; "
        f"baseline (median of the same {long} window {_weeks_ago(profile)}): "
        f"{_baseline_text(r_long, three_digits)}. The ranking of judged queries changed "
        f"for the worse: check ranking deploys first.",
        d.JUDGED_NDCG_MEAN.key)


@builds("SearchJudgmentSetStale")
def _judgments_stale(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t = profile.thresholds
    short, long = profile.windows.pair(row.windows)
    floor = t.judged_coverage_min
    return Built(
        _guarded(rec, f"{rec.ratio('application', JUDGED_COVERAGE, short)} < {floor}\n"
                      f"and {rec.ratio('application', JUDGED_COVERAGE, long)} < {floor}",
                 long, t.min_judged_searches_long_window, traffic="judged_searches"),
        "The judgment set of {{ $labels.application }} no longer knows what production shows.",
        f"Only {{{{ $value | humanizePercentage }}}} of the top 10 that judged queries of "
        f"{{{{ $labels.application }}}} show has a grade, over {short} and {long} (floor "
        f"{floor:.0%}): judged NDCG is measuring a catalogue that no longer exists. Re-pool: "
        f"`searchpulse feedback` lists judged queries with low coverage.",
        d.JUDGED_COVERAGE_MEAN.key)


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
        "experiment_traffic", dashboard=EXPERIMENTS_DASHBOARD)


def _non_inferiority(rate: Rate, noun: str, summary: str, panel: str) -> Builder:
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
            panel, dashboard=EXPERIMENTS_DASHBOARD)

    return build


_ZERO_RATE, _SLOW_RATE = GUARDRAIL_RATES
BUILDERS["SearchExperimentGuardrailWorse"] = _non_inferiority(
    _ZERO_RATE, "zero-result rate", "finds nothing more often",
    "experiment_zero_result_difference")
BUILDERS["SearchExperimentLatencyGuardrailWorse"] = _non_inferiority(
    _SLOW_RATE, "share of searches slower than the latency guardrail", "is slow more often",
    "experiment_slow_search_difference")


@builds("SearchTrafficCessation")
def _cessation(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t, sel = profile.thresholds, profile.deployment.selector
    window = t.cessation_window
    return Built(
        f"sum by (application) (rate({d.SEARCHES.name}{{{sel}}}[{window}])) == 0\n"
        f"and on (application) sum by (application) (rate({d.SEARCHES.name}{{{sel}}}"
        f"[1h] offset 1h)) > {t.cessation_substantial_per_s}",
        "{{ $labels.application }} stopped sending searches.",
        f"No search of {{{{ $labels.application }}}} for {window}, while an hour earlier it "
        f"served more than {t.cessation_substantial_per_s} searches/s: the search front end, "
        f"its UBI tracking or the pipeline to Kafka is broken.",
        "traffic", kind="traffic")


@builds("SearchTrafficAbsent")
def _traffic_absent(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    duration = profile.duration(row.for_)
    return Built(
        f"absent({d.SEARCHES.name}{{{profile.deployment.selector}}})",
        "No search-quality series at all.",
        f"{d.SEARCHES.name} has no series for {duration}: the collector sees no "
        f"searches (no producer, wrong topic) or its series are not scraped.",
        "traffic", kind="traffic", per_application=False)


def _pipeline(expr: str, summary: str, description: str, panel: str) -> Built:
    return Built(expr, summary, description, panel, kind="pipeline", dashboard=HEALTH_DASHBOARD,
                 per_application=False)


@builds("SearchpulseCollectorDown")
def _collector_down(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    return _pipeline(
        f"up{{{profile.deployment.selector}}} == 0",
        "A searchpulse collector cannot be scraped.",
        "Prometheus cannot scrape the collector {{ $labels.instance }}: its search-quality "
        "metrics are missing and quality alerts are muted until it is back.",
        "throughput")


@builds("SearchpulseCollectorAbsent")
def _collector_absent(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    selector = profile.deployment.selector
    return _pipeline(
        f"absent(up{{{selector}}})",
        "Prometheus has no searchpulse collector target.",
        f"No scrape target matches {selector} for {profile.duration(row.for_)}: the collector "
        f"is not deployed or the scrape configuration lost it; quality alerts are muted until "
        f"it is back.",
        "throughput")


@builds("SearchpulseEventsStale")
def _events_stale(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    limit = profile.thresholds.event_staleness_s_critical
    last = f"{d.LAST_EVENT_TIMESTAMP.name}{{{profile.deployment.selector}}}"
    return _pipeline(
        f"time() - max({last}) > {limit}\nand max({last}) > 0",
        "The newest search event the collector saw is too old.",
        f"The newest event is {{{{ $value | humanizeDuration }}}} old (limit {limit}s): events "
        f"stopped arriving or the collector is stuck; quality alerts are muted while this fires.",
        "freshness")


@builds("SearchpulseInvalidRecordRateHigh")
def _invalid_records(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    t, sel = profile.thresholds, profile.deployment.selector
    window, _ = profile.windows.pair(row.windows)
    records = f"{d.RECORDS.name}{{{sel}}}"
    invalid = f'{d.RECORDS.name}{{{sel},outcome="invalid"}}'
    return _pipeline(
        f"sum(rate({invalid}[{window}])) / sum(rate({records}[{window}])) "
        f"> {t.invalid_record_ratio_warning}\n"
        f"and sum(increase({records}[{window}])) >= {t.min_records_for_invalid_ratio}",
        "Many search events are rejected as invalid.",
        f"{{{{ $value | humanizePercentage }}}} of records were invalid over {window} (limit "
        f"{t.invalid_record_ratio_warning:.0%}): a producer changed its format. The reasons are "
        f"in {d.INVALID_RECORDS.name} and the records in the dead-letter topic.",
        "invalid_records")


def _lag(profile: Profile) -> str:
    return f"{d.KAFKA_LAG.name}{{{profile.deployment.selector}}}"


@builds("SearchpulseConsumerLagHigh")
def _lag_high(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    limit = profile.thresholds.consumer_lag_records_warning
    return _pipeline(
        f"sum by (topic) ({_lag(profile)}) > {limit}",
        "The collector is behind on {{ $labels.topic }}.",
        f"Consumer lag on {{{{ $labels.topic }}}} is {{{{ $value | humanize }}}} records (limit "
        f"{limit}) for {profile.duration(row.for_)}: metrics are late.",
        "consumer_lag")


@builds("SearchpulseConsumerLagGrowing")
def _lag_growing(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    window, _ = profile.windows.pair(row.windows)
    floor = profile.thresholds.consumer_lag_growing_from_records
    return _pipeline(
        f"sum by (topic) (deriv({_lag(profile)}[{window}])) > 0\n"
        f"and sum by (topic) ({_lag(profile)}) > {floor}",
        "The collector falls further behind on {{ $labels.topic }}.",
        f"Consumer lag on {{{{ $labels.topic }}}} grows by {{{{ $value | humanize }}}} records/s "
        f"over {window} while above {floor} records: the collector cannot keep up.",
        "consumer_lag")


@builds("SearchpulseStoreFlushFailing")
def _store_flush(profile: Profile, row: AlertRow, rec: Recordings) -> Built:
    window, _ = profile.windows.pair(row.windows)
    sel = profile.deployment.selector
    return _pipeline(
        f"sum(increase({d.STORE_FLUSH_FAILURES.name}{{{sel}}}[{window}])) > 0\n"
        f"unless sum(increase({d.STORE_FLUSHES.name}{{{sel}}}[{window}])) > 0",
        "The per-query aggregate store rejects every flush.",
        f"{{{{ $value | humanize }}}} flushes of per-query aggregates failed over {window} and "
        f"none succeeded: the store is down or full. Metrics are unaffected; the rows wait in "
        f"memory and the store falls behind the topic's retention.",
        "store")


GROUPS = {"traffic": "searchpulse-traffic", "quality": "searchpulse-quality",
          "pipeline": "searchpulse-pipeline"}


def alert_rule(profile: Profile, row: AlertRow, built: Built) -> Rule:
    panel = f"{profile.deployment.grafana_base}/d/{built.dashboard}?viewPanel={PANELS[built.panel]}"
    if built.per_application:
        panel += "&var-application={{ $labels.application }}"
    return {
        "alert": row.name,
        "expr": built.expr,
        "for": profile.duration(row.for_),
        "keep_firing_for": profile.duration(row.keep_firing_for),
        "labels": {"severity": row.severity, "service": "searchpulse", "kind": built.kind},
        "annotations": {
            "summary": built.summary,
            "description": built.description,
            "runbook_url": f"{profile.deployment.runbook_base}#{row.name.lower()}",
            "dashboard_url": panel,
        },
    }


def rule_groups(profile: Profile) -> dict[str, Any]:
    rec = Recordings(profile)
    for count in HEADLINE_COUNTS:
        rec.count("application", count, profile.windows.page_short)
    rec.interleaving(profile.windows.page_long)  # the experiments dashboard's verdict
    # every experiment rate per variant with its clustered interval and its difference from
    # the control, for the experiments dashboard (the guardrails' over their ticket window)
    for rate in RATES:
        window = profile.windows.ticket_long if rate.guardrail else profile.windows.page_long
        rec.clustered(rate, window)
        rec.difference(rate, window)
    for rate in (d.CLICKS_PER_SEARCH, d.DEBIASED_CLICKS_PER_SEARCH):
        rec.variant_ratio(rate.ratio, profile.windows.page_long)  # the experiments dashboard's IPS
    alerts: dict[str, list[Rule]] = {group: [] for group in GROUPS.values()}
    for row in profile.alerts:
        if row.name not in BUILDERS:
            raise ConfigError(f"alert {row.name}: no expression builder in alerts/rules.py")
        built = BUILDERS[row.name](profile, row, rec)
        alerts[GROUPS[built.kind]].append(alert_rule(profile, row, built))
    return {"groups": [{"name": "searchpulse-recording", "rules": list(rec.rules.values())},
                       *({"name": name, "rules": rules} for name, rules in alerts.items())]}
