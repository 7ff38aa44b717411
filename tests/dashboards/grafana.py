"""A dashboard or panel builder as Grafana reads it, and the layout checks every board's
tests share."""

from __future__ import annotations

import json
from typing import Any

from grafana_foundation_sdk.cog.encoder import JSONEncoder


def as_json(builder: Any) -> dict[str, Any]:
    """What the builder writes into a dashboard's JSON."""
    return json.loads(JSONEncoder(sort_keys=True).encode(builder.build()))


def overlaps(panels: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """The pairs of panel ids whose grid positions overlap on Grafana's 24-column grid."""
    cells: dict[tuple[int, int], int] = {}
    found = []
    for panel in panels:
        grid = panel["gridPos"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                other = cells.setdefault((x, y), panel["id"])
                if other != panel["id"] and (other, panel["id"]) not in found:
                    found.append((other, panel["id"]))
    return found
