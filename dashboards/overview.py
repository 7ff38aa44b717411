"""Search quality — overview: what on-call opens from a page."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.models.dashboard import Panel

from alerts.config import Profile, percentile
from alerts.rules import PANELS
from alerts.rules.recordings import HEALTH_RATES
from collector import definitions as d
from dashboards import queries as q
from dashboards.panels import (
    DATASOURCE,
    board,
    link,
    series_panel,
    stat_panel,
    table_panel,
    thresholds,
    variables,
)

UID = "searchpulse-overview"
LAST_WEEK = " offset 1w"


def _with_last_week(expr: str, legend: str) -> list[tuple[str, str]]:
    return [(expr, legend), (expr.replace("[$__rate_interval]", "[$__rate_interval]" + LAST_WEEK),
                             f"{legend}, a week ago")]


def red_above(limit: float):
    return thresholds((None, "green"), (limit, "red"))


def build(profile: Profile):
    """The overview of ``profile``'s deployment: its headline row reads the recording rules of
    the paging short window and draws the thresholds its alerts page at."""
    overview = (board(UID, "Search quality — overview",
                      "Online search quality from UBI events: rates, breakdowns, alerts.")
                .refresh("30s").time("now-6h", "now")
             .link(link("Experiments", "searchpulse-experiments"))
             .link(link("Collector health", "searchpulse-collector"))
             .annotation(dashboard.AnnotationQuery().name("searchpulse alerts")
                         .datasource(DATASOURCE).enable(True).icon_color("red")
                         .expr(q.ALERT_ANNOTATIONS)))
    overview = variables(overview)
    # grid rows: the headline with the traffic-health stats (0-12), the rates by application
    # and stratum (12-52), clicks (52-60), judged relevance (60-68), traffic health (68-84)
    for panel in (*_headline_panels(profile), *_breakdown_panels(top=12),
                  *_click_panels(top=52), *_judged_panels(top=60),
                  *_health_panels(profile, top=68)):
        overview = overview.with_panel(panel)
    return overview


def _headline_panels(profile: Profile) -> list[Builder[Panel]]:
    """The stats on-call reads first, with the thresholds the alerts page at; the firing alerts
    and the top zero-result queries beside them."""
    t = profile.thresholds
    window = f"over {profile.windows.page_short}, all collectors (recording rule)"
    latency = percentile(t.latency_quantile)
    panels: list[Builder[Panel]] = []
    steps = {d.ZERO_RESULT_RATE: (" Red at the paging objective.",
                                  red_above(t.zero_result_rate_critical))}
    headline = [
        *((rate.panel, rate.title, f"{rate.definition.capitalize()} {window}."
           + steps.get(rate, ("",))[0], rate.unit,
           q.recorded(rate, profile.windows.page_short), steps.get(rate, ("", None))[1])
          for rate in d.HEADLINE_RATES),
        (PANELS["latency"], f"Latency {latency}", f"{latency} of search latency (the quantile "
         "the latency ticket judges). Red above the guardrail.", "s",
         q.latency_quantile(t.latency_quantile), red_above(profile.latency_guardrail_s)),
        (PANELS["traffic"], "Searches per second", "Searches per second.", "reqps",
         q.SEARCHES_PER_S, None),
    ]
    for column, (panel_id, title, description, unit, expr, steps) in enumerate(headline):
        panels.append(stat_panel(panel_id, title, description, unit, expr,
                                 (4, 4, 4 * column, 0), steps))
    panels.append(stat_panel(
        PANELS["known_item_zero_result_rate"], "Known-item zero-result rate",
        "Zero-result rate of known-item searches (SKUs, ISBNs, exact titles) per application.",
        "percentunit", q.KNOWN_ITEM_ZERO_RESULT, (4, 8, 0, 4),
        red_above(t.known_item_zero_result_rate_critical)))
    panels.append(stat_panel(
        9, "Firing alerts", "searchpulse alerts firing now.", "short", q.FIRING_ALERTS,
        (4, 4, 8, 4), red_above(1)))
    # below them, what the front ends send beside their searches: is a CTR drop tracking?
    floor = t.event_coverage_floor
    health = {d.EVENT_COVERAGE: (f" Red below {floor:.0%}, where the tracking page fires "
                                 "before an application has a baseline.",
                                 thresholds((None, "red"), (floor, "green"))),
              d.AUTOMATED_SHARE: (" In no quality rate.", None),
              d.KEYSTROKES_PER_SEARCH: (" Query records a search-as-you-type front end sent "
                                        "while the search was typed.", None)}
    for column, rate in enumerate(HEALTH_RATES):
        note, steps = health[rate]
        panels.append(stat_panel(
            28 + column, rate.title, f"{rate.definition.capitalize()} {window}.{note}",
            rate.unit, q.recorded(rate, profile.windows.page_short), (4, 4, 4 * column, 8),
            steps))
    panels.append(table_panel(
        10, "Top zero-result queries", "The most frequent zero-result queries per application "
        "over the last 15 minutes of event time: only queries no personal-data detector fires "
        "on and that at least 3 distinct clients typed (the rest is counted in "
        "searchpulse_top_zero_result_queries_withheld).", "short",
        q.TOP_ZERO_RESULT_QUERIES, (8, 12, 12, 4)))
    return panels


def _breakdown_panels(top: int) -> list[Builder[Panel]]:
    """Each quality rate per application (with the same time a week ago), then the first four
    per query stratum, from grid row ``top``."""
    panels: list[Builder[Panel]] = []
    for panel_id, rate in enumerate(d.QUALITY_RATES, start=11):
        expr = q.ratio(rate, "application")
        panels.append(series_panel(
            panel_id, f"{rate.title} by application",
            f"{rate.title} per application, with the same time a week ago.", rate.unit,
            _with_last_week(expr, "{{application}}"),
            (8, 12, 12 * ((panel_id - 11) % 2), top + 8 * ((panel_id - 11) // 2))))
    row = top + 24  # below three rows of two rate panels
    for panel_id, rate in enumerate(d.QUALITY_RATES[:4], start=16):
        panels.append(series_panel(
            panel_id, f"{rate.title} by stratum", f"{rate.title} per query stratum.", rate.unit,
            [(q.ratio(rate, "stratum"), "{{stratum}}")],
            (8, 12, 12 * ((panel_id - 16) % 2), row + 8 * ((panel_id - 16) // 2))))
    return panels


def _click_panels(top: int) -> list[Builder[Panel]]:
    """Zero results per variant, where first clicks land, and how soon, at grid row ``top``."""
    panels: list[Builder[Panel]] = []
    panels.append(series_panel(
        20, "Zero-result rate by variant", "Zero-result rate per experiment variant.",
        "percentunit", [(q.ratio(d.ZERO_RESULT_RATE, by="variant"), "{{variant}}")],
        (8, 8, 0, top)))
    panels.append(series_panel(
        21, "First click position", "Searches whose first click was at or above each "
        "position, per second (cumulative histogram buckets).", "reqps",
        [(q.FIRST_CLICK_POSITION, "≤ {{le}}")], (8, 8, 8, top)))
    panels.append(series_panel(
        22, "Time to first click (median) and MRR", "Median time from a search to its first "
        "click; MRR of first clicks on the right axis.", "s",
        [(q.TIME_TO_FIRST_CLICK, "median time to first click"), (q.MRR, "MRR")],
        (8, 8, 16, top), right_axis=("MRR", "none")))
    return panels


def _judged_panels(top: int) -> list[Builder[Panel]]:
    """The judged relevance of what production showed, at grid row ``top``."""
    panels: list[Builder[Panel]] = []
    judged = ("Over searches whose query is in the judgment set (judgments.file), the first "
              "page production showed: ")
    panels.append(series_panel(
        d.JUDGED_NDCG_MEAN.panel, "Judged NDCG@10 by application", judged + "mean NDCG@10 "
        "(gain 2^grade-1, ideal from every judged document), with the same time a week ago.",
        "none", _with_last_week(q.ratio(d.JUDGED_NDCG_MEAN, by="application"), "{{application}}"),
        (8, 8, 0, top)))
    panels.append(series_panel(
        d.JUDGED_COVERAGE_MEAN.panel, "Judged coverage@10 and judged traffic", judged + "share "
        "of the shown top 10 that has a grade (low: the judgment set is going stale); and "
        "the share of searches whose query is judged.", "percentunit",
        [(q.ratio(d.JUDGED_COVERAGE_MEAN, by="application"), "coverage@10 {{application}}"),
         (q.ratio(d.JUDGED_SHARE, by="application"), "judged searches {{application}}")],
        (8, 8, 8, top)))
    panels.append(series_panel(
        25, "Judged NDCG@10 and ERR@10 by stratum", judged + "mean NDCG@10 and ERR@10 per "
        "query stratum.", "none",
        [(q.ratio(d.JUDGED_NDCG_MEAN, by="stratum"), "NDCG@10 {{stratum}}"),
         (q.ratio(d.JUDGED_ERR_MEAN, by="stratum"), "ERR@10 {{stratum}}")], (8, 8, 16, top)))
    return panels


def _health_panels(profile: Profile, top: int) -> list[Builder[Panel]]:
    """Tracking health and automated traffic per application, at grid row ``top``: the panels
    the tracking page and the automated-share ticket open, and the signals that confirm them."""
    t, windows = profile.thresholds, profile.windows
    baseline = (f"its baseline (the median of the same {windows.page_long} window "
                f"{', '.join(windows.health_baseline_offsets)} earlier)")
    panels: list[Builder[Panel]] = []
    panels.append(series_panel(
        PANELS["tracking"], "Event coverage by application", "Searches with results that "
        "received any event (impression, click, conversion, next page) by their decision, per "
        f"application, with the same time a week ago. SearchTrackingBroken pages when it falls "
        f"below ×{t.event_coverage_drop_factor} of {baseline} while searches go on, or below "
        f"the line ({t.event_coverage_floor:.0%}) before there is one.", "percentunit",
        _with_last_week(q.ratio(d.EVENT_COVERAGE, "application"), "{{application}}"),
        (8, 12, 0, top), thresholds((None, "red"), (t.event_coverage_floor, "green"))))
    panels.append(series_panel(
        PANELS["automated_traffic"], "Automated share by application", "Searches of clients "
        "found automated (crawlers, monitors, load tests) / all searches, per application, "
        "with the same time a week ago: they are in no quality rate. SearchAutomatedShareJump "
        f"tickets when it is more than {t.automated_share_rise * 100:g} points of all searches "
        f"above its baseline over {windows.ticket_short} and {windows.ticket_long}.",
        "percentunit",
        _with_last_week(q.ratio(d.AUTOMATED_SHARE, "application"), "{{application}}"),
        (8, 12, 12, top)))
    panels.append(series_panel(
        31, "Automated searches by reason", "Automated searches per second by application "
        "and the rule that found their client: declared (automated.client_patterns), rate, "
        "repetitive, silent (docs/metrics.md, Automated traffic).", "reqps",
        [(q.AUTOMATED_BY_REASON, "{{application}}: {{reason}}")], (8, 8, 0, top + 8)))
    panels.append(series_panel(
        32, "Keystrokes per search by application", "Query records that were keystrokes of "
        "the search after them, per search (search as you type; 0 for a front end that sends "
        "only submitted queries).", "none",
        [(q.ratio(d.KEYSTROKES_PER_SEARCH, "application"), "{{application}}")],
        (8, 8, 8, top + 8)))
    panels.append(series_panel(
        33, "Events without a search and clicks beyond the results", "Tracking that does not "
        "match the searches, per second and application: events naming a query_id no query "
        "record was seen for (query records lost, ids changed), and clicks at a position past "
        "the results their page listed.", "reqps",
        [(q.EVENTS_WITHOUT_SEARCH_PER_S, "without a search {{application}}"),
         (q.CLICKS_BEYOND_RESULTS_PER_S, "beyond the results {{application}}")],
        (8, 8, 16, top + 8)))
    return panels
