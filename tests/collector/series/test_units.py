"""Experiment units and unit buckets (collector/series/units.py) on hand-built sessions: exact
counts per client and bucket, the sliding window, the memory cap, merging engines and checkpoints,
the exposition; and on simulated traffic, each bucket equal to a replay of only its clients."""

from __future__ import annotations

import json
import zlib

import pytest

from collector.config import load_config
from collector.engine import Engine
from collector.exposition.view import merge_views, view_from_dict, view_to_dict
from collector.ingest.accounting import INVALID_LATENCY
from collector.replay import exposition
from collector.series.units import UNIT_NOT_TRACKED, bucket_of
from tests.collector.exposition.test_metrics import Scrape
from tests.conftest import T0

BUCKETS = 32


def experiments(engine_or_view):
    view = engine_or_view.view() if isinstance(engine_or_view, Engine) else engine_or_view
    return {(e.application, e.variant): e for e in view.experiments}


def bucket(client: str) -> int:
    """The definition, independently: CRC-32 of the client id's UTF-8 bytes, mod 32."""
    return zlib.crc32(client.encode()) % BUCKETS


def test_a_client_counts_once_and_its_searches_in_its_bucket(ubi, engine):
    records = [
        # c1, control: three searches — clicked (and converted), reformulated, abandoned
        ubi.query("q1", "tent", 0, client="c1", variant="control", latency_ms=900),
        ubi.click("q1", 5, client="c1"),
        ubi.event("q1", "add_to_cart", 8, client="c1"),
        ubi.query("q2", "lamp", 400, client="c1", variant="control", latency_ms=100),
        ubi.query("q3", "lamp shade", 450, client="c1", variant="control"),
        # c2, control: one zero-result search
        ubi.query("q4", "sofa", 10, client="c2", variant="control", hits=[], latency_ms=600),
        # c3, treatment: one clicked search
        ubi.query("q5", "desk", 20, client="c3", variant="treatment"),
        ubi.click("q5", 25, client="c3"),
        # no variant: not an experiment, no units, no buckets
        ubi.query("q6", "chair", 30, client="c4"),
    ]
    found = experiments(engine(records))
    assert set(found) == {("web", "control"), ("web", "treatment")}
    control, treatment = found["web", "control"], found["web", "treatment"]
    assert (control.units, treatment.units) == (2, 1)
    c1, c2, c3 = (bucket(c) for c in ("c1", "c2", "c3"))
    assert bucket_of("c1", BUCKETS) == c1
    counts = {b.index: b for b in control.filled()}
    assert set(counts) == {c1, c2}  # the clients hash apart
    one, two = counts[c1], counts[c2]
    assert (one.searches, one.zero_result, one.clicked, one.converted, one.reformulated,
            one.abandoned, one.timed, one.slow) == (3, 0, 1, 1, 1, 1, 2, 1)
    assert (two.searches, two.zero_result, two.clicked, two.abandoned, two.timed,
            two.slow) == (1, 1, 0, 0, 1, 1)
    (three,) = treatment.filled()
    assert (three.index, three.searches, three.clicked, three.abandoned) == (c3, 1, 1, 0)


def test_units_slide_out_of_their_window(ubi, engine):
    window = {"experiments.unit_window_s": 600}
    gone = engine([ubi.query("q1", "tent", 0, client="c1", variant="A"),
                   ubi.query("q2", "lamp", 1000, client="c2", variant="A")], **window)
    assert experiments(gone)["web", "A"].units == 1  # c1's newest search is 1000 s old
    back = engine([ubi.query("q1", "tent", 0, client="c1", variant="A"),
                   ubi.query("q3", "desk", 500, client="c1", variant="A"),
                   ubi.query("q2", "lamp", 1000, client="c2", variant="A")], **window)
    assert experiments(back)["web", "A"].units == 2  # c1 searched again at 500
    counts = experiments(gone)["web", "A"].filled()
    assert sum(b.searches for b in counts) == 2  # the counts stay: only units slide


