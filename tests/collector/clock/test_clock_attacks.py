"""Clock attacks (issue 34): records from the future, a whole application's front end off by
hours, a share of clients off by days, event clocks off by minutes — each checked against the
simulator's own session plans (docs/architecture.md, "Time": the guarantee and its bounds)."""

from __future__ import annotations

import functools
import json
import time
from datetime import UTC, date, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.config import load_config
from collector.exposition.summary import replay_summary
from collector.replay import replay as replay_files
from collector.store.query_store import open_store
from feedback.candidates.job import period_of
from tests.collector.worlds import (
    DAY,
    EXACT,
    HOUR,
    OUTCOMES,
    SKEWED,
    Log,
    Stranded,
    clients_of,
    merged,
    plain,
    planned_clients,
    random_offsets,
    replay,
    rounded,
    simulated,
    skew_application,
    skew_clients,
    stamp_of,
    stored_days,
    with_burst,
)

Y2199 = datetime(2199, 12, 1, 12, tzinfo=UTC).timestamp()


@functools.cache
def traffic():
    """3,000 sessions (about 5,000 searches, 14,000 records) at five a second."""
    return simulated(seed=34, sessions=3000)


def write(path, log: Log) -> str:
    path.write_bytes(b"".join(raw + b"\n" for _, raw in log))
    return str(path)


def store_days(url: str) -> dict[str, int]:
    store = open_store(url, read_only=True)
    try:
        days: dict[str, int] = {}
        for row in store.rows():
            days[row["day"]] = days.get(row["day"], 0) + row["searches"]
        return days
    finally:
        store.close()


@pytest.mark.parametrize("stamp", [Y2199, time.time() + 400 * DAY], ids=["2199", "next-year"])
def test_ten_records_from_the_future_delete_no_day_of_the_store(tmp_path, stamp):
    """A replay into SQLite with store.retention_days: ten consecutive searches of distinct
    new clients stamped in the future are counted as future records (and named), their
    clients' clocks corrected; every real day stays in the store, on its own counts, and the
    feedback job's period ends on the log's last real day."""
    _, timed = traffic()
    log = plain(timed)
    config = load_config(environ={})
    clean_url, url = (f"sqlite:///{tmp_path / name}" for name in ("clean.db", "burst.db"))
    clean = replay_files([write(tmp_path / "clean.jsonl", log)], config, store=clean_url)
    attacked = replay_files([write(tmp_path / "burst.jsonl", with_burst(log, 10, stamp, 0.5))],
                            config, store=url)
    assert attacked["future_records"] == 10 and clean["future_records"] == 0
    assert attacked["searches"] == clean["searches"] + 10
    assert attacked["abandoned_searches"] == clean["abandoned_searches"] + 10  # theirs
    for key in ("clicks", "clicked_searches", "reformulated_searches"):
        assert attacked[key] == clean[key], key
    days, clean_days = store_days(url), store_days(clean_url)
    assert set(days) == set(clean_days) and sum(days.values()) == sum(clean_days.values()) + 10
    store = open_store(url, read_only=True)
    try:
        assert period_of(store, url, "90d", None)[1] == date.fromisoformat(max(clean_days))
    finally:
        store.close()


def test_a_whole_log_dated_in_the_future_replays_as_today(tmp_path):
    """A synthetic log dated a year ahead of the wall clock is the stream: counted exactly like
    the same log dated now, its days kept (nothing pruned by them or from them), none of it a
    future record, and the feedback job's period ends on its last day."""
    _, timed = traffic()
    shift = time.time() + 365 * DAY - stamp_of(timed[0][1])
    ahead = [(d + shift, dict(r, timestamp=round((stamp_of(r) + shift) * 1000)))
             for d, r in timed]
    config = load_config(environ={}, overrides={"store.retention_days": 30})
    url = f"sqlite:///{tmp_path / 'ahead.db'}"
    got = replay_files([write(tmp_path / "ahead.jsonl", plain(ahead))], config, store=url)
    now = replay_files([write(tmp_path / "now.jsonl", plain(timed))], config)
    assert got["future_records"] == 0
    assert rounded(got["by_application"]["web"]) == rounded(now["by_application"]["web"])
    days = store_days(url)
    assert sum(days.values()) == got["searches"]
    store = open_store(url, read_only=True)
    try:
        assert period_of(store, url, "90d", None)[1] == date.fromisoformat(max(days))
    finally:
        store.close()


