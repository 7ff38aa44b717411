"""Per-query aggregates benchmark: what keeping them costs the collector, and how fast the
feedback job mines a quarter of them.

    python -m benchmarks.store_bench [--rows 10000000] [--rounds 3] [--json FILE]

1. Flush cost: `replay` of the ~1M-record simulated log of benchmarks/collector_bench.py without
   and with a SQLite store (default flush settings), and keeping the aggregates without writing
   them (the bookkeeping alone), each in a fresh interpreter, rounds interleaved; the ratio of
   throughputs per round and its median.
2. Feedback job: a synthetic SQLite store of ``--rows`` aggregate rows (90 days, 4
   applications, Zipf query popularity, 2 % failing queries, cached in .cache/) mined by
   `searchpulse feedback` in a child process: wall time and peak RSS (ru_maxrss). Baseline in
   the same run: a child that only runs the job's three reads (totals per application, per
   (application, query) with ≥ 2 searches, per query) into pandas — the unavoidable part — so
   the ratio says what the job adds on top of reading.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from benchmarks.collector_bench import CACHE, simulated_log
from collector.store.query_stats import CLIENT_MARKS
from collector.store.query_store import open_store

DAYS = 90
APPLICATIONS = ("web", "mobile", "legacy", "opensearch")
WORDS = ("red", "blue", "cheap", "large", "wireless", "organic", "kids", "mens", "womens",
         "steel", "leather", "tent", "lamp", "router", "kettle", "jacket", "drill", "sofa",
         "camera", "guitar", "wallet", "heater", "printer", "mattress", "scarf", "pillow")
FIRST_DAY = 20_330  # 2025-08-30: the 90 days end 2025-11-27
COLUMNS = ("application", "query", "day", "searches", "zero_result", "clicked", "ranked_clicked",
           "clicks", "converted", "reformulated", "abandoned", "reciprocal_rank_sum", "shown",
           "clicked_documents", "reformulations", "clients", "client_marks")


def query_text(rank: int) -> str:
    """A readable query per popularity rank (2–6 words, unique per rank); one in 20 carries
    a number, as model numbers and sizes do."""
    words = []
    n = rank
    while True:
        n, index = divmod(n, len(WORDS))
        words.append(WORDS[index])
        if not n and len(words) >= 2:
            break
    if rank % 20 == 7:
        words.append(str(rank % 1000))
    return " ".join(words)


def build_store(path: Path, rows: int, seed: int = 5) -> None:
    """Rows of (application, query, day) with counts drawn from the query's popularity,
    inserted in primary-key order (a sorted bulk load; random order takes ten times longer)."""
    rng = np.random.default_rng(seed)
    per_day = rows // DAYS
    ranks, days = [], []
    for day in range(DAYS):
        drawn = np.unique(rng.zipf(1.15, size=int(per_day * 1.6)) - 1)[:per_day]
        while len(drawn) < per_day:  # tail ids never drawn: unique rows of their own
            extra = rng.integers(10**6, 10**8, per_day - len(drawn))
            drawn = np.unique(np.concatenate([drawn, extra]))[:per_day]
        ranks.append(drawn)
        days.append(np.full(per_day, day, dtype=np.int32))
    rank = np.concatenate(ranks)
    day = np.concatenate(days)
    app = rng.integers(0, len(APPLICATIONS), len(rank))
    unique_ranks, rank_index = np.unique(rank, return_inverse=True)
    texts = np.array([query_text(int(r)) for r in unique_ranks], dtype=object)
    text_order = np.empty(len(texts), dtype=np.int64)
    text_order[np.argsort(texts, kind="stable")] = np.arange(len(texts))
    order = np.lexsort((day, text_order[rank_index], app))
    rank, day, app, rank_index = rank[order], day[order], app[order], rank_index[order]
    searches = 1 + rng.poisson(np.maximum(0.2, 3000.0 / (rank + 1) ** 0.9))
    failing = rank % 50 == 7
    zero = rng.binomial(searches, np.where(failing, 0.6, 0.08))
    with_results = searches - zero
    clicked = rng.binomial(with_results, np.where(failing, 0.15, 0.55))
    reformulated = rng.binomial(searches - clicked, 0.4)
    abandoned = rng.binomial(with_results - clicked, 0.5)
    day_names = [time.strftime("%Y-%m-%d", time.gmtime((FIRST_DAY + d) * 86400))
                 for d in range(DAYS)]
    items = json.dumps({f"doc-{i}": 10 - i for i in range(10)}, separators=(",", ":"))
    # distinct clients: one per search, as many as the store keeps marks of
    marks = np.minimum(searches, CLIENT_MARKS)
    clients = [json.dumps({f"{m:08x}": 1 for m in range(n)}, separators=(",", ":"))
               for n in range(CLIENT_MARKS + 1)]
    open_store(f"sqlite:///{path}").close()  # the collector's schema
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    chunk = 200_000
    with tqdm(total=len(rank), desc="building store", unit="row") as bar:
        for start in range(0, len(rank), chunk):
            part = slice(start, start + chunk)
            values = zip(
                (APPLICATIONS[a] for a in app[part].tolist()),
                texts[rank_index[part]].tolist(), (day_names[d] for d in day[part].tolist()),
                searches[part].tolist(), zero[part].tolist(), clicked[part].tolist(),
                clicked[part].tolist(), (clicked[part] * 5 // 4).tolist(),
                (clicked[part] // 8).tolist(), reformulated[part].tolist(),
                abandoned[part].tolist(), (clicked[part] * 0.6).tolist(),
                *([items] * chunk, [items] * chunk, ["{}"] * chunk),
                (clients[m] for m in marks[part].tolist()), marks[part].tolist(), strict=False)
            with db:  # judged counts 0, no positions: the job reads neither
                db.executemany(f"INSERT INTO query_stats ({', '.join(COLUMNS)}, judged_searches, "
                               "judged_ndcg_sum, judged_coverage_sum, shown_at, clicked_at) "
                               f"VALUES ({', '.join(['?'] * len(COLUMNS))}, 0, 0, 0, '{{}}', "
                               "'{}')", values)
            bar.update(min(chunk, len(rank) - start))
    db.close()


def child(code: str, *args: str) -> tuple[float, int, float]:
    """Wall seconds, peak RSS bytes and CPU seconds (user + system) of a child Python process:
    CPU time is what the code costs; wall time adds what the machine's neighbours cost."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", code, *args],
                               stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if status:
        raise RuntimeError(f"child failed with status {status}")
    return elapsed, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