def test_the_unit_cap_still_counts_the_search(ubi, engine):
    e = engine([ubi.query("q1", "tent", 0, client="c1", variant="A"),
                ubi.query("q2", "lamp", 1, client="c2", variant="A"),
                ubi.query("q3", "desk", 2, client="c2", variant="A")],
               **{"experiments.max_units": 1})
    a = experiments(e)["web", "A"]
    assert a.units == 1
    assert sum(b.searches for b in a.filled()) == 3
    assert e.stats.data_quality[UNIT_NOT_TRACKED] == 2  # both searches of the untracked c2


def test_a_latency_that_is_not_one_is_no_timing_of_its_unit(ubi, engine):
    """"NaN" and a negative latency are counted as invalid_latency and the search kept
    (events.py): its unit counts the search, but neither timed nor slow."""
    e = engine([ubi.query("q1", "tent", 0, client="c1", variant="A", latency_ms="NaN"),
                ubi.query("q2", "lamp", 1, client="c1", variant="A", latency_ms=-5),
                ubi.query("q3", "desk", 2, client="c1", variant="A", latency_ms=900)])
    (counts,) = experiments(e)["web", "A"].filled()
    assert (counts.searches, counts.timed, counts.slow) == (3, 1, 1)
    assert e.stats.data_quality[INVALID_LATENCY] == 2


def test_a_client_in_two_variants_is_a_unit_of_each(ubi, engine):
    e = engine([ubi.query("q1", "tent", 0, client="c1", variant="A"),
                ubi.query("q2", "lamp", 1, client="c1", variant="B"),
                ubi.query("q3", "desk", 2, client="c1", variant="A"),
                ubi.query("q4", "sofa", 3, client="c1", app="mobile", variant="A")])
    found = experiments(e)
    assert {key: x.units for key, x in found.items()} == {
        ("web", "A"): 1, ("web", "B"): 1, ("mobile", "A"): 1}
    assert [b.searches for b in found["web", "A"].filled()] == [2]


def test_a_search_without_client_id_is_counted_but_belongs_to_no_unit(ubi, engine):
    """Randomization is by client: a search without a client_id cannot be attributed to the
    unit it was randomized as (its session id is the page's; a fresh one per search would make
    every search a unit). It is a search of its variant, counted per variant, and in no unit,
    no bucket and no experiment statistic — as it makes no client for privacy (issue 25)."""
    anonymous = []
    for qid, at in (("q1", 0), ("q2", 400)):
        record = json.loads(ubi.query(qid, "tent", at, variant="A", session_id="s9"))
        del record["client_id"]
        anonymous.append(json.dumps(record).encode())
    e = engine([*anonymous, ubi.click("q1", 3, client="s9"),
                ubi.query("q3", "lamp", 10, client="c1", variant="A")])
    a = experiments(e)["web", "A"]
    assert (a.units, a.without_client_id) == (1, 2)
    assert {b.index: (b.searches, b.clicked) for b in a.filled()} == {bucket("c1"): (1, 0)}
    scrape = Scrape(exposition(e))
    labels = {"application": "web", "variant": "A"}
    assert scrape.get_sample_value(
        "searchpulse_experiment_searches_without_client_id_total", labels) == 2
    assert scrape.get_sample_value("searchpulse_experiment_units", labels) == 1
    assert sum(v for (name, key), v in scrape.samples.items()
               if name == "searchpulse_searches_total" and ("variant", "A") in key) == 3
    restored = experiments(view_from_dict(json.loads(json.dumps(view_to_dict(e.view())))))
    assert restored["web", "A"].without_client_id == 2  # a count: checkpointed
    merged = experiments(merge_views([e.view(), e.view()]))
    assert merged["web", "A"].without_client_id == 4


