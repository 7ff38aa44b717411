"""Recording rules in the order promtool can backfill them: a rule that reads another rule's
series is evaluated after that rule's blocks are in the TSDB.

``promtool tsdb create-blocks-from rules`` evaluates every rule of its file against the server
as the server is: a rule reading a series another rule records in the same run reads nothing
(promtool's documentation says to run it again for such rules). The rules are split into
layers, each reading only raw series and the layers before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')


def names_read(expr: str) -> set[str]:
    """Every identifier of an expression outside its quoted strings (metric names among
    functions, labels and keywords: only the recorded names among them matter)."""
    return set(_NAME.findall(_STRINGS.sub(" ", expr)))


def layers(rules: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The recording rules (``record``/``expr`` dicts) in layers: layer 0 reads no recorded
    series, layer n the series of layers below n. A rule that reads itself or a cycle of
    rules is an error naming them (Prometheus would evaluate it from its own past)."""
    rules = list(rules)
    recorded = {rule["record"] for rule in rules}
    depends = {id(rule): names_read(rule["expr"]) & recorded for rule in rules}
    level: dict[str, int] = {}
    left = list(rules)
    while left:
        ready = [r for r in left if all(name in level for name in depends[id(r)])]
        if not ready:
            names = sorted({r["record"] for r in left})
            raise ValueError(f"recording rules that read each other in a cycle: {names}")
        for rule in ready:
            deps = depends[id(rule)]
            level[rule["record"]] = max(
                (level[name] + 1 for name in deps), default=0) if deps else 0
        left = [r for r in left if r not in ready]
    # one record name recorded by several rules: every rule of that name in the highest layer
    grouped: list[list[dict[str, Any]]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for rule in rules:
        grouped[level[rule["record"]]].append(rule)
    return grouped
