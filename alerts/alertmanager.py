"""Alertmanager routing: critical pages, warning makes a ticket; inhibition of derived alerts."""

from __future__ import annotations

from typing import Any

# Alerts that explain every quality alert of the service: while one fires, quality alerts are
# symptoms, not news.
ROOT_CAUSES = ("SearchpulseCollectorDown", "SearchTrafficAbsent", "SearchpulseEventsStale")


def alertmanager_config(pager_url: str, ticket_url: str) -> dict[str, Any]:
    return {
        "route": {
            "receiver": "ticket",
            "group_by": ["alertname", "service", "application"],
            "group_wait": "30s",  # gather the first alerts of an incident into one page
            "group_interval": "5m",  # then at most one update per group every 5 minutes
            "repeat_interval": "4h",  # remind while it still fires
            "routes": [
                {"matchers": ['severity="critical"'], "receiver": "pager",
                 "repeat_interval": "1h"},
                {"matchers": ['severity="warning"'], "receiver": "ticket",
                 "repeat_interval": "12h"},
            ],
        },
        "inhibit_rules": [
            {"source_matchers": [f'alertname=~"{"|".join(ROOT_CAUSES)}"'],
             "target_matchers": ['kind="quality"'],
             "equal": ["service"]},
            {"source_matchers": ['severity="critical"'],
             "target_matchers": ['severity="warning"'],
             "equal": ["alertname", "service", "application"]},
        ],
        "receivers": [
            {"name": "pager", "webhook_configs": [{"url": pager_url, "send_resolved": True}]},
            {"name": "ticket", "webhook_configs": [{"url": ticket_url, "send_resolved": True}]},
        ],
    }
