"""The simulator's real front ends: search-as-you-type applications — what they send, that they
leave everything else they do not touch as it was (their own random streams) — and the flags
that ask for them and for automated clients and tracking outages (whose records are tested in
test_bots.py and test_outages.py)."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from collector.outcomes import continues
from collector.sources.simulator import SimulationSpec, Simulator
from collector.sources.simulator.intents import KEYSTROKE_GAP_S, MAX_EDIT, IntentRule
from tests.collector.sources.simulator.sent import decoded, is_query
from tests.searchpulse.test_errors import run

HOUR = 3600


# -- search as you type ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def typing():
    spec = SimulationSpec(seed=4, sessions=1500, keep_sessions=True,
                          type_ahead=frozenset({"web", "opensearch"}))
    simulator = Simulator(spec)
    return simulator, decoded(list(simulator.records()))


def test_every_keystroke_record_is_a_keystroke_by_the_written_rule(typing):
    simulator, _ = typing
    chains = 0
    for _, plan in simulator.truth.sessions:
        for search in plan:
            if search.application not in ("web", "opensearch"):
                assert not search.typed
                continue
            chain = [*search.typed, search]
            chains += 1
            for before, after in zip(chain, chain[1:], strict=False):
                assert 0 < after.ts_ms - before.ts_ms <= KEYSTROKE_GAP_S * 1000
                assert continues(before.normalized, after.normalized, MAX_EDIT)
                assert not before.clicks and not before.conversions and not before.pages
                assert (before.application, before.variant) == (after.application,
                                                                after.variant)
    assert chains > 1000


def test_keystroke_records_are_query_records_of_their_own_with_results_and_no_events(typing):
    simulator, records = typing
    typed = {k.query_id: k for _, plan in simulator.truth.sessions for s in plan
             for k in s.typed}
    searches = {s.query_id for _, plan in simulator.truth.sessions for s in plan}
    queries = {r["query_id"]: r for r in records if is_query(r)}
    assert set(typed) <= set(queries) and not set(typed) & searches
    events = Counter((r["action_name"], r["query_id"] in typed) for r in records
                     if "action_name" in r)
    assert events[("click", True)] == events[("add_to_cart", True)] == 0
    assert events[("impression", True)] > 1000  # opensearch renders keystrokes' results too
    sent = [queries[qid] for qid in typed]
    assert {r["application"] for r in sent} == {"web", "opensearch"}
    zero = sum(r.get("query_response_hit_ids") == [] or
               (r.get("query_attributes") or {}).get("total_hits") == 0 for r in sent)
    assert 0.03 < zero / len(sent) < 0.15  # a prefix seldom finds nothing, a typo often does
    assert all("latency_ms" in r["query_attributes"] for r in sent)
    by_session = defaultdict(set)
    for qid in typed:
        record = queries[qid]
        by_session[record["query_attributes"]["session_id"]].add(record["client_id"])
    assert all(len(clients) == 1 for clients in by_session.values())


def test_records_per_search_in_type_ahead_applications(typing):
    truth = typing[0].truth.summary()["by_application"]
    per_search = {app: 1 + truth[app]["keystrokes_per_search"] for app in truth}
    assert 7.5 < per_search["web"] < 10.5  # a 250 ms debounce skips keys
    assert 15 < per_search["opensearch"] < 20  # an 80 ms one sends about every key
    assert per_search["mobile"] < 1.01 and per_search["legacy"] < 1.01


def midway(search, following) -> bool:
    """Whether ``search`` was clicked mid-typing ``following``'s query."""
    typed_on = following.typed[0] if following.typed else following
    return bool(search.clicks and following.normalized.startswith(search.normalized + " ")
                and typed_on.normalized.startswith(search.normalized))


def test_clicks_mid_typing_are_searches_of_their_own(typing):
    simulator, _ = typing
    clicked = [(search, following) for _, plan in simulator.truth.sessions
               for search, following in zip(plan, plan[1:], strict=False)
               if midway(search, following)]
    assert len(clicked) > 20
    for search, following in clicked:
        assert not search.zero and len(search.clicks) == 1
        typed_on = following.typed[0] if following.typed else following
        assert search.ts_ms < search.clicks[0][0] < typed_on.ts_ms


