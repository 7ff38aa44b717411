"""Recording and alerting rules, built from `alerts.config`: one expression builder per alert,
one module per rule group, named like its promtool test file in alerts/tests/ (quality,
judged, experiments, traffic, pipeline); the recording rules they share in recordings.py.

Recording rules are named `level:metric:operations` and generated on first use, so each one has
a consumer (an alert, another recording rule, or the dashboards' headline row). Every ratio divides
a summed numerator by a summed denominator (never an average of ratios), and a zero denominator
gives no sample (no data) instead of NaN or 0.
"""

from __future__ import annotations

from typing import Any

from alerts.config import NEEDS_TRACKING, AlertRow, Profile, seconds
from alerts.rules import experiments, judged, pipeline, quality, traffic  # register builders
from alerts.rules.recordings import (
    BUILDERS,
    HEADLINE_COUNTS,
    PANELS,
    Built,
    Recordings,
    Rule,
    count_name,
    derivation,
)
from collector import definitions as d
from collector.errors import ConfigError
from collector.series.experiment_stats import RATES

__all__ = ["PANELS", "Recordings", "alert_rule", "count_name", "derivation", "rule_groups"]
# the rule groups, one module each: importing them registers their builders in BUILDERS
RULE_GROUPS = (quality, judged, experiments, traffic, pipeline)


GROUPS = {"traffic": "searchpulse-traffic", "quality": "searchpulse-quality",
          "pipeline": "searchpulse-pipeline"}


def alert_rule(profile: Profile, row: AlertRow, built: Built) -> Rule:
    panel = f"{profile.deployment.grafana_base}/d/{built.dashboard}?viewPanel={PANELS[built.panel]}"
    if built.per_application:
        panel += "&var-application={{ $labels.application }}"
    hold = profile.duration(row.for_)
    labels = {"severity": row.severity, "service": "searchpulse", "kind": built.kind}
    if built.needs_tracking:
        labels.update([NEEDS_TRACKING])
    return {
        "alert": row.name,
        "expr": built.expr,
        **({"for": hold} if seconds(hold) else {}),  # `for: 0s` is Prometheus' default
        "keep_firing_for": profile.duration(row.keep_firing_for),
        "labels": labels,
        "annotations": {
            "summary": built.summary,
            "description": built.description,
            "runbook_url": f"{profile.deployment.runbook_base}#{row.name.lower()}",
            "dashboard_url": panel,
        },
    }


def rule_groups(profile: Profile) -> dict[str, Any]:
    rec = Recordings(profile)
    for count in HEADLINE_COUNTS:
        rec.count("application", count, profile.windows.page_short)
    rec.interleaving(profile.windows.page_long)  # the experiments dashboard's verdict
    # every experiment rate per variant with its always-valid interval and its difference from
    # the control, since the collector started, for the experiments dashboard (the guardrails'
    # fixed-horizon differences over their ticket window: their alerts add them)
    for rate in RATES:
        rec.always_valid(rate)
        rec.always_valid_difference(rate)
    for rate in (d.CLICKS_PER_SEARCH, d.DEBIASED_CLICKS_PER_SEARCH):
        rec.variant_ratio(rate.ratio, profile.windows.page_long)  # the experiments dashboard's IPS
    alerts: dict[str, list[Rule]] = {group: [] for group in GROUPS.values()}
    for row in profile.alerts:
        if row.name not in BUILDERS:
            raise ConfigError(f"alert {row.name}: no expression builder in alerts/rules/")
        built = BUILDERS[row.name](profile, row, rec)
        alerts[GROUPS[built.kind]].append(alert_rule(profile, row, built))
    return {"groups": [{"name": "searchpulse-recording", "rules": list(rec.rules.values())},
                       *({"name": name, "rules": rules} for name, rules in alerts.items())]}
