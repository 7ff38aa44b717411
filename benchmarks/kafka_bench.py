"""Kafka benchmark on a real local broker: one command, baselines in the same run.

    python -m benchmarks.kafka_bench [--records 2000000] [--json FILE]

1. pre-loads N simulated UBI records (typical sizes, keyed by client_id) into a 4-partition topic;
2. (a) raw ceiling: a bare kafka-python poll loop that only counts records (crc32c installed);
   (b) `collect` end to end (in process: poll → per-partition engines → checkpoints), until
       every record is consumed; (c) the naive collector (stdlib json + per-event
       `Counter.labels().inc()`) behind the same poll loop; each on a fresh consumer group;
3. freshness: query records produced at a steady 20k records/s for 20 s by a producer process
   of its own (in this one, it would share the interpreter lock with the collector); every
   50 ms the collector's exposed counters are read; latency = first time a record's search is
   visible on /metrics − the (wall) time it was produced; p50 / p99 over every record but the
   last `lateness + 1` s of production (those wait for records that never come).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from array import array
from math import inf
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from benchmarks.naive_collector import NaiveCollector
from collector.config import load_config
from collector.sources.kafka.consumer import KafkaCollector
from collector.sources.kafka.producer import record_key
from collector.sources.simulator import SimulationSpec, Simulator
from testbed.kafka import KafkaBroker


def preload(bootstrap: str, topic: str, records: int) -> int:
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=50, batch_size=512 * 1024,
                             compression_type=None, acks=1)
    count = 0
    for raw in Simulator(SimulationSpec(seed=21, sessions=int(records / 4.62))).records():
        producer.send(topic, key=record_key(raw), value=raw.rstrip(b"\n"))
        count += 1
    producer.flush()
    producer.close()
    return count


def consume_all(bootstrap: str, topic: str, total: int, handle) -> float:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"b-{uuid.uuid4()}",
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             max_poll_records=2000)
    seen = 0
    started = time.perf_counter()
    while seen < total:
        for records in consumer.poll(timeout_ms=500).values():
            seen += len(records)
            handle(records)
    elapsed = time.perf_counter() - started
    consumer.close()
    return total / elapsed


def collect_rate(bootstrap: str, topic: str, total: int) -> float:
    config = load_config(environ={}, overrides={
        "kafka.bootstrap_servers": bootstrap, "kafka.topics": topic,
        "kafka.group_id": f"c-{uuid.uuid4()}", "kafka.instance_id": f"bench-{uuid.uuid4()}"})
    source = KafkaCollector(config)
    thread = threading.Thread(target=source.run, daemon=True)
    started = time.perf_counter()
    thread.start()
    while sum(source.consumed.values()) < total:
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    source.stop_event.set()
    thread.join(30)
    return total / elapsed


PRODUCER = """\
import json, sys, time
from array import array
from kafka import KafkaProducer
bootstrap, topic, rate, seconds, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), \\
    int(sys.argv[4]), sys.argv[5]
producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, acks=1)
produced = array("d")
started = time.perf_counter()
for i in range(rate * seconds):
    due = started + i / rate
    while time.perf_counter() < due:
        time.sleep(0.0005)
    now = time.time()  # wall clock: the collector's process reads the same one
    client = f"c{i}"
    producer.send(topic, key=client.encode(), value=json.dumps({
        "query_id": f"q{i}", "client_id": client, "user_query": "tent",
        "timestamp": int(now * 1000), "application": "web",
        "query_response_hit_ids": ["a"]}).encode())
    produced.append(now)
producer.flush()
with open(out, "wb") as handle:
    produced.tofile(handle)
