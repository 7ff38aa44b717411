"""Privacy benchmark: what new query text costs a scrape at the caps.

    python -m benchmarks.privacy_bench [--rounds 5] [--json FILE]

At the caps the top-K's release reads 21 applications (labels.application_cap 20 + `other`)
× 200 candidates (20 × top_queries.size) = 4,200 zero-result queries of 199 characters
(privacy.max_query_chars is 200), each typed by 3 distinct clients (so the rule of distinct
clients passes and every text must be read by the detectors). Three texts, each in an engine
of its own: product-like words and sizes (the baseline), the phone-shaped text of issue 25
(`+123 45 +678 90 …`, which stalled main 0873b15's libphonenumber matcher), and near misses built to
match many of the detectors' shapes and fail their checks (an SSN of area 000, 31 February,
ISBNs, a DNI with the wrong letter, a Luhn-failing card of 13 digits …).

Each scrape is what `replay.exposition(engine)` does (the engine's view, the top-K's release,
the /metrics body; `collect` releases the same way at each checkpoint) with a fresh release,
so every text is new to the first scrape: wall seconds of the first scrape and of the
detectors' reading in it, and the scrapes until every text was read. With the default
detector budget (privacy.scan_budget_ms, 30 ms) and without one (the detectors' whole cost in
one scrape); detectors that start cold (a new process) or warm (having read 4,200 other texts
of the same shape, as a running collector has). Beside them, a scrape of the same texts read
before: the cost of a scrape at the caps without new text. Rounds interleave all of it.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from pathlib import Path

from prometheus_client import CollectorRegistry

from collector.config import load_config
from collector.engine import Engine
from collector.exposition.metrics import Exposition
from collector.privacy.personal_data import NOT_SCANNED_YET, PersonalData
from collector.series.zero_result_queries import QueryRelease

APPLICATIONS = 21
CANDIDATES = 200
CHARACTERS = 199
CLIENTS = 3
UNLIMITED = 1e9
_T0_MS = 1_767_600_000_000
WORDS = ("waterproof", "tent", "for", "four", "people", "lightweight", "camping", "family",
         "with", "porch", "size", "inch", "pack", "of", "cotton", "blue", "xl", "cm")
NEAR_MISSES = ("000-12-3456", "31/02/1999", "0-306-40615-2", "978-3-16-148410-0", "12345678a",
               "de89 tent", "4111 1111 1111 1", "32.13.87", "999.999.999.999", "12:30:45",
               "1999-2004", "0 12345 67890 5", "44051401358")


def _text(rng: random.Random, shape: str) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) + len(parts) < CHARACTERS + 20:
        if shape == "phone-shaped":  # issue 25's: `+123 45 +678 90 …`
            parts.append(f"+{rng.randint(100, 999)} {rng.randint(10, 99)}")
        elif shape == "near-misses":
            parts.append(rng.choice(NEAR_MISSES))
        else:
            parts.append(rng.choice(WORDS) if rng.random() < 0.8 else str(rng.randint(1, 500)))
    return " ".join(parts)[:CHARACTERS].strip().ljust(CHARACTERS, "x")


def engine_at_the_caps(shape: str, seed: int = 25) -> Engine:
    rng = random.Random(seed)
    records = []
    for app in range(APPLICATIONS):
        for n in range(CANDIDATES):
            text = f"{n:03d} {_text(rng, shape)}"[:CHARACTERS]
            for client in range(CLIENTS):  # zero-result searches 50 ms apart: one window
                records.append(json.dumps({
                    "query_id": f"q{app}-{n}-{client}", "user_query": text,
                    "client_id": f"c{app}-{n}-{client}", "application": f"app{app:02d}",
                    "timestamp": _T0_MS + 50 * len(records),
                    "query_response_hit_ids": []}).encode())
    engine = Engine(load_config(environ={}))
    engine.process_all(records)
    engine.close()
    return engine


def _read_scrape(engine: Engine) -> float:
    """Wall seconds of a scrape whose every text the detectors have read before."""
    release = QueryRelease(10, 3, PersonalData(), UNLIMITED)
    release.release(engine.view(release=False).top_candidates)
    started = time.perf_counter()
    view = engine.view(release=False)
    view.released = release.release(view.top_candidates)
    Exposition(lambda: view, CollectorRegistry()).render()
    return time.perf_counter() - started


class _TimedDetectors(PersonalData):
    """The detectors, adding up the wall time of the texts they read (what the budget
    bounds)."""

    reading_s = 0.0

    def _reason(self, text: str) -> str | None:
        started = time.perf_counter()
        try:
            return super()._reason(text)
        finally:
            self.reading_s += time.perf_counter() - started


def scrapes(engine: Engine, budget_s: float, warm: Engine | None) -> tuple[float, float, int]:
    """(wall seconds of the first scrape, of the detectors' reading in it, scrapes until every
    text was read) with a fresh release: every text new to the first scrape. ``warm``: the
    detectors read that engine's texts first (then forget them), as a running collector's
    have read other text of the same shapes before; None: a cold start (a new process)."""
    config = engine.config
    detectors = _TimedDetectors(config["privacy.patterns"], config["privacy.max_query_chars"])
    if warm is not None:
        for found in warm.view().top_candidates.values():
            detectors.reasons(query for query, *_ in found)
        detectors._cache.clear()
    detectors.reading_s = 0.0
    release = QueryRelease(config["top_queries.size"], config["privacy.min_distinct_clients"],
                           detectors, budget_s)
    first: tuple[float, float] | None = None
    count = 0
    while True:
        started = time.perf_counter()
        view = engine.view(release=False)
        view.released = release.release(view.top_candidates)
        Exposition(lambda: view, CollectorRegistry()).render()  # noqa: B023 - called here
        count += 1
        first = first or (time.perf_counter() - started, detectors.reading_s)
        if not any(r.get(NOT_SCANNED_YET) for r in view.released.withheld.values()):
            return (*first, count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    shapes = ("product-like", "phone-shaped", "near-misses")
    engines = {shape: engine_at_the_caps(shape) for shape in shapes}
    others = {shape: engine_at_the_caps(shape, seed=52) for shape in shapes}
    budget = load_config(environ={})["privacy.scan_budget_ms"] / 1000
    runs: dict[str, list[tuple[float, float, int]]] = {}
    read: list[float] = []  # scrapes of text read before: what a scrape costs without new text
    for _ in range(args.rounds):
        for shape, engine in engines.items():
            for start in ("cold", "warm"):
                for name, seconds in (("budget", budget), ("unlimited", UNLIMITED)):
                    runs.setdefault(f"{shape}/{start}/{name}", []).append(scrapes(
                        engine, seconds, others[shape] if start == "warm" else None))
            read.append(_read_scrape(engine))
    results = {
        "machine": f"{platform.processor() or platform.machine()}, "
                   f"Python {platform.python_version()}",
        "candidates": APPLICATIONS * CANDIDATES, "characters": CHARACTERS,
        "budget_ms": budget * 1000, "rounds": args.rounds,
        "scrape_of_read_text_s": round(statistics.median(read), 4), "by_text": {}}
    for key, measured in runs.items():
        scrape = statistics.median(r[0] for r in measured)
        reading = statistics.median(r[1] for r in measured)
        results["by_text"][key] = {
            "first_scrape_s": round(scrape, 4), "reading_in_first_scrape_s": round(reading, 4),
            "max_reading_in_first_scrape_s": round(max(r[1] for r in measured), 4),
            "scrapes_until_all_read": max(r[2] for r in measured),
            "first_scrapes_s": [round(r[0], 4) for r in measured]}
        print(f"{key:30s} first scrape {scrape * 1000:7.1f} ms, detectors {reading * 1000:7.1f} "
              f"ms (max {max(r[1] for r in measured) * 1000:7.1f}), all read after "
              f"{max(r[2] for r in measured)} scrape(s)")
    print(f"a scrape of read text: {statistics.median(read) * 1000:.1f} ms")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
