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
* 10-99 as one number in en, de, es, fr, it, pt, nl, pl, sv (``TWO_DIGITS``: ``fifty three`` is 53,
  ``fifty`` alone 50, ``trente-quatre`` 34, ``soixante et onze`` 71, ``treinta y cuatro`` 34,
  ``zweiunddreißig`` 32, ``ventotto`` 28, ``vinte e um`` 21) and ``hundred`` (``eight
  hundred`` is 800);
* digit words written together (``fouronefive``: three or more of three letters or more, or
  ``oh``);
* digits already written (``415 eight six seven 5309``).

A run is read only when it holds at least three number words (``one piece``, ``top ten``,
``un deux trois soleil`` stay what they are), and then, within it, words spoken together are
one number and a written separator stays one (``four one five, eight six seven, …`` reads
``415 867 …``). A word for "plus" (en, fr, de, nl, pl, sv ``plus``, es ``mas``, pt ``mais``,
it ``piu``) before a run of ten digits or more is the ``+`` of an international number
(``plus 44 20 7946 0958``). Runs are found by RE2 (linear time); the words are ASCII but
German's ß. Digits written one at a time (``4 1 5 3 9 2 7 7 0 1``) are joined by
``one_by_one``, unless they count up or down by one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

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


def _two_digit_words() -> dict[str, str]:
    """Every spelling of 10-99 in en, de, es, fr, it, pt, nl, pl, sv, by its letters alone
    (spaces and hyphens dropped: ``trente-quatre``, ``trente quatre`` → ``trentequatre``) →
    its digits."""
    out: dict[str, str] = {}

    def add(value: int, *spellings: str) -> None:
        out.update(dict.fromkeys(spellings, str(value)))

    def tens(first: int, names: str, units: dict[int, list[str]],
             joins: tuple[str, ...]) -> None:
        for n, name in enumerate(names.split()):
            value = (first + n) * 10
            add(value, name)
            for unit, words in units.items():
                add(value + unit, *(name + join + word for word in words for join in joins))

    def teens(words: str) -> None:
        for n, word in enumerate(words.split()):
            add(10 + n, word)

    def unit_first(names: str, units: list[str], join: str) -> None:
        """Tens said unit first, joined (de einundzwanzig, nl eenentwintig)."""
        for n, name in enumerate(names.split(), start=2):
            add(n * 10, name)
            for unit, word in enumerate(units, start=1):
                add(n * 10 + unit, f"{word}{join}{name}")

    english = {n: [w] for n, w in enumerate(
        "one two three four five six seven eight nine".split(), start=1)}
    teens("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen")
    tens(2, "twenty thirty forty fifty sixty seventy eighty ninety", english, ("",))
    # de: einundzwanzig, zweiunddreißig (ß or ss; ü as u, as the canonical form reads it)
    teens("zehn elf zwolf dreizehn vierzehn funfzehn sechzehn siebzehn achtzehn neunzehn")
    german_tens = "zwanzig dreissig vierzig funfzig sechzig siebzig achtzig neunzig"
    german_units = "ein zwei drei vier funf sechs sieben acht neun".split()
    for spelling in (german_tens, german_tens.replace("ss", "\u00df")):
        unit_first(spelling, german_units, "und")
    # es: once … diecinueve, veintiuno … veintinueve, treinta y cuatro
    teens("diez once doce trece catorce quince dieciseis diecisiete dieciocho diecinueve")
    spanish = {1: ["uno", "un", "una"], **{n: [w] for n, w in enumerate(
        "dos tres cuatro cinco seis siete ocho nueve".split(), start=2)}}
    add(20, "veinte")
    for unit, words in spanish.items():
        add(20 + unit, *("veinti" + w for w in words), *("veinte" + j + w for w in words
                                                        for j in ("y", "")))
    tens(3, "treinta cuarenta cincuenta sesenta setenta ochenta noventa", spanish, ("y", ""))
    # pt: onze … dezenove (and the European forms), vinte e um
    for n, words in enumerate(["dez", "onze", "doze", "treze", "catorze quatorze", "quinze",
                               "dezesseis dezasseis", "dezessete dezassete", "dezoito",
                               "dezenove dezanove"]):
        add(10 + n, *words.split())
    portuguese = {1: ["um", "uma"], 2: ["dois", "duas"], **{n: [w] for n, w in enumerate(
        "tres quatro cinco seis sete oito nove".split(), start=3)}}
    tens(2, "vinte trinta quarenta cinquenta sessenta setenta oitenta noventa", portuguese,
         ("e", ""))
    # it: ventuno, ventotto (the tens' vowel elided before uno and otto), trentaquattro
    teens("dieci undici dodici tredici quattordici quindici sedici diciassette diciotto "
          "diciannove")
    for n, name in enumerate("venti trenta quaranta cinquanta sessanta settanta ottanta "
                             "novanta".split(), start=2):
        add(n * 10, name)
        for unit, word in enumerate("uno due tre quattro cinque sei sette otto nove".split(),
                                    start=1):
            add(n * 10 + unit, name + word, *([name[:-1] + word] if unit in (1, 8) else []))
    # fr: dix-sept, vingt et un, soixante-douze, quatre-vingt-dix-huit; be/ch septante,
    # huitante, octante, nonante
    french = "un deux trois quatre cinq six sept huit neuf".split()
    french_teens = "dix onze douze treize quatorze quinze seize dixsept dixhuit dixneuf"
    teens(french_teens)

    def french_tens(value: int, name: str, with_teens: bool = False) -> None:
        add(value, name)
        for unit, word in enumerate(french, start=1):
            add(value + unit, name + word, *([name + "et" + word] if unit == 1 else []))
        if with_teens:
            for n, word in enumerate(french_teens.split()):
                add(value + 10 + n, name + word, *([name + "et" + word] if n == 1 else []))

    for n, name in enumerate("vingt trente quarante cinquante".split(), start=2):
        french_tens(n * 10, name)
    french_tens(60, "soixante", with_teens=True)
    french_tens(80, "quatrevingt", with_teens=True)
    add(80, "quatrevingts")  # (the s only when nothing follows: quatre-vingts treize is 80 13)
    for value, names in ((70, "septante"), (80, "huitante octante"), (90, "nonante")):
        for name in names.split():
            french_tens(value, name)
    # nl: the unit first, joined by "en" (vierendertig, eenentwintig, tweeëntwintig as
    # tweeentwintig: the canonical form has no diaeresis)
    teens("tien elf twaalf dertien veertien vijftien zestien zeventien achttien negentien")
    unit_first("twintig dertig veertig vijftig zestig zeventig tachtig negentig",
               "een twee drie vier vijf zes zeven acht negen".split(), "en")
    # pl: dwanaście, trzydzieści cztery (the tens, then the unit as a word of its own)
    teens("dziesiec jedenascie dwanascie trzynascie czternascie pietnascie szesnascie "
          "siedemnascie osiemnascie dziewietnascie")
    polish = {n: [w] for n, w in enumerate(
        "jeden dwa trzy cztery piec szesc siedem osiem dziewiec".split(), start=1)}
    tens(2, "dwadziescia trzydziesci czterdziesci piecdziesiat szescdziesiat siedemdziesiat "
            "osiemdziesiat dziewiecdziesiat", polish, ("",))
    # sv: tolv, trettiofyra (written together), åttio as attio
    teens("tio elva tolv tretton fjorton femton sexton sjutton arton nitton")
    swedish = {1: ["ett", "en"], **{n: [w] for n, w in enumerate(
        "tva tre fyra fem sex sju atta nio".split(), start=2)}}
    tens(2, "tjugo trettio fyrtio femtio sextio sjuttio attio nittio", swedish, ("",))
    return out


