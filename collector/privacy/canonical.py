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
  as its ASCII digit, and every other numeral worth one digit (Unicode's numeric value 0–9:
  CJK 〇 零 一 … 九 and the financial 壱 弐 参 壹 … 玖, Hangzhou 〡 … 〩, circled ① ⓪ ❶ ➀ ⓵,
  parenthesized ⑴, with a full stop ⒈ or a comma 🄂, superscripts and subscripts, Roman Ⅳ,
  Ethiopic ፬, counting rods …) as that digit — the enclosed and circled numbers above nine
  (⑫ ⑽ ⒓ ⓬ ❿ ㉑) as their digits, without the brackets or the stop, so that ``⑴⑵⑶-⑷⑸-⑹⑺⑻⑼``
  reads ``123-45-6789``; the numerals that multiply (十 百 千 万, Tamil ௰) stay what they are;
* a dot said as a word between two digits, bracketed or spaced (``151[dot]101[dot]65[dot]140``,
  ``10 punkt 0``), as ``.``;
* separators unified: every dash and minus sign as ``-``, every space (Zs, and the whitespace
  controls) as one ``' '``, the dots, slashes, commas and colons of other scripts (ideographic
  full stop, Arabic decimal and thousands separators, fraction slash; ratio ∶, modifier letter
  colons ː ꞉ ˸, Armenian ։, Hebrew ׃, Syriac, Ethiopic, Mongolian, runic, Lisu colons …) as
  ``.``, ``/``, ``,``, ``:`` (an IPv6 address written with look-alike colons is an address).

The detectors also read a **loose form** (``loose``), where a run of separator-like characters
between two digits (punctuation, symbols, invisible characters, spaces around them) that is
not one of the usual separators (a ``-``, a ``.`` or a space) becomes one ``:``, a separator
the number detectors accept: ``4148|5253|8885|3930``, ``83[.]145[.]201[.]17``,
``501/22/3344`` and ``590\u200b88\u200b3012`` (a zero-width space *between* digits) read as
numbers with a separator; the check digits (Luhn, mod 97, an SSN's area) keep product codes
visible. The canonical form is read first, so the loose
form only ever withholds more.

The table covers the code points that carry such characters (planes 0, 1 and 14; the numerals
of plane 2 too) and is built once per process, when the detectors are made (``prepare``); a
printable ASCII text is its own canonical form but for digits written one by one (most
queries cost a ``str.isascii``, a ``str.isprintable`` and a few ``in`` tests).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

_REMOVED = frozenset(("Cf", "Mn", "Me", "Cc"))
# Dash-like characters that are not in category Pd (dash punctuation).
# The katakana-hiragana prolonged sound mark (and its halfwidth form) is what a Japanese
# keyboard in full-width mode types for "-" between digits (090ー2741ー6093).
_DASHES = "\u2212\u2796\u02d7\u2043\u207b\u208b\ufe63\uff0d\u2e3a\u2e3b\u30fc\uff70"
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
    # what reads as a colon (Unicode's confusables of ":"; the fullwidth, small and vertical
    # ones are NFKD's already)
    ":": "\u02d0\u02d1\u02f8\u0589\u05c3\u0703\u0704\u0705\u0708\u0709\u1365\u1804"
         "\u16ec\u205a\u2236\u2982\ua4fd\ua6f4\ua789",
}
# The planes that hold every Cf, Mn, Me, Nd, Pd and Zs character (the others hold none).
_PLANES = (range(0x20000), range(0xE0000, 0xE1000))


# What an invisible character becomes before the two forms part: removed from the canonical
# form, a separator between digits in the loose one (a control character cannot survive the
# table, so it cannot be confused with one that was typed).
_MARK = "\x00"
_MARKS = frozenset(("Mn", "Me"))
# A run of characters that are neither letters nor digits: the loose form's candidates — but
# a lone space, "-" or ".", which ``_separator`` would return as it is (most runs: a Python
# call saved each; a megabyte of "+123 45 …" in 0.3 s, not 0.5 s).
_RUN = re.compile(r"[\W_]{2,}|[^\w .-]|_")
# Digits written one by one in brackets or with a stop, as NFKC leaves ⑴ ⒈ 🄂 (and as anyone
# may type them): "(1)(2)(3)" and "1.2.3." read 123. A digit alone in brackets not inside
# other brackets ("(11) 91234-5678" keeps its area code); two or more single digits each
# followed by the same stop, the last one too (1.1.1.1 is an address, 1.5 a size).
_DIGITWISE = re.compile(r"(?<!\()\((\d)\)(?!\))|(?:\b\d\.){2,}(?!\d)|(?:\b\d,){2,}(?!\d)")


def _written_out(text: str) -> str:
    """``text`` with its digit-wise written numbers as digits (``_DIGITWISE``)."""
    if ("(" not in text and ". " not in text and "," not in text and not text.endswith(".")
            or _ASCII_DIGITS.isdisjoint(text)):
        return text  # (most texts: C-level tests, no regex)
    return _DIGITWISE.sub(lambda m: m.group(1) or m.group().translate(_STOPS), text)


_STOPS = str.maketrans("", "", ".,")
_ASCII_DIGITS = frozenset("0123456789")


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