def exact_for_everyone_else(simulator, engine, skewed: set[str], moved: float = 0.0) -> None:
    """Every other application's summary exact and every search on its day; ``moved``: its
    counts and days exact, and at most that share of its searches' outcomes moved (at least 2)
    — the bound of worlds in which up to half of the clients are off by days."""
    got = replay_summary(engine)["by_application"]
    for application, expected in simulator.truth.by_application(without=skewed).items():
        if not moved:
            assert rounded(got[application]) == rounded(expected), application
            continue
        for key in EXACT:
            assert got[application][key] == expected[key], (application, key)
        shifted = sum(abs(got[application][key] - expected[key]) for key in OUTCOMES)
        assert shifted <= max(2, moved * expected["searches"]), (application, shifted)
    assert stored_days(engine) == simulator.truth.searches_by_day(without=skewed)


def test_one_application_an_hour_ahead_retimes_only_its_own_records():
    """A front end writing local time without a zone: one application's queries and events an
    hour ahead (about a sixth of the traffic). Only its records are retimed; every other
    application's counts are exact, and its own searches keep their sessions, clicks and days."""
    simulator, timed = traffic()
    log = skew_application(timed, "mobile", HOUR)
    engine = replay(log)
    summary = replay_summary(engine)
    got, truth = summary["by_application"], simulator.truth.by_application(without=set())
    for application, expected in truth.items():
        if application != "mobile":
            assert rounded(got[application]) == rounded(expected), application
    for key in EXACT:
        assert got["mobile"][key] == truth["mobile"][key], key
    moved = sum(abs(got["mobile"][k] - truth["mobile"][k]) for k in OUTCOMES)
    assert moved <= 2, moved
    # corrections, not records (docs/metrics.md): a record held while its application's
    # clock was learnt is moved twice; every one of them is mobile's
    mobile = sum(1 for _, r in timed if r.get("application") == "mobile")
    assert mobile <= summary["retimed_records"] <= mobile + mobile // 50
    days = stored_days(engine, without=())
    assert days == simulator.truth.searches_by_day(without=set())


def skewed_clients_replayed(simulator, timed, offsets: dict[str, float], moved: float = 0.0
                            ) -> tuple[dict, dict, Stranded]:
    """The clients of ``offsets`` off by them (queries and events): everyone else checked
    (``exact_for_everyone_else``); their summary, their planned truth, and their clicks
    stranded as orphans."""
    skewed = set(offsets)
    stranded = Stranded(skewed)
    engine = replay(skew_clients(timed, offsets, events_only=False), stranded=stranded)
    exact_for_everyone_else(simulator, engine, skewed, moved)
    mine = replay_summary(engine)["by_application"][SKEWED]
    theirs = merged(simulator.truth.by_application(
        without=planned_clients(simulator) - skewed).values())
    return mine, theirs, stranded


@pytest.mark.parametrize(("share", "bound", "same"), [
    (0.10, 2 * DAY, True),  # a tenth of the clients, all two days ahead
    (0.05, DAY, False),  # the documented bound: 5 % of clients within ±1 day
])
def test_skewed_clients_move_no_one_else_and_keep_their_clicks(share, bound, same):
    simulator, timed = traffic()
    offsets = random_offsets(clients_of(timed), share, bound, seed=5, same=same)
    mine, theirs, _ = skewed_clients_replayed(simulator, timed, offsets)
    for key in EXACT:
        assert mine[key] == theirs[key], key
    moved = sum(abs(mine[key] - theirs[key]) for key in OUTCOMES)
    assert moved <= max(2, 0.01 * theirs["searches"]), moved


