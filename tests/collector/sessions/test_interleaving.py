"""Team-draft interleaving credit on hand-built sessions: wins, losses, ties, missing teams,
duplicate clicks, every producer's team attribute, and Δ_AB against a hand computation."""

from __future__ import annotations

import pytest

from collector.config import ConfigError, load_config
from collector.sessions.interleaving import outcome


def tagged(ubi, qid, at, team, key="search_config", obj="d1", **kw):
    return ubi.click(qid, at, obj=obj, **kw,
                     event_attributes={"object": {"object_id": obj, key: team},
                                       "position": {"ordinal": 1}})


def credit(engine, records, **settings):
    series = [s for s in engine(records, **settings).view().series
              if s.interleaving_wins is not None]
    wins: dict[str, int] = {}
    for s in series:
        for team, n in s.interleaving_wins.items():
            wins[team] = wins.get(team, 0) + n
    return (wins, sum(s.interleaving_ties for s in series),
            sum(s.interleaving_unattributed for s in series))


def test_wins_losses_and_ties(ubi, engine):
    records = [
        # s1: A 2, B 1 → A wins
        ubi.query("s1", "tent", 0, client="c1"), tagged(ubi, "s1", 1, "teamA", client="c1"),
        tagged(ubi, "s1", 2, "teamA", obj="d2", client="c1"),
        tagged(ubi, "s1", 3, "teamB", obj="d3", client="c1"),
        # s2: B 1 → B wins
        ubi.query("s2", "lamp", 10, client="c2"), tagged(ubi, "s2", 11, "teamB", client="c2"),
        # s3: A 1, B 1 → tie
        ubi.query("s3", "sofa", 20, client="c3"), tagged(ubi, "s3", 21, "teamA", client="c3"),
        tagged(ubi, "s3", 22, "teamB", obj="d2", client="c3"),
        # s4: no click → no preference, not counted
        ubi.query("s4", "desk", 30, client="c4"),
        # s5: a click without team → not an interleaved search
        ubi.query("s5", "chair", 40, client="c5"), ubi.click("s5", 41, client="c5"),
    ]
    assert credit(engine, records) == ({"teamA": 1, "teamB": 1}, 1, 0)


def test_missing_teams_and_duplicate_clicks(ubi, engine):
    duplicate = tagged(ubi, "s1", 2, "teamB", obj="d2", client="c1")
    records = [
        ubi.query("s1", "tent", 0, client="c1"), tagged(ubi, "s1", 1, "teamA", client="c1"),
        duplicate, duplicate,  # redelivered: one click
        ubi.click("s1", 3, obj="d3", client="c1"),  # no team: unattributed
        # B's click before any tagged one is not attributable; then A → A wins
        ubi.query("s2", "lamp", 10, client="c2"), ubi.click("s2", 11, client="c2"),
        tagged(ubi, "s2", 12, "teamA", obj="d4", client="c2"),
    ]
    assert credit(engine, records) == ({"teamA": 1, "teamB": 0}, 1, 1)


@pytest.mark.parametrize("key", ["search_config", "search_configuration_uuid",
                                 "_search_configuration_id"])
def test_every_producers_team_attribute(ubi, engine, key):
    records = [ubi.query("s1", "tent", 0), tagged(ubi, "s1", 1, "cfg-7f3a", key=key)]
    assert credit(engine, records) == ({"cfg-7f3a": 1}, 0, 0)


def test_outcome_rule():
    assert outcome({"a": 2, "b": 1}) == ("a", 0)
    assert outcome({"a": 1, "b": 1, "": 3}) == (None, 3)
    assert outcome({"b": 1, "": 1}) == ("b", 1)
    assert outcome({"a": 1, "b": 2, "c": 2}) == (None, 0)  # top two equal


