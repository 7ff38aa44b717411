"""Pure decisions about searches: query normalization, the kind of a reformulation, whether
one query record continues the typing of another, why a client is automated.

Kept free of state so that the simulator's ground truth, the feedback job and the tests apply
exactly the definitions written in docs/metrics.md.
"""

from __future__ import annotations

import unicodedata

from rapidfuzz.distance import Levenshtein

SPELLING = "spelling"
SPECIALIZATION = "specialization"
GENERALIZATION = "generalization"
OTHER = "other"
REFORMULATION_KINDS = (SPELLING, SPECIALIZATION, GENERALIZATION, OTHER)
# Why a client's searches are automated (label values of searchpulse_automated_searches_total,
# docs/metrics.md "Automated traffic"): its client id matches automated.client_patterns; it
# searched faster than any person does; it repeated its own queries without ever interacting;
# it made many searches with results and never interacted with one.
DECLARED = "declared"
RATE = "rate"
REPETITIVE = "repetitive"
SILENT = "silent"
AUTOMATED_REASONS = (DECLARED, RATE, REPETITIVE, SILENT)

# Every Unicode punctuation character plus whitespace: what normalization strips at both ends;
# not "@" (NFKC's for ＠ and ﹫ too): "maximilian.horst@" is an address being typed, and the
# detectors must see it as one (docs/privacy.md).
# Unicode has punctuation in its first two planes only (tests/collector/test_outcomes.py holds
# this to the whole range): scanning those is 0.03 s of every command's start, not 0.23 s.
PUNCTUATION_PLANES = 0x20000
_EDGE = "".join(
    chr(c) for c in range(PUNCTUATION_PLANES)
    if unicodedata.category(chr(c)).startswith("P") and chr(c) != "@"
) + " \t\n\r\x0b\x0c"


MAX_QUERY_CHARS = 1000  # a query is its first thousand characters: no rule runs on more
# Control characters (C0, DEL, C1) separate words as whitespace does: a NUL or an ESC from a
# broken front end never becomes part of a query (nor of a label, a file or a page).
# The bidi embeddings, overrides and isolates and the byte-order mark are removed: shown raw,
# "\u202edrowssap" reads "password" reversed wherever the query is shown, and as a space one
# inside "a\u2068t" or "67\u202e89" would split what the personal-data detectors must read whole.
_CONTROLS: dict[int, str | None] = {
    **dict.fromkeys((*range(0x20), *range(0x7F, 0xA0)), " "),
    **dict.fromkeys((*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0xFEFF)),
}


def normalize_query(text: str) -> str:
    """NFKC, casefold, control characters as spaces (bidi controls and BOM removed),
    whitespace collapsed, leading and trailing punctuation stripped, cut at
    ``MAX_QUERY_CHARS`` (a megabyte of "query" costs no more than a long one downstream)."""
    folded = unicodedata.normalize("NFKC", text[:4 * MAX_QUERY_CHARS]).casefold()
    if not folded.isprintable():  # (most queries: one pass in C)
        folded = folded.translate(_CONTROLS)
    return " ".join(folded.split()).strip(_EDGE)[:MAX_QUERY_CHARS]


def reformulation_kind(before: str, after: str) -> str:
    """Classify a reformulation of normalized query ``before`` into normalized ``after``.

    Checked in order: spelling (edit distance ≤ 2 or ≤ 20 % of the longer query),
    specialization (keeps every term, adds some), generalization (drops terms, adds none), other.
    """
    longest = max(len(before), len(after))
    limit = max(2, longest // 5)  # d ≤ 20 % of n  ⇔  d ≤ floor(n / 5) for whole d
    if Levenshtein.distance(before, after, score_cutoff=limit) <= limit:
        return SPELLING
    old, new = set(before.split()), set(after.split())
    if old < new:
        return SPECIALIZATION
    if new < old:
        return GENERALIZATION
    return OTHER


def continues(before: str, after: str, max_edit: int) -> bool:
    """Whether normalized query ``after`` continues the typing of ``before`` (docs/metrics.md,
    "Search intents"): it extends it, deletes from its end, equals it, or is an edit of at most
    ``max_edit`` characters of it. With the time between the two records and what the user did
    in between, this decides whether ``before`` was a keystroke of ``after``'s search."""
    if after.startswith(before) or before.startswith(after):
        return True
    return Levenshtein.distance(before, after, score_cutoff=max_edit) <= max_edit