def test_type_ahead_moves_times_only_the_plan_is_the_same():
    """The typing stream is its own: the same people search for the same things, click and
    leave alike, only later by their typing; a search clicked mid-typing is added."""
    def plans(type_ahead):
        simulator = Simulator(SimulationSpec(seed=8, sessions=400, keep_sessions=True,
                                             type_ahead=type_ahead))
        list(simulator.records())
        return [plan for _, plan in simulator.truth.sessions]

    def what(plan):
        return [(s.query, s.zero, len(s.clicks), len(s.pages), len(s.conversions))
                for s, following in zip(plan, [*plan[1:], None], strict=True)
                if following is None or not midway(s, following)]

    plain, typed = plans(frozenset()), plans(frozenset({"mobile"}))
    assert [what(plan) for plan in plain] == [what(plan) for plan in typed]
    added = sum(len(b) - len(a) for a, b in zip(plain, typed, strict=True))
    assert 0 < added < 0.05 * sum(map(len, typed))
    later = [b[0].ts_ms - a[0].ts_ms for a, b in zip(plain, typed, strict=True)]
    assert min(later) >= 0 and max(later) > 1000  # mobile's searches typed first


# -- the flags -------------------------------------------------------------------------------
@pytest.mark.parametrize(("argv", "named"), [
    (["simulate", "--type-ahead", "web,nowhere"], "--type-ahead"),
    (["simulate", "--type-ahead", ""], "--type-ahead"),
    (["simulate", "--bot", "crawler@web:25"], "--bot"),
    (["simulate", "--bot", "spider@web:25/m"], "unknown kind 'spider'"),
    (["simulate", "--bot", "crawler@shop:25/m"], "unknown application 'shop'"),
    (["simulate", "--bot", "crawler@web:0/m"], "a rate > 0"),
    (["simulate", "--bot", "fleet@web:2x4/m:id=one"], "id= names one client"),
    (["simulate", "--bot", "crawler@web:25/m:soon+1h"], "duration 'soon'"),
    (["simulate", "--tracking-outage", "web"], "--tracking-outage"),
    (["simulate", "--tracking-outage", "web:10m"], "APP:START+DURATION"),
    (["demo", "--tracking-outage", "shop:1m+1m"], "unknown application 'shop'"),
    (["demo", "--bot", "monitor@web"], "--bot"),
])
def test_a_bad_front_end_flag_exits_2_naming_it(argv, named, capsys):
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert named in err and len(err.strip().splitlines()) == 1, err


def test_the_demo_shows_them_in_web_and_the_flags_turn_them_off():
    from searchpulse import build_parser
    from searchpulse.live import _spec

    demo = _spec(build_parser().parse_args(["demo"]))
    assert demo.type_ahead == frozenset({"web"})
    assert [(b.kind, b.application, b.duration_s) for b in demo.bots] == [
        ("crawler", "web", None), ("monitor", "web", None)]
    off = _spec(build_parser().parse_args(["demo", "--type-ahead", "none", "--bot", "none"]))
    assert off.type_ahead == frozenset() and off.bots == []
    other = _spec(build_parser().parse_args(["demo", "--bot", "fleet@mobile:5x2/m"]))
    assert [(b.kind, b.clients) for b in other.bots] == [("fleet", 5)]
    assert _spec(build_parser().parse_args(["simulate"])).bots == []


def test_the_truth_follows_the_rule_it_is_given():
    """With the keystroke rule off for the type-ahead application (intents.off_applications),
    every record its box sent is a search of the truth."""
    spec = SimulationSpec(seed=9, sessions=200, type_ahead=frozenset({"web"}))
    ruled = Simulator(spec)
    off = Simulator(spec, IntentRule(off_applications=frozenset({"web"})))
    assert list(ruled.records()) == list(off.records())
    web, web_off = (s.truth.summary()["by_application"]["web"] for s in (ruled, off))
    assert web_off["keystroke_records"] == 0
    assert web_off["searches"] == web["searches"] + web["keystroke_records"]
    assert web_off["reformulation_rate"] > 0.8 > 0.3 > web["reformulation_rate"]
