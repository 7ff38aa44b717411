"""The examination curves of ``searchpulse clicks`` (examination.json) inside the collector: the
curve itself on /metrics, and inverse-propensity weights for the debiased click-through.

A click at position k (1-based across result pages, k within the curve) of an application whose
curve is *identified* counts min(1/θ_k, ``clicks.max_weight``) debiased clicks; θ_k ≤ 1/max_weight
is clipped there. Applications whose curve is not identified (too few documents seen at
several positions) get no weights: their debiased counter stays absent rather than wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from collector import definitions as d
from collector.watched_file import WatchedFile

if TYPE_CHECKING:  # a type only: the stage below it imports nothing above
    from collector.config import Config


@dataclass(frozen=True)
class Examination:
    """Per application: θ per position (θ_1 = 1; None where nothing was shown) and the IPS
    weight of a click at each position."""

    curves: dict[str, list[float | None]]
    weights: dict[str, tuple[float, ...]]

    def identified(self) -> dict[str, np.ndarray]:
        """The identified curves as arrays (NaN where nothing was shown)."""
        return {application: np.array([np.nan if t is None else t for t in curve])
                for application, curve in self.curves.items() if application in self.weights}


def parse(text: str, max_weight: float, max_applications: int, max_depth: int) -> Examination:
    """examination.json's content; at most ``max_applications`` (the most shown) and
    ``max_depth`` positions, so a hand-edited file cannot grow the label set. ValueError
    names what is wrong."""
    body = json.loads(text)
    applications = body.get("applications") if isinstance(body, dict) else None
    if not isinstance(applications, dict):
        raise ValueError("not an examination file of `searchpulse clicks` (no applications)")
    kept = sorted(applications.items(),
                  key=lambda item: -_number(item[1].get("impressions", 0) if isinstance(
                      item[1], dict) else 0))[:max_applications]
    curves: dict[str, list[float | None]] = {}
    weights: dict[str, tuple[float, ...]] = {}
    for application, fitted in kept:
        curve = fitted.get("examination") if isinstance(fitted, dict) else None
        if curve is None and isinstance(fitted, dict) and fitted.get("identified") is False:
            continue  # `searchpulse clicks` publishes no curve it could not identify
        if not isinstance(curve, list) or not curve:
            raise ValueError(f"application {application!r}: no examination curve")
        theta = [_probability(application, k, value) for k, value in
                 enumerate(curve[:max_depth], 1)]
        curves[str(application)] = theta
        if fitted.get("identified") is True:
            weights[str(application)] = tuple(
                0.0 if t is None else min(1.0 / max(t, 1.0 / max_weight), max_weight)
                for t in theta)
    return Examination(curves, weights)


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _probability(application: str, position: int, value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
        raise ValueError(f"application {application!r}, position {position}: θ must be a "
                         f"number > 0, not {value!r}")
    return float(value)


class ExaminationFile(WatchedFile[Examination]):
    """``clicks.examination_file``, reloaded when it changes."""

    def __init__(self, path: str, max_weight: float, max_applications: int,
                 max_depth: int) -> None:
        super().__init__(path, "clicks.examination_file", lambda p: parse(
            Path(p).read_text(encoding="utf-8"), max_weight, max_applications, max_depth))

    @classmethod
    def from_config(cls, config: Config) -> ExaminationFile | None:
        """The file ``clicks.examination_file`` names, or None when it names none."""
        path = config["clicks.examination_file"]
        return cls(path, config["clicks.max_weight"], config["labels.application_cap"],
                   config["clicks.depth"]) if path else None


class ExaminationCollector(Collector):
    """``searchpulse_examination_probability{application, position}`` from the file."""

    def __init__(self, source: ExaminationFile) -> None:
        self.source = source

    def collect(self) -> Iterable[Metric]:
        examination = self.source.current()
        family = d.EXAMINATION_PROBABILITY.metric()
        for application, curve in sorted(examination.curves.items()):
            identified = "true" if application in examination.weights else "false"
            for position, theta in enumerate(curve, 1):
                if theta is not None:
                    family.add_metric([application, str(position), identified], theta)
        yield family
