"""The gate's verdict as CI systems read it: JUnit XML (``--junit``: one test case per gated
measure and slice, a failure carrying the numbers and the worst queries) and Markdown for a job
summary (``--summary``, e.g. GitHub's ``$GITHUB_STEP_SUMMARY``).

Query text is the users' text: in the XML, characters XML 1.0 cannot hold (control characters,
even escaped) are written as ``\\xNN``; in Markdown every ASCII punctuation character is
backslash-escaped (CommonMark lets any be) and line breaks become spaces, so no query can close
a table cell, open a link or inject HTML.
"""

from __future__ import annotations

import re
import string
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from feedback.evaluate.scoring import format_p
from feedback.evaluate.text import interval, query_line, verdict_line

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_PUNCTUATION = frozenset(string.punctuation)
SUITE = "searchpulse evaluate"


def xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _verdicts(result: dict[str, Any]) -> list[dict[str, Any]]:
    return result["comparison"].verdicts.to_dict(orient="records")


def junit(result: dict[str, Any], labels: Sequence[str]) -> str:
    """A ``<testsuites>`` document of one suite, ``B vs A``."""
    verdicts = _verdicts(result)
    failures = sum(bool(v["regression"]) for v in verdicts)
    skipped = sum(not v["paired"] for v in verdicts)
    name = xml_text(f"{SUITE}: {labels[1]} vs {labels[0]}")
    # the attributes the common JUnit schema (Jenkins') allows each element
    root = ET.Element("testsuites", name=SUITE, tests=str(len(verdicts)),
                      failures=str(failures), errors="0", time="0")
    suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(verdicts)),
                          failures=str(failures), errors="0", skipped=str(skipped), time="0")
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", classname=xml_text(f"evaluate.{v['measure']}"),
                             name=xml_text(v["slice"]), time="0")
        if not v["paired"]:
            ET.SubElement(case, "skipped", message=xml_text(v.get("note") or "no rankings"))
        elif v["regression"]:
            failure = ET.SubElement(
                case, "failure", type="regression",
                message=xml_text(f"{v['measure']} {v['slice']}: Δ {v['delta']:+.4f} "
                                 f"{interval(v)}, p {format_p(v['p'])} (fails below "
                                 f"−{v['margin']:g} with p < {v['significance']:g})"))
            failure.text = xml_text(_details(v))
        else:
            ET.SubElement(case, "system-out").text = xml_text(verdict_line(v))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _details(v: dict[str, Any]) -> str:
    lines = [verdict_line(v), f"mean A {v['mean_a']:.4f}, mean B {v['mean_b']:.4f}",
             f"worst {len(v['worst'])} queries (Δ, A → B, query, stratum, documents in/out):"]
    lines += [query_line(q, v["measure"]) for q in v["worst"]]
    return "\n".join(lines)


def markdown_text(text: object) -> str:
    """Text safe in a Markdown table cell: punctuation escaped, no line breaks. (Measure names
    are ir_measures' own, without ``|`` or backticks: they stand in code spans.)"""
    flat = " ".join(str(text).split())
    return "".join("\\" + c if c in _PUNCTUATION else c for c in flat)


def markdown(result: dict[str, Any], labels: Sequence[str], top: int) -> str:
    verdicts = _verdicts(result)
    failed = [v for v in verdicts if v["regression"]]
    a, b = (markdown_text(label) for label in labels)
    head = (f"### ❌ searchpulse evaluate: {len(failed)} gated "
            f"{'slice regresses' if len(failed) == 1 else 'slices regress'}"
            if failed else "### ✅ searchpulse evaluate: no significant regression")
    lines = [head, "", f"{b} against {a}; Δ = B − A with its 95 % interval; p of a paired "
                       "randomization test (10,000 rounds).", *_unranked(result, labels), "",
             "| | measure | slice | A | B | Δ | 95 % interval | p | worse / better | fails "
             "below |", "|---|---|---|---:|---:|---:|---|---:|---:|---|"]
    for v in verdicts:
        if not v["paired"]:
            lines.append(f"| ➖ | `{v['measure']}` | {markdown_text(v['slice'])} "
                         f"| | | | | | | {markdown_text(v.get('note') or '')} |")
            continue
        mark = "❌" if v["regression"] else "✅"
        lines.append(
            f"| {mark} | `{v['measure']}` | {markdown_text(v['slice'])} | "
            f"{v['mean_a']:.4f} | {v['mean_b']:.4f} | {v['delta']:+.4f} | "
            f"{markdown_text(interval(v))} | {markdown_text(format_p(v['p']))} | "
            f"{int(v['losses']):,} / {int(v['wins']):,} | "
            f"−{v['margin']:g}, p < {v['significance']:g} |")
    for v in failed:
        lines += ["", f"**Worst queries: `{v['measure']}`, {markdown_text(v['slice'])}** "
                      f"(top {min(top, len(v['worst']))})", "",
                  f"| Δ | A → B | query | stratum | entered (+) / left (−) the top "
                  f"{result['k']} (grade) |",
                  "|---:|---|---|---|---|"]
        for q in v["worst"]:
            m = q["measures"][v["measure"]]
            moved = " ".join([f"+{e['document']} ({_grade(e)})" for e in q["entered"][:5]]
                             + [f"−{e['document']} ({_grade(e)})" for e in q["left"][:5]])
            lines.append(f"| {m['delta']:+.4f} | {m['a']:.4f} → {m['b']:.4f} | "
                         f"{markdown_text(q['query'])} | {markdown_text(q['stratum'])} | "
                         f"{markdown_text(moved) or 'same documents, new order'} |")
    return "\n".join(lines) + "\n\n"


def _unranked(result: dict[str, Any], labels: Sequence[str]) -> list[str]:
    """The judged topics each run ranked nothing for (scored 0 in the gate as in the means),
    and the notes the measures' names leave out (an nDCG's gain, ERR's maximum grade)."""
    counts = [f"{markdown_text(name)} {run['unranked_topics']:,}"
              for name, run in zip(labels, result["runs"], strict=True)]
    lines = [] if not any(run["unranked_topics"] for run in result["runs"]) else [
        "", f"Judged topics a run ranks nothing for, each scored 0: {', '.join(counts)}."]
    if result["notes"]:
        lines += ["", "; ".join(f"`{m}`: {markdown_text(n)}" for m, n in result["notes"].items())
                  + "."]
    return lines


def _grade(entry: dict[str, Any]) -> str:
    return "unjudged" if entry["grade"] is None else str(entry["grade"])
