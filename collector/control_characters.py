"""Control characters (C0, DEL, C1) in text handed to another tool: none leaves raw.

A normalized query holds none (collector/outcomes.py turns them into spaces), but a writer
must not depend on what it is given: a NUL or an ``ESC [31m`` written byte for byte into a
CSV, a TSV line, a page or a label value is a broken import, a forged line or a terminal that
obeys whoever typed the query. Each hand-off format gets them by its own rules:

* formats that have no escape for them — CSV (RFC 4180 allows none in a field), TSV topics,
  Prometheus label values (the text format escapes only ``\\``, ``"`` and a line feed), HTML
  (a control character is a parse error there, raw or as a reference) — get the visible
  ``\\xNN`` of each (``visible``), as ``evaluate --junit`` writes what XML cannot hold; HTML
  keeps its own whitespace (tab, line feed, form feed, carriage return);
* JSON escapes them (``json_text``): ``json.dumps`` writes C0 as ``\\u00NN`` and, without
  ``ensure_ascii``, DEL and C1 raw — these are escaped the same way, and every JSON reader
  reads back the exact text.
"""

from __future__ import annotations

import json
import re
from typing import Any

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
_NOT_IN_HTML = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")  # all but HTML's whitespace
_RAW_IN_JSON = re.compile("[\x7f-\x9f]")  # what json.dumps leaves raw


def _hex(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def visible(text: str) -> str:
    """``text`` with each control character as ``\\xNN`` (CSV, TSV, label values)."""
    return text if text.isprintable() else _CONTROLS.sub(_hex, text)


def visible_html(page: str) -> str:
    """A page with each control character but HTML's whitespace as ``\\xNN``."""
    return _NOT_IN_HTML.sub(_hex, page)


def json_text(body: Any, indent: int | None = 2) -> str:
    """``body`` as JSON (UTF-8 text, not ASCII escapes) with no control character raw."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}",
                            json.dumps(body, indent=indent, ensure_ascii=False))
