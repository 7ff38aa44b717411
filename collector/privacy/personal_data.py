"""Personal data in query text: named detectors, and the rules that decide whether a query may
leave the system.

People paste phone numbers, card numbers and addresses into search boxes, and those searches
are the ones that find nothing, so they rise to the top of every zero-result list. A query is
shown (a /metrics label, a feedback file, the report) only when **both** rules pass:

1. no detector fires on it (``PersonalData.reason``), and it is no longer than
   ``privacy.max_query_chars`` (longer text is never scanned or shown: ``too_long``);
2. at least ``k`` distinct client ids typed it (k-anonymity, ``too_few_clients``, applied by
   the callers: ``zero_result_queries`` before any detector, and the feedback job).

Names, street addresses and passport numbers cannot be told from product queries and SKUs by
any pattern: rule 2 is what protects them (docs/privacy.md).

A detector is a shape (an RE2 pattern: linear time on any input, whatever a producer sends or
an operator configures) and, where the shape alone would also match product codes, a check
(a check digit, a real calendar date, a digit count). A privacy filter errs toward
withholding: every shape of the table in docs/privacy.md is found, and product codes survive
only by their own checks (GTIN/EAN/UPC, ISBN) or by shapes no personal number has. All the
shapes are searched at once (an ``re2.Set``: one pass over the text, ~4 µs for 200
characters); only the detectors whose shape occurs run their checks. The e-mail detectors are
here, by the reader that knows their words; the number detectors are in number_detectors.py,
and what a detector is in detector.py.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING

import re2

from collector.privacy import spoken_numbers
from collector.privacy.canonical import canonical, loose, prepare
from collector.privacy.detector import NO_DIGITS, Detector
from collector.privacy.number_detectors import NUMBER_DETECTORS, PHONE_NUMBER

if TYPE_CHECKING:  # a type only: the stage below it imports nothing above
    from collector.config import Config

log = logging.getLogger(__name__)

TOO_LONG = "too_long"
UNREADABLE = "unreadable"  # a detector failed on it: withheld (fail closed), never a crash
EMAIL = "email"
OBFUSCATED_EMAIL = "obfuscated_email"
CUSTOM_PATTERN = "custom_pattern"
# Rule 2 (``too_few_clients``, decided by the callers before rule 1):
FEW_CLIENTS = "fewer_distinct_clients"
WITHOUT_CLIENT_ID = "without_client_id"  # would reach k if searches without an id counted
# Not scanned within a release's detector budget (zero_result_queries): scanned at a later one.
NOT_SCANNED_YET = "not_scanned_yet"


def too_few_clients(clients: int, without_client: int, k: int) -> str | None:
    """Rule 2: why a query typed by ``clients`` distinct client ids (and ``without_client``
    searches carrying none) may not be shown, or None. A search without a client id is
    nobody we can count: a page that sends a fresh session id, or none, with every search
    would otherwise make one person's three searches of their own address "three clients".
    Such a query is withheld as ``without_client_id`` when those searches would have made up
    the difference, so the count says how much the rule costs a deployment that omits ids."""
    if clients >= k:
        return None
    return WITHOUT_CLIENT_ID if clients + without_client >= k else FEW_CLIENTS


# -- e-mail: plain, and every way people hide the @ and the dots -------------------------
# The @ and the dot as people say them: en at/dot, es arroba/punto, pt arroba/ponto, fr
# arobase (arobas, arrobe)/point, it chiocciola (chiocciolina)/punto, de at (ät, at-Zeichen,
# Klammeraffe)/punkt, nl apenstaartje (apestaartje)/punt, pl małpa/kropka, sv snabel-a/punkt;
# en "at sign" and, before a top-level domain, "period"; fr "a commercial". The canonical form
# has no accents ("púnto", "ät" is "at"). "point" is an English word as well: spoken, it counts
# only after a spoken @ that is not "at" ("look at the point of" is no address). The words
# for "at" a place (de bei, fr chez, it presso, nl bij, sv hos) are read as the English "at"
# is, except before a mail provider's name alone ("anmelden bei gmx" is a search).
_AT_WORDS = ("arroba", "arobase", "arrobase", "arobas", "arrobe", "chiocciola", "chiocciolina",
             "apenstaartje", "apestaartje", "apenstaart", "apestaart", "klammeraffe",
             "at-zeichen", "małpa", "malpa", "snabel-a", "snabela", "snabel a", "a commercial")


def _as_read(word: str) -> str:
    """``word`` as the canonical form reads it (NFKD, marks dropped: ``zavináč`` is
    ``zavinac``, ``ドット`` loses its voicing mark, the prolonged sound mark ー is ``-``)."""
    return "".join(c for c in unicodedata.normalize("NFKD", word)
                   if unicodedata.category(c) not in ("Mn", "Me")).replace("\u30fc", "-")


# … and in languages docs/privacy.md does not name for digits (issue 35's third held-out
# attack): none is an English word. Turkish "et" is left out: it is French "and"
# ("paris et lyon pont du gard").
_AT_WORDS_ABROAD = tuple(map(_as_read, (
    "собака", "sobaka", "zavináč", "kukac", "krøllalfa", "miukumauku", "arrova", "arond",
    "παπάκι", "アットマーク", "艾特", "골뱅이", "שטרודל")))
_AT_WORDS = (*_AT_WORDS, *_AT_WORDS_ABROAD)
_SPOKEN_AT = "|".join(_AT_WORDS)
# Their dots, read only after a spoken @ that is not "at" (as "point" is): "точка доступа" is
# an access point, "pont neuf" a bridge.
_DOT_ABROAD = "|".join(map(_as_read, (
    "точка", "tochka", "tečka", "pont", "punktum", "piste", "punct", "τελεία", "ドット", "点",
    "점", "נקודה")))
_AT_PLACE = ("bei", "chez", "presso", "bij", "hos")
_DOT_WORDS = "dot|d0t|punkt|punto|ponto|punt|kropka"
# "period" is a dot only before one of the top-level domains people name most.
_PERIOD_TLD = (r"\s+period\s+(?:com|org|net|edu|gov|info|biz|io|co|uk|us|ca|au|de|fr|es|it|"
               r"nl|be|ch|at|pl|se|br|pt|mx|in|jp|ru|eu)\b")


def _bracketed(words: str) -> str:
    """One of ``words`` in brackets of any kind: (at), [dot], {punkt}, <arroba>, «at»,
    【at】 (the lenticular brackets a Japanese keyboard offers)."""
    return rf"\s*[(\[{{<«‹【〔]\s*(?:{words})\s*[)\]}}>»›】〕]\s*"


# the English "at" and what follows it when people spell the sign: "at sign", "at symbol",
# "at mark", "at character", and Indian English "at the rate (of)" (also "at d rate")
_AT_SIGN = r"(?:[\s-]+(?:sign|symbol|mark|character|the\s+rate(?:\s+of)?|d\s+rate))?"
_AT_ALONE = (rf"(?:\s*@\s*|{_bracketed('at|@|a|' + _SPOKEN_AT)}|\s+at{_AT_SIGN}\s+"
             rf"|\s*[-_]at[-_]\s*|\s+(?:{_SPOKEN_AT})\s+)")
_AT = rf"(?:{_AT_ALONE}|\s+(?:{'|'.join(_AT_PLACE)})\s+)"
_AT_NOT_ENGLISH = (rf"(?:\s*@\s*|{_bracketed('at|@|a|' + _SPOKEN_AT)}"
                   rf"|\s+(?:{_SPOKEN_AT})\s+)")
_DOT = (rf"(?:\.|\s+\.\s+|{_bracketed(_DOT_WORDS + '|point|[.]')}"
        rf"|\s+(?:{_DOT_WORDS}|full\s+stop)\s+|\s*[-_](?:dot|d0t)[-_]\s*)")
_DOT_OR_POINT = rf"(?:{_DOT}|\s+(?:point|{_DOT_ABROAD})\s+)"
# Mail providers people name without their domain ("jane.doe at gmail").
# (said or typed in two words too: "g mail", "hot mail")
_PROVIDERS = (r"g\s?mail|google\s?mail|yahoo|ymail|hot\s?mail|outlook|icloud|aol|gmx|"
              r"proton\s?mail|yandex|posteo|mailbox|zoho")
# … and the national ones a French, German, Italian or Dutch speaker says after chez/bei/presso
_PLACE_PROVIDERS = (rf"{_PROVIDERS}|free|orange|wanadoo|laposte|sfr|bbox|web|t-online|"
                    "freenet|libero|tiscali|virgilio|alice|ziggo|kpn|telenet|telia")
_HANDLE = rf"\b[\w+-]+(?:{_DOT}[\w+-]+)*"
_HANDLE_OR_POINT = rf"\b[\w+-]+(?:{_DOT_OR_POINT}[\w+-]+)*"
# RE2's \w is ASCII: a letter or digit of any script (мария@почта.рф)
_LETTER = r"[\pL\pN\pM_]"  # a mark too: an Indic name may end in a vowel sign (रवि@)
_EMAILS = (
    # user@host, with or without a domain, or cut off where the domain was being typed
    # (maximilian.horst@): a local part with a letter, at the end or before a space
    # (a quoted local part or a comment may end before it: "john smith"@…, john(work)@…)
    Detector(EMAIL, rf"[\pL\pN_.+-]*{_LETTER}[\")\]]?@{_LETTER}"),
    Detector(EMAIL, r"[\pL\pN_.+-]*[\pL][\pL\pN_.+-]*@(?:$|[\s,;:!?)\]}>\"'])"),
    Detector(OBFUSCATED_EMAIL, rf"{_HANDLE}{_AT}[\w-]+(?:{_DOT}[\w-]+)*{_DOT}[a-z]{{2,24}}\b"),
    Detector(OBFUSCATED_EMAIL, rf"{_HANDLE_OR_POINT}{_AT_NOT_ENGLISH}[\w-]+"
                               rf"(?:{_DOT_OR_POINT}[\w-]+)*{_DOT_OR_POINT}[a-z]{{2,24}}\b"),
    Detector(OBFUSCATED_EMAIL, rf"{_HANDLE}{_AT_ALONE}(?:{_PROVIDERS})\b"),
    # a place's "at" and its language's "point" only around a mail provider's name
    # before a top-level domain (gaspard chez free point fr; not "chez nous point de vente",
    # "chez orange point relais")
    Detector(OBFUSCATED_EMAIL, rf"{_HANDLE}\s+(?:{'|'.join(_AT_PLACE)})\s+"
                               rf"(?:{_PLACE_PROVIDERS}){_DOT_OR_POINT}"
                               r"(?:fr|de|it|nl|be|ch|at|lu|se|no|dk|com|net|org|eu)\b"),
    Detector(OBFUSCATED_EMAIL, rf"{_HANDLE}{_AT}[\w-]+(?:{_DOT}[\w-]+)*{_PERIOD_TLD}"),
    # "dotcom" said as one word (sam.reed at example dotcom)
    Detector(OBFUSCATED_EMAIL, rf"{_HANDLE}{_AT}[\w-]+\s+dot(?:com|net|org)\b"),
    # a lone "a" (what a circled ⓐ reads as) between a dotted local part and a dotted domain
    Detector(OBFUSCATED_EMAIL, r"\b[\w+-]+(?:\.[\w+-]+)+\s+a\s+[\w-]+(?:\.[\w-]+)*"
                               r"\.[a-z]{2,24}\b"),
    # … and after any local part, before a mail provider's domain (araminta ⓐ gmail.com;
    # "create a gmail.com account" is withheld too: docs/privacy.md)
    Detector(OBFUSCATED_EMAIL, rf"\b[\w+-]+\s+a\s+(?:{_PROVIDERS})(?:{_DOT}[\w-]+)*{_DOT}"
                               r"[a-z]{2,24}\b"),
)


# In the order their reasons take precedence.
DETECTORS: tuple[Detector, ...] = (*_EMAILS, *NUMBER_DETECTORS)
_HINT_CHARACTERS = frozenset("@([{<:")  # an e-mail, an "(at)"-style one, an IPv6 of letters
_HINT_WORDS = ("at", " a ", *_AT_WORDS, *_AT_PLACE)
# Digits spoken in a row that no detector claims are a phone number from this many on (a
# local number's length; nobody spells out a product code).
_SPOKEN_PHONE_DIGITS = 7
_DIGITS = frozenset("0123456789")
_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False
_OPTIONS.max_mem = 64 << 20  # the set's DFA: all the shapes at once


def _compile(pattern: str) -> re2._Regexp:
    """Case-insensitive, linear time (RE2); ``re2.error`` for what RE2 cannot run."""
    return re2.compile(pattern, _OPTIONS)


def _smuggled(text: str) -> str:
    """The ASCII that Unicode's tag characters (U+E0020–U+E007E) in ``text`` spell, which no
    renderer shows but a reader that decodes them sees (``shoes`` followed by an e-mail in
    tags): the canonical form removes them as invisible, so an address inserted into a
    number hides nothing; this is read apart. Empty when there are none."""
    return "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)


class PersonalData:
    """The detectors; ``reason(text)`` names the first that fires (or ``too_long``), None when
    the text may be shown as far as rule 1 goes. Results are cached (bounded): a query is
    scanned once, however many scrapes or feedback passes ask."""

    def __init__(self, extra_patterns: Iterable[str] = (), max_chars: int = 200,
                 cache_size: int = 100_000) -> None:
        self.detectors = (*DETECTORS, *(Detector(CUSTOM_PATTERN, p) for p in extra_patterns))
        self.custom = len(self.detectors) > len(DETECTORS)  # may match any text
        self._shapes = re2.Set.SearchSet(_OPTIONS)
        for detector in self.detectors:
            self._shapes.Add(detector.shape)
        self._shapes.Compile()
        self._compiled = [_compile(d.shape) if d.check else None for d in self.detectors]
        self.max_chars = max_chars
        prepare()  # the canonical form's table: not within the first release's budget
        self._cache: dict[str, str | None] = {}
        self._cache_size = cache_size

    @classmethod
    def from_config(cls, config: Config) -> PersonalData:
        return cls(config["privacy.patterns"], config["privacy.max_query_chars"])

    def is_cheap(self, text: str) -> bool:
        """Whether ``reason(text)`` costs nothing: remembered, or too long to be read."""
        return text in self._cache or len(text) > self.max_chars

    def reason(self, text: str) -> str | None:
        found = self._cache.get(text, "")
        if found == "":
            if len(self._cache) >= self._cache_size:
                self._cache.clear()
            try:
                found = self._reason(text)
            except Exception:  # a text no rule foresaw must not stop a scrape or a job
                log.exception("a personal-data detector failed on a query: withheld")
                found = UNREADABLE
            self._cache[text] = found
        return found

    def _reason(self, text: str) -> str | None:
        if len(text) > self.max_chars:
            return TOO_LONG
        found = self._read(text)
        if found is None and not text.isascii():
            smuggled = _smuggled(text)
            if smuggled:
                found = self._read(smuggled)
        return found

    def _read(self, text: str) -> str | None:
        """What the detectors find in ``text`` as read (its canonical, spoken, one-by-one
        and loose forms)."""
        read = canonical(text)  # invisible characters, other digits and dashes: what is read
        lower = read.lower()
        if not self.custom and _DIGITS.isdisjoint(read) and _HINT_CHARACTERS.isdisjoint(read):
            if not any(map(lower.__contains__, _HINT_WORDS)):
                if not spoken_numbers.worth_reading(lower):
                    return None  # C-level checks first: most queries end here, without RE2
                return self._spoken(read)
        found = self._scan(read)
        if found is None and spoken_numbers.worth_reading(lower):
            found = self._spoken(read)  # before the loose form: the sharper reason
        if found is None and len(read) - len(read.translate(NO_DIGITS)) >= _SPOKEN_PHONE_DIGITS:
            found = self._one_by_one(read)  # (seven digits at least: C-level, before a regex)
        if found is None and not _DIGITS.isdisjoint(read):
            separated = loose(text)  # any separator between digits: a second read, if other
            if separated != read:
                found = self._scan(separated)
        return found

    def _spoken(self, read: str) -> str | None:
        """What the detectors find in ``read``'s spoken form (collector/privacy/
        spoken_numbers.py): its runs of number words as digits; a run of 7 digits or more
        that none claims is a phone number."""
        digits, most = spoken_numbers.spoken(read)
        if not most:
            return None
        found = self._scan(digits)
        return PHONE_NUMBER if found is None and most >= _SPOKEN_PHONE_DIGITS else found

    def _one_by_one(self, read: str) -> str | None:
        """What the detectors find in ``read`` with its digits written one at a time joined
        (4 1 5 3 9 2 7 7 0 1; collector/privacy/spoken_numbers.py ``one_by_one``); a run of 7
        or more that none claims is a phone number, as a spoken one is."""
        joined, most = spoken_numbers.one_by_one(read)
        if not most:
            return None
        found = self._scan(joined)
        return PHONE_NUMBER if found is None and most >= _SPOKEN_PHONE_DIGITS else found

    def _scan(self, text: str) -> str | None:
        """The first detector that fires on ``text`` as read."""
        shapes = self._shapes.Match(text)
        if shapes is None:
            return None
        digits = len(text) - len(text.translate(NO_DIGITS))
        for index in sorted(shapes):
            detector = self.detectors[index]
            if detector.min_digits > digits:
                continue
            compiled = self._compiled[index]
            if compiled is None:
                return detector.reason
            for match in compiled.finditer(text):
                found = detector.check(match)  # type: ignore[misc]
                if found:
                    return detector.reason if found is True else found
        return None

    def reasons(self, texts: Iterable[str]) -> list[str | None]:
        return [self.reason(text) for text in texts]
