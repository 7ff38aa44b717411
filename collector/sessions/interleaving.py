"""Team-draft interleaving credit from UBI clicks.

In a team-draft interleaved search each shown document belongs to the team (search
configuration) that drafted it; a click carries it in its object's attributes:
``event_attributes.object.search_config`` (the OpenSearch UBI data generator, Chorus),
``search_configuration_uuid`` (SRW's interleaving UI) or ``_search_configuration_id`` (SRW's
hits). Per interleaved search, over its attribution window (the clicks CTR counts):

* the team with more clicks **wins**; equal clicks (at least one each) is a **tie**;
* a search with no team-tagged click expresses no preference and is not counted;
* a click without a team on a search that already has a team-tagged click is **unattributed**:
  counted, credited to no team (clicks before the first tagged one cannot be told apart from a
  search that is not interleaved, and are not counted);
* duplicate clicks (same fingerprint) are counted once, as everywhere.

Exposed per (application, stratum, variant) series: wins per team, ties, unattributed clicks.
For two teams A and B, Δ_AB = (wins_A + ties/2) / (wins_A + wins_B + ties) − 0.5 (Chapelle et
al. 2012); its 95 % interval, clustered by client over the unit buckets, is
``experiment_stats.interleaving_preference`` and the recording rules of alerts/rules/recordings.py.
"""

from __future__ import annotations

from typing import Any

from collector.ingest.events import EventObject

TEAM_CAP = 8  # teams per series; more are counted as "other"
UNTAGGED = ""


def team_of(obj: EventObject, configured: bool = False) -> str | None:
    """The team of a clicked result: with ``configured``, the attribute
    ``events.team_attribute`` names first (decoded as ``obj.team``); then each producer's."""
    team = obj.team if configured else None  # type: ignore[attr-defined]
    if team is None:
        team = obj.search_config
    if team is None:
        team = obj.search_configuration_uuid
        if team is None:
            team = obj.search_configuration_id
    return None if team is None else str(team)


def outcome(teams: dict[str, int]) -> tuple[str | None, int]:
    """(winning team, or None for a tie; unattributed clicks) of one search's team clicks."""
    unattributed = teams.get(UNTAGGED, 0)
    ranked = sorted(((clicks, team) for team, clicks in teams.items() if team != UNTAGGED),
                    reverse=True)
    if len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
        return None, unattributed
    return ranked[0][1], unattributed


def credit(target: Any, teams: dict[str, int]) -> None:
    """Add one interleaved search's outcome (its clicks per team, ``UNTAGGED`` included) to
    ``target``: a quality series or a unit bucket (collector/series/units.py), both holding
    ``interleaving_wins`` and ``interleaving_ties``. In a tie every tying team gets its
    sample (0 wins)."""
    winner, _ = outcome(teams)
    wins = target.interleaving_wins
    if wins is None:
        wins = target.interleaving_wins = {}
    if winner is None:
        target.interleaving_ties += 1
        for team in teams:
            if team != UNTAGGED:
                _capped(wins, team)
    else:
        wins[_capped(wins, winner)] += 1


def _capped(wins: dict[str, int], team: str) -> str:
    """The team's key in ``wins`` (at most TEAM_CAP teams, then "other")."""
    if team not in wins:
        if len(wins) >= TEAM_CAP:
            team = "other"
        wins.setdefault(team, 0)
    return team