# 10-99 said as one number (``fifty three``, ``trente-quatre``, ``vierunddreißig``):
# consecutive words (spaces, hyphens or a connector word between them) whose letters together
# are one of these read as its two digits.
TWO_DIGITS = _two_digit_words()
_CONNECTORS = frozenset(("et", "y", "e"))  # vingt et un, treinta y cuatro, vinte e um
_MERGED = 7  # the most tokens one such number takes (quatre - vingt - dix - sept)
_REPEATS = {**dict.fromkeys("double doble duplo doppel doppio dubbel".split(), 2),
            **dict.fromkeys("triple treble triplo dreifach triplo trippel".split(), 3)}
_HUNDRED = "hundred"
_PLUS = "plus mas mais piu"  # (the canonical form has no accents: más, più)
_DASH_WORDS = "dash|hyphen|guion|tiret|strich|trattino|streepje"
# Every word a run may hold (the words and the digit count of a run decide whether it is read):
# the parts of the two-digit numbers too (quatre, vingt, dix of quatre-vingt-dix).
NUMBER_WORDS = frozenset((*DIGITS, *TWO_DIGITS, *_REPEATS, _HUNDRED, "vingts"))
_WORD = "|".join(sorted(NUMBER_WORDS, key=lambda w: (-len(w), w)))
# Digit words written together (fouronefive): three or more, of three letters or more (or
# "oh"), so that no word of any language is read as digits.
_GLUED_WORDS = sorted((w for w in DIGITS if len(w) >= 3 or w == "oh"), key=lambda w: (-len(w), w))
_GLUED = rf"(?:{'|'.join(_GLUED_WORDS)}){{3,}}"
_TOKEN = rf"(?:(?:{_WORD})\b|\d+\b|{_GLUED}\b)"
_GLUED_WHOLE = re.compile(_GLUED)
_GLUED_PART = re.compile("|".join(_GLUED_WORDS))
_GLUED_STARTS = frozenset(w[:3] for w in _GLUED_WORDS)
_INSIDE = frozenset(("-", *_CONNECTORS))  # what may stand inside a two-digit number
_SEPARATOR = (rf"(?:\s*[-,./]\s*|\s+(?:{_DASH_WORDS})\s+|\s+(?:{'|'.join(_CONNECTORS)})\s+"
              r"|\s+)")