"""


def freshness(bootstrap: str, lateness_s: float, rate: int = 20_000,
              seconds: int = 20) -> dict[str, float]:
    topic = f"fresh-{uuid.uuid4().hex[:6]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, 4, 1)])
    admin.close()
    config = load_config(environ={}, overrides={
        "kafka.bootstrap_servers": bootstrap, "kafka.topics": topic,
        "kafka.group_id": f"f-{uuid.uuid4()}", "kafka.instance_id": f"fresh-{uuid.uuid4()}",
        "ordering.lateness_s": lateness_s})
    source = KafkaCollector(config)
    thread = threading.Thread(target=source.run, daemon=True)
    thread.start()
    while not source.parts:
        time.sleep(0.1)
    visible: list[tuple[float, int]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            view = source.exposed
            visible.append((time.time(), sum(s.searches for s in view.series)))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    # The producer runs in a process of its own, as producers do: sharing this interpreter's
    # lock with the collector, its 20k sends a second delayed the collector itself (measured:
    # p50 9.1 s, p99 14.2 s at 17.8k records/s, with the collector falling behind).
    with tempfile.NamedTemporaryFile(suffix=".times") as times:
        subprocess.run([sys.executable, "-c", PRODUCER, bootstrap, topic, str(rate),
                        str(seconds), times.name], check=True)
        produced = array("d")
        produced.frombytes(Path(times.name).read_bytes())
    deadline = time.time() + 15 + lateness_s
    while visible[-1][1] < len(produced) and time.time() < deadline:
        time.sleep(0.1)
    stop.set()
    source.stop_event.set()
    thread.join(30)
    # A record is counted once records stamped `lateness` later have arrived: the last
    # `lateness + 1` s of production wait for records that never come (in production, the
    # next ones release them; here, `ordering.idle_s` would, 30 s later). They are
    # left out of the population; every record before them must become visible.
    cutoff = produced[-1] - (lateness_s + 1.0)
    latencies = []
    cursor = 0
    for n, at in enumerate(produced, start=1):
        if at > cutoff:
            break
        while cursor < len(visible) and visible[cursor][1] < n:
            cursor += 1
        latencies.append(visible[cursor][0] - at if cursor < len(visible) else inf)
    latencies.sort()
    steady = len(latencies)
    return {"lateness_s": lateness_s,
            "produced_per_s": round(len(produced) / (produced[-1] - produced[0])),
            "produced": len(produced), "steady": steady,
            "visible_share": round(sum(x < inf for x in latencies) / max(steady, 1), 4),
            "p50_s": _seconds(latencies[steady // 2]) if steady else None,
            "p99_s": _seconds(latencies[int(steady * 0.99)]) if steady else None}


def _seconds(latency: float) -> float | None:
    return round(latency, 3) if latency < inf else None  # never visible


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--lateness", type=float, default=1.0,
                        help="ordering.lateness_s for the freshness run: a search is counted "
                             "once the watermark passes it, so freshness ≥ lateness")
    parser.add_argument("--freshness-only", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        broker = KafkaBroker(Path(workdir), heap="1g").start()
        try:
            topic = "bench"
            admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
            admin.create_topics([NewTopic(topic, 4, 1)])
            admin.close()
            if args.freshness_only:
                print(json.dumps(freshness(broker.bootstrap, args.lateness), indent=2))
                return
            t = time.perf_counter()
            total = preload(broker.bootstrap, topic, args.records)
            print(f"pre-loaded {total:,} records in {time.perf_counter() - t:.0f} s", flush=True)
            raw = consume_all(broker.bootstrap, topic, total, lambda records: None)
            print(f"(a) raw poll loop: {raw:,.0f} records/s", flush=True)
            collect = collect_rate(broker.bootstrap, topic, total)
            print(f"(b) collect: {collect:,.0f} records/s ({collect / raw:.0%} of raw)",
                  flush=True)
            naive = NaiveCollector()
            naive_rate = consume_all(broker.bootstrap, topic, total, lambda records: [
                naive.process(r.value) for r in records])
            print(f"(c) naive: {naive_rate:,.0f} records/s", flush=True)
            fresh = freshness(broker.bootstrap, args.lateness)
            print(f"freshness at {fresh['produced_per_s']:,} records/s: p50 {fresh['p50_s']} s, "
                  f"p99 {fresh['p99_s']} s", flush=True)
        finally:
            broker.stop()
    results = {"records": total, "raw_records_per_s": round(raw),
               "collect_records_per_s": round(collect), "collect_share_of_raw":
               round(collect / raw, 3), "naive_records_per_s": round(naive_rate),
               "collect_vs_naive": round(collect / naive_rate, 2), "freshness": fresh}
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
