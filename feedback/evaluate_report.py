"""``evaluate --html``: the measures per slice of each run, the comparison and the gate's
verdict on one self-contained page."""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd

from feedback.evaluate import MEASURES
from feedback.report import STYLE, bar_chart, table

_NAMES = {"ndcg": "NDCG@k", "err": "ERR@k", "ap": "AP", "p": "P@k", "r": "R@k", "rr": "RR",
          "judged": "judged@k"}


def page(result: dict[str, Any], names: list[str]) -> str:
    k = result["k"]
    runs = result["runs"]
    strata = [s for s in runs[0]["summary"]["slice"] if s.startswith("stratum=")]
    series = {}
    for name, run in zip(names, runs, strict=True):
        by_slice = run["summary"].set_index("slice")["ndcg"]
        series[name] = [float(by_slice.get(s, float("nan"))) for s in ["all", *strata]]
    columns = {"slice": "slice", "rankings": "rankings",
               **{m: _NAMES[m].replace("k", str(k)) for m in MEASURES}}
    parts = [f"<h2>NDCG@{k} per stratum</h2>",
             bar_chart(["all", *[s.removeprefix("stratum=") for s in strata]], series,
                       percent=True)]
    for name, run in zip(names, runs, strict=True):
        parts.append(f"<h2>{escape(name)}: {run['judged_rankings']:,} judged of "
                     f"{run['rankings']:,} rankings</h2>{table(run['summary'], columns)}")
    if "comparison" in result:
        verdict = ("REGRESSION: NDCG@{k} drops by more than {margin} with p < {significance}"
                   if result["regression"] else "no significant regression beyond "
                   "{margin}").format(k=k, margin=result["margin"],
                                      significance=result["significance"])
        comparison: pd.DataFrame = result["comparison"]
        deltas = {"slice": "slice", "paired": "paired", "wins": "wins", "losses": "losses",
                  "ties": "ties", **{f"delta_{m}": f"Δ {_NAMES[m]}" for m in MEASURES},
                  "p_ndcg": "p (NDCG, randomization)", "regression": "regression"}
        shown = comparison.assign(regression=comparison["regression"].map(
            {True: "yes", False: "no"}))
        parts.append(f"<h2>{escape(names[1])} − {escape(names[0])}: {escape(verdict)}</h2>"
                     f"{table(shown, deltas)}")
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>searchpulse evaluate'
            f"</title><style>{STYLE}</style></head><body><h1>Offline evaluation</h1>"
            + "".join(parts) + "</body></html>\n")
