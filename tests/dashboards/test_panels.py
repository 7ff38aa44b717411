"""dashboards/panels.py: the panel builders apply the house rules once — the `$datasource`
data source, refIds A, B, … in order, the fixed id and grid position given, thresholds drawn as
lines on time series, a right axis by series name, instant tables, the scope variables on every
board and read-only boards — since every generated dashboard and dashboard-linter's rules rest
on them."""

from __future__ import annotations

from dashboards import panels
from tests.dashboards.grafana import as_json

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def test_a_time_series_draws_its_thresholds_and_puts_a_series_on_the_right() -> None:
    panel = as_json(panels.series_panel(
        7, "CTR", "clicked / shown", "percentunit", [("a_expr", "web"), ("b_expr", "latency")],
        (8, 12, 0, 4), steps=panels.thresholds((None, "green"), (0.2, "red")),
        right_axis=("latency", "s")))
    assert (panel["type"], panel["id"], panel["title"], panel["description"]) == (
        "timeseries", 7, "CTR", "clicked / shown")
    assert panel["datasource"] == DATASOURCE
    assert panel["gridPos"] == {"h": 8, "w": 12, "x": 0, "y": 4}
    assert panel["targets"] == [{"expr": "a_expr", "legendFormat": "web", "refId": "A"},
                                {"expr": "b_expr", "legendFormat": "latency", "refId": "B"}]
    defaults = panel["fieldConfig"]["defaults"]
    assert defaults["unit"] == "percentunit"
    assert defaults["custom"]["thresholdsStyle"] == {"mode": "line"}
    assert defaults["thresholds"] == {"mode": "absolute", "steps": [
        {"color": "green", "value": None}, {"color": "red", "value": 0.2}]}
    assert panel["fieldConfig"]["overrides"] == [{
        "matcher": {"id": "byName", "options": "latency"},
        "properties": [{"id": "custom.axisPlacement", "value": "right"},
                       {"id": "unit", "value": "s"}]}]


def test_a_time_series_without_steps_draws_no_threshold() -> None:
    panel = as_json(panels.series_panel(1, "t", "d", "none", [("x", "x")], (1, 1, 0, 0)))
    assert "thresholdsStyle" not in panel["fieldConfig"]["defaults"].get("custom", {})
    assert panel["fieldConfig"]["overrides"] == []


def test_a_stat_is_titled_by_its_one_query() -> None:
    panel = as_json(panels.stat_panel(2, "Searches/s", "all searches", "reqps", "sum(x)",
                                    (4, 6, 6, 0)))
    assert panel["type"] == "stat" and panel["datasource"] == DATASOURCE
    assert panel["targets"] == [{"expr": "sum(x)", "legendFormat": "Searches/s", "refId": "A"}]


def test_a_table_is_an_instant_query_per_query_label() -> None:
    panel = as_json(panels.table_panel(3, "Top", "top queries", "none", "topk(10, x)",
                                     (8, 24, 0, 12)))
    assert panel["type"] == "table"
    assert panel["targets"] == [{"expr": "topk(10, x)", "format": "table", "instant": True,
                                 "legendFormat": "{{query}}", "range": False, "refId": "A"}]


def test_a_quality_board_is_read_only_with_its_scope_and_filters() -> None:
    board = as_json(panels.variables(panels.board("sp-uid", "Title", "What it shows"))
                  .link(panels.link("Other", "sp-other")))
    assert (board["uid"], board["title"], board["tags"], board["editable"]) == (
        "sp-uid", "Title", ["searchpulse"], False)
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert list(variables) == ["datasource", "job", "instance", "application", "stratum"]
    assert variables["datasource"]["query"] == "prometheus"
    assert variables["job"]["query"] == "label_values(searchpulse_build_info, job)"
    assert variables["instance"]["query"] == \
        'label_values(searchpulse_build_info{job=~"$job"}, instance)'
    assert [(v["multi"], v["includeAll"], v["allValue"], v["refresh"])
            for name, v in variables.items() if name in ("job", "instance")] == \
        [(True, True, ".+", 2)] * 2  # refreshed when the time range changes
    assert variables["application"]["allValue"] == ".*"
    assert variables["stratum"]["query"] == "head,torso,tail,known_item"
    assert board["links"][0]["url"] == "/d/sp-other"
    assert board["links"][0]["includeVars"] and board["links"][0]["keepTime"]


def test_a_pipeline_board_has_only_the_scope() -> None:
    board = as_json(panels.scope_variables(panels.board("u", "t", "d")))
    assert [v["name"] for v in board["templating"]["list"]] == ["datasource", "job", "instance"]