def test_event_clocks_ten_minutes_off_keep_the_time_to_first_click():
    """5 % of clients' events (not their queries: the search server stamps those) ±10 min
    off: the stream's time to first click within 1 % of the truth, theirs within 5 % (an
    event clock within the tolerance of a client that sends no exposures cannot be told
    from a slow click: over 12 such worlds, 9 within 5 %, the worst 11.9 %; the stream's
    within 0.6 % in all), their counts exact."""
    simulator, timed = traffic()
    offsets = random_offsets(clients_of(timed), 0.05, 600.0, seed=5)
    skewed = set(offsets)
    clean = replay(skew_clients(timed, dict.fromkeys(offsets, 0.0), events_only=True))
    engine = replay(skew_clients(timed, offsets, events_only=True))
    exact_for_everyone_else(simulator, engine, skewed)
    got, clean_summary = replay_summary(engine), replay_summary(clean)
    mine, truth = got["by_application"][SKEWED], clean_summary["by_application"][SKEWED]
    for key in EXACT:
        assert mine[key] == truth[key], key
    assert got["mean_time_to_first_click_s"] == pytest.approx(
        clean_summary["mean_time_to_first_click_s"], rel=0.01)
    assert mine["mean_time_to_first_click_s"] == pytest.approx(
        truth["mean_time_to_first_click_s"], rel=0.05)


def test_the_burst_is_named_in_the_summary_json(tmp_path):
    """`replay --json` has the count under its own name."""
    _, timed = traffic()
    log = with_burst(plain(timed)[:3000], 4, Y2199, 0.5)
    summary = replay_files([write(tmp_path / "log.jsonl", log)], load_config(environ={}))
    assert json.loads(json.dumps(summary))["future_records"] == 4


# -- generated attacks: the same worlds in every run, checked against the simulator's plans ----
ATTACK = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow])


def wall_clock_of(timed) -> float:
    """The wall clock of a generated world: an hour after its newest record (its log is
    today's however long its lulls, a year of 2027 is the future)."""
    return max(stamp_of(record) for _, record in timed) + HOUR


@pytest.mark.slow  # ~20 s: 20 generated worlds
@ATTACK
@given(seed=st.integers(0, 10**6), rate=st.sampled_from([5.0, 1.0, 0.2, 1 / 60]),
       lulls=st.lists(st.tuples(st.floats(0.0, DAY), st.floats(0.0, DAY)), max_size=2),
       count=st.integers(1, 40), year=st.integers(2027, 2199), at=st.floats(0.0, 1.0),
       live=st.booleans())
def test_a_burst_from_the_future_moves_no_time_and_no_day(seed, rate, lulls, count, year, at,
                                                          live):
    """Up to a few dozen consecutive searches of new clients stamped in any year up to 2199,
    anywhere in the log: everyone's counts exact, every search on its day, the burst's
    searches counted as future records on the stream's days (none after the wall clock)."""
    simulator, timed = simulated(seed, rate=rate, lulls=lulls)
    stamp = datetime(year, 6, 1, tzinfo=UTC).timestamp()
    log = with_burst(plain(timed), count, stamp, at, application=SKEWED)
    engine = replay(log, live, wall_clock=wall_clock_of(timed))
    summary = replay_summary(engine)
    exact_for_everyone_else(simulator, engine, set())
    assert summary["future_records"] == count
    assert summary["by_application"][SKEWED]["searches"] == count
    last_day = max(day for day, _ in simulator.truth.searches_by_day(without=set()))
    assert max(day for (day, _), _ in stored_days(engine, without=()).items()) <= last_day
    assert engine.view().gauges["last_event_timestamp_seconds"] < wall_clock_of(timed)


@pytest.mark.slow  # ~20 s
@ATTACK
@given(seed=st.integers(0, 10**6), rate=st.sampled_from([5.0, 1.0]),
       application=st.sampled_from(["mobile", "opensearch", "legacy"]),
       offset=st.one_of(st.floats(900.0, 6 * HOUR), st.floats(-6 * HOUR, -120.0)),
       events_only=st.booleans())
