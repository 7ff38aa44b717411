"""The alerting rules one rule group builds for a profile, by (alert, severity): what the rule
groups' tests read."""

from __future__ import annotations

from typing import Any

from alerts.config import Profile
from alerts.rules import rule_groups


def alerts_of(profile: Profile, group: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The alerts of the rule group named ``group`` (e.g. ``searchpulse-pipeline``)."""
    (rules,) = [g["rules"] for g in rule_groups(profile)["groups"] if g["name"] == group]
    return {(rule["alert"], rule["labels"]["severity"]): rule for rule in rules}