def test_engines_merge_and_checkpoints_keep_the_counts_not_the_units(ubi, engine):
    first = engine([ubi.query("q1", "tent", 0, client="c1", variant="A"),
                    ubi.click("q1", 2, client="c1")])
    second = engine([ubi.query("q2", "lamp", 0, client="c2", variant="A"),
                     ubi.query("q3", "desk", 1, client="c1", variant="A")])
    merged = experiments(merge_views([first.view(), second.view()]))["web", "A"]
    assert merged.units == 3  # partitions hold disjoint clients when producers key by client
    by_index = {b.index: b for b in merged.filled()}
    assert by_index[bucket("c1")].searches == 2 and by_index[bucket("c1")].clicked == 1
    assert by_index[bucket("c2")].searches == 1
    restored = experiments(view_from_dict(json.loads(json.dumps(view_to_dict(
        merge_views([first.view(), second.view()]))))))["web", "A"]
    assert restored.units == 0
    assert {b.index: (b.searches, b.clicked) for b in restored.filled()} == {
        bucket("c1"): (2, 1), bucket("c2"): (1, 0)}


def test_reset_counts_keeps_the_units(ubi, engine):
    e = engine([ubi.query("q1", "tent", 0, client="c1", variant="A")], close=False)
    e.advance(T0 + 400)  # decided (counted), its unit window still open
    assert [b.searches for b in experiments(e)["web", "A"].filled()] == [1]
    e.reset_counts()
    a = experiments(e)["web", "A"]
    assert a.units == 1 and [b.searches for b in a.filled()] == [0]


def test_interleaving_outcomes_per_bucket(ubi, engine):
    def tagged(qid, at, team, client, obj="d1"):
        return ubi.click(qid, at, obj=obj, client=client, event_attributes={
            "object": {"object_id": obj, "search_config": team}, "position": {"ordinal": 1}})

    e = engine([
        ubi.query("s1", "tent", 0, client="c1", variant="interleaved"),
        tagged("s1", 1, "teamA", "c1"),
        ubi.query("s2", "lamp", 10, client="c1", variant="interleaved"),
        tagged("s2", 11, "teamA", "c1"), tagged("s2", 12, "teamB", "c1", obj="d2"),
        ubi.query("s3", "sofa", 20, client="c2", variant="interleaved"),
        tagged("s3", 21, "teamB", "c2"),
    ])
    found = {b.index: (b.interleaving_wins, b.interleaving_ties)
             for b in experiments(e)["web", "interleaved"].filled()}
    assert found == {bucket("c1"): ({"teamA": 1, "teamB": 0}, 1),
                     bucket("c2"): ({"teamB": 1}, 0)}


def test_exposition_has_exact_values(ubi, engine):
    e = engine([ubi.query("q1", "tent", 0, client="c1", variant="A", latency_ms=700),
                ubi.click("q1", 2, client="c1"),
                ubi.query("q2", "lamp", 1, client="c2", variant="A", hits=[]),
                ubi.query("q3", "desk", 2, client="c3")])
    scrape = Scrape(exposition(e))
    value = scrape.get_sample_value
    one = {"application": "web", "variant": "A", "unit_bucket": str(bucket("c1"))}
    two = {**one, "unit_bucket": str(bucket("c2"))}
    assert value("searchpulse_experiment_units", {"application": "web", "variant": "A"}) == 2
    assert value("searchpulse_experiment_searches_total", one) == 1
    assert value("searchpulse_experiment_clicked_searches_total", one) == 1
    assert value("searchpulse_experiment_timed_searches_total", one) == 1
    assert value("searchpulse_experiment_slow_searches_total", one) == 1
    assert value("searchpulse_experiment_zero_result_searches_total", two) == 1
    assert value("searchpulse_experiment_clicked_searches_total", two) == 0
    assert value("searchpulse_experiment_units", {"application": "web", "variant": "none"}) \
        is None
    assert b'variant="none"' not in b"".join(
        line for line in scrape.text.splitlines(True) if line.startswith(b"searchpulse_exper"))


