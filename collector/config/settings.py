"""The settings table: every setting as a row of data (key, type, default, help, check), its
``SEARCHPULSE_*`` variable, and the keys that moved or belong to another program."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from collector.config import value_checks as must

ENV_PREFIX = "SEARCHPULSE_"
# Config-file sections only `searchpulse generate` and `config check` read (alerts/config.py adds
# their settings): the collector's other subcommands skip them, so one file holds both.
FOREIGN_SECTIONS = ("alerts.",)
# Settings that moved (issue 28: the experiment design is one table the collector, the rules and
# `searchpulse experiments` read): an old key is refused naming its new one.
MOVED = {f"alerts.thresholds.{name}": f"experiments.{name}"
         for name in ("control_variant", "guardrail_zero_result_margin",
                      "guardrail_slow_search_margin")}
MOVED["alerts.thresholds.min_searches_sample_ratio"] = "experiments.min_units"


@dataclass(frozen=True, slots=True)
class Setting:
    key: str
    kind: type
    default: Any
    help: str
    check: Callable[[Any], str | None] | None = None
    secret: bool = False

    @property
    def env(self) -> str:
        return env_name(self.key)


def env_name(key: str) -> str:
    """The SEARCHPULSE_* variable of a setting key."""
    return ENV_PREFIX + key.upper().replace(".", "_")


SETTINGS: tuple[Setting, ...] = (
    Setting("ordering.lateness_s", float, 30.0,
            "How far behind the stream clock a record may arrive and still be ordered.",
            must.non_negative),
    Setting("ordering.clock_tolerance_s", float, 30.0,
            "An event further than this from where its search and the stream clock put it has "
            "its client's event clock corrected.", must.positive),
    Setting("ordering.max_ahead_s", float, 600.0,
            "A client whose first record is further ahead of the stream clock has its clock "
            "corrected; closer, its records wait for the stream.", must.positive),
    Setting("ordering.idle_s", float, 30.0,
            "Seconds without a record (wall clock) after which a partition is idle: what it "
            "holds is released and its stream time follows the wall clock.", must.positive),
    Setting("windows.reformulation_s", float, 300.0,
            "A next search within this many seconds can reformulate the previous one.",
            must.positive),
    Setting("windows.abandonment_s", float, 300.0,
            "Seconds after a search at which abandonment / zero-result exit is decided.",
            must.positive),
    Setting("windows.attribution_s", float, 1800.0,
            "Clicks and conversions count for a search up to this many seconds after it.",
            must.positive),
    Setting("intents.keystroke_gap_s", float, 5.0,
            "A query record followed within this many seconds by the next one of its session, "
            "whose normalized query continues it (typed on, deleted, equal, a small edit) and "
            "with no click, conversion or next page on it, is a keystroke of that search, not "
            "a search (search as you type).", must.non_negative),
    Setting("intents.max_edit", int, 2,
            "The edit distance (characters) up to which a next query record continues the "
            "typing of the previous one (a typo fixed, a character inserted).", must.non_negative),
    Setting("intents.off_applications", list, [],
            "Applications whose every query record is a search (front ends that send only "
            "submitted queries): the keystroke rule is off for them.", None),
    Setting("automated.window_s", float, 600.0,
            "A client's intents in this much event time up to a search's decision are what "
            "the automated-client rules read.", must.positive),
    Setting("automated.max_searches", int, 30,
            "A client with this many intents in the window is automated (rate): people make "
            "a few dozen searches an hour at most.", must.positive),
    Setting("automated.max_repeats", int, 4,
            "A client with this many intents repeating one of its last four queries and no "
            "click, conversion or next page in the window is automated (repetitive: a "
            "monitor).", must.positive),
    Setting("automated.max_silent", int, 15,
            "A client with this many intents with results and no click, conversion or next "
            "page in the window is automated (silent: a headless fleet).", must.positive),
    Setting("automated.client_patterns", list, [],
            "Regexes (RE2, full match) of client ids that are automated (synthetic monitors "
            "you run): declared.", must.linear_patterns),
    Setting("automated.human_client_patterns", list, [],
            "Regexes (RE2, full match) of client ids never taken as automated (a proxy that "
            "sends every user's searches under one id).", must.linear_patterns),
    Setting("automated.max_clients", int, 1_000_000,
            "Clients whose recent intents are kept per engine (memory bound, ~300 bytes "
            "each); the oldest is forgotten first.", must.positive),
    Setting("tracking.untracked_below", float, 0.1,
            "A search with results decided without any event while its application's event "
            "coverage over its last 128 searches is below this share of its usual coverage is "
            "untracked (broken tracking): in no CTR, abandonment or conversion denominator. 0: "
            "off.", must.fraction),
    Setting("events.position_base", int, 1,
            "Base of event_attributes.position.ordinal: 1 (UBI spec) or 0 (OpenSearch generator).",
            must.base),
    Setting("events.team_attribute", str, "",
            "One more attribute of event_attributes.object that names the interleaving team of a "
            "clicked result (beside search_config, search_configuration_uuid, "
            "_search_configuration_id); read first. Empty: none.", must.attribute_name),
    Setting("metrics.latency_guardrail_s", float, 0.5,
            "Latency guardrail; the latency histogram has a bucket boundary exactly here.",
            must.positive),
    Setting("labels.application_cap", int, 20,
            "Distinct `application` label values kept; later ones fold into `other`.",
            must.positive),
    Setting("labels.variant_cap", int, 20,
            "Distinct `variant` label values kept; later ones fold into `other`.", must.positive),
    Setting("experiments.unit_buckets", int, 32,
            "Hashed buckets of clients per experiment variant: the units of the clustered "
            "(delta-method) variance of every experiment rate; bounds the label unit_bucket.",
            must.bucket_count),
    Setting("experiments.unit_window_s", float, 21600.0,
            "A client counts as a unit of its variant while its newest search is this recent "
            "(event time); the sample-ratio test reads these units.", must.positive),
    Setting("experiments.max_variants", int, 40,
            "(application, variant) pairs of experiments that get units and unit buckets "
            "(bounds their series: at most this × unit_buckets × 10); later ones get none and "
            "are counted in searchpulse_label_values_folded_total{label=\"experiment\"}.",
            must.positive),
    Setting("experiments.max_units", int, 1_000_000,
            "Clients tracked for the unit count per engine (memory bound, ~200 bytes each).",
            must.positive),
    Setting("experiments.control_variant", str, "control",
            "The variant every other one is compared with (differences, guardrails).",
            must.variant),
    Setting("experiments.split", list, [],
            "The designed split as VARIANT=SHARE items, e.g. control=0.5,treatment=0.5 (shares "
            "sum to 1); the sample-ratio test checks it. Empty: an equal split of the variants "
            "seen.", must.split),
    Setting("experiments.min_units", int, 1000,
            "The sample-ratio test needs this many units in an application's experiment.",
            must.positive),
    Setting("experiments.min_searches", int, 1000,
            "A guardrail verdict needs this many searches (the rate's denominator) in the "
            "variant.", must.positive),
    Setting("experiments.guardrail_zero_result_margin", float, 0.01,
            "Non-inferiority margin of the zero-result rate (absolute): a variant breaches the "
            "guardrail when the low end of its difference from the control exceeds it.",
            must.share),
    Setting("experiments.guardrail_slow_search_margin", float, 0.01,
            "The same for the share of searches slower than metrics.latency_guardrail_s.",
            must.share),
    Setting("strata.file", str, "",
            "CSV query,stratum (written by `searchpulse feedback`); empty: live sketch.",
            None),
    Setting("strata.known_item_patterns", list, [],
            "Extra regexes (RE2 syntax, linear time; on the normalized query) that mark "
            "known-item searches.", must.linear_patterns),
    Setting("strata.known_item_titles_file", str, "",
            "File with one exact title per line; a query equal to one is a known-item search.",
            None),
    Setting("strata.head_share", float, 0.5,
            "Head = most frequent queries covering this share of searches.", must.share),
    Setting("strata.torso_share", float, 0.8,
            "Torso = the next queries up to this cumulative share; the rest is tail.", must.share),
    Setting("strata.sketch_capacity", int, 10000,
            "Queries the live heavy-hitter sketch tracks (memory bound).", must.positive),
    Setting("top_queries.size", int, 10,
            "Top zero-result queries exposed per application (only queries passing both "
            "privacy rules, length-capped).", must.positive),
    Setting("top_queries.window_s", float, 900.0,
            "Event-time window of the top zero-result queries.", must.positive),
    Setting("privacy.min_distinct_clients", int, 3,
            "A query is shown on /metrics only when this many distinct clients typed it in "
            "the top_queries window (k-anonymity).", must.positive),
    Setting("privacy.patterns", list, [],
            "Extra regexes (RE2 syntax, linear time) of personal data: a query matching one is "
            "never shown or exported.", must.linear_patterns),
    Setting("privacy.max_query_chars", int, 200,
            "Longer query text is never scanned, shown or exported.", must.positive),
    Setting("privacy.scan_budget_ms", float, 30.0,
            "Detector time per /metrics release for top zero-result queries not read before "
            "(most frequent first); the rest is withheld as not_scanned_yet until a later "
            "release reads it, so new text never stalls a scrape or a checkpoint.",
            must.non_negative),
    Setting("replay.partitions", int, 4,
            "Partitions `replay --workers` splits records into, by client_id as a Kafka "
            "topic of this many partitions is keyed (one engine each; at most this many "
            "workers): the result depends on it, not on the workers.", must.positive),
    Setting("store.url", str, "",
            "Per-query aggregates for the feedback job: sqlite:///PATH or postgresql://…; "
            "empty: not kept.", must.store_url, secret=True),
    Setting("store.flush_interval_s", float, 60.0,
            "Seconds between flushes of per-query aggregates to the store.", must.positive),
    Setting("store.flush_rows", int, 200_000,
            "Flush earlier once this many per-query rows are pending (memory bound).",
            must.positive),
    Setting("store.max_waiting_rows", int, 200_000,
            "Per-query rows kept in memory while the store is away; beyond, they are spilled "
            "to store.spill_dir and written when it is back (docs/delivery.md).",
            must.positive),
    Setting("store.spill_dir", str, "",
            "Directory of the files rows spill to while the store is away (deleted when "
            "written, or when the process ends); empty: the system's temporary directory."),
    Setting("store.wait_s", float, 300.0,
            "Seconds `replay`, at its end, waits for a store that went away while it read, "
            "before it stops with an error (the same command then resumes).",
            must.non_negative),
    Setting("store.shown_depth", int, 10,
            "Documents counted as shown per search (its first result positions), and kept per "
            "query and day.", must.positive),
    Setting("store.allow_incomplete", bool, False,
            "feedback and clicks use a store that an interrupted `replay` left (part of an "
            "input counted) instead of refusing it (--allow-incomplete)."),
    Setting("store.retention_days", int, 400,
            "Per-query rows (raw query text) older than this many days are deleted at each "
            "flush: enough for a year-over-year quarter.", must.positive),
    *(Setting(f"feedback.quota_{stratum}", int, quota,
              f"Judgment candidates from {stratum.replace('_', '-')} queries.", must.non_negative)
      for stratum, quota in (("head", 25), ("torso", 50), ("tail", 100), ("known_item", 25))),
    Setting("feedback.quota_disagreement", int, 25,
            "Judged queries where judgments and users disagree (judged good, users fail; "
            "judged poor, users succeed), re-sent to the judges.", must.non_negative),
    Setting("feedback.quota_repool", int, 25,
            "Judged queries whose shown top 10 is mostly ungraded, re-pooled.", must.non_negative),
    Setting("feedback.judged_good_ndcg", float, 0.8,
            "Judged NDCG@10 at or above which a failing query is 'judged good, users fail'.",
            must.share),
    Setting("feedback.judged_poor_ndcg", float, 0.4,
            "Judged NDCG@10 at or below which a healthy query is 'judged poor, users succeed'.",
            must.share),
    Setting("feedback.judged_coverage_min", float, 0.6,
            "Judged coverage@10 below which a judged query is re-pooled.", must.share),
    Setting("feedback.calibration_share", float, 0.2,
            "Share of each quota sampled from non-failing queries (∝ traffic) for calibration.",
            must.share),
    Setting("feedback.failure_threshold", float, 0.05,
            "A query fails when the Wilson lower bound of its zero-result, reformulation, "
            "abandonment or no-click rate exceeds its application's rate by this much.",
            must.share),
    Setting("feedback.confidence", float, 0.99,
            "Confidence of the Wilson lower bounds that score queries (two-sided).", must.share),
    Setting("feedback.min_distinct_clients", int, 3,
            "A query is written to a feedback file or the report only when this many distinct "
            "clients typed it in the period (k-anonymity; at most 8, the client marks a store "
            "keeps per row).", must.client_marks),
    Setting("feedback.min_searches", int, 2, "Queries with fewer searches in the period are "
            "not considered.", must.positive),
    Setting("feedback.pool_depth", int, 10,
            "Documents pooled per source (shown, clicked, each extra run) and candidate.",
            must.positive),
    Setting("feedback.near_duplicate_similarity", float, 90.0,
            "Word-order-insensitive similarity (0-100) at which a query is a near-duplicate of "
            "one already chosen for the same application.", must.percent),
    Setting("judgments.file", str, "",
            "Judgment set to score live rankings against (judgments.csv, a Quepid book export "
            "or CSV, SRW judgments): judged NDCG@10, ERR@10, coverage@10; reloaded when it "
            "changes; empty: none.", None),
    Setting("judgments.max_grade", int, 3,
            "Judges grade on 0..max_grade (Quepid's default scale: 0-3); a grade outside is "
            "refused as off_scale.", must.positive),
    Setting("judgments.min_pairs", int, 30,
            "Agreement is reported only over at least this many compared pairs (Quepid: 30).",
            must.positive),
    Setting("judgments.automatic_raters", list, [],
            "Raters that are automatic judges (an LLM's grades): reported as calibration "
            "against the humans, not as human raters.", None),
    Setting("evaluate.depth", int, 10, "k of `evaluate`'s default measures (NDCG@k, ERR@k, "
            "P@k, R@k, judged@k) and the depth at which it lists documents entering or leaving "
            "a ranking.", must.rank),
    Setting("evaluate.measures", list, [],
            "`evaluate`'s measures as ir_measures names them (nDCG@10, R@100, P(rel=2)@5, "
            "ERR@10); empty: the default set at evaluate.depth.", must.measures),
    Setting("evaluate.gate", list, [],
            "Gate rules 'MEASURE [margin=X] [significance=P] [slices=all|stratum|"
            "application|stratum=NAME…]'; empty: the first measure over all and each stratum "
            "with evaluate.margin and evaluate.significance (docs/evaluate.md).", must.gate_rules),
    Setting("evaluate.margin", float, 0.01,
            "A gate rule without margin= fails when its measure (all, or a stratum) drops by "
            "more than this...", must.non_negative),
    Setting("evaluate.significance", float, 0.05,
            "... with a paired randomization test's p below this (or its significance=).",
            must.share),
    Setting("clicks.depth", int, 10,
            "Positions of the examination curve the click model fits (1..depth of the first "
            "result page); at most store.shown_depth.", must.positive),
    Setting("clicks.min_impressions", int, 10,
            "A (query, document) pair is exported as an implicit judgment only with at least "
            "this many impressions.", must.positive),
    Setting("clicks.min_moving_pairs", int, 50,
            "An application's curve is marked identified only when at least this many of its "
            "(query, document) pairs were shown at two positions or more.", must.positive),
    Setting("clicks.max_weight", float, 10.0,
            "Inverse-propensity weights 1/θ are clipped at this (a position examined less "
            "than 1/max_weight as often as the first counts as examined that often).",
            must.positive),
    Setting("clicks.examination_file", str, "",
            "Examination curves (examination.json of `searchpulse clicks`): published per "
            "position and used for the debiased click-through; reloaded when it changes; "
            "empty: none.", None),
    Setting("kafka.bootstrap_servers", str, "localhost:9092", "Kafka bootstrap servers.",
            must.bootstrap_servers),
    Setting("kafka.topics", list, ["ubi"], "Topics of UBI query and event records.", None),
    Setting("kafka.group_id", str, "searchpulse", "Consumer group of the collectors.", None),
    Setting("kafka.instance_id", str, "", "This collector's stable identity (its checkpoint "
            "key); default: the host name.", None),
    Setting("kafka.dead_letter_topic", str, "searchpulse-dead-letters",
            "Unusable records go here, original bytes, reason in a header.", None),
    Setting("kafka.checkpoint_topic", str, "searchpulse-checkpoints",
            "Compacted topic of per-instance counter snapshots.", None),
    Setting("kafka.commit_interval_s", float, 1.0,
            "Seconds between checkpoints; also how stale /metrics may be.", must.positive),
    Setting("kafka.record_timestamps", str, "arrival",
            "arrival: a record's Kafka timestamp (CreateTime of a server-side producer, or "
            "LogAppendTime) is when it arrived, and a device clock that disagrees with it is "
            "corrected per record; ignore: for producers that copy the device's time into "
            "CreateTime.", must.record_timestamps),
    Setting("kafka.connect_timeout_s", float, 300.0,
            "`collect` exits with code 3 when no broker answered within this many seconds of "
            "its start (each attempt logged, /readyz 503 meanwhile); 0: retry for ever.",
            must.non_negative),
    Setting("kafka.session_timeout_s", float, 45.0,
            "A member silent this long loses its partitions (a restart under the same "
            "instance id takes them back at once: static membership).", must.positive),
    Setting("kafka.max_record_bytes", int, 1_048_576,
            "Larger records are dead-lettered as `oversized`.", must.positive),
    Setting("kafka.security_protocol", str, "PLAINTEXT",
            "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.", None),
    Setting("kafka.sasl_mechanism", str, "", "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 …", None),
    Setting("kafka.sasl_username", str, "", "SASL user name.", None),
    Setting("kafka.sasl_password", str, "", "SASL password (never logged or printed).", None,
            secret=True),
    Setting("kafka.ssl_cafile", str, "", "CA bundle for SSL.", None),
    Setting("kafka.ssl_certfile", str, "", "Client certificate for SSL.", None),
    Setting("kafka.ssl_keyfile", str, "", "Client key for SSL.", None),
    Setting("http.host", str, "0.0.0.0", "Address the /metrics server binds (all interfaces, "
            "as Prometheus exporters do; 127.0.0.1 keeps it local).", None),
    Setting("http.port", int, 9464, "Port of /metrics, /healthz and /readyz (0: any free port).",
            must.port),
    Setting("http.web_config_file", str, "",
            "Web configuration (exporter-toolkit format): tls_server_config, basic_auth_users "
            "with bcrypt hashes; empty: plain HTTP, no auth.", None),
)

BY_KEY = {s.key: s for s in SETTINGS}


def describe() -> list[Setting]:
    """All known settings, for ``searchpulse config check --help`` and the docs."""
    return list(BY_KEY.values())