def test_delta_and_interval_by_hand():
    """Δ and its 95 % interval clustered by client (docs/metrics.md), against a direct
    computation over the unit buckets' scores: y_b = wins + ties/2 of n_b contests."""
    import math

    from collector.series.experiment_stats import interleaving_preference, t_quantile

    buckets = [({"a": 30, "b": 10}, 10), ({"a": 20, "b": 25}, 5), ({"b": 5}, 5)]
    y = [35.0, 22.5, 2.5]
    n = [50, 50, 10]
    share = sum(y) / sum(n)
    variance = 3 / 2 * sum((yb - share * nb) ** 2 for yb, nb in zip(y, n, strict=True)) \
        / sum(n) ** 2
    t = t_quantile(2)
    found = interleaving_preference(buckets, "a", 3, t)
    assert found.value == pytest.approx(share - 0.5)
    assert found.high - found.value == pytest.approx(t * math.sqrt(variance))
    assert interleaving_preference([], "a", 3, t) is None
    assert interleaving_preference(buckets, "b", 3, t).value == pytest.approx(-found.value)


@pytest.mark.slow  # ~10 s: two simulated experiments
@pytest.mark.parametrize(("truth", "verdict"), [(0.1, "ranker-b"), (0.0, None)])
def test_simulated_preference_is_recovered(truth, verdict):
    """The simulator's interleaved sessions send each click to ranker-b with probability
    0.5 + truth: Δ_B's clustered interval excludes 0 exactly when there is a preference, and
    Δ_A = −Δ_B."""
    from collector.config import load_config
    from collector.engine import Engine
    from collector.series.experiment_stats import interleaving_preference, t_quantile
    from collector.sources.simulator import SimulationSpec, Simulator

    engine = Engine(load_config(environ={}))
    spec = SimulationSpec(seed=11, sessions=30_000, interleaving_preference=truth)
    engine.process_all(Simulator(spec).records())
    engine.close()
    buckets = [(b.interleaving_wins, b.interleaving_ties)
               for e in engine.view().experiments for b in e.filled()
               if (e.application, e.variant) == ("web", "interleaved")
               and b.interleaving_wins is not None]
    assert {e.variant for e in engine.view().experiments
            if any(b.interleaving_wins for b in e.filled())} == {"interleaved"}
    t = t_quantile(31)
    delta_b = interleaving_preference(buckets, "ranker-b", 32, t)
    delta_a = interleaving_preference(buckets, "ranker-a", 32, t)
    assert delta_a.value == pytest.approx(-delta_b.value)
    assert sum(sum(w.values()) + ties for w, ties in buckets) > 500
    half_width = delta_b.high - delta_b.value
    if verdict:
        assert delta_b.low > 0 and delta_b.value < truth + half_width
    else:
        assert delta_b.low < 0 < delta_b.high


def test_a_malformed_team_drops_the_team_not_the_click(ubi, engine):
    e = engine([ubi.query("s1", "tent", 0),
                ubi.click("s1", 1, event_attributes={"object": {"object_id": "d1",
                                                                "search_config": {"x": 1}},
                                                     "position": {"ordinal": 1}})])
    series = e.view().series
    assert sum(s.clicks for s in series) == 1
    assert all(s.interleaving_wins is None for s in series)


def test_a_configured_team_attribute_is_read_first(ubi, engine):
    """events.team_attribute: a producer of its own (Solr's [interleaving] transformer's model
    name copied into the click, say); read before the known attributes; a malformed value
    drops the team, not the click."""
    records = [ubi.query("s1", "tent", 0, client="c1"),
               ubi.click("s1", 1, client="c1", event_attributes={
                   "object": {"object_id": "d1", "ranker-model": "ltr-v2",
                              "search_config": "ignored"}, "position": {"ordinal": 1}}),
               ubi.query("s2", "lamp", 10, client="c2"),
               ubi.click("s2", 11, client="c2", event_attributes={
                   "object": {"object_id": "d1", "ranker-model": ["x"]}})]
    assert credit(engine, records, **{"events.team_attribute": "ranker-model"}) == (
        {"ltr-v2": 1}, 0, 0)
    assert credit(engine, records) == ({"ignored": 1}, 0, 0)  # not configured: not read
    clicks = engine(records, **{"events.team_attribute": "ranker-model"}).view().series
    assert sum(s.clicks for s in clicks) == 2


@pytest.mark.parametrize("value", ["a.b", "1x", "x" * 65, "team attr"])
def test_a_team_attribute_must_be_a_plain_key(value):
    with pytest.raises(ConfigError, match=r"^events.team_attribute .*must be a plain JSON key"):
        load_config(environ={}, overrides={"events.team_attribute": value})
