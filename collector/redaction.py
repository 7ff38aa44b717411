"""Secrets out of every message: a URL's password (any scheme, empty user names, ``@`` or ``/``
inside the password), ``password=`` style parameters of URLs and libpq DSNs. Used wherever a
store URL or a setting's value can reach an error, a log line, a summary or the report."""

from __future__ import annotations

import re

MASK = "***"
# A secret-bearing parameter: ?password=…, &sslpassword=…, "password=… host=…" (libpq).
_PARAMETER = re.compile(
    r"(?i)\b((?:ssl)?pass(?:word|wd)?|pwd|secret|token|api[_-]?key)(\s*=\s*)('[^']*'|[^&\s;]*)")
# Everything between "://" and the last "@" before the query string: user:password.
_USERINFO = re.compile(r"(://)([^?#]*)@")


def redact(text: str, url: str = "") -> str:
    """``text`` with every password replaced by ``***`` (the user name is kept); with ``url``,
    also every piece of that URL's password the text repeats (a database's error message
    names a host parsed from a password holding ``@``)."""
    for secret in _secrets_of(url):
        text = text.replace(secret, MASK)
    text = _USERINFO.sub(_mask_userinfo, text)
    return _PARAMETER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)


def _secrets_of(url: str) -> list[str]:
    secrets = [m.group(3).strip("'") for m in _PARAMETER.finditer(url)]
    userinfo = _USERINFO.search(url)
    if userinfo and ":" in userinfo.group(2) and "/" not in userinfo.group(2).split(":")[0]:
        password = userinfo.group(2).partition(":")[2]
        secrets += [password, *password.split("@")]
    return sorted({s for s in secrets if len(s) >= 3}, key=len, reverse=True)


def _mask_userinfo(match: re.Match[str]) -> str:
    user, colon, _ = match.group(2).partition(":")
    if "/" in user:  # no user info at all: an @ further along the path
        return match.group(0)
    return f"{match.group(1)}{user}{':' + MASK if colon else ''}@"
