"""Collector health: throughput, lag, bad input, freshness, state, memory, scrapes,
checkpoints, per-query aggregate flushes, query text withheld by the privacy rules."""

from __future__ import annotations

from alerts.config import Profile
from alerts.rules import PANELS
from dashboards import queries as q
from dashboards.panels import board, link, scope_variables, series_panel, thresholds

UID = "searchpulse-collector"


def build(profile: Profile):
    """The pipeline's health; freshness turns red where ``profile``'s staleness page fires."""
    health = scope_variables(
        board(UID, "searchpulse — collector health",
              "Is the pipeline from Kafka to /metrics healthy?")
        .refresh("30s").time("now-3h", "now").link(link("Overview", "searchpulse-overview")))
    stale = profile.thresholds.event_staleness_s_critical
    panels = [
        (PANELS["throughput"], "Records per second by outcome", "Records read per second: "
         "accepted, invalid, duplicate, orphan, late, ignored.", "reqps",
         [(q.RECORDS_BY_OUTCOME, "{{outcome}}"), (q.CONSUMED, "consumed {{topic}}")], None),
        (PANELS["consumer_lag"], "Consumer lag", "Records not yet consumed, per partition.",
         "short", [(q.LAG, "{{topic}}:{{partition}}")], None),
        (PANELS["invalid_records"], "Invalid and dead-lettered records by reason",
         "Rejected records per second by reason, and what went to the dead-letter topic.",
         "reqps", [(q.INVALID_BY_REASON, "invalid: {{reason}}"),
                   (q.DEAD_LETTERED_BY_REASON, "dead-lettered: {{reason}}")], None),
        (PANELS["freshness"], "Freshness", "Seconds since the newest event time seen. Red at "
         "the staleness alert.", "s", [(q.FRESHNESS, "age of the newest event")],
         thresholds((None, "green"), (stale, "red"))),
        (5, "Open sessions and pending searches", "Sessions with a search still attributable; "
         "searches whose abandonment is not decided yet.", "short",
         [(q.OPEN_SESSIONS, "open sessions"), (q.PENDING, "pending searches")], None),
        (6, "Memory", "Resident memory of each collector process.", "bytes",
         [(q.MEMORY, "{{instance}}")], None),
        (7, "Scrape duration", "How long Prometheus' scrape of /metrics takes.", "s",
         [(q.SCRAPE_DURATION, "{{instance}}")], None),
        (8, "Checkpoints", "Checkpoints committed per second (counters and offsets).", "reqps",
         [(q.COMMITS, "checkpoints")], None),
        (PANELS["store"], "Per-query aggregate flushes", "Flushes of per-query aggregates "
         "(for the feedback job) committed and failed per second.", "reqps",
         [(q.STORE_FLUSHES, "committed"), (q.STORE_FLUSH_FAILURES, "failed")], None),
        (10, "Zero-result queries withheld by reason", "Frequent zero-result queries kept off "
         "/metrics: a personal-data detector fired, too long, or fewer distinct clients than "
         "privacy.min_distinct_clients (docs/privacy.md).", "short",
         [(q.WITHHELD_QUERIES, "{{reason}}")], None),
    ]
    for i, (panel_id, title, description, unit, queries, steps) in enumerate(panels):
        health = health.with_panel(series_panel(panel_id, title, description, unit, queries,
                                              (8, 12, 12 * (i % 2), 8 * (i // 2)), steps))
    return health
