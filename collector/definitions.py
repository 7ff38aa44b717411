"""Every exposed metric and every rate of searchpulse, once, as rows of data.

A metric's name, type, help and labels, and a rate's numerator, denominator, title, unit and
panel are written here and nowhere else: the exposition (collector/exposition/metrics.py and the
health collectors), the recording and alert rules (alerts/rules/), the dashboards
(dashboards/queries.py), the replay summary (collector/exposition/summary.py), the simulator's
oracle (collector/sources/simulator/oracle.py) and the feedback signals
(feedback/candidates/signals.py) read these rows, and tests/collector/test_metric_docs.py checks
docs/metrics.md's tables against them. A misspelled name is then an ``AttributeError`` or
``KeyError`` at import, not a panel that silently shows no data.

What a row is — a ``Family``, a ``Count``, a ``Rate`` — is in collector/metric_rows.py. Neither
module imports anything else of the project (only prometheus_client), so alerts/, dashboards/
and feedback/ read them without pulling in the collector's engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collector.metric_rows import Count, Family, Rate

PREFIX = "searchpulse_"
QUALITY_LABELS = ("application", "stratum", "variant")
BUCKET_LABELS = ("application", "unit_bucket", "variant")
VARIANT_LABELS = ("application", "variant")


def _quality(name: str, kind: str, attribute: str, help_text: str,
             labels: tuple[str, ...] = QUALITY_LABELS) -> Family:
    return Family(PREFIX + name, kind, help_text, labels, attribute)


# -- quality series: application × stratum × variant (collector/series/quality.py) -----------------
SEARCHES = _quality("searches_total", "counter", "searches",
                    "Searches (query records with page absent or 1).")
ZERO_RESULT_SEARCHES = _quality("zero_result_searches_total", "counter", "zero_result",
                                "Searches with total_hits 0 or an empty hit id list.")
CLICKED_SEARCHES = _quality(
    "clicked_searches_total", "counter", "clicked",
    "Searches with results that got at least one click within the attribution window.")
CLICKS = _quality("clicks_total", "counter", "clicks",
                  "Clicks attributed to searches with results.")
CONVERTED_SEARCHES = _quality(
    "converted_searches_total", "counter", "converted",
    "Searches with results that got an add_to_cart or purchase within the attribution window.")
ABANDONED_SEARCHES = _quality(
    "abandoned_searches_total", "counter", "abandoned",
    "Searches with results and no click, conversion or later session activity by the deadline.")
ZERO_RESULT_EXITS = _quality(
    "zero_result_exits_total", "counter", "zero_result_exits",
    "Zero-result searches after which the session did nothing by the deadline.")
RECIPROCAL_RANK = _quality(
    "first_click_reciprocal_rank_total", "counter", "reciprocal_rank_sum",
    "Sum of 1/position of the first click of clicked searches with a known position (MRR).")
# What a query record or a search was, beside the searches people meant (docs/metrics.md,
# "Search intents", "Automated traffic", "Tracking health").
KEYSTROKE_RECORDS = _quality(
    "keystroke_records_total", "counter", "keystrokes",
    "Query records that were keystrokes of the search that followed them (search as you "
    "type): no search, no outcome.")
SEARCHES_WITH_EVENTS = _quality(
    "searches_with_events_total", "counter", "with_events",
    "Searches with results that received any event (impression, click, conversion or a next "
    "page) by their decision, windows.abandonment_s after them.")
UNTRACKED_SEARCHES = _quality(
    "untracked_searches_total", "counter", "untracked",
    "Searches with results that received no event while their application's event coverage had "
    "collapsed (broken tracking): in searches and the zero-result rate, in no denominator of "
    "an event-based rate (CTR, abandonment, conversion), store row or experiment statistic.")
CLICKS_BEYOND_RESULTS = _quality(
    "clicks_beyond_results_total", "counter", "clicks_beyond_results",
    "Clicks at a position past the results their page listed: tracking that does not match "
    "what was shown.")
AUTOMATED_SEARCHES = _quality(
    "automated_searches_total", "counter", "automated",
    "Searches of clients found automated (crawlers, monitors, load tests), by reason: counted "
    "here only, in no quality rate, store row, top-K or experiment statistic.",
    ("application", "reason", "stratum", "variant"))
QUALITY_COUNTERS = (
    SEARCHES, ZERO_RESULT_SEARCHES,
    _quality("unknown_result_count_searches_total", "counter", "unknown_result_count",
             "Searches without total_hits or hit ids; counted as searches with results."),
    CLICKED_SEARCHES, CLICKS, CONVERTED_SEARCHES,
    _quality("conversions_total", "counter", "conversions",
             "Conversion events attributed to searches with results."),
    ABANDONED_SEARCHES, ZERO_RESULT_EXITS, RECIPROCAL_RANK, KEYSTROKE_RECORDS,
    SEARCHES_WITH_EVENTS, CLICKS_BEYOND_RESULTS, UNTRACKED_SEARCHES,
)
REFORMULATED_SEARCHES = _quality(
    "reformulated_searches_total", "counter", "reformulated",
    "Searches reformulated by the next search of their session, by kind.",
    ("application", "kind", "stratum", "variant"))
TIME_TO_FIRST_CLICK = _quality("time_to_first_click_seconds", "histogram", "time_to_first_click",
                               "Event time from a search to its first click.")
FIRST_CLICK_POSITION = _quality(
    "first_click_position", "histogram", "first_click_position",
    "1-based position (across result pages) of the first click of a search.")
SEARCH_LATENCY = _quality("search_latency_seconds", "histogram", "latency",
                          "Search latency reported in query_attributes.latency_ms.")
QUALITY_HISTOGRAMS = (TIME_TO_FIRST_CLICK, FIRST_CLICK_POSITION, SEARCH_LATENCY)
# Judged relevance of the rankings production showed (collector/series/judged_relevance.py): a
# summary without quantiles per metric, _sum over judged searches and _count = judged searches,
# written only for series with a judged search (nothing at all when no judgment set is loaded).
JUDGED_NDCG = _quality(
    "judged_ndcg_at_10", "summary", "judged_ndcg_sum",
    "NDCG@10 (gain 2^grade-1) of the first page production showed, over searches of judged "
    "queries.")
JUDGED_ERR = _quality(
    "judged_err_at_10", "summary", "judged_err_sum",
    "ERR@10 of the first page production showed, over searches of judged queries.")
JUDGED_COVERAGE = _quality(
    "judged_coverage_at_10", "summary", "judged_coverage_sum",
    "Share of the shown top 10 that has a grade, over searches of judged queries.")
QUALITY_JUDGED = (JUDGED_NDCG, JUDGED_ERR, JUDGED_COVERAGE)
# Clicks weighted by the inverse of their position's examination (collector/series/examination.py):
# written only for series with such a click (nothing without an identified curve).
DEBIASED_CLICKS = _quality(
    "debiased_clicks_total", "counter", "debiased_clicks",
    "Clicks at a known position, each weighted min(1/examination of its position, "
    "clicks.max_weight): inverse-propensity weighted.")
INTERLEAVING_WINS = _quality(
    "interleaving_wins_total", "counter", "interleaving_wins",
    "Team-draft interleaved searches whose clicks favoured this team (configuration).",
    ("application", "stratum", "team", "variant"))
INTERLEAVING_TIES = _quality("interleaving_ties_total", "counter", "interleaving_ties",
                             "Team-draft interleaved searches whose teams got equal clicks.")
INTERLEAVING_UNATTRIBUTED = _quality(
    "interleaving_unattributed_clicks_total", "counter", "interleaving_unattributed",
    "Clicks without a team on team-draft interleaved searches.")

# -- experiments at the unit of randomization (collector/series/units.py) --------------------------
EXPERIMENT_UNITS = Family(
    PREFIX + "experiment_units", "gauge",
    "Distinct clients (client_id) with a search of this experiment variant within the last "
    "experiments.unit_window_s of event time.", VARIANT_LABELS, "units")
EXPERIMENT_WITHOUT_CLIENT_ID = Family(
    PREFIX + "experiment_searches_without_client_id_total", "counter",
    "Searches of this experiment variant without a client_id: counted in "
    "searchpulse_searches_total, in no unit, unit bucket or experiment statistic.",
    VARIANT_LABELS, "without_client_id")


def _bucket(attribute: str, name: str, help_text: str) -> Family:
    return Family(f"{PREFIX}experiment_{name}_total", "counter", help_text, BUCKET_LABELS,
                  attribute)


# Per unit bucket: the sums the clustered variance is computed from (collector/series/units.py).
BUCKET_COUNTS = (
    _bucket("searches", "searches", "Searches of the variant by clients of this unit bucket."),
    _bucket("zero_result", "zero_result_searches", "Zero-result searches, per unit bucket."),
    _bucket("clicked", "clicked_searches",
            "Searches with results that got a click, per unit bucket."),
    _bucket("reformulated", "reformulated_searches", "Reformulated searches, per unit bucket."),
    _bucket("abandoned", "abandoned_searches",
            "Abandoned searches with results, per unit bucket."),
    _bucket("converted", "converted_searches",
            "Searches with results that got a conversion, per unit bucket."),
    _bucket("timed", "timed_searches", "Searches that reported a latency, per unit bucket."),
    _bucket("slow", "slow_searches",
            "Searches slower than metrics.latency_guardrail_s, per unit bucket."),
)
EXPERIMENT_INTERLEAVING_WINS = Family(
    PREFIX + "experiment_interleaving_wins_total", "counter",
    "Team-draft interleaved searches won by this team, per unit bucket.",
    ("application", "team", "unit_bucket", "variant"), "interleaving_wins")
EXPERIMENT_INTERLEAVING_TIES = Family(
    PREFIX + "experiment_interleaving_ties_total", "counter",
    "Team-draft interleaved searches whose teams tied, per unit bucket.", BUCKET_LABELS,
    "interleaving_ties")

# -- the pipeline: what became of every record (collector/ingest/accounting.py) --------------------
RECORDS = Family(PREFIX + "records_total", "counter",
                 "Records read, by kind and by what became of them.", ("kind", "outcome"))
INVALID_RECORDS = Family(PREFIX + "invalid_records_total", "counter",
                         "Records rejected as invalid, by reason.", ("reason",))
DEAD_LETTERED_RECORDS = Family(PREFIX + "dead_lettered_records_total", "counter",
                               "Records written to the dead-letter destination, by reason.",
                               ("reason",))
REPEATED_RECORDS = Family(
    PREFIX + "repeated_records_total", "counter",
    "Records of a replayed input that repeat an earlier range of the same input (a log "
    "concatenated with itself, a rotation that copied lines into the next file): recognised "
    "and not counted again.")
# (family, the ``PipelineStats`` attribute of its counts by reason)
PIPELINE_REASONS = (
    (INVALID_RECORDS, "invalid"),
    (Family(PREFIX + "ignored_records_total", "counter",
            "Valid records searchpulse does not use, by reason.", ("reason",)), "ignored"),
    (Family(PREFIX + "data_quality_issues_total", "counter",
            "Records used despite a data-quality issue, by issue.", ("issue",)), "data_quality"),
    (DEAD_LETTERED_RECORDS, "dead_lettered"),
    (Family(PREFIX + "events_without_search_total", "counter",
            "Clicks, conversions and exposures naming a query_id no query record was seen for "
            "(orphans), per application of the event.", ("application",)),
     "events_without_search"),
    (Family(PREFIX + "retimed_records_total", "counter",
            "Records whose event time was corrected, by reason: their client's clock offset, or "
            "an event stamped before the search it names.", ("reason",)), "retimed"),
    (Family(PREFIX + "future_records_total", "counter",
            "Records stamped more than ordering.max_ahead_s past the wall clock while the "
            "stream was not there, by kind: their clients' clocks run ahead; all retimed, none "
            "moved the stream's time.", ("kind",)), "future"),
    (Family(PREFIX + "clock_corrected_clients_total", "counter",
            "Clients (per record kind) whose clock was found off and corrected, by how it was "
            "found: behind the stream, ahead of it, or an event far from its search.",
            ("reason",)), "clock_clients"),
)
CLIENT_CLOCK_OFFSET = Family(
    PREFIX + "client_clock_offset_seconds", "histogram",
    "Estimated clock offset (absolute) of each client and record kind against the stream "
    "clock, observed once when first judged; offsets within the tolerance count as 0.")
LABEL_VALUES_FOLDED = Family(
    PREFIX + "label_values_folded_total", "counter",
    "Searches whose label value was folded into `other` by the cardinality cap; "
    "label=experiment: experiment variants beyond experiments.max_variants (no unit "
    "statistics).", ("label",))

# -- engine state (collector/exposition/view.py gauges) --------------------------------------------
# (family, the key of ``View.gauges``)
STATE_GAUGES = tuple(
    (Family(PREFIX + key, "gauge", help_text), key) for key, help_text in (
        ("last_event_timestamp_seconds",
         "Newest event time seen (Unix seconds); 0 before the first."),
        ("watermark_timestamp_seconds",
         "Event time up to which outcomes are decided (Unix seconds)."),
        ("open_sessions", "Sessions with at least one search still attributable."),
        ("pending_searches",
         "Query records not decided yet: searches are counted at their decision."),
        ("tracked_searches", "Searches and result pages still attributable (in memory)."),
        ("buffered_records", "Records waiting in the event-time ordering buffer."),
    ))
LAST_EVENT_TIMESTAMP = STATE_GAUGES[0][0]
TOP_ZERO_RESULT_QUERIES = Family(
    PREFIX + "top_zero_result_queries", "gauge",
    "Zero-result searches of the most frequent zero-result queries per application over "
    "the top_queries window; only queries no personal-data detector fires on and that "
    "privacy.min_distinct_clients distinct clients typed (length-capped).",
    ("application", "query"))
TOP_ZERO_RESULT_QUERIES_WITHHELD = Family(
    PREFIX + "top_zero_result_queries_withheld", "gauge",
    "Queries among the 20 x top_queries.size most frequent zero-result queries of the "
    "window not shown, by reason (a personal-data detector, too long, too few clients, "
    "enough only with searches that carried no client id, not yet read by the "
    "detectors).", ("application", "reason"))
BUILD_INFO = Family(PREFIX + "build_info", "gauge", "searchpulse build information.",
                    ("version", "python"))

# -- the per-query store's writer (collector/store/store_writer.py) --------------------------------
STORE_FLUSHES = Family(PREFIX + "store_flushes_total", "counter",
                       "Flushes of per-query aggregates the store committed.")
STORE_FLUSH_FAILURES = Family(
    PREFIX + "store_flush_failures_total", "counter",
    "Writes of per-query aggregates (and connections) that failed; their rows wait and the "
    "store is tried again with backoff.")
STORE_ROWS_WRITTEN = Family(PREFIX + "store_rows_written_total", "counter",
                            "Per-query aggregate rows committed to the store.")
STORE_ROWS_WAITING = Family(
    PREFIX + "store_rows_waiting", "gauge",
    "Per-query rows handed to the writer and not in the store yet: in the write in flight, "
    "in memory after a failure, or spilled.")
STORE_ROWS_SPILLED = Family(
    PREFIX + "store_rows_spilled", "gauge",
    "Of the rows waiting, those spilled to store.spill_dir while the store is away.")
STORE_SPILL_FAILURES = Family(
    PREFIX + "store_spill_failures_total", "counter",
    "Spills that could not be written: their rows stay in memory; at "
    "store.max_waiting_rows, reading stops.")
STORE_AWAY_SECONDS = Family(
    PREFIX + "store_away_seconds", "gauge",
    "Seconds since the store's current outage began (its first failed write or connection); "
    "0 while it takes writes.")

# -- the Kafka consumer (collector/sources/kafka/health.py) ----------------------------------
KAFKA_LAG = Family(PREFIX + "kafka_consumer_lag_records", "gauge",
                   "Records not yet consumed per partition (high-water − position).",
                   ("topic", "partition"))
KAFKA_CONSUMED = Family(PREFIX + "kafka_records_consumed_total", "counter",
                        "Records consumed, per topic.", ("topic",))
KAFKA_COMMITS = Family(PREFIX + "kafka_commits_total", "counter", "Checkpoints committed.")
# (family, the key of the consumer's ``health`` counts)
KAFKA_COUNTS = (
    (KAFKA_COMMITS, "commits"),
    (Family(PREFIX + "kafka_commit_failures_total", "counter", "Checkpoints that failed."),
     "commit_failures"),
    (Family(PREFIX + "kafka_rebalances_total", "counter", "Partition assignment changes."),
     "rebalances"),
    (Family(PREFIX + "kafka_topic_recreations_total", "counter",
            "Topics found recreated under their name (another Kafka topic id than the one the "
            "checkpoint or the store holds): the old topic's offsets are not applied to the "
            "new one."), "topic_recreations"),
)
KAFKA_ASSIGNED = Family(PREFIX + "kafka_assigned_partitions", "gauge", "Partitions assigned.")
KAFKA_REPLAYING = Family(PREFIX + "kafka_replaying_partitions", "gauge",
                         "Partitions rebuilding their sessions after an assignment.")
KAFKA_SINCE_LAST_RECORD = Family(PREFIX + "kafka_seconds_since_last_record", "gauge",
                                 "Wall seconds since the last record of any assigned partition.")
KAFKA_CONNECTED = Family(PREFIX + "kafka_connected", "gauge",
                         "1 while the consumer reaches the brokers.")

# -- the click model's curves (collector/series/examination.py) ------------------------------------
EXAMINATION_PROBABILITY = Family(
    PREFIX + "examination_probability", "gauge",
    "Probability that a result at this position is looked at, relative to the first "
    "(position-based click model of `searchpulse clicks`; θ_1 = 1).",
    ("application", "position", "identified"))

FAMILIES = (
    *QUALITY_COUNTERS, REFORMULATED_SEARCHES, AUTOMATED_SEARCHES, *QUALITY_HISTOGRAMS,
    *QUALITY_JUDGED,
    DEBIASED_CLICKS, INTERLEAVING_WINS, INTERLEAVING_TIES, INTERLEAVING_UNATTRIBUTED,
    EXPERIMENT_UNITS, EXPERIMENT_WITHOUT_CLIENT_ID, *BUCKET_COUNTS,
    EXPERIMENT_INTERLEAVING_WINS, EXPERIMENT_INTERLEAVING_TIES,
    RECORDS, REPEATED_RECORDS, *(family for family, _ in PIPELINE_REASONS), CLIENT_CLOCK_OFFSET,
    LABEL_VALUES_FOLDED, *(family for family, _ in STATE_GAUGES), TOP_ZERO_RESULT_QUERIES,
    TOP_ZERO_RESULT_QUERIES_WITHHELD, BUILD_INFO,
    STORE_FLUSHES, STORE_FLUSH_FAILURES, STORE_ROWS_WRITTEN, STORE_ROWS_WAITING,
    STORE_ROWS_SPILLED, STORE_SPILL_FAILURES, STORE_AWAY_SECONDS,
    KAFKA_LAG, KAFKA_CONSUMED, *(family for family, _ in KAFKA_COUNTS), KAFKA_ASSIGNED,
    KAFKA_REPLAYING, KAFKA_SINCE_LAST_RECORD, KAFKA_CONNECTED, EXAMINATION_PROBABILITY,
)


# -- the counts rates divide, and the rates ------------------------------------------------
WITH_RESULTS = "searches_with_results"
# Searches with results whose events could arrive: the denominator of every event-based rate.
TRACKED = "tracked_searches_with_results"
# Searches whose outcome could be known: the denominator of the reformulation rate (whether a
# search was clicked before the next intent came is read from its events).
TRACKED_SEARCHES = "tracked_searches"
ALL_SEARCHES = "all_searches"
COUNTS = {count.name: count for count in (
    Count("searches", SEARCHES.name, "searches"),
    Count("zero_result_searches", ZERO_RESULT_SEARCHES.name, "zero_result"),
    # Searches with results = searches − zero-result searches (docs/metrics.md).
    Count(WITH_RESULTS, attribute="with_results",
          difference=("searches", "zero_result_searches")),
    Count("clicked_searches", CLICKED_SEARCHES.name, "clicked"),
    Count("reformulated_searches", REFORMULATED_SEARCHES.name, "reformulated"),
    Count("abandoned_searches", ABANDONED_SEARCHES.name, "abandoned"),
    Count("converted_searches", CONVERTED_SEARCHES.name, "converted"),
    Count("zero_result_exits", ZERO_RESULT_EXITS.name, "zero_result_exits"),
    Count("clicks", CLICKS.name, "clicks"),
    Count("debiased_clicks", DEBIASED_CLICKS.name, "debiased_clicks"),
    # judged relevance (collector/series/judged_relevance.py): summaries of judged searches
    Count("judged_searches", f"{JUDGED_NDCG.name}_count", "judged_searches"),
    Count("judged_ndcg_at_10", f"{JUDGED_NDCG.name}_sum", "judged_ndcg_sum"),
    Count("judged_err_at_10", f"{JUDGED_ERR.name}_sum", "judged_err_sum"),
    Count("judged_coverage_at_10", f"{JUDGED_COVERAGE.name}_sum", "judged_coverage_sum"),
    # first clicks: their time (histogram) and position (MRR over known positions)
    Count("time_to_first_click", f"{TIME_TO_FIRST_CLICK.name}_sum", "time_to_first_click_sum"),
    Count("first_clicks", f"{TIME_TO_FIRST_CLICK.name}_count", "first_clicks"),
    Count("first_click_reciprocal_rank", RECIPROCAL_RANK.name, "reciprocal_rank_sum"),
    Count("ranked_first_clicks", f"{FIRST_CLICK_POSITION.name}_count", "ranked_clicked"),
    # the latency guardrail's counts exist per unit bucket only (no quality series)
    Count("timed_searches", attribute="timed"),
    Count("slow_searches", attribute="slow"),
    # what is not a search people meant, and whether the front end's events arrive
    Count("keystroke_records", KEYSTROKE_RECORDS.name, "keystrokes"),
    Count("automated_searches", AUTOMATED_SEARCHES.name, "automated_searches"),
    # Searches people meant and automated searches together: what a front end sent as searches.
    Count(ALL_SEARCHES, attribute=ALL_SEARCHES, total=("searches", "automated_searches")),
    Count("searches_with_events", SEARCHES_WITH_EVENTS.name, "with_events"),
    Count("untracked_searches", UNTRACKED_SEARCHES.name, "untracked", optional=True),
    # Searches with results − untracked searches (docs/metrics.md, "Tracking health").
    Count(TRACKED, attribute="tracked_with_results",
          difference=(WITH_RESULTS, "untracked_searches")),
    # Searches − untracked searches (docs/metrics.md, "Tracking health").
    Count(TRACKED_SEARCHES, attribute=TRACKED_SEARCHES,
          difference=("searches", "untracked_searches")),
    Count("clicks_beyond_results", CLICKS_BEYOND_RESULTS.name, "clicks_beyond_results"),
)}


ZERO_RESULT_RATE = Rate("zero_result_rate", "zero_result_searches", "searches",
                        "Zero-result rate", "zero-result searches / searches", panel=2)
CTR = Rate("ctr", "clicked_searches", TRACKED, "CTR",
           "clicked searches / tracked searches with results", panel=4)
REFORMULATION_RATE = Rate("reformulation_rate", "reformulated_searches", TRACKED_SEARCHES,
                          "Reformulation rate", "reformulated searches / tracked searches",
                          panel=5)
ABANDONMENT_RATE = Rate("abandonment_rate", "abandoned_searches", TRACKED,
                        "Abandonment rate", "abandoned searches / tracked searches with results",
                        panel=6)
CONVERSION_RATE = Rate("conversion_rate", "converted_searches", TRACKED, "Conversion rate",
                       "converted searches / tracked searches with results")
ZERO_RESULT_EXIT_RATE = Rate("zero_result_exit_rate", "zero_result_exits",
                             "zero_result_searches", "Zero-result exit rate",
                             "zero-result exits / zero-result searches")
MEAN_TIME_TO_FIRST_CLICK = Rate("mean_time_to_first_click_s", "time_to_first_click",
                                "first_clicks", "Mean time to first click",
                                "Σ time to first click / clicked searches", unit="s")
MRR = Rate("mrr_first_click", "first_click_reciprocal_rank", "ranked_first_clicks",
           "MRR of first clicks", "Σ 1/position / first clicks with a known position",
           unit="none")
JUDGED_NDCG_MEAN = Rate("judged_ndcg_at_10", "judged_ndcg_at_10", "judged_searches",
                        "Judged NDCG@10", "Σ NDCG@10 / judged searches", unit="none", panel=23)
JUDGED_ERR_MEAN = Rate("judged_err_at_10", "judged_err_at_10", "judged_searches",
                       "Judged ERR@10", "Σ ERR@10 / judged searches", unit="none")
JUDGED_COVERAGE_MEAN = Rate("judged_coverage_at_10", "judged_coverage_at_10", "judged_searches",
                            "Judged coverage@10", "Σ coverage@10 / judged searches", panel=24)
JUDGED_SHARE = Rate("judged_share", "judged_searches", "searches", "Judged share of traffic",
                    "judged searches / searches")
# clicks per search with results, raw and inverse-propensity weighted (not proportions)
CLICKS_PER_SEARCH = Rate("clicks_per_search", "clicks", TRACKED, "Clicks per search",
                         "clicks / tracked searches with results", unit="none")
DEBIASED_CLICKS_PER_SEARCH = Rate("debiased_clicks_per_search", "debiased_clicks", TRACKED,
                                  "Debiased clicks per search",
                                  "debiased clicks / tracked searches with results", unit="none")
# the experiments' latency guardrail: per unit bucket only (collector/series/units.py)
SLOW_SEARCH_SHARE = Rate("slow_search_share", "slow_searches", "timed_searches",
                         "Slow-search share",
                         "searches slower than the guardrail / searches that reported a latency")
# Traffic that is not people's searches, and tracking health (docs/metrics.md).
AUTOMATED_SHARE = Rate("automated_share", "automated_searches", ALL_SEARCHES, "Automated share",
                       "automated searches / (searches + automated searches)")
KEYSTROKES_PER_SEARCH = Rate("keystrokes_per_search", "keystroke_records", "searches",
                             "Keystrokes per search", "keystroke records / searches", unit="none")
EVENT_COVERAGE = Rate("event_coverage", "searches_with_events", WITH_RESULTS, "Event coverage",
                      "searches with results that received an event / searches with results")
RATES = (ZERO_RESULT_RATE, CTR, REFORMULATION_RATE, ABANDONMENT_RATE, CONVERSION_RATE,
         ZERO_RESULT_EXIT_RATE, MEAN_TIME_TO_FIRST_CLICK, MRR, JUDGED_NDCG_MEAN, JUDGED_ERR_MEAN,
         JUDGED_COVERAGE_MEAN, JUDGED_SHARE, CLICKS_PER_SEARCH, DEBIASED_CLICKS_PER_SEARCH,
         SLOW_SEARCH_SHARE, AUTOMATED_SHARE, KEYSTROKES_PER_SEARCH, EVENT_COVERAGE)
# The quality rates every dashboard breaks down (by application, stratum, variant), and the
# four of them the overview's headline row shows from the recording rules.
QUALITY_RATES = (ZERO_RESULT_RATE, CTR, REFORMULATION_RATE, ABANDONMENT_RATE, CONVERSION_RATE)
HEADLINE_RATES = (ZERO_RESULT_RATE, CTR, REFORMULATION_RATE, ABANDONMENT_RATE)
RATIOS = {rate.ratio: rate for rate in RATES}


def count_of(totals: Mapping[str, Any], count: str) -> Any:
    """``count`` from totals keyed by attribute (numbers, numpy arrays or pandas columns
    alike); a derived count is computed (searches with results = searches − zero-result,
    all searches = searches + automated searches)."""
    definition = COUNTS[count]
    if definition.difference:
        whole, part = definition.difference
        return count_of(totals, whole) - count_of(totals, part)
    if definition.total:
        one, other = definition.total
        return count_of(totals, one) + count_of(totals, other)
    if definition.optional:
        return totals.get(definition.attribute, 0)
    return totals[definition.attribute]


def rate_of(totals: Mapping[str, Any], rate: Rate) -> float | None:
    """``rate`` over totals keyed by attribute; ``None`` (no data) on a zero denominator."""
    denominator = count_of(totals, rate.denominator)
    return count_of(totals, rate.numerator) / denominator if denominator else None
