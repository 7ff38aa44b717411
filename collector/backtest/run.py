"""A backtest from logs to firing intervals: replay's scrapes through event time backfilled into
a TSDB (promtool), the recording rules backfilled layer by layer against a Prometheus on it
(promtool, rules evaluated by Prometheus), then each alerting rule's expression evaluated over
the whole period at its group's interval (Prometheus' query_range) and its states applied
(alerting.py). Everything is written under ``workdir``."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from collector.backtest.alerting import Firing, Labels, firing
from collector.backtest.layers import layers, names_read
from collector.backtest.tools import find_tools
from collector.backtest.tsdb import Server, backfill_openmetrics, backfill_rules
from collector.config import Config
from collector.exposition.scrapes import SCRAPE_INTERVAL_S
from collector.replay import ScrapeFile, replay

log = logging.getLogger(__name__)
_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def seconds(duration: str | None) -> float:
    """A Prometheus duration (``2m``, ``1h30m``) in seconds; none is 0."""
    if not duration:
        return 0.0
    parts = _DURATION.findall(duration)
    if "".join(n + u for n, u in parts) != duration:
        raise ValueError(f"not a Prometheus duration: {duration!r}")
    return sum(int(n) * _UNIT_S[u] for n, u in parts)


@dataclass
class AlertRule:
    """One alerting rule of the generated groups, with its group's interval."""

    name: str
    expr: str
    hold_s: float
    keep_s: float
    interval_s: float
    labels: dict[str, str]


@dataclass
class Result:
    """What a backtest found: the replay's summary, the period evaluated, and per alerting
    rule the firing intervals of each of its label sets."""

    summary: dict[str, Any]
    start: float
    end: float
    firing: list[tuple[AlertRule, list[Firing]]] = field(default_factory=list)


def alert_rules(groups: dict[str, Any]) -> list[AlertRule]:
    found = []
    for group in groups["groups"]:
        interval = seconds(group.get("interval")) or SCRAPE_INTERVAL_S
        for rule in group["rules"]:
            if "alert" in rule:
                found.append(AlertRule(rule["alert"], rule["expr"], seconds(rule.get("for")),
                                       seconds(rule.get("keep_firing_for")), interval,
                                       dict(rule.get("labels") or {})))
    return found


def recording_rules(groups: dict[str, Any]) -> list[tuple[float, dict[str, Any]]]:
    return [(seconds(group.get("interval")) or SCRAPE_INTERVAL_S, rule)
            for group in groups["groups"] for rule in group["rules"] if "record" in rule]


DAY_S = 86400.0  # one OpenMetrics file, and one TSDB block, per day of event time


def families_read(groups: dict[str, Any]) -> set[str]:
    """The families (0.0.4 TYPE names) the rules' expressions read: a histogram's or
    summary's from its _bucket, _count or _sum series."""
    names = {name for group in groups["groups"] for rule in group["rules"]
             for name in names_read(rule["expr"])}
    return names | {name[:-len(suffix)] for name in names
                    for suffix in ("_bucket", "_count", "_sum") if name.endswith(suffix)}


