"""Alerts on the collector's pipeline (alerts/tests/pipeline.test.yml): down, absent, stale,
invalid records, consumer lag, a store away."""

from __future__ import annotations

from alerts.config import (
    HEALTH_DASHBOARD,
    AlertRow,
    Profile,
)
from alerts.rules.recordings import (
    Built,
    Recordings,
    builds,
)
from collector import definitions as d


def _pipeline(expr: str, summary: str, description: str, panel: str) -> Built:
    return Built(expr, summary, description, panel, kind="pipeline", dashboard=HEALTH_DASHBOARD,
                 per_application=False, needs_tracking=False)


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
    """The store away longer than a flush interval (the collector's gauge counts from the
    outage's first failed write or connection; a failure the next retry repairs never
    fires)."""
    sel = profile.deployment.selector
    interval = profile.store_flush_interval_s
    return _pipeline(
        f"max by (instance) ({d.STORE_AWAY_SECONDS.name}{{{sel}}}) > {interval:g}",
        "The per-query aggregate store has taken no flush for longer than a flush interval.",
        f"The store of {{{{ $labels.instance }}}} has failed every write and connection for "
        f"{{{{ $value | humanizeDuration }}}} (store.flush_interval_s = {interval:g} s): it is "
        f"down, unreachable, locked or full. Metrics are unaffected; the rows wait in memory, "
        f"then in store.spill_dir ({d.STORE_ROWS_WAITING.name}), and are written when it is "
        f"back; if neither can take more, the collector stops reading.",
        "store")
