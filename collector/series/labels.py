"""Label values with a hard cap: the first ``cap`` distinct values are kept, the rest fold into
``other``. Values are scrubbed so a producer cannot put arbitrary text into a label."""

from __future__ import annotations

import re

OTHER = "other"
NONE = "none"
_MAX_LENGTH = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/-]+")


def scrub(value: object) -> str:
    """Keep a short, printable identifier: unsafe runs become ``_``, length is capped. A
    value with no safe character at all (``緑``, ``青``: a variant named in another script) is
    its UTF-8 bytes in hex after ``x`` (``xe7b791``), so two such names stay two variants and
    none of them reads as missing (``none``)."""
    raw = str(value)
    text = _UNSAFE.sub("_", raw)[:_MAX_LENGTH].strip("_")
    if text or not raw:
        return text or NONE
    return ("x" + raw.encode("utf-8", "backslashreplace").hex())[:_MAX_LENGTH]


class CappedLabel:
    """Maps raw producer values to at most ``cap`` label values plus ``other`` and ``none``."""

    __slots__ = ("name", "cap", "folded", "_kept", "_values")

    def __init__(self, name: str, cap: int) -> None:
        self.name = name
        self.cap = cap
        self.folded = 0  # resolutions that fell into `other`
        self._kept: dict[object, str] = {}  # raw → value, bounded at 4 × cap raw spellings
        self._values: set[str] = set()

    def resolve(self, raw: object) -> str:
        value = self._kept.get(raw)
        if value is not None:
            return value
        if raw is None:
            return NONE
        value = scrub(raw)
        if value in (OTHER, NONE):
            return value
        if value in self._values or len(self._values) < self.cap:
            self._values.add(value)
            if len(self._kept) < 4 * self.cap:
                self._kept[raw] = value
            return value
        self.folded += 1
        return OTHER

    def values(self) -> list[str]:
        return sorted(self._values)
