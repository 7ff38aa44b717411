"""Whether a deployment's selector is a list of Prometheus label matchers, and nothing else.

The selector (`alerts.deployment.selector`, `generate --selector`) is pasted between the braces
of every series the rules read (``up{SELECTOR}``, ``…{SELECTOR,application="…"}``), so text that
is not matchers either breaks every rule (``}{``) or adds PromQL of its own to them
(``job="a"} or vector(1) or {x="``). It is checked with PromQL's own grammar for a matcher
list: ``name op "value"`` separated by commas, op one of ``= != =~ !~``, the value a double- or
single-quoted string with Go's escapes or a backquoted raw string, at least one matcher and no
trailing comma (a rule appends its own matchers after a comma).
"""

from __future__ import annotations

import re

_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
_ESCAPE = r"\\(?:[abfnrtv\\'\"]|x[0-9a-fA-F]{2}|[0-7]{3}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})"
_VALUE = (rf'"(?:[^"\\\n]|{_ESCAPE})*"'
          rf"|'(?:[^'\\\n]|{_ESCAPE})*'"
          r"|`[^`]*`")
_MATCHER = re.compile(rf"\s*({_NAME})\s*(=~|!~|!=|=)\s*(?:{_VALUE})\s*")
_NAME_START = re.compile(rf"\s*{_NAME}\s*")


def problem(selector: str) -> str | None:
    """Why ``selector`` is not a comma-separated list of label matchers (where it goes wrong),
    or None when it is one."""
    at = 0
    while True:
        found = _MATCHER.match(selector, at)
        if not found:
            return _why(selector, at)
        at = found.end()
        if at == len(selector):
            return None
        if selector[at] != ",":
            return f"expected ',' or the end at offset {at}, got {selector[at:at + 10]!r}"
        at += 1


def _why(selector: str, at: int) -> str:
    """What the matcher starting at ``at`` lacks: a label name, an operator or a quoted value."""
    rest = selector[at:]
    if not rest.strip():
        return ("empty" if at == 0 else f"a trailing ',' at offset {at - 1}") + \
            ': needs at least one matcher like job="searchpulse"'
    name = _NAME_START.match(selector, at)
    if not name:
        return f"expected a label name at offset {at}, got {rest[:10]!r}"
    after = name.end()
    if not re.match(r"=~|!~|!=|=", selector[after:]):
        return (f"expected one of = != =~ !~ after {name.group().strip()!r} at offset "
                f"{after}, got {selector[after:after + 10]!r}")
    return (f"the value of {name.group().strip()!r} (from offset {after}) is not one quoted "
            "string (\"…\" with \\\" and \\\\ escaped, '…' or `…`)")
