"""`searchpulse collect` against a real Apache Kafka broker: ground truth, dead letters, SIGKILL
and restart, a second group member dying, a broker restart. Counters are read from /metrics
as Prometheus would scrape them."""

from __future__ import annotations

import json
import random
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from collector.config import load_config
from collector.engine import Engine
from collector.exposition.view import view_from_dict
from collector.sources.kafka.checkpoints import checkpoint_key, read_checkpoints
from collector.sources.kafka.producer import record_key
from collector.sources.simulator import SimulationSpec, Simulator
from collector.store.query_store import open_store
from testbed.kafka import KafkaBroker
from testbed.process import Service, free_port

pytestmark = pytest.mark.integration
COUNTERS = {  # replay summary key → metric
    "searches": "searchpulse_searches_total",
    "zero_result_searches": "searchpulse_zero_result_searches_total",
    "clicked_searches": "searchpulse_clicked_searches_total",
    "clicks": "searchpulse_clicks_total",
    "converted_searches": "searchpulse_converted_searches_total",
    "reformulated_searches": "searchpulse_reformulated_searches_total",
    "abandoned_searches": "searchpulse_abandoned_searches_total",
    "zero_result_exits": "searchpulse_zero_result_exits_total",
}


EXACT = ("searches", "zero_result_searches", "clicked_searches", "clicks",
         "converted_searches")  # counted as records are applied; the rest wait for windows


def truth_counts(truth: dict) -> dict[tuple[str, str], float]:
    return {(app, key): totals[key] for app, totals in truth["by_application"].items()
            for key in COUNTERS}


STORED = {"searches": "searches", "zero_result_searches": "zero_result",  # summary → column
          "clicked_searches": "clicked", "clicks": "clicks", "converted_searches": "converted",
          "reformulated_searches": "reformulated", "abandoned_searches": "abandoned"}


def stored_counts(store_url: str) -> dict[tuple[str, str], float]:
    """The per-query aggregates in the store, summed per application."""
    store = open_store(store_url)
    try:
        totals = store.totals("1970-01-01").groupby("application").sum(numeric_only=True)
    finally:
        store.close()
    return {(app, key): int(totals.loc[app, column]) for app in totals.index if app != TAIL
            for key, column in STORED.items()}


def wait_for_stored_truth(store_url: str, truth: dict, timeout: float = 60.0) -> None:
    """Aggregates are flushed every store.flush_interval_s: wait for the last flush."""
    expected = {(app, key): totals[key] for app, totals in truth["by_application"].items()
                for key in STORED}
    deadline = time.monotonic() + timeout
    while True:
        got = stored_counts(store_url)
        if got == expected or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert got == expected, {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}


def counts_from_text(text: str) -> dict[tuple[str, str], float]:
    """The counters per (application, summary key), but the trailing traffic's."""
    wanted = {metric: key for key, metric in COUNTERS.items()}
    counts: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = wanted.get(sample.name)
            if key and sample.labels["application"] != TAIL:
                slot = (sample.labels["application"], key)
                counts[slot] = counts.get(slot, 0) + sample.value
    return counts


def counts_from_view(view) -> dict[tuple[str, str], float]:
    counts: dict[tuple[str, str], float] = {}
    for s in view.series:
        for key, value in (("searches", s.searches), ("zero_result_searches", s.zero_result),
                           ("clicked_searches", s.clicked), ("clicks", s.clicks),
                           ("converted_searches", s.converted),
                           ("reformulated_searches", sum(s.reformulated.values())),
                           ("abandoned_searches", s.abandoned),
                           ("zero_result_exits", s.zero_result_exits)):
            counts[(s.application, key)] = counts.get((s.application, key), 0) + value
    return counts


def add(*many: dict) -> dict:
    total: dict = {}
    for counts in many:
        for key, value in counts.items():
            total[key] = total.get(key, 0) + value
    return total


TAIL = "tail"  # the application of the traffic that follows a test's log (never compared)


def tail_after(timed: list[tuple[float, bytes]], seed: int, sessions: int = 3000
               ) -> list[bytes]:
    """Traffic of an application of its own starting 35 minutes of event time after a
    simulated log (delivery time, record): it moves every partition's stream clock past every
    window of the log (an idle partition's time would follow the wall clock, at its pace)."""
    spec = SimulationSpec(seed=seed + 1000, sessions=sessions, sessions_per_second=50.0,
                          start=max(delivery for delivery, _ in timed) + 2100)
    tail = []
    for raw in Simulator(spec).records():
        record = json.loads(raw)
        if "user_query" in record:
            record["application"] = TAIL
        tail.append(json.dumps(record).encode())
    return tail


