"""Per-query aggregates: their sums equal what replay computes for the same log, they survive a
split into several flushes, and they hold shown and clicked documents."""

from __future__ import annotations

from collections import Counter

from collector.config import load_config
from collector.engine import Engine
from collector.query_stats import QueryStats
from collector.query_store import SqliteStore, open_store
from collector.replay import replay
from collector.sources.simulator import SimulationSpec, Simulator

SUMS = {"searches": "searches", "zero_result_searches": "zero_result",
        "clicked_searches": "clicked", "clicks": "clicks", "converted_searches": "converted",
        "reformulated_searches": "reformulated", "abandoned_searches": "abandoned"}


def test_aggregates_add_up_to_the_replay_summary(tmp_path):
    log = tmp_path / "ubi.jsonl"
    log.write_bytes(b"".join(Simulator(SimulationSpec(seed=4, sessions=1500)).records()))
    store_url = f"sqlite:///{tmp_path / 'stats.db'}"
    summary = replay([str(log)], load_config(environ={}), store=store_url)
    store = open_store(store_url)
    rows = list(store.rows())
    store.close()
    totals: dict[str, Counter] = {}
    for row in rows:
        totals.setdefault(row["application"], Counter()).update(
            {key: row[field] for key, field in SUMS.items()})
    for application, expected in summary["by_application"].items():
        assert {key: expected[key] for key in SUMS} == dict(totals[application]), application
    assert len({row["day"] for row in rows}) == 1
    assert any(row["shown"] for row in rows) and any(row["clicked_documents"] for row in rows)
    assert any(row["reformulations"] for row in rows)


def test_a_flush_in_the_middle_splits_rows_without_losing_counts(ubi, tmp_path):
    stats = QueryStats()
    e = Engine(load_config(environ={}), query_stats=stats, clock=lambda: 2e9)
    e.process_all([ubi.query("q1", "Tent", 0, hits=["d1", "d2"]), ubi.click("q1", 5, obj="d2"),
                   ubi.query("q2", "tent", 100, client="c2", hits=["d1"]),
                   ubi.query("q3", "lamp", 200, client="c3")])
    store = SqliteStore(str(tmp_path / "s.db"))
    store.add(stats.drain())  # the first flush: q1 and its click are applied, q2 is pending …
    e.process_all([ubi.click("q2", 150, client="c2", obj="d1", position=2)])
    e.close()
    store.add(stats.drain())  # … the rest, added to the stored rows
    rows = {row["query"]: row for row in store.rows()}
    store.close()
    tent = rows["tent"]
    assert (tent["searches"], tent["clicked"], tent["clicks"]) == (2, 2, 2)
    assert tent["shown"] == {"d1": 2, "d2": 1}
    assert tent["clicked_documents"] == {"d1": 1, "d2": 1}
    assert tent["reciprocal_rank_sum"] == 1.5
    assert (rows["lamp"]["searches"], rows["lamp"]["abandoned"]) == (1, 1)
