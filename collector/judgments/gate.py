"""What fails `evaluate`'s gate: rules of the form ``MEASURE [margin=X] [significance=P]
[slices=S|S…]`` (the setting ``evaluate.gate``, a list; ``--gate``), e.g.

    nDCG@10 margin=0.01 significance=0.05
    R@100 margin=0.02 slices=all

A rule fails on a slice when the measure's mean difference B − A is below −margin with the
paired randomization test's p below significance. ``margin`` defaults to ``evaluate.margin``,
``significance`` to ``evaluate.significance``, ``slices`` to ``all|stratum``. A slice is
``all``, ``stratum`` (each stratum), ``application`` (each application), or one of them by
name (``stratum=known_item``, ``application=shop``). No rule: the first measure, over all
rankings and each stratum, with the two defaults (what the gate always did).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from collector.errors import GateError, MeasureError
from collector.judgments.measures import parse

OPTION = re.compile(r"^(?P<key>[a-z_]+)=(?P<value>.*)$")
DEFAULT_SLICES = ("all", "stratum")
GROUPINGS = ("stratum", "application")



@dataclass(frozen=True)
class Rule:
    measure: str  # as ir_measures writes it (str of the parsed measure)
    margin: float
    significance: float
    slices: tuple[str, ...] = DEFAULT_SLICES

    def covers(self, slice_name: str) -> bool:
        """Whether this rule judges the slice ``slice_name`` (``all``, ``stratum=head`` …)."""
        grouping = slice_name.partition("=")[0]
        return slice_name in self.slices or (grouping in GROUPINGS and grouping in self.slices)

    def describe(self) -> str:
        return (f"{self.measure} margin={self.margin:g} significance={self.significance:g} "
                f"slices={'|'.join(self.slices)}")


def _slice(text: str, rule: str) -> str:
    name, sep, value = text.partition("=")
    if name == "all" and not sep:
        return text
    if name in GROUPINGS and (not sep or value):
        return text
    raise GateError(f"{rule!r}: slice {text!r}: expected all, stratum, application, "
                    "stratum=NAME or application=NAME")


def _number(key: str, value: str, rule: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise GateError(f"{rule!r}: {key}={value!r} is not a number") from None
    if key == "margin" and not number >= 0:
        raise GateError(f"{rule!r}: margin must be >= 0, got {value}")
    if key == "significance" and not 0 < number < 1:
        raise GateError(f"{rule!r}: significance must be between 0 and 1, got {value}")
    return number


def parse_rule(text: str, margin: float, significance: float) -> Rule:
    tokens = text.split()
    options: dict[str, str] = {}
    while tokens and (match := OPTION.match(tokens[-1])):
        if match["key"] not in ("margin", "significance", "slices"):
            raise GateError(f"{text!r}: unknown option {match['key']!r} (margin, significance, "
                            "slices)")
        options[match["key"]] = match["value"]
        tokens.pop()
    if not tokens:
        raise GateError(f"{text!r}: no measure (e.g. nDCG@10 margin=0.01)")
    try:
        measure = str(parse([" ".join(tokens)], "measure")[0])
    except MeasureError as error:
        raise GateError(f"{text!r}: {error}") from None
    slices = tuple(_slice(s, text) for s in options.get("slices", "|".join(DEFAULT_SLICES))
                   .split("|") if s)
    if not slices:
        raise GateError(f"{text!r}: slices= names none")
    return Rule(measure,
                _number("margin", options["margin"], text) if "margin" in options else margin,
                _number("significance", options["significance"], text)
                if "significance" in options else significance, slices)


def rules(texts: Sequence[str], first_measure: str, margin: float,
          significance: float) -> list[Rule]:
    """The gate's rules; without any, the first measure's default rule."""
    if not texts:
        return [Rule(first_measure, margin, significance)]
    parsed = [parse_rule(text, margin, significance) for text in texts]
    seen: set[str] = set()
    for rule in parsed:
        if rule.measure in seen:
            raise GateError(f"{rule.measure}: two gate rules for one measure; give it one rule "
                            "with every slice it gates (slices=all|stratum|…)")
        seen.add(rule.measure)
    return parsed


def problem(texts: list[str]) -> str | None:
    """The settings table's check of ``evaluate.gate`` (defaults stand in for the numbers)."""
    try:
        rules(texts, "", 0.0, 0.5)
    except GateError as error:
        return str(error)
    return None
