"""collector/sources/simulator/spec.py: the spec's small languages (incidents, automated
clients, tracking outages, lulls, durations) parse to exact numbers and refuse a malformed text
naming what was expected, and the diurnal profile has its documented shape, since every
``simulate``/``demo`` flag and every simulated run is read through them."""

from __future__ import annotations

import math
import re

import pytest

from collector.sources.simulator.spec import (
    APPLICATIONS,
    Bot,
    Incident,
    SimulationSpec,
    TrackingOutage,
    known_application,
    parse_duration,
    parse_lull,
    traffic_share,
)


@pytest.mark.parametrize(("text", "seconds"), [
    ("90", 90.0), ("250ms", 0.25), ("30s", 30.0), ("10m", 600.0), ("1.5h", 5400.0),
    ("2d", 172800.0), (" 5m ", 300.0),
])
def test_durations_in_every_unit(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "-5m", "5 m", "5w"])
def test_a_bad_duration_names_the_units(text: str) -> None:
    message = f"duration {text!r}: expected a number with unit ms, s, m, h or d"
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_duration(text)


def test_a_lull_is_a_start_and_a_duration() -> None:
    assert parse_lull("10m+20m") == (600.0, 1200.0)
    with pytest.raises(ValueError, match="lull '10m': expected START"):
        parse_lull("10m")


def test_an_incident_and_its_window() -> None:
    incident = Incident.parse("zero_results@web:x5:30m+10m")
    assert incident == Incident("zero_results", 5.0, 1800.0, 600.0, "web")
    assert incident.active(1800, "web") and incident.active(2399.9, "web")
    assert not incident.active(2400, "web") and not incident.active(1799, "web")
    assert not incident.active(2000, "mobile")
    everywhere = Incident.parse("latency:x2.5:0+1h")
    assert everywhere.application is None and everywhere.active(10, "legacy")
    with pytest.raises(ValueError, match="KIND one of zero_results, known_item_zero_results"):
        Incident.parse("outage:x5:30m+10m")


@pytest.mark.parametrize(("text", "bot"), [
    ("crawler@web:25/m:0+3h", Bot("crawler", "web", 1, 25 / 60, 0.0, 10800.0)),
    ("monitor@web:1/m", Bot("monitor", "web", 1, 1 / 60)),
    ("fleet@mobile:25x4/m:1h+1h", Bot("fleet", "mobile", 25, 4 / 60, 3600.0, 3600.0)),
    ("monitor@opensearch:2/h:id=uptime-eu1", Bot("monitor", "opensearch", 1, 2 / 3600,
                                                  client_id="uptime-eu1")),
    ("crawler@legacy:0.5/s", Bot("crawler", "legacy", 1, 0.5)),
])
def test_an_automated_client(text: str, bot: Bot) -> None:
    assert Bot.parse(text) == bot


@pytest.mark.parametrize(("text", "message"), [
    ("crawler@web:25", "expected KIND@APP:[CLIENTSx]RATE/UNIT"),
    ("spider@web:25/m", "unknown kind 'spider', expected one of crawler, monitor, fleet"),
    ("crawler@shop:25/m", "unknown application 'shop', expected one of web, mobile"),
    ("crawler@web:0/m", "expected at least one client and a rate > 0"),
    ("fleet@web:0x4/m", "expected at least one client and a rate > 0"),
    ("fleet@web:2x4/m:id=one", "id= names one client, not 2"),
])
def test_a_bad_automated_client_says_why(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Bot.parse(text)


def test_a_bot_searches_from_its_start_through_its_window() -> None:
    windowed, forever = Bot.parse("crawler@web:1/s:1h+1h"), Bot.parse("crawler@web:1/s")
    assert [windowed.active(t) for t in (3599, 3600, 7199, 7200)] == [False, True, True, False]
    assert forever.duration_s is None and forever.active(0) and forever.active(10**9)


def test_a_tracking_outage_hides_only_its_application_in_its_window() -> None:
    outage = TrackingOutage.parse("web:30m+10m")
    assert outage == TrackingOutage("web", 1800.0, 600.0)
    assert [outage.hides("web", t) for t in (1799, 1800, 2399, 2400)] == [
        False, True, True, False]
    assert not outage.hides("mobile", 2000)
    expected = re.escape("expected APP:START+DURATION, e.g. web:30m+10m")
    for text in ("web", "web:10m", "web:soon+1m"):
        with pytest.raises(ValueError, match=expected):
            TrackingOutage.parse(text)
    with pytest.raises(ValueError, match="unknown application 'shop'"):
        TrackingOutage.parse("shop:1m+1m")


def test_known_applications_are_the_simulators() -> None:
    assert APPLICATIONS == ("web", "mobile", "legacy", "opensearch")
    assert known_application("legacy", "x") == "legacy"
    with pytest.raises(ValueError, match="'web,shop': unknown application 'shop', expected "
                                         "one of web, mobile, legacy, opensearch"):
        known_application("shop", "web,shop")


@pytest.mark.parametrize(("settings", "message"), [
    ({"users": -1}, "users must be >= 0, got -1"),
    ({"user_click_sigma": -0.1}, "user-click-sigma must be >= 0, got -0.1"),
    ({"treatment_click_effect": 1.0}, "treatment-click-effect must be between -1 and 1"),
    ({"type_ahead": frozenset({"web", "shop"})}, "unknown application 'shop'"),
])
def test_an_impossible_spec_is_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        SimulationSpec(**settings)  # type: ignore[arg-type]


def test_the_diurnal_profile_is_quiet_at_night_and_peaks_at_three() -> None:
    hour = 3600
    assert traffic_share(0) == traffic_share(5.99 * hour) == 0.02  # 00:00 to 06:00
    assert traffic_share(6 * hour) == pytest.approx(0.02)
    assert traffic_share(15 * hour) == 1.0  # the peak
    assert traffic_share(10.5 * hour) == pytest.approx(0.02 + 0.98 * math.sin(math.pi / 4))
    assert traffic_share(86400 + 15 * hour) == 1.0  # every day alike
