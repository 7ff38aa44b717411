"""The engine's shortcuts give exactly what the plain path gives: exposures decided at arrival
(instead of through the buffer) and deadlines swept once per buffer bucket (instead of before
every record). Each shortcut is switched off by patching it back to the plain path."""

from __future__ import annotations

import json
import threading

import pytest

from collector.config import load_config
from collector.engine import Engine
from collector.exposition.summary import replay_summary
from collector.ingest import accounting as acc
from collector.sessions.sessionizer import Sessionizer
from collector.sources.simulator import SimulationSpec, Simulator
from tests.conftest import UBI, RecordingDeadLetters


def run(records: list[bytes], **settings) -> tuple[dict, Engine]:
    engine = Engine(load_config(environ={}, overrides=settings), RecordingDeadLetters())
    engine.process_all(records)
    engine.close()
    stats = engine.stats
    records = {(kind, outcome): stats.records[k][o] for k, kind in enumerate(acc.KINDS)
               for o, outcome in enumerate(acc.OUTCOMES)}
    return {"summary": replay_summary(engine), "records": records,
            "retimed": dict(stats.retimed), "data_quality": dict(stats.data_quality),
            "dead_letters": sorted(engine.dead_letters.reasons)}, engine


def plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every exposure through the buffer; every deadline decided before the next record."""
    monkeypatch.setattr(Engine, "_expose", lambda self, rec, ts: False)
    apply = Sessionizer.on_query, Sessionizer.on_event

    def eager(method):
        def applied(self, rec, ts):
            if ts > self.next_deadline:
                self.expire_before(ts)
            return method(self, rec, ts)
        return applied

    monkeypatch.setattr(Sessionizer, "on_query", eager(apply[0]))
    monkeypatch.setattr(Sessionizer, "on_event", eager(apply[1]))


def hand_built() -> list[bytes]:
    """A stream in time order (one one-search session a second makes the clock), with every
    exposure case and deadlines that other records of the same bucket pass."""
    ubi = UBI()
    timed = [(i, ubi.query(f"f{i}", f"filler {i % 50}", i, client=f"f{i}"))
             for i in range(2000)]
    timed += [
        (1099.5, ubi.query("s1", "tent", 1099.5, client="a", app="cases")),
        (1099.51, ubi.event("s1", "impression", 1098.0, client="a")),  # before its search
        (1100.0, ubi.event("s1", "impression", 1100.0, client="a")),  # its search buffered
        (1099.5, ubi.query("s2", "lamp", 1099.5, client="b", page=2, app="cases")),
        (1100.0, ubi.event("s2", "impression", 1100.0, client="b")),  # page never tracked
        (1100.0, ubi.event("nope", "impression", 1100.0, client="c")),  # no such search
        (1100.2, ubi.event("f1000", "impression", 1100.2, client="f1000")),  # search applied
        (1200.0, ubi.query("x1", "chair", 1200.0, client="x", app="cases")),
        (1500.1, ubi.click("x1", 1500.1, client="x")),  # after x1's deadline (1500.0)
        (1500.2, ubi.query("x2", "chairs", 1500.2, client="x", app="cases")),
        (1200.1, ubi.query("y1", "desk", 1200.1, client="y", app="cases")),
        (1500.0, ubi.query("y2", "desks", 1500.0, client="y", app="cases")),  # before y1's
        (1200.2, ubi.query("z1", "stool", 1200.2, client="z", hits=(), app="cases")),
    ]
    return [raw for _, raw in sorted(timed, key=lambda pair: pair[0])]


def simulated() -> list[bytes]:
    return list(Simulator(SimulationSpec(seed=5, sessions=600)).records())


@pytest.mark.parametrize("log", [hand_built, simulated])
def test_shortcuts_count_exactly_what_the_plain_path_counts(log, monkeypatch):
    records = log()
    fast, _ = run(records)
    with monkeypatch.context() as patch:
        plain(patch)
        slow, _ = run(records)
    assert fast == slow
    with_store, _ = run(records)  # same again: the shortcuts left no state behind
    assert with_store == fast


def test_every_exposure_case_and_late_swept_deadline_has_its_outcome():
    result, engine = run(hand_built())
    events = {outcome: n for (kind, outcome), n in result["records"].items()
              if kind == "event" and n}
    assert events == {"accepted": 4, "orphan": 2}  # s1 twice, f1000, the click; s2, nope
    assert result["retimed"] == {"before_its_search": 1}
    assert result["data_quality"] == {"pagination_without_search": 1}
    assert sorted(json.loads(raw)["query_id"] for raw, _, _ in engine.dead_letters.letters) == [
        "nope", "s2"]
    cases = result["summary"]["by_application"]["cases"]
    # x1 abandoned at its deadline though clicked after it; y1 reformulated into y2 before its
    # deadline; s1, x2 and y2 abandoned at the end; z1 a zero-result exit
    assert {k: cases[k] for k in ("searches", "clicks", "clicked_searches",
                                  "reformulated_searches", "abandoned_searches",
                                  "zero_result_exits")} == {
        "searches": 6, "clicks": 1, "clicked_searches": 1, "reformulated_searches": 1,
        "abandoned_searches": 4, "zero_result_exits": 1}


def test_a_search_interrupted_while_buffered_cannot_hold_its_events_for_ever():
    """A signal raised between the engine's bookkeeping of a buffered search and the buffering
    of its record (the demo once raised KeyboardInterrupt there) left an event moved to its
    search's time again and again: `close` never returned. Now the event that finds no search
    at the search's own time is an orphan, dead-lettered."""
    ubi = UBI()
    records = [ubi.query(f"f{i}", f"filler {i % 50}", i, client=f"f{i}") for i in range(1099)]
    interrupted = ubi.query("s1", "tent", 1099.5, client="a")
    early = ubi.click("s1", 1098.0, client="a")  # stamped before its search
    engine = Engine(load_config(environ={}, overrides={}), RecordingDeadLetters())
    engine.process_all([*records, interrupted])
    assert "s1" in engine.pending  # buffered: then its record is taken back out, as if the
    for bucket in engine.buckets.values():  # signal had struck between the two steps
        bucket[:] = [entry for entry in bucket if entry[2] != "s1"]
    engine.process(early)
    closing = threading.Thread(target=engine.close, daemon=True)
    closing.start()
    closing.join(30)
    assert not closing.is_alive(), "close() still moving the event to its search"
    assert [json.loads(raw)["query_id"] for raw, _, _ in engine.dead_letters.letters] == ["s1"]
    assert engine.dead_letters.reasons == ["orphan"]