@pytest.fixture(scope="module")
def simulated():
    from collector.sources.simulator import SimulationSpec, Simulator

    return list(Simulator(SimulationSpec(seed=5, sessions=3000,
                                         interleaving_preference=0.1)).records())


def _run(records) -> Engine:
    e = Engine(load_config(environ={}))
    e.process_all(records)
    e.close()
    return e


def test_buckets_add_up_to_the_variants_counts(simulated):
    """Per variant, the buckets' sums are the quality series' counts of that variant."""
    e = _run(simulated)
    for (application, variant), experiment in experiments(e).items():
        series = [s for s in e.view().series
                  if (s.application, s.variant) == (application, variant)]
        buckets = experiment.filled()

        def total(name, buckets=buckets):
            return sum(getattr(b, name) for b in buckets)
        assert total("searches") == sum(s.searches for s in series)
        assert total("zero_result") == sum(s.zero_result for s in series)
        assert total("clicked") == sum(s.clicked for s in series)
        assert total("converted") == sum(s.converted for s in series)
        assert total("abandoned") == sum(s.abandoned for s in series)
        assert total("reformulated") == sum(sum(s.reformulated.values()) for s in series)
        assert total("timed") == sum(s.latency.count for s in series)
        guardrail = e.table.latency_bounds.index(0.5)
        assert total("slow") == sum(sum(s.latency.counts[guardrail + 1:]) for s in series)
        assert total("interleaving_ties") == sum(s.interleaving_ties for s in series)


def test_a_bucket_is_the_replay_of_its_clients_alone(simulated):
    """Sessions are per client, so a replay of only one bucket's clients must find exactly
    that bucket's counts: the hashing neither mixes nor splits clients."""
    e = _run(simulated)
    chosen = 7
    mine = [raw for raw in simulated if (client := json.loads(raw).get("client_id"))
            and bucket(client) == chosen]
    alone = _run(mine)
    for key, experiment in experiments(e).items():
        whole = experiment.buckets[chosen]
        part = experiments(alone)[key]
        assert whole is not None
        assert [b.index for b in part.filled()] == [chosen]
        (only,) = part.filled()
        for name in ("searches", "zero_result", "clicked", "converted", "abandoned",
                     "reformulated", "timed", "slow", "interleaving_ties",
                     "interleaving_wins"):
            assert getattr(only, name) == getattr(whole, name), (key, name)
        assert part.units == len({json.loads(raw)["client_id"] for raw in mine
                                  if _search_of(raw) == key})


def _search_of(raw: bytes) -> tuple[str, str] | None:
    """(application, variant) of a query record, else None."""
    record = json.loads(raw)
    if "user_query" not in record:
        return None
    return record.get("application"), (record.get("query_attributes") or {}).get("variant")


@pytest.mark.integration
def test_promtool_accepts_the_experiment_families(simulated):
    import shutil
    import subprocess

    body = exposition(_run(simulated))
    assert b"searchpulse_experiment_interleaving_wins_total{" in body
    checked = subprocess.run([shutil.which("promtool"), "check", "metrics"], input=body,
                             capture_output=True, check=False)
    assert checked.returncode == 0 and checked.stdout == b"" and checked.stderr == b"", \
        checked.stdout + checked.stderr


def test_experiment_variants_beyond_the_cap_get_no_units(ubi, engine):
    e = engine([ubi.query(f"q{i}", "tent", i, client=f"c{i}", variant=f"v{i}")
                for i in range(4)], **{"experiments.max_variants": 3})
    assert sorted(experiments(e)) == [("web", "v0"), ("web", "v1"), ("web", "v2")]
    assert e.view().folded["experiment"] == 1
    assert sum(s.searches for s in e.view().series if s.variant == "v3") == 1