def _numeral(character: str) -> str | None:
    """The ASCII digits a numeral that is not a decimal digit (Nd) stands for, or None: a
    numeric value of 0–9, whatever the character (一, ①, ⑴, ⒈, ❶, ², Ⅳ, ፬); above nine,
    only a number in a circle, brackets or with a stop (⑫, ⑽, ⒓, ⓬, ❿: a digit string
    inside), not one that multiplies (十, 百, ௰: "二十" is 20, not 210)."""
    value = unicodedata.numeric(character, None)
    if value is None or value != int(value) or unicodedata.category(character) == "Nd":
        return None
    if value <= 9:
        return str(int(value))
    if unicodedata.category(character) == "No" and (
            "CIRCLED" in unicodedata.name(character, "")
            or any(c in "0123456789" for c in unicodedata.normalize("NFKD", character))):
        return str(int(value))
    return None


# The blocks that hold Latin small capitals: IPA extensions (ʀ ʏ ɢ ʜ ɪ ʟ ɴ ʙ), phonetic
# extensions (ᴀ ᴛ ᴅ ᴏ …), Latin Extended-D (ꞯ ꟺ).
_SMALL_CAPITAL_BLOCKS = (*range(0x0250, 0x02B0), *range(0x1D00, 0x1D80), *range(0xA720, 0xA800))


def _small_capital(character: str) -> str | None:
    """The ASCII letter a Latin small capital stands for (ᴀ ᴛ ɢ ʜ ɪ ʟ …), which NFKC leaves
    as it is: the "fancy text" generators write ``jane ᴀᴛ example ᴅᴏᴛ com`` with them."""
    name = unicodedata.name(character, "")
    if name.startswith("LATIN LETTER SMALL CAPITAL ") and len(name) == 28:
        return name[-1].lower()
    return None


@cache
def _before_nfkd() -> dict[int, str]:
    """What is replaced before NFKD (which would make ⑴ "(1)" and ´ a space and a mark):
    numerals (``_numeral``; planes 0–2), Latin small capitals as their letters
    (``_small_capital``), and the spacing forms of marks (´ ¨ ¸ ˜ ゛ …, all
    in plane 0), whose NFKD is a space and the mark: an invisible character, not a space
    (83´145´201´17 is an address)."""
    table: dict[int, str] = {}
    for character in filter(str.isnumeric, map(chr, range(0x30000))):  # C-level: ~25 ms
        digits = _numeral(character)
        if digits is not None:
            table[ord(character)] = digits
    for code in _SMALL_CAPITAL_BLOCKS:
        small = _small_capital(chr(code))
        if small:
            table[code] = small
    for code in range(0x10000):
        decomposed = unicodedata.normalize("NFKD", chr(code))
        if len(decomposed) > 1 and decomposed[0] == " " and all(
                unicodedata.category(c) in _MARKS for c in decomposed[1:]):
            table[code] = _MARK
    return table


def prepare() -> None:
    """Build the tables now (~100 ms of CPU, once per process): the detectors do when they
    are made, so that no release pays for it within its scan budget."""
    _table()
    _before_nfkd()


def _marked(text: str) -> str:
    """``text`` through the tables, its invisible characters as ``_MARK``."""
    if text.isascii() and text.isprintable():
        return text
    return unicodedata.normalize("NFKD", text.translate(_before_nfkd())).translate(_table())


def canonical(text: str) -> str:
    """``text`` as the detectors read it (module docstring); idempotent."""
    if text.isascii() and text.isprintable():
        return _dots_said(_written_out(" ".join(text.split()) if "  " in text else text))
    return _dots_said(_written_out(" ".join(_marked(text).replace(_MARK, "").split())))


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


# A dot said as a word between two digits, in brackets or spaced: 151[dot]101[dot]65[dot]140,
# 151 (punkt) 101, 10 dot 0 dot 0 dot 1 — the loose form reads it as the dot it stands for.
_DOT_WORDS = "dot|d0t|punkt|punto|ponto|punt|kropka|point"
_DOT_WORD = re.compile(rf"(?<=\d)(?:\s*[\[({{<]\s*(?:{_DOT_WORDS})\s*[\])}}>]\s*"
                       rf"|\s+(?:{_DOT_WORDS})\s+)(?=\d)", re.IGNORECASE)


# A dash said as a word between two groups of digits (415 dash 371 dash 7607, 212 hyphen …):
# people dictating a number write the separator they would say; without it the groups are
# digits a product query has too.
_DASH_WORD = re.compile(r"(?<=\d)\s+(?:dash|hyphen|guion|tiret|strich|trattino|streepje)\s+(?=\d)",
                        re.IGNORECASE)


def _dots_said(text: str) -> str:
    """``text`` with its dot words between digits as ``.`` (``_DOT_WORD``) and its dash
    words as ``-`` (``_DASH_WORD``)."""
    lower = text.lower()
    if _ASCII_DIGITS.isdisjoint(text):
        return text  # (most texts: C-level tests, no regex)
    if any(word in lower for word in ("dot", "d0t", "pun", "pon", "kropka", "point")):
        text = _DOT_WORD.sub(".", text)
    if any(word in lower for word in ("dash", "hyphen", "guion", "tiret", "strich", "trat",
                                      "streep")):
        text = _DASH_WORD.sub("-", text)
    return text


def loose(text: str) -> str:
    """``text`` as the number detectors also read it (module docstring)."""
    return " ".join(_RUN.sub(_separator, _written_out(_marked(text))).split())
