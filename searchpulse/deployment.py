"""What a deployment runs: its rules and dashboards (``generate``), its experiment verdicts
(``experiments``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from collector.config import Setting, describe
from collector.output_files import writing
from collector.text_files import not_text
from searchpulse import arguments as kind
from searchpulse.options import (
    EXIT_INPUT,
    EXIT_OK,
    add_common,
    add_progress,
    log,
    read_settings,
    refused_inputs,
    show_progress,
)

# generate's flags that are shorthands for one alerts.deployment setting each
DEPLOYMENT_FLAGS = ("runbook_base", "grafana_base", "pager_url", "ticket_url", "selector")


def deployment_profile(args: argparse.Namespace, strict: bool = False,
                       **flags: Any) -> tuple[Any, Any]:
    """The settings with every alerts.* setting, and the deployment profile they describe
    (validated: a contradicting window pair or an impossible threshold is a ConfigError)."""
    from alerts.config import SETTINGS as ALERT_SETTINGS
    from alerts.config import from_config

    config = read_settings(args, extra=ALERT_SETTINGS, strict=strict, **flags)
    return config, from_config(config)


def cmd_generate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from alerts import build as rules
    from dashboards import build as dashboards

    _, profile = deployment_profile(args, **{f"alerts.deployment.{flag}": getattr(args, flag)
                                             for flag in DEPLOYMENT_FLAGS})
    out = Path(args.out)
    boards = Path(args.dashboards_out) if args.dashboards_out else out / "dashboards"
    for path in (*rules.build(out, profile), *dashboards.build(boards, profile)):
        print(path)
    return EXIT_OK


def cmd_experiments(args: argparse.Namespace) -> int:
    from collector.errors import ExperimentError
    from collector.series.experiment_stats import ExperimentDesign
    from feedback.experiments import always_valid
    from feedback.experiments.report import page
    from feedback.experiments.verdicts import (
        from_exposition,
        from_logs,
        lone_controls,
        text,
        verdicts,
    )

    config = read_settings(args)
    design = ExperimentDesign.from_config(config)
    input_error = None
    refused = refused_inputs([args.metrics] if args.metrics else args.files)
    if refused is not None:
        return refused
    if args.metrics:
        try:
            with open(args.metrics, encoding="utf-8") as handle:
                experiments = from_exposition(handle.read(), design.unit_buckets)
        except UnicodeDecodeError as error:
            log.error("input %s: %s", args.metrics, not_text(args.metrics, error))
            return EXIT_INPUT
        except ValueError:  # prometheus_client's parser (its message quotes the line: a
            # query's text, which no log line may hold: docs/privacy.md)
            log.error("input %s: not a /metrics exposition (Prometheus' text format)",
                      args.metrics)
            return EXIT_INPUT
    else:
        progress = show_progress(args)
        experiments, input_error = from_logs(args.files, config, progress)
    try:
        report = verdicts(experiments, design, by_client=not args.metrics)
    except ExperimentError as error:
        log.error("%s", error)
        return EXIT_INPUT
    alone = lone_controls(report)
    for application, control in alone.items():
        log.warning("%s: only the control variant %r has searches: nothing is compared with "
                    "it (a variant named other, or beyond experiments.max_variants, is folded "
                    "into other and never compared)", application, control)
    if alone and len(alone) == len(report["applications"]):
        log.error("no application has a variant to compare with its control")
        return EXIT_INPUT
    if args.metrics:  # what the dashboards show while the experiment runs
        report["always_valid"] = always_valid.report(experiments, design)
    if args.html:
        with writing(args.html, "--html") as handle:
            handle.write(page(report))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text(report))
        if args.metrics:
            sys.stdout.write(always_valid.text(report["always_valid"]))
    if input_error:
        log.error("%s", input_error)
        return EXIT_INPUT
    if not report["applications"]:
        log.error("no experiment in %s: no search has a variant other than none, and none is "
                  "interleaved",
                  args.metrics or ", ".join(args.files) or "the input")
        return EXIT_INPUT
    return EXIT_OK


def _profile_settings() -> tuple[Setting, ...]:
    """The settings a deployment profile is read from: every alerts.* setting, the latency
    guardrail and the experiment design (the collector's, which the rules must agree with)."""
    from alerts.config import SETTINGS
    from collector.series.experiment_stats import ExperimentDesign

    collector = {s.key: s for s in describe()}
    return (*SETTINGS, collector["metrics.latency_guardrail_s"],
            *(collector[key] for key in ExperimentDesign.keys()))


def add_commands(sub: argparse._SubParsersAction) -> None:
    """What a deployment runs: its rules and dashboards (generate), its experiment
    verdicts (experiments)."""
    p = sub.add_parser(
        "generate", help="write the alert rules, Alertmanager config and dashboards of a "
                         "deployment",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Generate, from one deployment profile (the config file's [metrics],\n"
                    "[experiments] and [alerts.*] tables, SEARCHPULSE_*, --set), the\n"
                    "Prometheus rules, the Alertmanager configuration and the Grafana\n"
                    "dashboards: every recording rule a panel reads is generated, every\n"
                    "threshold a panel draws is the one its alert fires at; the experiment\n"
                    "rules read the design `searchpulse experiments` reads (experiments.*).",
        epilog="Writes to --out: searchpulse-rules.yml (Prometheus rule_files),\n"
               "alertmanager.yml, dashboards/overview.json, dashboards/experiments.json,\n"
               "dashboards/collector-health.json (Grafana file provisioning).\n"
               "Settings (config file key, environment variable):\n"
               + "\n".join(f"  {s.key:<50} {s.env}" for s in _profile_settings())
               + "\nExit codes: 0 ok, 2 a setting is invalid (the message names it).")
    p.add_argument("--out", required=True, metavar="DIR", type=kind.output_directory,
                   help="directory for the files")
    p.add_argument("--dashboards-out", metavar="DIR", type=kind.output_directory,
                   help="directory for the dashboards (default OUT/dashboards)")
    p.add_argument("--runbook-base", help="runbook page; each alert links to #its-name "
                                          "(alerts.deployment.runbook_base)")
    p.add_argument("--grafana-base", help="Grafana's URL; alerts link to their panel "
                                          "(alerts.deployment.grafana_base)")
    p.add_argument("--pager-url", help="webhook that receives critical alerts "
                                       "(alerts.deployment.pager_url)")
    p.add_argument("--ticket-url", help="webhook that receives warning alerts "
                                        "(alerts.deployment.ticket_url)")
    p.add_argument("--selector", help='the collector\'s series, e.g. job="searchpulse" '
                                      "(alerts.deployment.selector)")
    add_common(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser(
        "experiments", help="experiment verdicts at the unit of randomization (clients)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Per application and experiment variant (query_attributes.variant): units\n"
                    "(distinct clients), searches, the sample-ratio test (chi-square of units\n"
                    "against experiments.split, else an equal split), every rate with its 95 %\n"
                    "interval clustered by client (Wilson-type, inside [0, 1]), its difference\n"
                    "from the control with its interval, p-value, Holm-adjusted p-value (over\n"
                    "every difference of the report) and a verdict (better / worse /\n"
                    "inconclusive / guardrail breached), its ratio to the control (log-scale\n"
                    "interval), the power at the observed difference and the searches and\n"
                    "units still needed for 80 %; interleaving's wins and Δ per variant, none\n"
                    "included. The control: experiments.control_variant, else the one of\n"
                    "control, baseline, a, A among the variants (docs/metrics.md).",
        epilog="From UBI logs (clustered by client exactly: one cluster per client; units:\n"
               "the distinct clients of the whole log) or, with --metrics, from a /metrics\n"
               "exposition (a scrape of a collector, or replay --metrics-out: clustered over\n"
               "its experiments.unit_buckets hashed client buckets, as the live rules are,\n"
               "with the always-valid 95 % intervals the dashboards show beside them).\n"
               "Settings: experiments.* (searchpulse --help).\n"
               "Exit codes: 0 ok, 2 configuration error, 3 input unreadable, no experiment,\n"
               "or no control variant among an application's variants (named).")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="UBI logs (JSON lines; .gz accepted; - for stdin)")
    p.add_argument("--metrics", metavar="FILE",
                   help="read the unit-bucket sums from this /metrics exposition instead")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--html", metavar="FILE", type=kind.output_file,
                   help="also write the report as an HTML page")
    add_progress(p)
    add_common(p)
    p.set_defaults(func=cmd_experiments)
