"""Panel builders with the house rules applied once: the `$datasource` variable, a unit and a
description on every panel, refIds A, B, …, fixed ids (alerts link to them)."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard, prometheus, stat, table, timeseries
from grafana_foundation_sdk.models.dashboard import (
    DashboardLinkType,
    DataSourceRef,
    GridPos,
    Threshold,
    ThresholdsMode,
)

DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
# Grid positions are (height, width, x, y), Grafana's 24-column grid.


def _targets(panel, queries: list[tuple[str, str]], instant: bool = False):
    for i, (expr, legend) in enumerate(queries):
        target = prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(chr(65 + i))
        if instant:
            target = target.instant().format("table")
        panel = panel.with_target(target)
    return panel


def thresholds(*steps: tuple[float | None, str]) -> dashboard.ThresholdsConfig:
    return (dashboard.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE)
            .steps([Threshold(value=v, color=c) for v, c in steps]))


def stat_panel(panel_id: int, title: str, description: str, unit: str, expr: str,
               pos: tuple[int, int, int, int], steps: dashboard.ThresholdsConfig | None = None):
    panel = (stat.Panel().id(panel_id).title(title).description(description).unit(unit)
             .datasource(DATASOURCE).grid_pos(GridPos(*pos)))
    if steps is not None:
        panel = panel.thresholds(steps)
    return _targets(panel, [(expr, title)])


def series_panel(panel_id: int, title: str, description: str, unit: str,
                 queries: list[tuple[str, str]], pos: tuple[int, int, int, int],
                 steps: dashboard.ThresholdsConfig | None = None):
    panel = (timeseries.Panel().id(panel_id).title(title).description(description).unit(unit)
             .datasource(DATASOURCE).grid_pos(GridPos(*pos)))
    if steps is not None:
        panel = panel.thresholds(steps)
    return _targets(panel, queries)


def table_panel(panel_id: int, title: str, description: str, unit: str, expr: str,
                pos: tuple[int, int, int, int]):
    panel = (table.Panel().id(panel_id).title(title).description(description).unit(unit)
             .datasource(DATASOURCE).grid_pos(GridPos(*pos)))
    return _targets(panel, [(expr, "{{query}}")], instant=True)


def variables(board):
    """`datasource`, `application` and `stratum`, as every searchpulse dashboard has them."""
    return (board
            .with_variable(dashboard.DatasourceVariable("datasource").label("Data source")
                           .type("prometheus"))
            .with_variable(dashboard.QueryVariable("application").label("Application")
                           .datasource(DATASOURCE)
                           .query("label_values(searchpulse_searches_total, application)")
                           .multi(True).include_all(True).all_value(".*"))
            .with_variable(dashboard.CustomVariable("stratum").label("Stratum")
                           .values("head,torso,tail,known_item").multi(True).include_all(True)
                           .all_value(".*")))


def link(title: str, uid: str):
    return (dashboard.DashboardLink(title).type(DashboardLinkType.LINK)
            .url(f"/d/{uid}").include_vars(True).keep_time(True))