LOAD_ONLY = ("import sys; from collector.store.query_store import open_store; "
             "store = open_store(sys.argv[1], read_only=True); "
             "print(len(store.application_totals(sys.argv[2])), "
             "len(store.totals(sys.argv[2], 2)), len(store.query_volumes(sys.argv[2], 2)))")
JOB = ("import sys; from searchpulse import main; "
       "sys.exit(main(['feedback', '--store', sys.argv[1], '--since', sys.argv[2], "
       "'--out', sys.argv[3], '--no-progress']))")


REPLAY = ("import sys; from collector.config import load_config; "
          "from collector.replay import replay; "
          "replay([sys.argv[1]], load_config(environ={}), store=sys.argv[2] or None)")


KEEP_ONLY = ("import sys\nfrom collector.config import load_config\n"
             "from collector.engine import Engine\n"
             "from collector.store.query_stats import QueryStats\n"
             "from collector.sources.files import read_batches\n"
             "e = Engine(load_config(environ={}), query_stats=QueryStats())\n"
             "for batch in read_batches([sys.argv[1]]):\n    e.process_all(batch)\n"
             "e.close()\ne.sessions.query_stats.drain()")


def flush_cost(rounds: int) -> dict:
    """Each replay in a fresh interpreter, so none inherits another's heap. A third variant
    keeps the aggregates but writes nothing: it splits the cost into bookkeeping and writing.
    Ratios are of throughputs (plain ÷ variant times), in wall and in CPU time."""
    log = simulated_log(1_000_000)
    store = CACHE / "bench-flush.db"
    runs: dict[str, list[tuple[float, int, float]]] = {"plain": [], "kept": [], "stored": []}
    for n in range(rounds):
        runs["plain"].append(child(REPLAY, str(log), ""))
        runs["kept"].append(child(KEEP_ONLY, str(log)))
        store.unlink(missing_ok=True)
        for suffix in ("-wal", "-shm"):
            Path(f"{store}{suffix}").unlink(missing_ok=True)
        runs["stored"].append(child(REPLAY, str(log), f"sqlite:///{store}"))
        print(f"flush round {n + 1}: " + ", ".join(
            f"{name} {r[-1][0]:.2f} s wall / {r[-1][2]:.2f} s CPU" for name, r in runs.items()),
            flush=True)

    def ratio(variant: str, index: int) -> float:
        return round(statistics.median(p[index] / v[index] for p, v in zip(
            runs["plain"], runs[variant], strict=True)), 3)

    return {"rounds_wall_cpu_s": {name: [(round(r[0], 2), round(r[2], 2)) for r in values]
                                  for name, values in runs.items()},
            "throughput_ratio_with_store_wall": ratio("stored", 0),
            "throughput_ratio_with_store_cpu": ratio("stored", 2),
            "throughput_ratio_keeping_only_wall": ratio("kept", 0),
            "throughput_ratio_keeping_only_cpu": ratio("kept", 2)}


def feedback_job(rows: int, rounds: int) -> dict:
    path = CACHE / f"feedback-{rows}-v2.db"  # v2: with client marks (session 4)
    if not path.exists():
        build_store(path, rows)
    stored = sqlite3.connect(path).execute("SELECT COUNT(*) FROM query_stats").fetchone()[0]
    url = f"sqlite:///{path}"
    since = time.strftime("%Y-%m-%d", time.gmtime(FIRST_DAY * 86400))
    loads, jobs = [], []
    for n in range(rounds):
        loads.append(child(LOAD_ONLY, url, since)[:2])
        jobs.append(child(JOB, url, since, str(CACHE / "feedback-out"))[:2])
        print(f"feedback round {n + 1}: load only {loads[-1][0]:.1f} s "
              f"({loads[-1][1] / 2**30:.2f} GiB), job {jobs[-1][0]:.1f} s "
              f"({jobs[-1][1] / 2**30:.2f} GiB)", flush=True)
    return {"rows": stored,
            "distinct_application_queries": sqlite3.connect(path).execute(
                "SELECT COUNT(*) FROM (SELECT DISTINCT application, query FROM query_stats)"
            ).fetchone()[0],
            "job_s_median": round(statistics.median(j[0] for j in jobs), 1),
            "job_peak_rss_gib_max": round(max(j[1] for j in jobs) / 2**30, 2),
            "load_only_s_median": round(statistics.median(x[0] for x in loads), 1),
            "load_only_peak_rss_gib_max": round(max(x[1] for x in loads) / 2**30, 2),
            "job_to_load_ratio_median": round(statistics.median(
                j[0] / x[0] for j, x in zip(jobs, loads, strict=True)), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", metavar="FILE", help="also write the results here")
    args = parser.parse_args()
    results = {"machine": f"{platform.machine()}, {platform.python_implementation()} "
                          f"{platform.python_version()}, {os.cpu_count()} cores",
               "flush": flush_cost(args.rounds),
               "feedback": feedback_job(args.rows, args.rounds)}
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
