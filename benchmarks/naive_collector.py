"""The naive baseline: stdlib ``json.loads`` + ``datetime.fromisoformat`` + a prometheus-client
``Counter.labels(...).inc()`` (or ``Histogram.labels(...).observe()``) for every update.

It does strictly less than the engine: no event-time ordering, no sessions, no reformulation,
abandonment or zero-result exits, no duplicate detection. The engine's speed-up over it is
therefore a lower bound.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from prometheus_client import CollectorRegistry, Counter, Histogram

LABELS = ("application", "stratum", "variant")


class NaiveCollector:
    def __init__(self) -> None:
        registry = CollectorRegistry()
        self.searches = Counter("naive_searches", "", LABELS, registry=registry)
        self.zero = Counter("naive_zero_result_searches", "", LABELS, registry=registry)
        self.clicks = Counter("naive_clicks", "", LABELS, registry=registry)
        self.clicked = Counter("naive_clicked_searches", "", LABELS, registry=registry)
        self.latency = Histogram("naive_latency_seconds", "", LABELS, registry=registry)
        self.records = Counter("naive_records", "", ("kind", "outcome"), registry=registry)
        self.open: dict[str, tuple[tuple[str, str, str], bool]] = {}

    def process(self, raw: bytes) -> None:
        try:
            record = json.loads(raw)
            stamp = record["timestamp"]
            if isinstance(stamp, str):
                ts = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
                if ts.tzinfo is None:
                    ts = ts.replace(tzinfo=timezone.utc)
                ts.timestamp()
        except (ValueError, KeyError, TypeError):
            self.records.labels("unknown", "invalid").inc()
            return
        if not isinstance(record, dict):
            self.records.labels("unknown", "invalid").inc()
            return
        if "action_name" in record:
            self._event(record)
        elif "user_query" in record:
            self._query(record)

    def _query(self, record: dict) -> None:
        attrs = record.get("query_attributes") or {}
        labels = (record.get("application") or "none", "head", str(attrs.get("variant")))
        self.searches.labels(*labels).inc()
        hits = record.get("query_response_hit_ids")
        if attrs.get("total_hits") == 0 or hits == []:
            self.zero.labels(*labels).inc()
        if "latency_ms" in attrs:
            self.latency.labels(*labels).observe(attrs["latency_ms"] / 1000)
        self.open[record["query_id"]] = (labels, False)
        self.records.labels("query", "accepted").inc()

    def _event(self, record: dict) -> None:
        found = self.open.get(record.get("query_id"))
        if found is None:
            self.records.labels("event", "orphan").inc()
            return
        labels, clicked = found
        if record["action_name"] == "click":
            self.clicks.labels(*labels).inc()
            if not clicked:
                self.clicked.labels(*labels).inc()
                self.open[record["query_id"]] = (labels, True)
        self.records.labels("event", "accepted").inc()
