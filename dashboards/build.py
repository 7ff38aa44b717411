"""Writes the dashboards' JSON and the Grafana provisioning (committed; a test regenerates and
diffs them).

    python -m dashboards.build
"""

from __future__ import annotations

import json
from pathlib import Path

from grafana_foundation_sdk.cog.encoder import JSONEncoder

from dashboards import collector_health, experiments, overview

GENERATED = Path(__file__).parent / "generated"
DASHBOARDS = {"overview": overview, "experiments": experiments,
              "collector-health": collector_health}


def render() -> dict[str, dict]:
    return {name: json.loads(JSONEncoder(sort_keys=True).encode(module.build().build()))
            for name, module in DASHBOARDS.items()}


def build(out: Path = GENERATED) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, board in render().items():
        path = out / f"{name}.json"
        path.write_text(json.dumps(board, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in build():
        print(written)
