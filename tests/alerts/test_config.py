"""alerts/config.py: a profile that would page or ticket on the wrong windows, or split an
experiment's traffic impossibly, is refused naming the setting, since alerts built from it would
fire on the wrong evidence."""

from __future__ import annotations

from dataclasses import replace

import pytest

from alerts.config import ALERTS as ALERT_ROWS
from alerts.config import AlertRow, ConfigError, Profile, Windows, load_profile


def test_a_ticket_on_paging_windows_must_say_why():
    loud = AlertRow("SearchClickThroughRateDrop", "warning", "page", "ticket_for")
    with pytest.raises(ConfigError, match="SearchClickThroughRateDrop.*unless windows_because"):
        Profile(alerts=(*ALERT_ROWS[:3], loud))
    stated = replace(loud, windows_because="tested")
    assert Profile(alerts=(stated,)).alerts == (stated,)
    with pytest.raises(ConfigError, match="page_short"):
        Profile(windows=Windows(page_short="1h", page_long="1h"))


def test_a_malformed_split_is_refused_naming_the_key():
    for value, problem in (("control=0.5,treatment=0.6", "sum to 1.1"),
                           ("control", "VARIANT=SHARE"), ("control=1", "two variants")):
        with pytest.raises(ConfigError, match=f"experiments.split.*{problem}"):
            load_profile(overrides={"experiments.split": value}, environ={})
