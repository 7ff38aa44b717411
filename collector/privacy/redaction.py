"""Secrets out of every message: the one function (``redact``) that errors, log lines
(``install`` puts it on every log record), summaries and the report pass text through.

A URL is parsed, not pattern-matched piece by piece: its user information ends at the ``@``
before its host, wherever ``?``, ``#``, ``;``, ``/`` or ``@`` appear in the password (libpq
reads ``postgresql://u:pa?ss@host/db`` as the password ``pa?ss``), and its query parameters
end at ``&``, whatever they hold. Outside URLs, ``password=…``-style keywords (libpq's
``host=… password=…`` strings, quoted or not) are masked to the end of the value. With the
URL given, every piece of its password a database's error repeats (a host parsed from a
password holding ``@``) is masked too. When in doubt the mask covers more: a host shown as
``***`` is a nuisance, a password shown is an incident.
"""

from __future__ import annotations

import logging
import re
import sys
import traceback
from types import TracebackType
from urllib.parse import unquote

MASK = "***"
# A parameter that holds a secret: password, sslpassword, passwd, pwd, sasl_password, secret,
# token, api_key / apikey.
_SECRET_NAME = r"(?:\w*pass(?:word|wd)?|pwd|secret|token|api[_-]?key)"
_URL = r"[a-zA-Z][a-zA-Z0-9+.-]*://\S*"
_KEYWORD = (rf"\b{_SECRET_NAME}\s*=\s*"
            r"(?:'(?:[^'\\]|\\.)*'?|\"(?:[^\"\\]|\\.)*\"?|\S*)")
_TOKEN = re.compile(rf"(?i)(?P<url>{_URL})|(?P<keyword>{_KEYWORD})")
_KEYWORD_VALUE = re.compile(rf"(?i)^({_SECRET_NAME}\s*=\s*)(.*)$", re.S)
_QUERY_SECRET = re.compile(rf"(?i)([?&;]{_SECRET_NAME}=)([^&]*)")
# What follows the @ that ends the user information: hosts (a name, an address, [IPv6]) with
# ports, then the end or a path, query, fragment or the punctuation a message adds.
_HOSTS = re.compile(r"(?:\[[^\]@]*\]|[^\s:/?#@\[\],]*)(?::\d*)?"
                    r"(?:,(?:\[[^\]@]*\]|[^\s:/?#@\[\],]*)(?::\d*)?)*(?=$|[/?#'\")\],;:.])")


def redact(text: str, url: str = "") -> str:
    """``text`` with every password replaced by ``***`` (the user name is kept); with ``url``,
    also every piece of that URL's password the text repeats."""
    for secret in _secrets_of(url):
        text = text.replace(secret, MASK)
    return _TOKEN.sub(_mask, text)


def _mask(match: re.Match[str]) -> str:
    if match.group("url"):
        return _mask_url(match.group("url"))
    name, _ = _KEYWORD_VALUE.match(match.group("keyword")).groups()  # type: ignore[union-attr]
    return name + MASK


def _password_spans(url: str) -> list[tuple[int, int]]:
    """Where ``url`` holds secrets: its password (after ``user:``, up to the @ that ends the
    user information) and every secret query parameter's value — the parameters found over
    the whole URL, not only after the host, so that an @ inside a parameter's value cannot
    pass for the end of the user information and hide it."""
    spans = [(m.start(2), m.end(2)) for m in _QUERY_SECRET.finditer(url)]
    start = url.index("://") + 3
    at = _end_of_userinfo(url, start)
    if at is not None:
        colon = url.find(":", start, at)
        if colon >= 0:
            spans.append((colon + 1, at))
    return spans


def _end_of_userinfo(url: str, start: int) -> int | None:
    """The @ that ends the user information, or None. Every @ followed by hosts may (a
    password may hold @, and so may a query: ``?options=x@y``): the last one whose hosts are
    followed by a path, else the last one; an @ further along a path is none."""
    ends: list[int] = []
    with_path: list[int] = []
    for at in (i for i in range(start, len(url)) if url[i] == "@"):
        hosts = _HOSTS.match(url, at + 1)
        if hosts:
            ends.append(at)
            if url.startswith("/", hosts.end()):
                with_path.append(at)
    if not ends:
        return None
    at = (with_path or ends)[-1]
    user = url[start:at].partition(":")[0]
    return None if "/" in user else at


def _mask_url(url: str) -> str:
    masked, last = [], 0
    for start, end in sorted(_password_spans(url)):
        if end <= last:
            continue
        masked.append(url[last:max(start, last)] + MASK)
        last = end
    return "".join(masked) + url[last:]


def _secrets_of(url: str) -> list[str]:
    """The password pieces of ``url`` (a URL or a libpq keyword string) worth masking where a
    message repeats them: the password, its percent-decoded form, and the parts between its
    @s and /s (where libpq's URI parser stops: it names a "host" parsed from what follows)."""
    if not url:
        return []
    secrets: list[str] = []
    for match in _TOKEN.finditer(url):
        if match.group("url"):
            token = match.group("url")
            secrets += [token[start:end] for start, end in _password_spans(token)]
        else:
            value = _KEYWORD_VALUE.match(match.group("keyword")).group(2)  # type: ignore[union-attr]
            secrets.append(value.strip("'\""))
    pieces = {piece for secret in secrets for form in (secret, unquote(secret))
              for piece in (form, *re.split("[@/]", form))}
    return sorted((s for s in pieces if len(s) >= 3), key=len, reverse=True)


class _RedactingRecord(logging.LogRecord):
    """A log record whose message, and the traceback a formatter adds to it, are redacted:
    every handler (the CLI's, a test's, a library user's) sees the masked text."""

    def getMessage(self) -> str:
        return redact(super().getMessage())

    @property  # type: ignore[override]
    def exc_text(self) -> str | None:  # what logging.Formatter caches and prints
        return self._exc_text

    @exc_text.setter
    def exc_text(self, text: str | None) -> None:
        self._exc_text = redact(text) if text else text


def _excepthook(kind: type[BaseException], error: BaseException, trace: TracebackType | None
                ) -> None:
    sys.stderr.write(redact("".join(traceback.format_exception(kind, error, trace))))


def install() -> None:
    """Every log record created from now on (any logger, ours or a library's), and the
    traceback of an uncaught exception, are redacted."""
    logging.setLogRecordFactory(_RedactingRecord)
    sys.excepthook = _excepthook
