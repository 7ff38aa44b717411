"""The click model's curves in the collector: IPS-weighted clicks with exact values (clip,
positions beyond the curve, unknown positions, duplicates, unidentified curves), the curve on
/metrics with bounded labels, reloads, and errors that name the setting."""

from __future__ import annotations

import json
import os
import re

import pytest

from collector import watched_file
from collector.config import ConfigError, load_config
from collector.replay import exposition
from collector.series.examination import ExaminationFile, parse
from tests.conftest import examination_file


def _debiased(e) -> dict[str, float]:
    totals: dict[str, float] = {}
    for s in e.view().series:
        if s.debiased_clicks:
            totals[s.application] = totals.get(s.application, 0.0) + s.debiased_clicks
    return totals


def _clicks(ubi, qid: str, at: float, client: str, app: str = "web") -> list[bytes]:
    """A search and clicks at positions 1, 2, 3, 4 and one without a position."""
    return [ubi.query(qid, "lamp", at, client=client, app=app,
                      hits=[f"d{i}" for i in range(1, 5)]),
            *(ubi.click(qid, at + k, position=k, obj=f"d{k}", client=client)
              for k in (1, 2, 3, 4)),
            ubi.event(qid, "click", at + 5, None, client=client, obj="d9")]


def test_clicks_are_weighted_by_their_position_and_clipped(ubi, engine, tmp_path):
    path = examination_file(tmp_path, {"web": [1.0, 0.5, 0.05]})
    e = engine([*_clicks(ubi, "q1", 0, "c1"),
                ubi.click("q1", 9, position=2, obj="d2", client="c1")],  # a second click
               **{"clicks.examination_file": str(path)})
    # 1/1 + 1/0.5 + min(1/0.05, 10) + the same click at 2 again; position 4 is beyond the
    # curve and the last click has no position: no weight
    assert _debiased(e) == {"web": 1.0 + 2.0 + 10.0 + 2.0}
    clipped = engine(_clicks(ubi, "q1", 0, "c1"),
                     **{"clicks.examination_file": str(path), "clicks.max_weight": 4})
    assert _debiased(clipped) == {"web": 1.0 + 2.0 + 4.0}


def test_a_duplicate_click_is_weighted_once(ubi, engine, tmp_path):
    path = examination_file(tmp_path, {"web": [1.0, 0.5]})
    click = ubi.click("q1", 1, position=2, obj="d2")
    e = engine([ubi.query("q1", "lamp", 0), click, click],
               **{"clicks.examination_file": str(path)})
    assert _debiased(e) == {"web": 2.0}


def test_only_identified_curves_weigh_clicks(ubi, engine, tmp_path):
    path = tmp_path / "examination.json"
    path.write_text(json.dumps({"applications": {
        "web": {"examination": [1.0, 0.5], "identified": False, "impressions": 5},
        "mobile": {"examination": [1.0, 0.25], "identified": True, "impressions": 9}}}))
    e = engine([*_clicks(ubi, "q1", 0, "c1"), *_clicks(ubi, "q2", 10, "c2", app="mobile"),
                *_clicks(ubi, "q3", 20, "c3", app="shop")],
               **{"clicks.examination_file": str(path)})
    assert _debiased(e) == {"mobile": 1.0 + 4.0}
    text = exposition(e).decode()
    assert ('searchpulse_examination_probability{application="web",identified="false",'
            'position="2"} 0.5') in text
    assert ('searchpulse_examination_probability{application="mobile",identified="true",'
            'position="2"} 0.25') in text
    assert re.search(r'\nsearchpulse_debiased_clicks_total\{application="mobile",'
                     r'stratum="\w+",variant="none"\} 5.0\n', text)
    assert "searchpulse_debiased_clicks_total{application=\"web\"" not in text


def test_the_curve_labels_are_bounded():
    body = json.dumps({"applications": {
        f"app{i}": {"examination": [1.0] + [0.5] * 40, "identified": True, "impressions": i}
        for i in range(30)}})
    examination = parse(body, max_weight=10, max_applications=3, max_depth=10)
    assert sorted(examination.curves) == ["app27", "app28", "app29"]  # the most shown
    assert {len(curve) for curve in examination.curves.values()} == {10}


@pytest.mark.parametrize(("body", "message"), [
    ("[1, 2", "examination.json: Expecting ',' delimiter"),
    ('{"model": "x"}', "no applications"),
    ('{"applications": {"web": {"examination": [1, -0.5]}}}',
     "application 'web', position 2: θ must be a number > 0, not -0.5"),
    ('{"applications": {"web": {"examination": [1, "NaN"]}}}', "not 'NaN'"),
    ('{"applications": {"web": {}}}', "application 'web': no examination curve"),
])
def test_a_broken_file_names_the_setting(tmp_path, body, message):
    path = tmp_path / "examination.json"
    path.write_text(body)
    with pytest.raises(ConfigError, match=r"^clicks.examination_file: .*" + message):
        ExaminationFile.from_config(load_config(
            environ={}, overrides={"clicks.examination_file": str(path)}))


def test_the_curve_is_reloaded_on_change(ubi, engine, tmp_path, monkeypatch):
    monkeypatch.setattr(watched_file, "RELOAD_CHECK_S", 0.0)
    path = examination_file(tmp_path, {"web": [1.0, 0.5]})
    watched = ExaminationFile(str(path), 10.0, 10, 10)
    assert watched.current().weights == {"web": (1.0, 2.0)}
    examination_file(tmp_path, {"web": [1.0, 0.25]})
    os.utime(path, (1, 2_000_000_000))
    assert watched.current().weights == {"web": (1.0, 4.0)}
    path.write_text("{")  # broken: the last good curve stays
    os.utime(path, (1, 2_000_000_100))
    assert watched.current().weights == {"web": (1.0, 4.0)}
