"""Alertmanager routing: critical pages, warning makes a ticket; inhibition of derived alerts."""

from __future__ import annotations

from typing import Any

from alerts.config import NEEDS_TRACKING, TRACKING_ALERT, Deployment, Routing

# Alerts that explain every quality alert of the service: while one fires, quality alerts are
# symptoms, not news.
ROOT_CAUSES = ("SearchpulseCollectorDown", "SearchpulseCollectorAbsent", "SearchTrafficAbsent",
               "SearchpulseEventsStale")


def alertmanager_config(deployment: Deployment, routing: Routing) -> dict[str, Any]:
    return {
        "route": {
            "receiver": "ticket",
            "group_by": ["alertname", "service", "application"],
            "group_wait": routing.group_wait,
            "group_interval": routing.group_interval,
            "repeat_interval": routing.repeat_interval,
            "routes": [
                {"matchers": ['severity="critical"'], "receiver": "pager",
                 "repeat_interval": routing.page_repeat_interval},
                {"matchers": ['severity="warning"'], "receiver": "ticket"},
            ],
        },
        "inhibit_rules": [
            {"source_matchers": [f'alertname=~"{"|".join(ROOT_CAUSES)}"'],
             "target_matchers": ['kind="quality"'],
             "equal": ["service"]},
            {"source_matchers": ['severity="critical"'],
             "target_matchers": ['severity="warning"'],
             "equal": ["alertname", "service", "application"]},
            # broken tracking is an instrumentation incident: for the same application it mutes
            # every alert whose numbers rest on the front end's events (labelled by its builder)
            {"source_matchers": [f'alertname="{TRACKING_ALERT}"'],
             "target_matchers": ['{}="{}"'.format(*NEEDS_TRACKING)],
             "equal": ["service", "application"]},
        ],
        "receivers": [
            {"name": "pager",
             "webhook_configs": [{"url": deployment.pager_url, "send_resolved": True}]},
            {"name": "ticket",
             "webhook_configs": [{"url": deployment.ticket_url, "send_resolved": True}]},
        ],
    }
