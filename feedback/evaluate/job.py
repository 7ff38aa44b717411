"""``searchpulse evaluate`` in order: the measures and the gate's rules from the settings, the
judgments and the rankings read, strata, the evaluation, and the files CI and people read (the
page, JUnit XML, the Markdown summary). The work is in feedback/evaluate/scoring.py and the modules
it names; this one only runs them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from collector.config import Config
from collector.errors import ConfigError, GateError, MeasureError
from collector.judgments.gate import Rule
from collector.judgments.gate import rules as gate_rules
from collector.judgments.measures import defaults, parse
from collector.output_files import writing
from collector.progress import Steps
from feedback.evaluate import ci_report
from feedback.evaluate.report import page
from feedback.evaluate.scoring import evaluate, read_rankings
from feedback.judging.job import JudgmentsRequest, query_strata, read, sources_of


@dataclass
class EvaluateRequest:
    judgments: JudgmentsRequest
    runs: list[str]
    strata: str | None = None
    top: int = 10  # worse and better queries listed per gated slice
    gate_files: bool = False  # JUnit XML or a summary asked for: they need a comparison
    progress: bool = False  # a bar of the steps on stderr
    # --ranked-only: a judged topic a TREC run ranks nothing for is left out, not scored 0
    ranked_only: bool = False


@dataclass
class EvaluateOutputs:
    html: Path | None = None
    junit: Path | None = None
    summary: Path | None = None  # appended to, as GitHub's $GITHUB_STEP_SUMMARY expects


def measures_and_rules(config: Config) -> tuple[list[Any], list[Rule]]:
    """The measures (``evaluate.measures`` or the default set) with every gated one, and the
    gate's rules. Each list was checked as the settings loaded; a configuration error here
    names the key all the same."""
    try:
        measures = (parse(config["evaluate.measures"], "evaluate.measures")
                    if config["evaluate.measures"]
                    else defaults(config["evaluate.depth"], config["judgments.max_grade"]))
        rules = gate_rules(config["evaluate.gate"], str(measures[0]),
                           config["evaluate.margin"], config["evaluate.significance"])
        measures += [m for m in parse([r.measure for r in rules], "evaluate.gate")
                     if m not in measures]
    except (MeasureError, GateError) as error:
        raise ConfigError(f"evaluate.gate ({config.sources['evaluate.gate']}): {error}"
                          ) from None
    return measures, rules


def run_evaluate(config: Config, request: EvaluateRequest) -> dict[str, Any]:
    """The evaluation's result (feedback/evaluate/scoring.py). TREC topic ids stand for their
    queries unless ``--topics`` maps them to text; an id is never classified by the known-item
    patterns (it is no query text)."""
    if len(request.runs) > 2:
        raise ConfigError("--run: one ranking to score, or two to compare")
    if request.gate_files and len(request.runs) != 2:
        raise ConfigError("--junit / --summary: the gate needs two runs (--run A --run B)")
    measures, rules = measures_and_rules(config)
    reading = [f"reading {Path(path).name}" for path in request.runs]
    with Steps("evaluate", ["reading judgments", *reading, "strata", "scoring"],
               request.progress) as steps:
        steps.begin("reading judgments")
        sources = replace(sources_of(request.judgments), topic_ids_as_queries=True)
        final = read(config, request.judgments, sources).judgment_set().final()
        runs = []
        for path, step in zip(request.runs, reading, strict=True):
            steps.begin(step)
            runs.append(read_rankings(path, sources.topics, sources.topic_applications))
        steps.begin("strata")
        queries = set(final["query"])
        for run in runs:
            queries.update(key[1] for key in run.ranked)
        strata = query_strata(config, pd.Index(sorted(queries)), request.strata)
        if sources.topics is None and any(run.topic_ids for run in runs):
            # the judged topics a run left unranked are ids too (qrels against runs)
            ids = {key[1] for run in runs if run.topic_ids for key in run.ranked}
            strata[strata.index.isin(ids | set(final["query"]))] = "unclassified"
        steps.begin("scoring" if len(runs) == 1 else "scoring and comparing")
        return evaluate(runs, final, strata, measures, rules, config["evaluate.depth"],
                        config["judgments.max_grade"], request.top, request.ranked_only)


def labels(runs: list[str]) -> list[str]:
    """How the runs are named on every output: their file names (A:, B: when equal)."""
    names = [Path(path).name for path in runs]
    return ["A: " + names[0], "B: " + names[1]] if len(set(names)) < len(names) else names


def write(result: dict[str, Any], names: list[str], outputs: EvaluateOutputs,
          top: int) -> None:
    """The page; with a comparison, the JUnit XML and the summary."""
    if outputs.html:
        with writing(str(outputs.html), "--html") as handle:
            handle.write(page(result, names, top))
    if outputs.junit:
        with writing(str(outputs.junit), "--junit") as handle:
            handle.write(ci_report.junit(result, names))
    if outputs.summary:
        with writing(str(outputs.summary), "--summary", "a") as handle:
            handle.write(ci_report.markdown(result, names, top))