RUN = (rf"\b(?:(?:{_PLUS.replace(' ', '|')})\s+)?(?:{_TOKEN}(?:{_SEPARATOR}{_TOKEN})+"
       rf"|{_GLUED}\b)")  # (a glued word alone is a run too)
# A run's pieces, once RE2 has found it, by str methods (the RE2 module's findall costs
# ~30 µs a match: 13 s for a megabyte of "one one …"): the written separators spaced out.
_SPACED = str.maketrans({c: f" {c} " for c in "-,./"})
_SEPARATORS = frozenset(("-", ",", ".", "/", *_DASH_WORDS.split("|")))
_PLUS_WORDS = frozenset(_PLUS.split())
_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False
_OPTIONS.max_mem = 64 << 20  # the DFA of ~900 words (8 MB, RE2's default, is too little)
_RUNS = re2.compile(RUN, _OPTIONS)
# A run of digits alone after a "plus" counts from this many digits (an international number).
_PLUS_DIGITS = 10
# What of a run is read: its first characters (a run of more holds 19 digits or more, a long
# number whatever the rest says), so that no text costs more than its first runs.
_MAX_RUN_CHARS = 400
# A run counts from this many number words.
_MIN_WORDS = 3
_GLUED_CHARS = 6  # the shortest digit words written together (three of "oh", "one", …)
_NO_DIGITS = str.maketrans("", "", "0123456789")


def _merged(tokens: list[str]) -> Iterator[tuple[str, int]]:
    """``tokens`` with each two-digit number said in words as one token, its letters alone
    (``trente - quatre`` → ``trentequatre``, ``vingt et un`` → ``vingtetun``; the longest
    first: ``quatre vingt dix`` is 90, not 4 20 10; never digit words alone, which say one
    digit each: ``eight een`` is 8 1), each with the number words it took."""
    i = 0
    while i < len(tokens):
        for length in range(min(_MERGED, len(tokens) - i), 1, -1):
            piece = tokens[i:i + length]
            if piece[-1] in _INSIDE or not all(t in NUMBER_WORDS or t in _INSIDE
                                               for t in piece):
                continue
            if all(t in DIGITS or t in _INSIDE for t in piece):  # digits said one by one:
                continue  # Dutch "eight een" is 8 1, not "eighteen"
            key = "".join(t for t in piece if t != "-")
            if key in TWO_DIGITS:
                yield key, sum(t not in _INSIDE for t in piece)
                i += length
                break
        else:
            yield tokens[i], 1
            i += 1


