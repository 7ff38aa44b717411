"""The form of a text the personal-data detectors read: what a person sees, not how it is
encoded.

A card number with zero-width spaces between its digits, an IBAN in Arabic-Indic digits, an
SSN with en dashes or a phone number with no-break spaces reads the same to a person and to
anyone who copies it, but not to a pattern of ASCII digits, hyphens and spaces. The detectors
therefore read a **canonical form** (``canonical``), used for detection only — what is shown
stays the text as normalized (collector/outcomes.py ``normalize_query``), or is withheld:

* NFKD (fullwidth, superscript and circled digits, compatibility spaces and hyphens), and
  every combining mark dropped: ``arro\u0301ba``, ``arróba`` and ``arroba`` read the same;
* invisible characters removed: format characters (Unicode category Cf: zero-width space and
  joiners, soft hyphen, word joiner, BOM, bidi controls, tags), the spacing forms of marks
  (´ ¨: NFKD makes them a space and a mark), control characters other than whitespace (Cc);
* every decimal digit (Nd, any script: Arabic-Indic, Devanagari, Thai, mathematical bold …)
  as its ASCII digit;
* separators unified: every dash and minus sign as ``-``, every space (Zs, and the whitespace
  controls) as one ``' '``, the dots, slashes and commas of other scripts (ideographic full
  stop, Arabic decimal and thousands separators, fraction slash …) as ``.``, ``/``, ``,``.

The detectors also read a **loose form** (``loose``), where a run of separator-like characters
between two digits (punctuation, symbols, invisible characters, spaces around them) that is
not one of the usual separators (a ``-``, a ``.`` or a space) becomes one ``:``, a separator
the number detectors accept: ``4148|5253|8885|3930``, ``83[.]145[.]201[.]17``,
``501/22/3344`` and ``590\u200b88\u200b3012`` (a zero-width space *between* digits) read as
numbers with a separator; the check digits (Luhn, mod 97, an SSN's area) keep product codes
visible. The canonical form is read first, so the loose form only ever withholds more.

The table covers the code points that carry such characters (planes 0, 1 and 14) and is built
once per process, when the detectors are made (``prepare``); a printable ASCII text is its own
canonical form (most queries cost a ``str.isascii`` and a ``str.isprintable``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

_REMOVED = frozenset(("Cf", "Mn", "Me", "Cc"))
# Dash-like characters that are not in category Pd (dash punctuation).
_DASHES = "\u2212\u2796\u02d7\u2043\u207b\u208b\ufe63\uff0d\u2e3a\u2e3b"
# Default-ignorable code points (Unicode's DerivedCoreProperties: a renderer shows nothing for
# them, assigned or not) that are not format characters or marks: Hangul fillers, unassigned
# ones beside format characters, the whole tags block; and the blank Braille pattern, shown as
# a space.
_INVISIBLE = ("\u115f\u1160\u3164\uffa0\u2065" + "".join(map(chr, range(0xFFF0, 0xFFF9)))
              + "".join(map(chr, range(0xE0000, 0xE1000))))
_BLANK = "\u2800"
# Dots, slashes and commas of other scripts that NFKC leaves as they are.
_SEPARATORS = {
    ".": "\u00b7\u2022\u2024\u2027\u2219\u22c5\u3002\u30fb\uff65\u0701\u0702\u06d4",
    "/": "\u2044\u2215\u29f8\u29f5",
    ",": "\u060c\u066b\u066c\u3001\u201a\u2e41",
}
# The planes that hold every Cf, Mn, Me, Nd, Pd and Zs character (the others hold none).
_PLANES = (range(0x20000), range(0xE0000, 0xE1000))


# What an invisible character becomes before the two forms part: removed from the canonical
# form, a separator between digits in the loose one (a control character cannot survive the
# table, so it cannot be confused with one that was typed).
_MARK = "\x00"
_MARKS = frozenset(("Mn", "Me"))
# A run of characters that are neither letters nor digits: the loose form's candidates.
_RUN = re.compile(r"[\W_]+")


@cache
def _table() -> dict[int, str | None]:
    """Code point → its canonical replacement (None: removed); identity entries left out."""
    table: dict[int, str | None] = {}
    for plane in _PLANES:
        for code in plane:
            character = chr(code)
            category = unicodedata.category(character)
            if category == "Nd":
                table[code] = str(unicodedata.decimal(character))
            elif character.isspace():
                table[code] = " "
            elif category in _MARKS:
                table[code] = None
            elif category in _REMOVED:
                table[code] = _MARK
            elif category == "Pd":
                table[code] = "-"
    table.update(dict.fromkeys(map(ord, _INVISIBLE), _MARK))
    for replacement, characters in (("-", _DASHES), (" ", _BLANK), *_SEPARATORS.items()):
        table.update(dict.fromkeys(map(ord, characters), replacement))
    return {code: value for code, value in table.items() if value != chr(code)}


@cache
def _spacing_marks() -> dict[int, str]:
    """The spacing forms of marks (´ ¨ ¸ ˜ ゛ …, all in plane 0), whose NFKD is a space and
    the mark: an invisible character, not a space (83´145´201´17 is an address)."""
    marks: dict[int, str] = {}
    for code in range(0x10000):
        decomposed = unicodedata.normalize("NFKD", chr(code))
        if len(decomposed) > 1 and decomposed[0] == " " and all(
                unicodedata.category(c) in _MARKS for c in decomposed[1:]):
            marks[code] = _MARK
    return marks


def prepare() -> None:
    """Build the tables now (~50 ms of CPU, once per process): the detectors do when they are
    made, so that no release pays for it within its scan budget."""
    _table()
    _spacing_marks()


def _marked(text: str) -> str:
    """``text`` through the table, its invisible characters as ``_MARK``."""
    if text.isascii() and text.isprintable():
        return text
    return unicodedata.normalize("NFKD", text.translate(_spacing_marks())).translate(_table())


def canonical(text: str) -> str:
    """``text`` as the detectors read it (module docstring); idempotent."""
    if text.isascii() and text.isprintable():
        return " ".join(text.split()) if "  " in text else text
    return " ".join(_marked(text).replace(_MARK, "").split())


def _separator(run: re.Match[str]) -> str:
    """A run of non-alphanumeric characters in the loose form: between two digits, the usual
    separator it is or ``:``; elsewhere, as in the canonical form."""
    text, start, end = run.string, run.start(), run.end()
    separator = run.group()
    if not (0 < start and end < len(text) and text[start - 1].isdigit() and text[end].isdigit()):
        return separator.replace(_MARK, "")
    if separator in (" ", "-", "."):
        return separator
    core = "".join(separator.replace(_MARK, ":").split())  # an invisible one counts
    if core in ("", "."):
        return core or " "
    return ":"


def loose(text: str) -> str:
    """``text`` as the number detectors also read it (module docstring)."""
    return " ".join(_RUN.sub(_separator, _marked(text)).split())
