"""The position-based click model: EM recovers a simulated examination curve (on counts, and end
to end from UBI records through the collector's store), single-document relevance under a known
curve, IPS weights clipped as documented, SRW's COEC, and the implicit-judgment files as SRW's
importer and our own judgment reader take them."""

from __future__ import annotations

import csv
import json
import random
from itertools import groupby
from pathlib import Path

import numpy as np
import pytest

from collector.config import load_config
from collector.judgments.readers import Sources, read_judgments
from collector.replay import replay
from collector.store.query_store import open_store
from feedback.candidates.job import FeedbackError, FeedbackRequest, run_feedback
from feedback.candidates.pooling import pool
from feedback.clicks import click_model
from feedback.clicks.job import EXAMINATION_FILE, ClicksError, ClicksRequest, run_clicks

DEPTH = 10
TRUE_CURVE = 1.0 / np.arange(1, DEPTH + 1) ** 0.7  # θ_1 = 1 already
DAY0 = 1_767_600_000  # 2026-01-05T08:00:00Z


def _simulated_cells(seed: int, queries: int, rankings: int) -> click_model.Cells:
    """PBM users on ``rankings`` random orders of 15 documents per query."""
    rng = np.random.default_rng(seed)
    pair, position, shown, clicked = [], [], [], []
    for q in range(queries):
        attractiveness = rng.beta(1, 3, size=15)
        for _ in range(rankings):
            order = rng.permutation(15)[:DEPTH]
            impressions = int(rng.integers(20, 60))
            for k, d in enumerate(order):
                pair.append(q * 15 + d)
                position.append(k + 1)
                shown.append(impressions)
                clicked.append(rng.binomial(impressions, TRUE_CURVE[k] * attractiveness[d]))
    numbers, index = np.unique(np.array(pair), return_inverse=True)
    return click_model.Cells(index, np.array(position), np.array(shown, float),
                             np.array(clicked, float), np.zeros(len(numbers), int), 1, DEPTH)


def test_em_recovers_the_simulated_examination_curve():
    cells = _simulated_cells(seed=1, queries=1500, rankings=2)
    fit = click_model.fit(cells)
    assert fit.converged and fit.iterations < 1000
    assert fit.theta[0, 0] == 1.0
    assert np.abs(fit.theta[0] - TRUE_CURVE).max() < 0.03
    moved = {p for p in set(cells.pair.tolist())
             if len(set(cells.position[cells.pair == p].tolist())) > 1}
    assert fit.moving_pairs.tolist() == [len(moved)]
    # a warm start from the answer converges at once to the same curve
    warm = click_model.fit(cells, fit.theta)
    assert warm.iterations < 30
    assert np.abs(warm.theta - fit.theta).max() < 0.01


def test_pairs_that_never_move_are_counted_as_such():
    cells = _simulated_cells(seed=2, queries=50, rankings=1)
    assert click_model.moving_pairs(cells).tolist() == [0]


def test_a_group_without_enough_moving_pairs_gets_no_curve_and_em_says_it_did_not_run():
    still = _simulated_cells(seed=2, queries=50, rankings=1)  # nothing moves
    fit = click_model.fit(still, min_moving=50)
    assert fit.converged is None and fit.iterations == 0 and fit.log_likelihood is None
    assert fit.fitted.tolist() == [False]
    assert np.isnan(fit.theta).all() and np.isnan(fit.gamma).all()
    # beside a group that moves: that one is fitted as alone, the still one stays without
    moving = _simulated_cells(seed=1, queries=1500, rankings=2)
    both = click_model.Cells(
        np.concatenate([moving.pair, still.pair + len(moving.group)]),
        np.concatenate([moving.position, still.position]),
        np.concatenate([moving.impressions, still.impressions]),
        np.concatenate([moving.clicks, still.clicks]),
        np.concatenate([moving.group, still.group + 1]), 2, DEPTH)
    fit = click_model.fit(both, min_moving=50)
    alone = click_model.fit(moving, min_moving=50)
    assert fit.converged is True and fit.fitted.tolist() == [True, False]
    assert np.allclose(fit.theta[0], alone.theta[0]) and np.isnan(fit.theta[1]).all()
    assert np.isnan(fit.gamma[len(moving.group):]).all()
    assert not np.isnan(fit.gamma[:len(moving.group)]).any()