def glued(token: str) -> str | None:
    """The digits of digit words written together (``fouronefive`` → ``415``), or None."""
    if token[:3] not in _GLUED_STARTS and token[:2] != "oh":
        return None
    if _GLUED_WHOLE.fullmatch(token) is None:
        return None
    return "".join(DIGITS[word] for word in _GLUED_PART.findall(token))


def _read(run: str) -> tuple[str, int]:
    """A run as digits (module docstring), and how many number words it held."""
    out: list[str] = []
    words, repeat = 0, 1
    joined = written = False  # spaces alone before this token; the last one was digits
    for token, said_in in _merged(run.lower().translate(_SPACED).split()):
        if token in _SEPARATORS or token in _CONNECTORS:
            joined = False
            continue
        if token in _PLUS_WORDS:
            out.append("+")
            continue
        if out and out[-1] != "+" and (not joined or (written and token.isdigit())):
            out.append(" ")
        joined, written = True, token.isdigit()
        if written:
            out.append(token)
            continue
        said = TWO_DIGITS.get(token) or DIGITS.get(token)
        if said is None and token not in _REPEATS and token != _HUNDRED:
            said = glued(token) or ""
            words += len(said)
            out.append(said)
            continue
        words += said_in
        if token in _REPEATS:
            repeat = _REPEATS[token]
        elif token == _HUNDRED:
            out.append("00" if out and out[-1][-1:].isdigit() else "100")
        else:
            out.append(said * repeat)
            repeat = 1
    return "".join(out), words


def worth_reading(lower: str) -> bool:
    """Whether lower-cased ``lower`` may hold a run that counts (``spoken``): three number
    words or a word for "plus" — set lookups in C (~2 µs for 200 characters), before any
    RE2 (~50 µs)."""
    words = lower.replace(",", " ").replace("-", " ").replace(".", " ").replace("/", " ").split()
    return (sum(map(NUMBER_WORDS.__contains__, words)) >= _MIN_WORDS
            or not _PLUS_WORDS.isdisjoint(words)
            or any(len(w) >= _GLUED_CHARS and glued(w) for w in words))


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


# Digits written one at a time (4 1 5 3 9 2 7 7 0 1, 4-1-5-3-…, 4 - 1 - 5 …): seven single
# digits or more, each apart from the next by spaces or one of - . , / (a separator between
# each pair: 1.2.3. is the canonical form's already).
_ONE_BY_ONE = re.compile(r"(?<![\w.,/-])\d(?:(?:\s*[-.,/]\s*|\s+)\d(?!\w)){6,}(?![.,/-]?\d)")
# … found first by RE2 (a DFA: ~1 µs for 200 characters, where the regex above costs ~9 µs),
# which has no lookarounds: a superset of those runs.
_ONE_BY_ONE_HINT = re2.compile(r"(?:^|[^\w.,/-])\d(?:(?:\s*[-.,/]\s*|\s+)\d\b){6}")


def _counting(digits: str) -> bool:
    """Whether ``digits`` count up or down by one (1 2 3 4 5 6 7 8 9: a counting book, a
    size chart), which nobody's number does."""
    steps = {int(b) - int(a) for a, b in zip(digits, digits[1:], strict=False)}
    return steps in ({1}, {-1})


def one_by_one(text: str) -> tuple[str, int]:
    """``text`` with each run of digits written one at a time as one number (``_ONE_BY_ONE``;
    not a count up or down), and the most digits one such run holds (0: none; ``text`` is
    returned as it is)."""
    if not _ONE_BY_ONE_HINT.search(text):
        return text, 0
    most = 0

    def joined(match: re.Match[str]) -> str:
        nonlocal most
        digits = match.group().translate(_ONLY_DIGITS)
        if _counting(digits):
            return match.group()
        most = max(most, len(digits))
        return digits

    out = _ONE_BY_ONE.sub(joined, text)
    return (out, most) if most else (text, 0)


_ONLY_DIGITS = str.maketrans("", "", " \t-.,/")