class Run:
    """A topic loaded with simulated traffic, its ground truth and collectors to run on it.
    ``tail``: followed by traffic of the application ``TAIL`` that closes every window
    (``"later"``: when ``produce_tail`` is called)."""

    def __init__(self, bootstrap: str, workdir: Path, sessions: int, partitions: int = 4,
                 invalid: list[bytes] = (), seed: int = 11, tail: bool | str = True,
                 spec: SimulationSpec | None = None, timestamps: bool = False,
                 transform: Callable[[bytes], bytes] | None = None) -> None:
        self.bootstrap = bootstrap
        self.workdir = workdir
        self.topic = f"ubi-{uuid.uuid4().hex[:8]}"
        self.group = f"g-{self.topic}"
        self.partitions = partitions
        self.create_topic()
        simulator = Simulator(spec or SimulationSpec(seed=seed, sessions=sessions))
        self.strata = workdir / "strata.csv"
        self.strata.write_text(simulator.strata_csv())
        self.truth = self.produce(simulator, invalid, tail, timestamps, transform)
        self.records = len(self.log) + len(invalid)

    def create_topic(self) -> None:
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        admin.create_topics([NewTopic(self.topic, self.partitions, 1)])
        admin.close()

    def produce(self, simulator: Simulator, invalid: list[bytes] = (), tail: bool = True,
                timestamps: bool = False, transform: Callable[[bytes], bytes] | None = None
                ) -> dict:
        """The simulator's records (and ``invalid`` ones among them, and the trailing
        traffic) on the topic; returns its ground truth."""
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, linger_ms=20, acks="all")
        timed = [(delivery, transform(raw) if transform else raw)
                 for delivery, raw in simulator.timed_records()]
        records = [raw for _, raw in timed]
        self.log = records
        for i, (delivery, raw) in enumerate(timed):
            # timestamps: CreateTime as a server-side producer sets it, when the record came
            producer.send(self.topic, key=record_key(raw), value=raw.rstrip(b"\n"),
                          timestamp_ms=int(delivery * 1000) if timestamps else None)
            if invalid and i % (len(records) // len(invalid)) == 0 and i // (
                    len(records) // len(invalid)) < len(invalid):
                producer.send(self.topic, key=b"junk", value=invalid[i // (
                    len(records) // len(invalid))])
        self.tail = tail_after(timed, simulator.spec.seed) if tail else []
        if tail != "later":
            self.produce_tail(producer)
        producer.flush()
        producer.close()
        return simulator.truth.summary()

    def produce_tail(self, producer: KafkaProducer | None = None) -> None:
        """The trailing traffic (once): every window of the log closes as it is applied."""
        own = producer is None
        producer = producer or KafkaProducer(bootstrap_servers=self.bootstrap, acks="all")
        for raw in self.tail:
            producer.send(self.topic, key=record_key(raw), value=raw)
        self.tail = []
        if own:
            producer.flush()
            producer.close()

    def collector(self, instance: str, *extra: str) -> tuple[Service, str]:
        port = free_port()
        service = Service(f"collector-{instance}", [
            sys.executable, "-m", "searchpulse", "collect", "--bootstrap-servers",
            self.bootstrap, "--topic", self.topic, "--group-id", self.group,
            "--instance-id", f"{self.topic}-{instance}", "--metrics-port", str(port),
            "--idle", "3", "--set", f"strata.file={self.strata}",
            "--set", "kafka.session_timeout_s=10",
            "--set", f"kafka.checkpoint_topic=cp-{self.topic}",
            "--set", f"kafka.dead_letter_topic=dlq-{self.topic}", *extra,
        ], self.workdir, f"http://127.0.0.1:{port}/healthz")
        return service, f"http://127.0.0.1:{port}/metrics"

    def config(self):
        return load_config(environ={}, overrides={
            "kafka.bootstrap_servers": self.bootstrap,
            "kafka.checkpoint_topic": f"cp-{self.topic}"})


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def wait_for_truth(url: str, expected: dict, timeout: float = 90.0,
                   history: list | None = None) -> dict:
    deadline = time.monotonic() + timeout
    got: dict = {}
    while time.monotonic() < deadline:
        got = counts_from_text(scrape(url))
        if history is not None:
            history.append(got)
        if got == expected:
            return got
        time.sleep(0.3)
    differences = {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}
    health = [line for line in scrape(url).splitlines()
              if line.startswith(("searchpulse_kafka", "searchpulse_records_total"))]
    raise AssertionError(f"counters never reached the ground truth (got, want): {differences}"
                         f"\ncollector health:\n" + "\n".join(health))


def assert_monotonic(history: list[dict]) -> None:
    """What Prometheus' increase() needs: no counter ever goes down, across restarts too.
    (A restarting collector exposes no quality series until it restored its checkpoint: an
    absent series is not a reset.)"""
    last: dict = {}
    for scrape_counts in history:
        for key, value in scrape_counts.items():
            assert value >= last.get(key, 0), (key, last.get(key), value)
            last[key] = value


def test_collect_equals_ground_truth_and_dead_letters_malformed_records(kafka, tmp_path):
    junk = [b"{not json", b'["array"]', b'{"user_query": "no id", "timestamp": 1767600000000}',
            b"\xff\xfe binary"] * 250  # 1,000 malformed records …
    junk[-1] = b'{"user_query": "' + b"x" * 70_000 + b'"}'  # … one of them oversized …
    junk += [b'{"user_query": "x", "query_id": "q", "timestamp": 1, "a": '  # … and poison
             + b"[" * 1000 + b"]" * 1000 + b"}",
             b'{"user_query": "x", "query_id": "q", "timestamp": "\xc2\xb2"}',
             b'{"user_query": "x", "query_id": "q", "timestamp": "' + b"9" * 5000 + b'"}']
    run = Run(kafka[0], tmp_path, sessions=1500, invalid=junk)
    collector, url = run.collector("a", "--set", "kafka.max_record_bytes=65536")
    collector.start()
    try:
        wait_for_truth(url, truth_counts(run.truth))
        text = scrape(url)
    finally:
        collector.stop()
    invalid = {s.labels["reason"]: s.value for f in text_string_to_metric_families(text)
               for s in f.samples if s.name == "searchpulse_invalid_records_total"}
    assert invalid == {"malformed_json": 500, "not_an_object": 250, "missing_query_id": 250,
                       "oversized": 1, "invalid_timestamp": 2}
    consumer = KafkaConsumer(f"dlq-{run.topic}", bootstrap_servers=run.bootstrap,
                             auto_offset_reset="earliest", consumer_timeout_ms=5000)
    letters = [m for m in consumer if dict(m.headers)["searchpulse.reason"] != b"orphan"]
    consumer.close()
    assert len(letters) == len(junk)
    assert sorted(m.value for m in letters) == sorted(junk)
    assert {dict(m.headers)["searchpulse.reason"] for m in letters} == {
        b"malformed_json", b"not_an_object", b"missing_query_id", b"oversized",
        b"invalid_timestamp"}


def test_two_groups_from_one_host_each_count_exactly_once(kafka, tmp_path):
    """Same instance id (the host name), same checkpoint topic, two consumer groups: neither
    restores the other's counters nor starts from its offsets."""
    run = Run(kafka[0], tmp_path, sessions=3000, seed=15)
    expected = truth_counts(run.truth)
    first, first_url = run.collector("host")
    first.start()
    try:
        wait_for_truth(first_url, expected)
    finally:
        first.stop()  # its checkpoint stays on the shared topic
    second, second_url = run.collector("host", "--group-id", f"other-{run.group}")
    second.start()
    try:
        wait_for_truth(second_url, expected)
        time.sleep(3)  # several checkpoints later: still once
        assert counts_from_text(scrape(second_url)) == expected
    finally:
        second.stop()
    first.start()  # the first group restores its own counters, and only those
    try:
        wait_for_truth(first_url, expected)
    finally:
        first.stop()


def test_sigkill_three_times_neither_loses_nor_double_counts(kafka, tmp_path):
    """Counters and per-query aggregates (flushed twice a second, so kills land in and
    around flushes) both end exactly at the ground truth."""
    run = Run(kafka[0], tmp_path, sessions=40_000, seed=12)
    store_url = f"sqlite:///{tmp_path / 'aggregates.db'}"
    collector, url = run.collector("a", "--set", f"store.url={store_url}",
                                   "--set", "store.flush_interval_s=0.5")
    history: list[dict] = []
    rng = random.Random(7)
    for _ in range(3):
        collector.start()
        deadline = time.monotonic() + rng.uniform(1.5, 4.0)
        while time.monotonic() < deadline:
            history.append(counts_from_text(scrape(url)))
            time.sleep(0.1)
        collector.process.kill()  # SIGKILL: no checkpoint, no goodbye
        collector.process.wait()
    collector.start()
    try:
        wait_for_truth(url, truth_counts(run.truth), history=history)
        wait_for_stored_truth(store_url, run.truth)
    finally:
        collector.stop()
    assert_monotonic(history)


def test_a_group_member_dies_and_the_other_takes_over(kafka, tmp_path, postgres_database):
    """Both members write aggregates to one PostgreSQL; the survivor's counters plus the dead
    member's last checkpoint, and the stored aggregates, equal the ground truth."""
    run = Run(kafka[0], tmp_path, sessions=30_000, seed=13)
    store = ("--set", f"store.url={postgres_database}", "--set", "store.flush_interval_s=0.5")
    first, first_url = run.collector("a", *store)
    second, second_url = run.collector("b", *store)
    first.start()
    second.start()
    try:
        time.sleep(2.5)
        first.process.kill()
        first.process.wait()
        expected = truth_counts(run.truth)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            dead = read_checkpoints(run.config()).get(checkpoint_key(run.group, f"{run.topic}-a"))
            dead_counts = counts_from_view(view_from_dict(dead["counts"])) if dead else {}
            total = add(dead_counts, counts_from_text(scrape(second_url)))
            if {k: total.get(k, 0) for k in expected} == expected:
                break
            time.sleep(0.5)
        assert {k: total.get(k, 0) for k in expected} == expected
        wait_for_stored_truth(postgres_database, run.truth)
    finally:
        second.stop()


def test_broker_down_at_start_and_restarted_mid_run(tmp_path):
    broker = KafkaBroker(tmp_path / "broker").start()  # its own broker: this test stops it
    run = Run(broker.bootstrap, tmp_path, sessions=30_000, seed=14)
    broker.stop()
    collector, url = run.collector("a")
    collector.start()  # /healthz answers while Kafka is unreachable …
    try:
        time.sleep(2)
        with pytest.raises(urllib.error.HTTPError) as not_ready:
            urllib.request.urlopen(url.replace("/metrics", "/readyz"), timeout=5)
        assert not_ready.value.code == 503
        broker.start()  # … and it connects by itself once the broker is there
        time.sleep(1.5)
        broker.stop()
        time.sleep(3)
        assert collector.process.poll() is None
        broker.start()
        wait_for_truth(url, truth_counts(run.truth), timeout=150)
    finally:
        collector.stop()
        broker.stop()


def means_from_text(text: str, name: str) -> dict[str, float]:
    """Per application, a histogram's mean (sum / count) as Prometheus would compute it."""
    sums: dict[str, list[float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in (f"{name}_sum", f"{name}_count"):
                pair = sums.setdefault(sample.labels["application"], [0.0, 0.0])
                pair[sample.name.endswith("_count")] += sample.value
    return {app: total / count for app, (total, count) in sums.items() if count}


def test_an_idle_topic_counts_every_record_and_decides_every_outcome_by_the_wall_clock(
        kafka, tmp_path):
    """A sparse application (a session every 9 minutes over 2.5 days), produced and then left
    alone: within lateness + idle_s of its last record every record is counted, and as stream
    time follows the wall clock every outcome is decided — equal to a replay of the same log
    with the same (short) windows."""
    windows = {"windows.abandonment_s": 4.0, "windows.reformulation_s": 4.0,
               "windows.attribution_s": 8.0, "intents.keystroke_gap_s": 2.0,
               "automated.window_s": 12.0}
    spec = SimulationSpec(seed=16, sessions=400, sessions_per_second=1 / 540)
    run = Run(kafka[0], tmp_path, sessions=0, spec=spec, tail=False)
    produced = time.monotonic()
    engine = Engine(load_config(environ={}, overrides={
        **windows, "strata.file": str(run.strata)}))
    engine.process_all(run.log)
    engine.close()
    expected = counts_from_view(engine.view())
    flags = [arg for key, value in windows.items() for arg in ("--set", f"{key}={value}")]
    collector, url = run.collector("a", *flags)
    collector.start()
    try:
        counted = {k: v for k, v in expected.items() if k[1] in EXACT}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            got = counts_from_text(scrape(url))
            if {k: got.get(k, 0) for k in counted} == counted:
                break
            time.sleep(0.2)
        took = time.monotonic() - produced
        assert {k: got.get(k, 0) for k in counted} == counted
        wait_for_truth(url, expected, timeout=60)  # the outcomes: by the wall clock's time
        # what still waits stood ahead of where the stream was when it went quiet: applied
        # once the idle stream's time reaches it (docs/architecture.md, idle sources)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            gauges = {s.name: s.value for f in text_string_to_metric_families(scrape(url))
                      for s in f.samples if s.name in ("searchpulse_buffered_records",
                                                       "searchpulse_pending_searches")}
            if not any(gauges.values()):
                break
            time.sleep(1)
        emptied = time.monotonic() - produced
        assert counts_from_text(scrape(url)) == expected
    finally:
        collector.stop()
    assert gauges == {"searchpulse_buffered_records": 0.0, "searchpulse_pending_searches": 0.0}
    print(f"every record counted {took:.1f} s after the last was produced, nothing waiting "
          f"after {emptied:.1f} s")


def test_the_brokers_clock_corrects_device_clocks_per_record(kafka, tmp_path):
    """Records stamped by skewed devices (5 % of clients' events ±10 minutes), produced with
    CreateTime set when each came in (a server-side producer): every count and outcome equals
    the ground truth, and time to first click is the true one (the stamps alone cannot place
    each click: docs/architecture.md)."""
    rng = random.Random(5)
    offsets: dict[str, float] = {}

    def skew(raw: bytes) -> bytes:
        record = json.loads(raw)
        client = record.get("client_id")
        if "action_name" not in record or not client:
            return raw
        offset = offsets.setdefault(client, rng.choice((-600.0, 600.0))
                                    if rng.random() < 0.05 else 0.0)
        if offset and isinstance(record.get("timestamp"), int):
            record["timestamp"] += int(offset * 1000)
        return json.dumps(record).encode()

    run = Run(kafka[0], tmp_path, sessions=3000, seed=17, timestamps=True, transform=skew)
    assert sum(1 for offset in offsets.values() if offset) > 50
    collector, url = run.collector("a")
    collector.start()
    try:
        wait_for_truth(url, truth_counts(run.truth))
        text = scrape(url)
    finally:
        collector.stop()
    means = means_from_text(text, "searchpulse_time_to_first_click_seconds")
    for application, truth in run.truth["by_application"].items():
        assert abs(means[application] - truth["mean_time_to_first_click_s"]) < 0.5, application
    retimed = {s.labels["reason"]: s.value for f in text_string_to_metric_families(text)
               for s in f.samples if s.name == "searchpulse_retimed_records_total"}
    assert retimed.get("arrival_clock", 0) > 100


def _compose_grace_s() -> float:
    """The collector's stop_grace_period in docker-compose.yml, in seconds."""
    import yaml

    compose = yaml.safe_load((Path(__file__).parents[2] / "docker-compose.yml").read_text())
    value = compose["services"]["collector"]["stop_grace_period"]
    return float(value.removesuffix("s"))


def test_sigterm_stops_within_compose_s_grace_period(tmp_path):
    """`docker compose stop` sends SIGTERM and kills after stop_grace_period: the collector's
    real stop — the batch in hand, a final store flush, a checkpoint, leaving the group,
    closing its producer — must fit, also when the broker went away first (the slow case: the
    checkpoint and the producer wait for it, each step bounded), within issue 24's 5 s, and
    end cleanly (exit 0, no traceback: the next start resumes from the last checkpoint the
    broker holds)."""
    grace = _compose_grace_s()
    broker = KafkaBroker(tmp_path / "broker").start()  # its own broker: this test stops it
    run = Run(broker.bootstrap, tmp_path, sessions=3000, seed=15)
    store = f"sqlite:///{tmp_path / 'aggregates.db'}"
    collector, url = run.collector("stop", "--store", store)
    collector.start()
    try:
        wait_for_truth(url, truth_counts(run.truth))
        wait_for_stored_truth(store, run.truth)
        broker.stop()
        started = time.monotonic()
        collector.process.terminate()
        code = collector.process.wait(timeout=grace + 60)
        took = time.monotonic() - started
    finally:
        collector.stop()
        broker.stop()
    print(f"collector stop after SIGTERM, broker gone: {took:.2f} s (grace {grace} s)")
    log = collector.log(10**7)
    assert code == 0, log[-4000:]
    stopping = log[log.index("SIGTERM: stopping"):]  # (kafka-python itself logs a traceback
    assert "stopping without the broker" in stopping  # when the broker resets a connection)
    assert "Traceback" not in stopping, stopping[-4000:]
    assert took < min(grace, 5.0), took
