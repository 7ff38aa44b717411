"""The dashboards' JSON of one deployment profile (the committed defaults are regenerated and
diffed by a test; `searchpulse generate` writes a deployment's beside its rules).

    python -m dashboards.build      # dashboards/generated/, the defaults
"""

from __future__ import annotations

import json
from pathlib import Path

from grafana_foundation_sdk.cog.encoder import JSONEncoder

from alerts.config import Profile
from dashboards import collector_health, experiments, overview

GENERATED = Path(__file__).parent / "generated"
DASHBOARDS = {"overview": overview, "experiments": experiments,
              "collector-health": collector_health}


def render(profile: Profile) -> dict[str, dict]:
    return {name: json.loads(JSONEncoder(sort_keys=True).encode(module.build(profile).build()))
            for name, module in DASHBOARDS.items()}


def build(out: Path, profile: Profile) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, board in render(profile).items():
        path = out / f"{name}.json"
        path.write_text(json.dumps(board, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        paths.append(path)
    return paths
