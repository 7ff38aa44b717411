"""Experiments: every quality rate per variant and its difference from the control, each with
its always-valid 95 % interval clustered by client, each variant's share of units and traffic,
interleaving."""

from __future__ import annotations

from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.models.dashboard import Panel

from alerts.config import Profile, duration, percentile
from collector import definitions as d
from collector.series.experiment_stats import RATES, chi2_critical
from dashboards import queries as q
from dashboards.panels import board, link, series_panel, thresholds, variables

UID = "searchpulse-experiments"


def build(profile: Profile):
    """Per-variant panels over the windows ``profile``'s recording rules and guardrail tickets
    read: the paging long window for the verdicts, the ticket's long window for guardrails."""
    experiments = variables(
        board(UID, "Search quality — experiments",
              "Per-variant comparison of the quality rates (query_attributes.variant).")
        .refresh("1m").time("now-24h", "now")
        .link(link("Overview", "searchpulse-overview"))
        .link(link("Collector health", "searchpulse-collector")))
    for panel in (*_traffic_panels(profile), *_interleaving_panels(profile),
                  *_interval_panels(profile), *_unit_panels(profile),
                  *_difference_panels(profile)):
        experiments = experiments.with_panel(panel)
    return experiments


def _traffic_panels(profile: Profile) -> list[Builder[Panel]]:
    """Each variant's share of units and searches, then its quality rates, latency and judged
    relevance over the rate window."""
    unit_window = duration(profile.experiments.unit_window_s)
    latency = percentile(profile.thresholds.latency_quantile)
    panels: list[Builder[Panel]] = []
    share = (f"{q.rate(d.SEARCHES.name, 'variant')} / ignoring(variant) "
             f"group_left {q.SEARCHES_PER_S}")
    unit_share = f"{q.UNITS} / ignoring(variant) group_left sum({q.UNITS})"
    panels.append(series_panel(
        1, "Traffic share by variant: units and searches", "Share of units (distinct clients "
        f"of the last {unit_window}) per variant, which the sample-ratio test "
        "reads: a split of units that drifts from the design is a sample-ratio mismatch. The "
        "share of searches drifts more by chance (a client brings all its searches along).",
        "percentunit", [(unit_share, "units {{variant}}"), (share, "searches {{variant}}")],
        (8, 12, 0, 0)))
    for n, rate in enumerate(d.QUALITY_RATES, start=1):
        panels.append(series_panel(
            n + 1, f"{rate.title} by variant", f"{rate.title} per experiment variant.", rate.unit,
            [(q.ratio(rate, "variant"), "{{variant}}")],
            (8, 12, 12 * (n % 2), 8 * (n // 2))))
    panels.append(series_panel(
        7, f"Latency {latency} by variant", f"{latency} of search latency per variant.", "s",
        [(q.latency_quantile(profile.thresholds.latency_quantile, "le, variant"), "{{variant}}")],
        (8, 12, 12, 24)))
    panels.append(series_panel(
        8, "Judged NDCG@10 by variant", "Mean NDCG@10 of the first page each variant showed, "
        "over searches of judged queries (judgments.file): the offline metric on live "
        "rankings.", "none", [(q.ratio(d.JUDGED_NDCG_MEAN, by="variant"), "{{variant}}")],
        (8, 12, 0, 32)))
    panels.append(series_panel(
        9, "Judged coverage@10 by variant", "Share of each variant's shown top 10 that has a "
        "grade: a variant that shows unjudged documents is measured on less.", "percentunit",
        [(q.ratio(d.JUDGED_COVERAGE_MEAN, by="variant"), "{{variant}}")], (8, 12, 12, 32)))
    return panels


def _interleaving_panels(profile: Profile) -> list[Builder[Panel]]:
    """The team-draft verdict (each team's credit with its interval) and its raw outcomes."""
    page_long = profile.windows.page_long
    preference, interval = q.preference(page_long)
    panels: list[Builder[Panel]] = []
    verdict = (f"Team-draft interleaving: each team's credit Δ = (wins + ties/2) / (wins + "
               f"ties of all teams) − 0.5 over the last {page_long}, with its 95 % "
               "interval clustered by client (delta method over the hashed client buckets of "
               "per-search scores 1, ½, 0). With two teams this is Δ_AB; an interval clear of "
               "0 is the verdict.")
    panels.append(series_panel(
        10, "Interleaving verdict: Δ per team", verdict, "none",
        [(preference, "Δ {{team}} ({{application}})"),
         (f"{preference} - {interval}", "95 % low {{team}} ({{application}})"),
         (f"{preference} + {interval}", "95 % high {{team}} ({{application}})")],
        (8, 12, 0, 40)))
    panels.append(series_panel(
        11, "Interleaving outcomes", "Interleaved searches won by each team per second, ties, "
        "and clicks without a team (unattributed: the producer lost the team attribute).",
        "reqps",
        [(q.rate(d.INTERLEAVING_WINS.name, "team"), "wins {{team}}"),
         (q.rate(d.INTERLEAVING_TIES.name), "ties"),
         (q.rate(d.INTERLEAVING_UNATTRIBUTED.name), "unattributed clicks")],
        (8, 12, 12, 40)))
    return panels


# How every interval panel reads its band (collector/series/confidence_sequence.py).
ALWAYS_VALID = ("always-valid 95 % interval clustered by client (a confidence sequence: it "
                "holds at every look at once, so reading it every minute is safe; wider than "
                "a fixed-horizon interval, narrowest near 100,000 searches per variant)")


def _interval_panels(profile: Profile) -> list[Builder[Panel]]:
    """Each variant's rates since the collector started with their always-valid 95 %
    intervals."""
    page_long = profile.windows.page_long
    panels: list[Builder[Panel]] = []
    panels.append(series_panel(
        12, "CTR by variant, always-valid 95 %", "Clicked searches / searches with results "
        f"per variant since the collector started, with its {ALWAYS_VALID}: the verdict is "
        "the difference's interval (CTR difference from the control).", "percentunit",
        q.variant_interval(d.CTR.ratio), (8, 12, 0, 48)))
    panels.append(series_panel(
        13, "Zero-result rate by variant, always-valid 95 % (guardrail)", "Zero-result rate "
        f"per variant since the collector started, with its {ALWAYS_VALID}; the guardrail "
        "reads the difference from the control (Zero-result rate difference from the "
        "control).", "percentunit", q.variant_interval(d.ZERO_RESULT_RATE.ratio),
        (8, 12, 12, 48)))
    panels.append(series_panel(
        14, "Clicks per search by variant: raw and position-debiased", "Clicks per search with "
        f"results over the last {page_long}, raw and inverse-propensity weighted "
        "(each click × min(1/examination of its position, clicks.max_weight)): raw clicks "
        "reward whatever a variant puts first; the debiased ones do not. Needs collect "
        "--examination.", "none",
        [(q.variant_ratio(d.DEBIASED_CLICKS_PER_SEARCH.ratio, page_long),
          "debiased {{variant}} ({{application}})"),
         (q.variant_ratio(d.CLICKS_PER_SEARCH.ratio, page_long),
          "raw {{variant}} ({{application}})")], (8, 12, 0, 56)))
    panels.append(series_panel(
        15, "Examination by position", "How often a result at each position is looked at, "
        "relative to the first (the position-based click model of `searchpulse clicks`, "
        "identified curves only).", "percentunit",
        [(q.EXAMINATION, "position {{position}} ({{application}})")], (8, 12, 12, 56)))
    panels.append(series_panel(
        16, "Slow searches by variant, always-valid 95 % (latency guardrail)", "Share of each "
        "variant's searches slower than the latency guardrail (metrics.latency_guardrail_s) "
        f"since the collector started, with its {ALWAYS_VALID}; the guardrail reads the "
        "difference from the control.", "percentunit",
        q.variant_interval(d.SLOW_SEARCH_SHARE.ratio), (8, 12, 0, 64)))
    for panel_id, (rate, y) in enumerate(((d.REFORMULATION_RATE, (12, 64)),
                                           (d.ABANDONMENT_RATE, (0, 72)),
                                           (d.CONVERSION_RATE, (12, 72))), start=17):
        panels.append(series_panel(
            panel_id, f"{rate.title} by variant, always-valid 95 %", f"{rate.title} per "
            f"variant since the collector started, with its {ALWAYS_VALID}.",
            "percentunit", q.variant_interval(rate.ratio), (8, 12, *y)))
    return panels


def _unit_panels(profile: Profile) -> list[Builder[Panel]]:
    """The units per variant and their sample-ratio χ² against the design."""
    unit_window = duration(profile.experiments.unit_window_s)
    critical = chi2_critical(1)
    panels: list[Builder[Panel]] = []
    panels.append(series_panel(
        20, "Units by variant", "Distinct clients per variant with a search in the last "
        f"{unit_window} of event time (experiments.unit_window_s): the unit of randomization, "
        "counted once.",
        "short", [(q.UNITS, "{{variant}}")], (8, 12, 0, 80)))
    panels.append(series_panel(
        27, "Sample-ratio χ² of units", "χ² of the units per variant against the designed "
        "split (experiments.split, else equal); the line is the p = 0.001 critical value for "
        f"two variants ({critical:.2f}; more variants have higher ones). "
        "SearchExperimentSampleRatioMismatch fires above it.", "none",
        [(q.SAMPLE_RATIO_CHI2, "χ² ({{application}})")], (8, 12, 12, 80),
        steps=thresholds((None, "green"), (critical, "red"))))
    return panels


def _difference_panels(profile: Profile) -> list[Builder[Panel]]:
    """Each rate's difference from the control since the collector started with its
    always-valid interval, clear of 0 for a verdict; a guardrail's also with the fixed-horizon
    interval over its ticket's window, whose low end the ticket judges against the margin."""
    ticket = profile.windows.ticket_long
    design = profile.experiments
    panels: list[Builder[Panel]] = []
    for panel_id, rate in zip((23, 21, 24, 25, 26, 22), RATES, strict=True):
        targets = q.variant_difference(rate.ratio)
        reading = "an interval clear of 0 is the verdict"
        if rate.guardrail:
            targets += q.ticket_difference(rate.ratio, ticket)
            reading = ("a guardrail, read for non-inferiority: its ticket fires when the low "
                       f"end of the fixed-horizon 95 % interval over the last {ticket} (also "
                       f"shown) is above the margin ({getattr(design, rate.guardrail):g}, "
                       f"experiments.{rate.guardrail})")
        y = 88 + 8 * ((panel_id - 21) // 2)
        panels.append(series_panel(
            panel_id, f"{rate.title[0].upper()}{rate.title[1:]} difference from the control, "
            "always-valid 95 %",
            f"Each variant's {rate.title} minus the control's since the collector started, "
            f"with the {ALWAYS_VALID}, the variances of both added: {reading}.",
            "percentunit", targets, (8, 12, 12 * ((panel_id - 21) % 2), y)))
    return panels
