"""The text the Search Relevance Workbench accepts, and names made to fit it.

SRW's PUT actions for query sets and judgments validate their texts with ``TextValidationUtil``
(opensearch-project/search-relevance, ``src/main/java/org/opensearch/searchrelevance/utils/
TextValidationUtil.java``) and answer HTTP 400 to the whole request when one text fails: a set of
1,000 queries is refused for one ``21" monitor``. Read at two commits, which differ:

* a261178c95ff994be7f2775638390153d7a33876: ``validateText`` — not null, not empty, at most
  ``maxLength`` characters (2,000 by default), none of ``"`` ``\\`` ``<`` ``>``; ``validateName``
  is ``validateText`` at 50, ``validateDescription`` at 250; ``validateQuerySetValue`` (a query
  set's ``queryText``, through ``validateAndParseQuery``) adds: no ``\\n``, ``\\r``, ``#`` or
  ``:`` (its "queryText#\\nkey: value" format);
* 0b75cf84b5b2f43367410d505b138937b0ca361a (newer): the same, but ``validateQuerySetValue``
  refuses only ``\\n`` and ``\\r`` ("delimiter-based concatenation has been removed").

``RestPutQuerySetAction`` (5d337e778d24093d085e0ac5d8f6d1e7b4d53952) applies ``validateName`` to
``name`` and ``validateDescription`` to ``description``, ``RestPutJudgmentAction`` the same to a
judgment's; the import processor (``ImportJudgmentsProcessor``) checks a rating's ``docId`` and
``rating`` but not its query text. What is written here passes the strictest of these releases.

Java's ``String.length()`` counts UTF-16 code units: a character outside the Basic Multilingual
Plane (an emoji) counts twice, and so it does here.
"""

from __future__ import annotations

import zlib

from collector.judgments.readers import book_name

MAX_NAME = 50
MAX_DESCRIPTION = 250
MAX_TEXT = 2000
FORBIDDEN = frozenset('"\\<>')  # DANGEROUS_CHARS_PATTERN: in every text
QUERY_SET_RESERVED = frozenset("\r\n#:")  # validateQuerySetValue, a261178c


def java_length(text: str) -> int:
    """``String.length()``: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def refusal(text: str, max_length: int, reserved: frozenset[str] = frozenset()) -> str | None:
    """Why SRW refuses ``text`` (a reason code), or None when it accepts it."""
    if not text:
        return "empty"
    if java_length(text) > max_length:
        return "too_long"
    if FORBIDDEN & set(text):
        return "forbidden_character"
    if reserved & set(text):
        return "reserved_character"
    return None


def query_text_refusal(text: str) -> str | None:
    """Why a query set refuses ``text`` as a ``queryText`` (or None)."""
    return refusal(text, MAX_TEXT, QUERY_SET_RESERVED)


def _cleaned(text: str) -> str:
    return "".join("_" if c in FORBIDDEN or c in "\r\n" else c for c in text)


def name(application: str, title: str, suffix: str = "") -> str:
    """A name SRW accepts for ``title`` (``candidates 2026-11-30``) of ``application``, unique
    per (application, title, suffix): ``APP · searchpulse TITLE SUFFIX`` when that passes
    ``validateName``; else the title and suffix first, then a hash of the full name (so two
    applications that shorten alike stay apart), then as much of the application as fits,
    forbidden characters replaced by ``_``."""
    full = book_name(application, title) + suffix
    if refusal(full, MAX_NAME) is None:
        return full
    shortened = f"{title}{suffix} {zlib.crc32(full.encode()):08x} {_cleaned(application)}"
    while java_length(shortened) > MAX_NAME:
        shortened = shortened[:-1]
    return shortened.rstrip()


def description(text: str) -> str:
    """``text`` as SRW accepts it for a description: forbidden characters replaced, cut at 250."""
    cleaned = _cleaned(text)
    while java_length(cleaned) > MAX_DESCRIPTION:
        cleaned = cleaned[:-1]
    return cleaned
