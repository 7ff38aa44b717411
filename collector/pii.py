"""Personal data in query text: what it looks like, and how it is scrubbed or detected.

Shared by the top zero-result queries gauge (scrubbed text in a label) and the feedback job
(queries holding personal data are dropped). Product codes must survive: EAN/UPC/GTIN (8–14
digits) and ISBNs are not personal data, so digit runs count as card numbers only at 15–19
digits with a valid Luhn check, and as ids only from 15 digits on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"(?:\+|\b00)\d[\d ().-]{6,}\d|\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b")
DIGIT_RUN = re.compile(r"\b\d(?:[ -]?\d){14,}\b")
_HINT = re.compile(r"[\d@]")  # every built-in pattern needs a digit or an @
MAX_LABEL_LENGTH = 64


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char)
        if i % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _digit_run(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group())
    return "<card>" if len(digits) <= 19 and luhn_valid(digits) else "<id>"


class PiiScrubber:
    """Replaces personal data with placeholders (``<email>``, ``<phone>``, ``<card>``, ``<id>``,
    ``<redacted>`` for configured patterns) and reports whether any was found."""

    def __init__(self, extra_patterns: Iterable[str] = ()) -> None:
        self.extra = [re.compile(p) for p in extra_patterns]
        # One pass finds any of them: detection is on the feedback job's path over every query.
        self._any = re.compile("|".join(f"(?:{p.pattern})" for p in (EMAIL, PHONE, DIGIT_RUN,
                                                                      *self.extra)))

    def scrub(self, text: str) -> str:
        text = EMAIL.sub("<email>", text)
        text = DIGIT_RUN.sub(_digit_run, text)
        text = PHONE.sub("<phone>", text)
        for pattern in self.extra:
            text = pattern.sub("<redacted>", text)
        return text

    def contains_pii(self, text: str) -> bool:
        return self._any.search(text) is not None

    def contains_pii_each(self, texts: Iterable[str]) -> list[bool]:
        """``contains_pii`` of many texts; without extra patterns, a text with neither a
        digit nor an @ is passed over with one cheap search."""
        find = self._any.search
        if self.extra:
            return [find(text) is not None for text in texts]
        hint = _HINT.search
        return [hint(text) is not None and find(text) is not None for text in texts]

    def label(self, text: str) -> str:
        """Scrubbed and length-capped: safe as a label value."""
        scrubbed = self.scrub(text)
        if len(scrubbed) > MAX_LABEL_LENGTH:
            scrubbed = scrubbed[: MAX_LABEL_LENGTH - 1] + "…"
        return scrubbed
