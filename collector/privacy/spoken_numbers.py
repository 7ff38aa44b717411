"""Numbers written as words: ``four one five eight six seven five three zero nine`` is a phone
number to anyone who reads it, and no digit to a pattern.

The detectors read a **spoken form** of a text (``spoken``) when it holds a run of number
words: each run becomes its digits, and what the number detectors find in it is found. A run
is a sequence of tokens separated by spaces, ``-``, ``,``, ``.``, ``/`` or a spoken dash
(``dash``, ``hyphen``, ``guion``, ``tiret``, ``strich``, ``trattino``, ``streepje``):

* a digit word, in every language docs/privacy.md names (en, es, pt, fr, de, it, nl, pl, sv;
  read without accents, as the canonical form has none) and English ``oh``/``o`` for 0;
* ``double``/``triple`` (and their es, pt, fr, de, it, nl, sv forms) before a digit: it
  repeats;
* English teens and tens (``fifty three`` is 53, ``fifty`` alone 50) and ``hundred``
  (``eight hundred`` is 800);
* digits already written (``415 eight six seven 5309``).

A run is read only when it holds at least three number words (``one piece``, ``top ten``,
``un deux trois soleil`` stay what they are), and then, within it, words spoken together are
one number and a written separator stays one (``four one five, eight six seven, …`` reads
``415 867 …``). A word for "plus" (en, fr, de, nl, pl, sv ``plus``, es ``mas``, pt ``mais``,
it ``piu``) before a run of ten digits or more is the ``+`` of an international number
(``plus 44 20 7946 0958``). Runs are found by RE2 (linear time); the words are ASCII.
"""

from __future__ import annotations

import re2

# Every digit word, by the digit it says.
_DIGIT_WORDS = {
    "0": "zero oh o nought cero null nul noll",
    "1": "one uno una um uma un une eins een ett en jeden jedna jedno",
    "2": "two dos dois duas deux zwei zwo due twee dwa dwie tva",
    "3": "three tres trois drei tre drie trzy",
    "4": "four cuatro quatro quatre vier quattro cztery fyra",
    "5": "five cinco cinq funf fuenf cinque vijf piec fem",
    "6": "six seis meia sechs sei zes szesc sex",
    "7": "seven siete sete sept sieben sette zeven siedem sju",
    "8": "eight ocho oito huit acht otto osiem atta",
    "9": "nine nueve nove neuf neun negen dziewiec nio",
}
DIGITS = {word: digit for digit, words in _DIGIT_WORDS.items() for word in words.split()}
_TEENS = {word: str(10 + n) for n, word in enumerate(
    "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {word: str(n + 2) for n, word in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split())}
_REPEATS = {**dict.fromkeys("double doble duplo doppel doppio dubbel".split(), 2),
            **dict.fromkeys("triple treble triplo dreifach triplo trippel".split(), 3)}
_HUNDRED = "hundred"
_PLUS = "plus mas mais piu"  # (the canonical form has no accents: más, più)
_DASH_WORDS = "dash|hyphen|guion|tiret|strich|trattino|streepje"
# Every word a run may hold (the words and the digit count of a run decide whether it is read).
NUMBER_WORDS = frozenset((*DIGITS, *_TEENS, *_TENS, *_REPEATS, _HUNDRED))
_WORD = "|".join(sorted(NUMBER_WORDS, key=lambda w: (-len(w), w)))
_TOKEN = rf"(?:(?:{_WORD})\b|\d+\b)"
_SEPARATOR = rf"(?:\s*[-,./]\s*|\s+(?:{_DASH_WORDS})\s+|\s+)"
RUN = rf"\b(?:(?:{_PLUS.replace(' ', '|')})\s+)?{_TOKEN}(?:{_SEPARATOR}{_TOKEN})+"
# A run's pieces, once RE2 has found it, by str methods (the RE2 module's findall costs
# ~30 µs a match: 13 s for a megabyte of "one one …"): the written separators spaced out.
_SPACED = str.maketrans({c: f" {c} " for c in "-,./"})
_SEPARATORS = frozenset(("-", ",", ".", "/", *_DASH_WORDS.split("|")))
_PLUS_WORDS = frozenset(_PLUS.split())
_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False
_RUNS = re2.compile(RUN, _OPTIONS)
# A run of digits alone after a "plus" counts from this many digits (an international number).
_PLUS_DIGITS = 10
# What of a run is read: its first characters (a run of more holds 19 digits or more, a long
# number whatever the rest says), so that no text costs more than its first runs.
_MAX_RUN_CHARS = 400
# A run counts from this many number words.
_MIN_WORDS = 3
_NO_DIGITS = str.maketrans("", "", "0123456789")


def _read(run: str) -> tuple[str, int]:
    """A run as digits (module docstring), and how many number words it held."""
    out: list[str] = []
    words, repeat, tens = 0, 1, ""  # tens: a tens word waiting for its unit
    joined = written = False  # spaces alone before this token; the last one was digits
    for token in run.lower().translate(_SPACED).split():
        if token in _SEPARATORS:
            joined = False
            continue
        if token in _PLUS_WORDS:
            out.append("+")
            continue
        unit = DIGITS.get(token)
        if tens:
            out.append(tens + (unit if joined and unit not in (None, "0") else "0"))
            tens = ""
            if out[-1][-1] != "0":  # the unit was this token
                words += 1
                joined, written = True, False
                continue
        if out and out[-1] != "+" and (not joined or (written and token.isdigit())):
            out.append(" ")
        joined, written = True, token.isdigit()
        if written:
            out.append(token)
            continue
        words += 1
        if token in _REPEATS:
            repeat = _REPEATS[token]
        elif token in _TENS:
            tens = _TENS[token]
        elif token == _HUNDRED:
            out.append("00" if out and out[-1][-1:].isdigit() else "100")
        else:
            out.append((_TEENS.get(token) or unit or "") * repeat)
            repeat = 1
    if tens:
        out.append(tens + "0")
    return "".join(out), words


def worth_reading(lower: str) -> bool:
    """Whether lower-cased ``lower`` may hold a run that counts (``spoken``): three number
    words or a word for "plus" — set lookups in C (~2 µs for 200 characters), before any
    RE2 (~50 µs)."""
    words = lower.replace(",", " ").replace("-", " ").replace(".", " ").replace("/", " ").split()
    return (sum(map(NUMBER_WORDS.__contains__, words)) >= _MIN_WORDS
            or not _PLUS_WORDS.isdisjoint(words))


def spoken(text: str) -> tuple[str, int]:
    """``text`` with each run of number words that counts as its digits (module docstring),
    and the most digits one such run holds (0: none; ``text`` is returned as it is)."""
    pieces: list[str] = []
    last = most = 0
    for match in _RUNS.finditer(text):
        digits, words = _read(match.group()[:_MAX_RUN_CHARS])
        count = len(digits) - len(digits.translate(_NO_DIGITS))
        if words < _MIN_WORDS and not (digits.startswith("+") and count >= _PLUS_DIGITS):
            continue
        pieces += (text[last:match.start()], digits.lstrip("+") if (
            digits.startswith("+") and count < _PLUS_DIGITS) else digits)
        last = match.end()
        most = max(most, count)
    if not most:
        return text, 0
    return "".join(pieces) + text[last:], most
