"""An alerting rule's states over time, exactly as Prometheus keeps them (rules/alerting.go,
``AlertingRule.Eval``), from the expression's values at each evaluation.

Per label set at each evaluation time: present in the expression's result and not active, it
becomes pending (active since then); pending for ``for`` or longer, it fires. Absent: a pending
alert is dropped; a firing one keeps firing while less than ``keep_firing_for`` has passed since
the first evaluation it was absent at (that clock restarts whenever it is present again), then
resolves at that evaluation. With ``for`` 0 an alert fires at the evaluation that found it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

Labels = tuple[tuple[str, str], ...]


@dataclass
class Firing:
    """One firing interval of one label set: from the evaluation that fired it to the one that
    resolved it (None: still firing at the last evaluation), with the expression's values
    while it fired (a kept alert has none: the expression found nothing)."""

    labels: Labels
    start: float
    end: float | None = None
    values: list[float] = field(default_factory=list)


def firing(values: Mapping[float, float], times: Sequence[float], hold_s: float,
           keep_s: float, labels: Labels = ()) -> list[Firing]:
    """The firing intervals of one label set whose expression had ``values`` (time → value;
    absent times: not in the result) at the evaluations ``times`` (ascending)."""
    found: list[Firing] = []
    pending_since: float | None = None  # the alert is pending
    current: Firing | None = None  # the alert is firing
    absent_since: float | None = None  # firing, and absent from this evaluation on
    for t in times:
        value = values.get(t)
        if value is not None:
            absent_since = None
            if current is not None:
                current.values.append(value)
                continue
            if pending_since is None:
                pending_since = t
            if t - pending_since >= hold_s:
                current = Firing(labels, t, values=[value])
                found.append(current)
                pending_since = None
            continue
        pending_since = None
        if current is None:
            continue
        if absent_since is None:
            absent_since = t
        if not (keep_s > 0 and t - absent_since < keep_s):
            current.end = t
            current = None
            absent_since = None
    return found
