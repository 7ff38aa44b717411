"""Dashboards: regenerated output equals the committed JSON, and the rules of Grafana's
dashboard-linter hold for every board, variable and target. The linter itself cannot be built
here (AGPL-only modules); its rules are read from its source (lint/rule_*.go) and checked with a
real PromQL parser, honouring the exclusions of its own `.lint` file."""

from __future__ import annotations

import json
import re

import promql_parser
import pytest
import yaml

from alerts.build import GENERATED as ALERTS_GENERATED
from alerts.config import Profile
from dashboards.build import GENERATED, render

BOARDS = {path.stem: json.loads(path.read_text()) for path in GENERATED.glob("*.json")}
COUNTER = re.compile(r"\b(searchpulse_\w+_total|searchpulse_\w+_(?:bucket|count|sum))\b")
EXCLUSIONS = yaml.safe_load((GENERATED / ".lint").read_text())["exclusions"]
# What Grafana would put in place of each variable (the linter does the same before parsing).
VARIABLES = {"$__rate_interval": "1m", "$job": ".+", "$instance": ".+", "$application": ".*",
             "$stratum": ".*"}


def selectors(node) -> list:
    """Every vector selector of a parsed PromQL expression (parser.ExtractSelectors)."""
    if isinstance(node, promql_parser.VectorSelector):
        return [node]
    if isinstance(node, promql_parser.MatrixSelector):
        return [node.vector_selector]
    if isinstance(node, promql_parser.BinaryExpr):
        return selectors(node.lhs) + selectors(node.rhs)
    if isinstance(node, promql_parser.Call):
        return [s for arg in node.args for s in selectors(arg)]
    if isinstance(node, promql_parser.AggregateExpr):
        return selectors(node.expr) + (selectors(node.param) if node.param else [])
    if isinstance(node, promql_parser.ParenExpr | promql_parser.UnaryExpr
                  | promql_parser.SubqueryExpr):
        return selectors(node.expr)
    return []


def parse(expr: str):
    for variable, value in VARIABLES.items():
        expr = expr.replace(variable, value)
    return promql_parser.parse(expr)


def excluded(rule: str, board: dict, panel: dict) -> bool:
    return any(entry["dashboard"] == board["title"] and entry["panel"] == panel["title"]
               for entry in EXCLUSIONS.get(rule, {}).get("entries", []))


def targets(board):
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            yield panel, target["expr"]


def test_committed_json_is_regenerated_exactly():
    assert render(Profile()) == BOARDS, \
        "dashboards/generated is stale: run `make generate` and commit"


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


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_dashboard_linter_template_rules(name):
    """template-datasource/job/instance-rule, template-on-time-change-reload, uneditable."""
    board = BOARDS[name]
    templates = {v["name"]: v for v in board["templating"]["list"]}
    assert templates["datasource"]["type"] == "datasource"
    assert templates["datasource"]["query"] == "prometheus"
    for variable in ("job", "instance"):
        template = templates[variable]
        assert template["datasource"]["uid"] in ("$datasource", "${datasource}")
        assert template["type"] == "query"
        assert template["label"] == variable.title()
        assert template["multi"] is True
        assert template["allValue"] == ".+"
    for template in templates.values():
        if template["type"] == "query":
            assert template["refresh"] == 2, template["name"]  # on time range change
            assert re.fullmatch(r"label_values\((.+), (\w+)\)", template["query"])
            parse(re.fullmatch(r"label_values\((.+), \w+\)", template["query"]).group(1))
    assert board["editable"] is False


@pytest.mark.parametrize("rule", ["job", "instance"])
@pytest.mark.parametrize("name", sorted(BOARDS))
def test_dashboard_linter_target_matcher_rules(name, rule):
    """target-job-rule / target-instance-rule: every selector has `label=~"$label"`, except
    in the panels `.lint` excludes, whose every selector must be a recorded series or ALERTS."""
    board = BOARDS[name]
    for panel, expr in targets(board):
        found = selectors(parse(expr))
        assert found, expr
        missing = [s for s in found
                   if not any(m.name == rule and m.op == promql_parser.MatchOp.Re
                              and m.value == VARIABLES[f"${rule}"] for m in s.matchers.matchers)]
        if excluded(f"target-{rule}-rule", board, panel):
            assert missing and all(":" in s.name or s.name == "ALERTS" for s in missing), \
                (panel["title"], "a stale .lint exclusion")
        else:
            assert not missing, (panel["title"], [s.name for s in missing])


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_dashboard_linter_rate_interval_rule(name):
    for panel, expr in targets(BOARDS[name]):
        for window in re.findall(r"\b(?:rate|increase)\([^\[]*\[([^\]]+)\]", expr):
            assert window == "$__rate_interval", (panel["title"], expr)


def test_time_series_draw_their_thresholds_and_mrr_has_its_own_axis():
    for board in BOARDS.values():
        for panel in board["panels"]:
            defaults = panel["fieldConfig"]["defaults"]
            if panel["type"] == "timeseries" and "thresholds" in defaults:
                assert defaults["custom"]["thresholdsStyle"] == {"mode": "line"}, panel["title"]
    mrr = next(p for p in BOARDS["overview"]["panels"] if p["title"].endswith("and MRR"))
    override = mrr["fieldConfig"]["overrides"][0]
    assert override["matcher"] == {"id": "byName", "options": "MRR"}
    assert {p["id"]: p["value"] for p in override["properties"]} == \
        {"custom.axisPlacement": "right", "unit": "none"}
    assert [t["legendFormat"] for t in mrr["targets"]][1] == "MRR"