def test_clicks_on_a_store_whose_rankings_never_move_publishes_no_curve(tmp_path, caplog):
    """The simulator's case: every document at one position. No curve, no debiased relevance,
    the reason in the file and the log; the collector reads the file and weighs nothing."""
    from collector.series.examination import parse

    log = tmp_path / "still.jsonl"
    lines, t = [], DAY0 * 1000
    for s in range(200):
        t += 1000
        qid = f"q{s}"
        lines.append({"query_id": qid, "client_id": f"c{s}", "user_query": f"lamp {s % 5}",
                      "timestamp": t, "application": "web",
                      "query_response_hit_ids": [f"d{s % 5}-{k}" for k in range(DEPTH)]})
        lines.append({"action_name": "click", "query_id": qid, "client_id": f"c{s}",
                      "session_id": f"c{s}", "timestamp": t + 1, "application": "web",
                      "event_attributes": {"object": {"object_id": f"d{s % 5}-{s % 3}"},
                                           "position": {"ordinal": s % 3 + 1}}})
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = f"sqlite:///{tmp_path / 'q.db'}"
    config = load_config(environ={}, overrides={})
    replay([str(log)], config, store=store)
    out = tmp_path / "out"
    summary = run_clicks(config, ClicksRequest(store=store, out=out))
    assert summary["converged"] is None and summary["iterations"] == 0
    assert summary["applications"] == {"web": {"examination": None, "moving_pairs": 0,
                                               "min_moving_pairs": 50, "identified": False}}
    examination = json.loads((out / EXAMINATION_FILE).read_text())
    assert examination["applications"]["web"]["examination"] is None
    assert examination["log_likelihood"] is None
    assert "no examination curve: 0 of its 50 (query, document) pairs were shown at two " \
           "positions or more, clicks.min_moving_pairs needs 50" in caplog.text
    rows = list(csv.DictReader((out / "implicit-judgments.csv").open()))
    assert rows and {r["pbm_relevance"] for r in rows} == {""} and all(r["coec"] for r in rows)
    assert list((out / "srw").iterdir()) == []
    loaded = parse((out / EXAMINATION_FILE).read_text(), 10.0, 20, DEPTH)
    assert loaded.curves == {} and loaded.weights == {}


def test_relevance_under_a_known_curve():
    theta = np.array([1.0, 0.5, 0.25])
    # consistent counts: γ = 0.3 explains both positions exactly (the prior moves it < 0.001)
    assert click_model.relevance({1: 1000, 2: 1000}, {1: 300, 2: 150}, theta) == pytest.approx(
        0.3, abs=1e-3)
    # the same raw CTR at position 3 means a four times more attractive document
    low = click_model.relevance({1: 1000}, {1: 100}, theta)
    high = click_model.relevance({3: 1000}, {3: 100}, theta)
    assert high == pytest.approx(0.4, abs=2e-3) and low == pytest.approx(0.1, abs=1e-3)
    assert click_model.relevance({7: 10}, {7: 1}, theta) is None  # beyond the curve
    assert click_model.relevance({}, {}, theta) is None


def test_ips_weights_are_clipped_at_max_weight():
    weights = click_model.ips_weights(np.array([1.0, 0.5, 0.2, 0.05, 0.0]), 10.0)
    assert weights.tolist() == [1.0, 2.0, 5.0, 10.0, 10.0]
    assert click_model.ips_weights(np.array([0.05]), 4.0).tolist() == [4.0]


def test_coec_is_clicks_over_expected_clicks_at_the_best_position():
    # SRW: rating = clicks / (CTR at its best rank × impressions); 0 when that is 0
    ratings = click_model.coec(np.array([100.0, 50.0, 10.0]), np.array([30.0, 5.0, 1.0]),
                               np.array([0.2, 0.05, 0.0]))
    assert ratings.tolist() == [1.5, 2.0, 0.0]


