"""The form of a text the personal-data detectors read: what a person sees, not how it is
encoded.

A card number with zero-width spaces between its digits, an IBAN in Arabic-Indic digits, an
SSN with en dashes or a phone number with no-break spaces reads the same to a person and to
anyone who copies it, but not to a pattern of ASCII digits, hyphens and spaces. The detectors
therefore read a **canonical form** (``canonical``), used for detection only — what is shown
stays the text as normalized (collector/outcomes.py ``normalize_query``), or is withheld:

* NFKC (fullwidth, superscript and circled digits, compatibility spaces and hyphens);
* invisible characters removed: format characters (Unicode category Cf: zero-width space and
  joiners, soft hyphen, word joiner, BOM, bidi controls, tags), combining marks that composed
  with nothing (Mn, Me: a combining low line or a keycap on a digit), control characters
  other than whitespace (Cc);
* every decimal digit (Nd, any script: Arabic-Indic, Devanagari, Thai, mathematical bold …)
  as its ASCII digit;
* separators unified: every dash and minus sign as ``-``, every space (Zs, and the whitespace
  controls) as one ``' '``, the dots, slashes and commas of other scripts (ideographic full
  stop, Arabic decimal and thousands separators, fraction slash …) as ``.``, ``/``, ``,``.

The table covers the code points that carry such characters (planes 0, 1 and 14) and is built
once per process, when the detectors are made (``prepare``); a printable ASCII text is its own
canonical form (most queries cost a ``str.isascii`` and a ``str.isprintable``).
"""

from __future__ import annotations

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
            elif category in _REMOVED:
                table[code] = None
            elif category == "Pd":
                table[code] = "-"
    table.update(dict.fromkeys(map(ord, _INVISIBLE)))
    for replacement, characters in (("-", _DASHES), (" ", _BLANK), *_SEPARATORS.items()):
        table.update(dict.fromkeys(map(ord, characters), replacement))
    return {code: value for code, value in table.items() if value != chr(code)}


def prepare() -> None:
    """Build the table now (~70 ms, once per process): the detectors do when they are made, so
    that no release pays for it within its scan budget."""
    _table()


def canonical(text: str) -> str:
    """``text`` as the detectors read it (module docstring); idempotent."""
    if text.isascii() and text.isprintable():
        return " ".join(text.split()) if "  " in text else text
    folded = unicodedata.normalize("NFKC", text).translate(_table())
    return " ".join(folded.split())