def run(paths: list[str], config: Config, groups: dict[str, Any], labels: dict[str, str],
        workdir: Path, progress: bool = False, keep_scrapes: bool = False) -> Result:
    """The backtest of ``groups`` (Prometheus rule groups) over ``paths``; the scrapes get the
    target ``labels`` the rules select and hold the families the rules read, a file a day,
    each backfilled as soon as it is written (and removed unless ``keep_scrapes``). Raises
    ToolMissing before reading anything when Prometheus or promtool is not installed."""
    tools = find_tools()
    tsdb = workdir / "data"
    tsdb.mkdir(parents=True, exist_ok=True)
    rule_file = workdir / "recording.yml"
    with Server(tools, tsdb, workdir) as server:
        phase = _phase(tools, server, rule_file, workdir)

    def backfill(path: Path) -> None:
        backfill_openmetrics(tools, path, tsdb, block_hours=int(DAY_S // 3600))
        if not keep_scrapes:
            path.unlink()

    (workdir / "scrapes").mkdir(exist_ok=True)
    scrapes = ScrapeFile(str(workdir / "scrapes"), SCRAPE_INTERVAL_S, labels, phase,
                         span_s=DAY_S, done=backfill, families=families_read(groups))
    summary = replay(paths, config, progress=progress, openmetrics=scrapes)
    result = Result(summary, scrapes.first or 0.0, scrapes.last or 0.0)
    if scrapes.first is None:
        return result
    with Server(tools, tsdb, workdir) as server:
        _record(tools, server, recording_rules(groups), result, rule_file, workdir)
        for rule in alert_rules(groups):
            result.firing.append((rule, evaluate(server, rule, result.start, result.end)))
    return result


_GROUP = "searchpulse-backtest"
_PHASE_RECORD = "searchpulse_backtest_phase"
_PHASE_AT = 1_000_000_000.0  # 2001: a time no log of searchpulse reaches


def _phase(tools: Any, server: Server, rule_file: Path, workdir: Path) -> float:
    """Where in the scrape interval promtool evaluates the backtest's recording group: a live
    Prometheus's group runs at its interval's multiples shifted by an offset hashed from the
    group's name and file, and promtool backfills at those times. The scrapes are put there
    too, so every rule reads the scrape of its own evaluation time, as promtool's rule tests
    (and the rules of a Prometheus scraping just before evaluating) do; a rule reading a
    scrape up to an interval old would extrapolate its rates differently."""
    _write_group(rule_file, SCRAPE_INTERVAL_S, [{"record": _PHASE_RECORD, "expr": "vector(1)"}])
    out = workdir / "blocks-phase"
    backfill_rules(tools, server, rule_file, _PHASE_AT, _PHASE_AT + 4 * SCRAPE_INTERVAL_S,
                   SCRAPE_INTERVAL_S, out)
    server.add_blocks(out)
    found = server.query(f"timestamp({_PHASE_RECORD})", _PHASE_AT + 4 * SCRAPE_INTERVAL_S)
    return round(float(found[0]["value"][1]) % SCRAPE_INTERVAL_S, 3)


def _write_group(rule_file: Path, interval: float, rules: list[dict[str, Any]]) -> None:
    rule_file.write_text(yaml.safe_dump({"groups": [
        {"name": _GROUP, "interval": f"{interval:g}s", "rules": rules}]}))


def _record(tools: Any, server: Server, rules: list[tuple[float, dict[str, Any]]],
            result: Result, rule_file: Path, workdir: Path) -> None:
    """Each layer of recording rules backfilled (per interval) and loaded before the next.
    Every layer is written as the same group in the same file: every layer is evaluated at
    the same times (``_phase``), and a rule reads the rules below it at the evaluation they
    were recorded at, as in one group."""
    intervals = {id(rule): interval for interval, rule in rules}
    for n, layer in enumerate(layers(rule for _, rule in rules)):
        for interval in sorted({intervals[id(rule)] for rule in layer}):
            chosen = [rule for rule in layer if intervals[id(rule)] == interval]
            _write_group(rule_file, interval, chosen)
            out = workdir / f"blocks-{n}-{interval:g}s"
            backfill_rules(tools, server, rule_file, result.start, result.end, interval, out)
            server.add_blocks(out)
            log.info("recording rules, layer %d: %d rules over %.1f h", n, len(chosen),
                     (result.end - result.start) / 3600)


def evaluate(server: Server, rule: AlertRule, start: float, end: float) -> list[Firing]:
    """The rule's firing intervals: its expression at every evaluation of its group from
    ``start`` to ``end``, each label set (with the rule's labels) through alerting.firing."""
    answered = server.query_range(rule.expr, start, end, rule.interval_s)
    steps = int((end - start) // rule.interval_s) + 1
    times = [round(start + i * rule.interval_s, 3) for i in range(steps)]
    found: list[Firing] = []
    for labels, points in sorted(answered.items()):
        merged = dict(labels)
        merged.pop("__name__", None)
        merged.update(rule.labels, alertname=rule.name)
        found += firing({round(t, 3): v for t, v in points}, times, rule.hold_s,
                        rule.keep_s, _sorted(merged.items()))
    return found


def _sorted(pairs: Iterable[tuple[str, str]]) -> Labels:
    return tuple(sorted(pairs))