def _pbm_log(path: Path, queries: int, searches: int, seed: int = 7) -> tuple[int, int]:
    """UBI records of PBM users: each query's 15 documents in two variants' orders; users
    examine position k with TRUE_CURVE[k] and click an examined document with its γ. Returns
    how many (query, document) pairs the two orders show at different positions, and show."""
    rng = random.Random(seed)
    lines = []
    moving = shown = 0
    t = DAY0 * 1000
    for q in range(queries):
        attractiveness = [rng.betavariate(1, 3) for _ in range(15)]
        orders = {variant: rng.sample(range(15), DEPTH) for variant in ("control", "treatment")}
        shown += len(set(orders["control"]) | set(orders["treatment"]))
        moving += sum(d in orders["treatment"] and orders["treatment"].index(d) != k
                      for k, d in enumerate(orders["control"]))
        for s in range(searches):
            variant = ("control", "treatment")[s % 2]
            order = orders[variant]
            qid, client = f"q{q}-{s}", f"c{q}-{s}"
            t += 137
            lines.append({"query_id": qid, "client_id": client, "user_query": f"lamp {q}",
                          "timestamp": t, "application": "web",
                          "query_attributes": {"experiment": "e1", "variant": variant},
                          "query_response_hit_ids": [f"d{q}-{d}" for d in order]})
            for k, d in enumerate(order):
                if rng.random() < TRUE_CURVE[k] and rng.random() < attractiveness[d]:
                    t += 1
                    lines.append({"action_name": "click", "query_id": qid, "client_id": client,
                                  "session_id": client, "timestamp": t, "application": "web",
                                  "event_attributes": {"object": {"object_id": f"d{q}-{d}"},
                                                       "position": {"ordinal": k + 1}}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return moving, shown


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> tuple[Path, dict, tuple[int, int]]:
    directory = tmp_path_factory.mktemp("clicks")
    log = directory / "pbm.jsonl"
    moving, shown = _pbm_log(log, queries=150, searches=60)
    store = f"sqlite:///{directory / 'aggregates.db'}"
    config = load_config(environ={}, overrides={})
    replay([str(log)], config, store=store)
    out = directory / "out"
    summary = run_clicks(config, ClicksRequest(store=store, out=out))
    return out, summary, (moving, shown)


def test_the_curve_comes_back_from_ubi_records_through_the_store(fitted):
    out, summary, (moving, _) = fitted
    examination = json.loads((out / EXAMINATION_FILE).read_text())
    web = examination["applications"]["web"]
    assert web["identified"] and web["moving_pairs"] == moving
    assert examination["converged"] and summary["warm_start"] is None
    assert web["examination"][0] == 1.0
    assert np.abs(np.array(web["examination"]) - TRUE_CURVE).max() < 0.06
    assert web["impressions"] == 150 * 60 * DEPTH


def test_implicit_judgments_as_srw_and_our_reader_take_them(fitted):
    out, summary, (_, shown) = fitted
    rows = list(csv.DictReader((out / "implicit-judgments.csv").open()))
    assert len(rows) == summary["implicit_judgments"] == shown  # every pair ≥ 30 times shown
    body = json.loads((out / "srw/web.implicit-judgments.json").read_text())
    assert body["type"] == "IMPORT_JUDGMENT" and len(body["judgmentRatings"]) == 150
    for entry in body["judgmentRatings"]:
        assert set(entry) == {"query", "ratings"} and entry["ratings"]
        for rating in entry["ratings"]:
            assert isinstance(rating["docId"], str) and isinstance(rating["rating"], str)
            assert len(rating["rating"].split(".")[1]) == 3  # "%.3f" as SRW writes its own
            assert 0.0 <= float(rating["rating"]) <= 1.0
    reading = read_judgments([str(out / "srw/web.implicit-judgments.json")], Sources(), 1)
    assert len(reading.rows) == len(rows) and not reading.not_judged  # on a 0..1 scale


def test_warm_start_reads_the_previous_curve(fitted, tmp_path):
    out, _, _ = fitted
    store = f"sqlite:///{out.parent / 'aggregates.db'}"
    again = run_clicks(load_config(environ={}, overrides={}),
                       ClicksRequest(store=store, out=tmp_path,
                                     warm_start=out / EXAMINATION_FILE))
    assert again["warm_start"] == str(out / EXAMINATION_FILE)
    assert again["iterations"] < 100


def test_an_empty_store_and_a_broken_warm_start_are_refused_by_name(fitted, tmp_path):
    config = load_config(environ={}, overrides={})
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    open_store(empty).close()
    with pytest.raises(ClicksError, match="holds no per-query aggregates"):
        run_clicks(config, ClicksRequest(store=empty, out=tmp_path))
    broken = tmp_path / "broken.json"
    broken.write_text("[1, 2")
    store = f"sqlite:///{fitted[0].parent / 'aggregates.db'}"
    with pytest.raises(ClicksError, match=f"warm start {broken}: not an examination file"):
        run_clicks(config, ClicksRequest(store=store, out=tmp_path, warm_start=broken))


def _map_gamma(n: int, c: int, theta: float) -> float:
    low, high = 1e-9, min(1.0, 1 / theta) - 1e-9
    for _ in range(100):
        gamma = (low + high) / 2
        excess = (gamma * (n + click_model.PRIOR) - c - click_model.PRIOR * click_model.PRIOR_MEAN
                  - (n - c) * gamma * (1 - theta) / (1 - theta * gamma))
        low, high = (low, gamma) if excess > 0 else (gamma, high)
    return gamma


def test_pooling_ranks_by_debiased_relevance_and_flags_position_bias():
    """A at position 1 clicked 40 of 100 times (γ 0.4), B at 2 25 of 100 (γ 0.25/0.5 = 0.5),
    C at 3 20 of 100 (γ 0.2/0.25 = 0.8): raw clicks rank A, B, C; debiased C, B, A. A took all
    its clicks at position 1 and is below the median γ: clicked because it sits first."""
    items = {"shown": {"A": 100, "B": 100, "C": 100},
             "clicked_documents": {"A": 40, "B": 25, "C": 20},
             "shown_at": {"1:A": 100, "2:B": 100, "3:C": 100},
             "clicked_at": {"1:A": 40, "2:B": 25, "3:C": 20}}
    pooled = pool("t1", "lamp", "web", items, {}, 10, np.array([1.0, 0.5, 0.25]))
    assert [p.document for p in pooled] == ["C", "B", "A"]
    # 0.8, 0.5, 0.4 by likelihood alone; γ's prior (0.1 pseudo-impressions at 0.5) moves each
    # to the root of γ(n + 0.1) = c + (n − c)·γ(1 − θ)/(1 − θγ) + 0.05, found by bisection
    expected = [round(_map_gamma(n=100, c=c, theta=t), 3) for c, t in ((20, 0.25), (25, 0.5),
                                                                       (40, 1.0))]
    assert expected == [0.795, 0.5, 0.4]
    assert [p.implicit_relevance for p in pooled] == expected
    assert [p.position_bias for p in pooled] == [False, False, True]
    assert pooled[0].sources == "shown+clicked+implicit"
    without = pool("t1", "lamp", "web", items, {}, 10)  # no curve: raw order, no signals
    assert [p.document for p in without] == ["A", "B", "C"]
    assert {p.implicit_relevance for p in without} == {None}
    # fewer impressions than clicks.min_impressions: no estimate
    assert {p.implicit_relevance for p in pool("t1", "lamp", "web", items, {}, 10,
                                                np.array([1.0, 0.5, 0.25]), 101)} == {None}


def test_the_feedback_job_pools_with_the_curve(fitted, tmp_path):
    out, _, _ = fitted
    store = f"sqlite:///{out.parent / 'aggregates.db'}"
    request = FeedbackRequest(store=store, out=tmp_path / "feedback",
                              examination=str(out / EXAMINATION_FILE))
    summary = run_feedback(load_config(environ={}, overrides={}), request)
    assert summary["examination_curves"] == ["web"]
    pooled = list(csv.DictReader((tmp_path / "feedback/pool.csv").open()))
    assert pooled and summary["pooled_by_implicit_relevance"] > 0
    assert summary["position_biased_documents"] == sum(r["position_bias"] == "True"
                                                       for r in pooled)
    for _, rows in groupby(pooled, key=lambda r: r["topic"]):
        relevance = [float(r["implicit_relevance"]) for r in rows if r["implicit_relevance"]]
        assert relevance == sorted(relevance, reverse=True)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(FeedbackError, match=f"examination {broken}: "):
        run_feedback(load_config(environ={}, overrides={}),
                     FeedbackRequest(store=store, out=tmp_path / "f2", examination=str(broken)))