def test_a_whole_application_off_retimes_only_its_own_records(seed, rate, application, offset,
                                                              events_only):
    """One front end off by minutes to hours (its queries too, or only its events), making
    less than half of the searches, in a stream of a session a second or more: every other
    application exact, and its own searches, clicks and days exact; a few outcomes of its
    first records may move while its clock is learnt (docs/architecture.md, bounds: a
    session every 5 s is too sparse for an application's event clock to be learnt, and one
    ahead by up to about max_ahead pulls the clock with it until its clock is learnt)."""
    simulator, timed = simulated(seed, sessions=600, rate=rate)
    engine = replay(skew_application(timed, application, offset, events_only))
    got = replay_summary(engine)["by_application"]
    truth = simulator.truth.by_application(without=set())
    for other, expected in truth.items():
        if other != application:
            assert rounded(got[other]) == rounded(expected), other
    mine, theirs = got[application], truth[application]
    for key in EXACT:
        assert mine[key] == theirs[key], key
    moved = sum(abs(mine[key] - theirs[key]) for key in OUTCOMES)
    assert moved <= max(2, 0.02 * theirs["searches"]), (moved, theirs["searches"])
    assert stored_days(engine, without=()) == simulator.truth.searches_by_day(without=set())


@pytest.mark.slow  # ~20 s
@ATTACK
@given(seed=st.integers(0, 10**6), rate=st.sampled_from([5.0, 1.0]),
       share=st.floats(0.25, 0.4), bound=st.sampled_from([DAY, 3 * DAY]))
def test_a_majority_of_clients_off_by_days_moves_no_one_else(seed, rate, share, bound):
    """A quarter to 40 % of the clients off by up to days, each by its own amount (devices,
    not one front end): the clients whose clocks are right are the stream's one clock: their
    counts and days exact, at
    most 1 % of their outcomes moved (seed 4219, 43 % off by up to ±3 days: a reformulation
    and an abandonment of mobile's, an abandonment of web's; 45-50 % off by up to ±3 days is
    not held: docs/architecture.md, Bounds); every skewed
    client's searches counted, and its clicks but those stranded (a few %: a click placed
    past its search's window while the skewed clients' first records are judged)."""
    simulator, timed = simulated(seed, sessions=600, rate=rate)
    offsets = random_offsets(clients_of(timed), share, bound, seed)
    mine, theirs, stranded = skewed_clients_replayed(simulator, timed, offsets, moved=0.01)
    for key in ("searches", "zero_result_searches"):
        assert mine[key] == theirs[key], key
    assert stranded.events <= max(2, 0.03 * theirs["clicks"]), stranded.events
    for key in ("clicked_searches", "clicks", "converted_searches"):
        assert theirs[key] - stranded.events <= mine[key] <= theirs[key], key


@pytest.mark.slow  # ~20 s
@ATTACK
@given(seed=st.integers(0, 10**6), rate=st.sampled_from([5.0, 1.0]),
       share=st.sampled_from([0.03, 0.05, 0.1]), bound=st.sampled_from([120.0, 600.0, 1800.0]))
def test_event_clocks_off_keep_every_count_and_the_time_to_first_click(seed, rate, share,
                                                                       bound):
    """A share of clients' events (not their queries) off by up to ±bound: everyone else
    exact, the skewed clients' searches and clicks exact, and the mean time to first click
    of the whole stream within 5 % of the truth."""
    simulator, timed = simulated(seed, sessions=600, rate=rate)
    offsets = random_offsets(clients_of(timed), share, bound, seed)
    skewed = set(offsets)
    clean = replay_summary(replay(skew_clients(timed, dict.fromkeys(offsets, 0.0), True)))
    engine = replay(skew_clients(timed, offsets, events_only=True))
    exact_for_everyone_else(simulator, engine, skewed)
    got = replay_summary(engine)
    for key in EXACT:
        assert got["by_application"][SKEWED][key] == clean["by_application"][SKEWED][key], key
    assert got["mean_time_to_first_click_s"] == pytest.approx(
        clean["mean_time_to_first_click_s"], rel=0.05)
