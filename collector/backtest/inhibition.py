"""Alertmanager's inhibition over episodes: while a source alert fires, a target alert with
the same values of the ``equal`` labels is not sent (a tracking outage mutes the alerts that
rest on the front end's events; a page mutes the ticket of the same alert). An episode is sent
at its first moment not covered by a source episode, or never.

As Alertmanager: a label missing on both sides is equal; an alert that matches both sides of a
rule is not inhibited by alerts that match both sides too (itself included); matchers are
``name op "value"`` with = != =~ !~, regular expressions anchored at both ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from collector.backtest.episodes import Episode

_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*')


@dataclass(frozen=True)
class Matcher:
    name: str
    op: str
    value: str

    def matches(self, labels: dict[str, str]) -> bool:
        value = labels.get(self.name, "")
        if self.op in ("=~", "!~"):
            found = re.fullmatch(self.value, value) is not None
            return found if self.op == "=~" else not found
        return (value == self.value) == (self.op == "=")


def matcher(text: str) -> Matcher:
    found = _MATCHER.fullmatch(text)
    if not found:
        raise ValueError(f"not an Alertmanager matcher like severity=\"critical\": {text!r}")
    name, op, value = found.groups()
    return Matcher(name, op, value.encode().decode("unicode_escape"))


@dataclass(frozen=True)
class InhibitRule:
    source: tuple[Matcher, ...]
    target: tuple[Matcher, ...]
    equal: tuple[str, ...]

    def inhibits(self, source: dict[str, str], target: dict[str, str]) -> bool:
        if not (all(m.matches(source) for m in self.source)
                and all(m.matches(target) for m in self.target)):
            return False
        if all(m.matches(target) for m in self.source) and \
                all(m.matches(source) for m in self.target):
            return False
        return all(source.get(name, "") == target.get(name, "") for name in self.equal)


def inhibit_rules(config: dict[str, Any]) -> list[InhibitRule]:
    """The ``inhibit_rules`` of an Alertmanager configuration (its matchers form)."""
    return [InhibitRule(tuple(map(matcher, rule.get("source_matchers", ()))),
                        tuple(map(matcher, rule.get("target_matchers", ()))),
                        tuple(rule.get("equal", ())))
            for rule in config.get("inhibit_rules", ())]


def inhibited(episodes: list[Episode], rules: list[InhibitRule]) -> list[Episode]:
    """Each episode with ``notified``: when Alertmanager would first send it (None: never)."""
    labelled = [(e, dict(e.labels)) for e in episodes]
    found = []
    for episode, labels in labelled:
        covers = sorted((s.start, s.end) for s, source in labelled
                        if s is not episode and s.start < episode.end and s.end > episode.start
                        and any(rule.inhibits(source, labels) for rule in rules))
        found.append(replace(episode, notified=_first_uncovered(
            episode.start, episode.end, covers)))
    return found


def _first_uncovered(start: float, end: float, covers: list[tuple[float, float]]
                     ) -> float | None:
    at = start
    for begin, until in covers:
        if begin > at:
            break
        at = max(at, until)
    return at if at < end else None
