"""Panel builders with the house rules applied once: the `$datasource`, `$job` and `$instance`
variables (grafana/dashboard-linter's rules), a unit and a description on every panel, refIds
A, B, …, fixed ids (alerts link to them), thresholds drawn on time series, read-only boards."""

from __future__ import annotations

from grafana_foundation_sdk.builders import (
    common,
    dashboard,
    prometheus,
    stat,
    table,
    timeseries,
)
from grafana_foundation_sdk.models.common import AxisPlacement, GraphThresholdsStyleMode
from grafana_foundation_sdk.models.dashboard import (
    DashboardLinkType,
    DataSourceRef,
    DynamicConfigValue,
    GridPos,
    Threshold,
    ThresholdsMode,
    VariableRefresh,
)

from collector.definitions import BUILD_INFO, SEARCHES

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
                 steps: dashboard.ThresholdsConfig | None = None,
                 right_axis: tuple[str, str] | None = None):
    """A time series; `steps` are drawn as lines; `right_axis` = (series name, its unit)."""
    panel = (timeseries.Panel().id(panel_id).title(title).description(description).unit(unit)
             .datasource(DATASOURCE).grid_pos(GridPos(*pos)))
    if steps is not None:
        panel = panel.thresholds(steps).thresholds_style(
            common.GraphThresholdsStyleConfig().mode(GraphThresholdsStyleMode.LINE))
    if right_axis is not None:
        name, axis_unit = right_axis
        panel = panel.override_by_name(name, [
            DynamicConfigValue("custom.axisPlacement", AxisPlacement.RIGHT),
            DynamicConfigValue("unit", axis_unit)])
    return _targets(panel, queries)


def table_panel(panel_id: int, title: str, description: str, unit: str, expr: str,
                pos: tuple[int, int, int, int]):
    panel = (table.Panel().id(panel_id).title(title).description(description).unit(unit)
             .datasource(DATASOURCE).grid_pos(GridPos(*pos)))
    return _targets(panel, [(expr, "{{query}}")], instant=True)


def _query_variable(name: str, query: str, all_value: str):
    """Multi-select, "All", refreshed when the time range changes (a new collector appears)."""
    return (dashboard.QueryVariable(name).label(name.title()).datasource(DATASOURCE).query(query)
            .multi(True).include_all(True).all_value(all_value)
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED))


def scope_variables(board):
    """`datasource`, `job` and `instance`: which Prometheus, which collectors (every board)."""
    return (board
            .with_variable(dashboard.DatasourceVariable("datasource").label("Data source")
                           .type("prometheus"))
            .with_variable(_query_variable("job", f"label_values({BUILD_INFO.name}, job)",
                                           ".+"))
            .with_variable(_query_variable(
                "instance", f'label_values({BUILD_INFO.name}{{job=~"$job"}}, instance)', ".+")))


def variables(board):
    """The scope, then `application` and `stratum`, as every quality dashboard has them."""
    return (scope_variables(board)
            .with_variable(_query_variable(
                "application", f'label_values({SEARCHES.name}{{job=~"$job",'
                'instance=~"$instance"}, application)', ".*"))
            .with_variable(dashboard.CustomVariable("stratum").label("Stratum")
                           .values("head,torso,tail,known_item").multi(True).include_all(True)
                           .all_value(".*")))


def board(uid: str, title: str, description: str):
    """A read-only dashboard: provisioning forbids UI changes, so the editor is not offered."""
    return (dashboard.Dashboard(title).uid(uid).description(description).tags(["searchpulse"])
            .readonly())


def link(title: str, uid: str):
    return (dashboard.DashboardLink(title).type(DashboardLinkType.LINK)
            .url(f"/d/{uid}").include_vars(True).keep_time(True))
