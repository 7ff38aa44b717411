"""Dashboards: regenerated output equals the committed JSON, and the lint rules Grafana's
dashboard-linter would check (it cannot be installed here) hold for every panel."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from alerts.build import GENERATED as ALERTS_GENERATED
from dashboards.build import GENERATED, render

BOARDS = {path.stem: json.loads(path.read_text()) for path in GENERATED.glob("*.json")}
COUNTER = re.compile(r"\b(searchpulse_\w+_total|searchpulse_\w+_(?:bucket|count|sum))\b")


def targets(board):
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            yield panel, target["expr"]


def test_committed_json_is_regenerated_exactly():
    assert render() == BOARDS, "dashboards/generated is stale: run `make generate` and commit"


def test_uids_are_fixed_unique_and_schema_is_pinned():
    uids = [board["uid"] for board in BOARDS.values()]
    assert sorted(uids) == ["searchpulse-collector", "searchpulse-experiments",
                            "searchpulse-overview"]
    assert {board["schemaVersion"] for board in BOARDS.values()} == {41}


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_every_panel_follows_the_house_rules(name):
    board = BOARDS[name]
    variables = {v["name"] for v in board["templating"]["list"]}
    assert "datasource" in variables
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["title"] and panel["description"], panel["id"]
        assert panel["fieldConfig"]["defaults"].get("unit"), panel["title"]
    exprs = [expr for _, expr in targets(board)]
    assert any("$__rate_interval" in expr for expr in exprs)
    for expr in exprs:
        for match in COUNTER.finditer(expr):  # counters only inside rate() / increase()
            before = expr[: match.start()]
            assert re.search(r"(rate|increase)\($", before), (expr, match.group())
    if name != "collector-health":
        assert {"application", "stratum"} <= variables


def test_every_alert_links_to_an_existing_panel():
    groups = yaml.safe_load((ALERTS_GENERATED / "searchpulse-rules.yml").read_text())["groups"]
    panels = {board["uid"]: {p["id"] for p in board["panels"]} for board in BOARDS.values()}
    for rule in (r for g in groups for r in g["rules"] if "alert" in r):
        url = rule["annotations"]["dashboard_url"]
        uid, panel = re.search(r"/d/([\w-]+)/[\w-]+\?viewPanel=(\d+)", url).groups()
        assert int(panel) in panels[uid], (rule["alert"], url)
