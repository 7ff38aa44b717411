"""Personal data in query text: named detectors, and the rule that decides whether a query may
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

Every pattern runs on RE2 (``google-re2``): linear time on any input, whatever a producer sends
or an operator configures. Product codes survive on purpose: EAN/UPC/GTIN (8–14 digits), ISBNs,
prices, SKUs.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from datetime import date

import phonenumbers
import re2

from collector.config import Config

TOO_LONG = "too_long"
EMAIL = "email"
OBFUSCATED_EMAIL = "obfuscated_email"
CARD_NUMBER = "card_number"
LONG_NUMBER = "long_number"
IBAN = "iban"
US_SSN = "us_ssn"
PHONE_NUMBER = "phone_number"
IP_ADDRESS = "ip_address"
FULL_DATE = "full_date"
CUSTOM_PATTERN = "custom_pattern"
# Rule 2 (``too_few_clients``, decided by the callers before rule 1):
FEW_CLIENTS = "fewer_distinct_clients"
WITHOUT_CLIENT_ID = "without_client_id"  # would reach k if searches without an id counted
# Every reason a query is withheld (a closed set: label values of the withheld counters).
REASONS = (TOO_LONG, EMAIL, OBFUSCATED_EMAIL, CARD_NUMBER, LONG_NUMBER, IBAN, US_SSN,
           PHONE_NUMBER, IP_ADDRESS, FULL_DATE, CUSTOM_PATTERN, FEW_CLIENTS, WITHOUT_CLIENT_ID)


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

DEFAULT_PHONE_REGIONS = ("US", "GB", "FR", "DE")
_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False
_OPTIONS.max_mem = 8 << 20


def _compile(pattern: str) -> re2._Regexp:
    """Case-insensitive, linear time (RE2); ``re2.error`` for what RE2 cannot run."""
    return re2.compile(pattern, _OPTIONS)


# Something every detector needs: a digit, an @, or an "at" word.
_HINT = _compile(r"[0-9@]|\bat\b|[\(\[\{<]at[\)\]\}>]")
_EMAIL = _compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_AT = r"(?:\s*[\(\[\{<]\s*at\s*[\)\]\}>]\s*|\s+at\s+)"
_DOT = r"(?:\s*[\(\[\{<]\s*dot\s*[\)\]\}>]\s*|\s+dot\s+|\.)"
_OBFUSCATED_EMAIL = _compile(rf"\b[\w+-]+{_AT}[\w-]+(?:{_DOT}[\w-]+)*{_DOT}[a-z]{{2,6}}\b")
# 15 or more digits, any separators between them: cards (Luhn) or account and id numbers.
# GTIN-14 and shorter product codes stay below it.
_DIGIT_RUN = _compile(r"\d(?:[ ./-]?\d){14,}")
_IBAN = _compile(r"\b[a-z]{2}\d{2}(?: ?[a-z0-9]){11,30}\b")
_SSN = _compile(r"\b(\d{3})[- ](\d{2})[- ](\d{4})\b")
_IPV4 = _compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
_IPV6 = _compile(r"[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}")
_DATE_DMY = _compile(r"\b(\d{1,2})[./-](\d{1,2})[./-]((?:19|20)\d\d)\b")
_DATE_YMD = _compile(r"\b((?:19|20)\d\d)[./-](\d{1,2})[./-](\d{1,2})\b")
_DIGITS = frozenset("0123456789")
_HINT_CHARACTERS = frozenset("@([{<")  # an e-mail, or an "(at)"-style one
_PHONE_DIGITS = 7  # fewer digits in the whole text: no phone number to look for


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char)
        if i % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def _email(text: str) -> str | None:
    if "@" in text and _EMAIL.search(text):
        return EMAIL
    return OBFUSCATED_EMAIL if _OBFUSCATED_EMAIL.search(text) else None


def _card_or_long_number(text: str) -> str | None:
    for match in _DIGIT_RUN.finditer(text):
        digits = _digits(match.group())
        return CARD_NUMBER if len(digits) <= 19 and luhn_valid(digits) else LONG_NUMBER
    return None


def _iban(text: str) -> str | None:
    for match in _IBAN.finditer(text):
        code = match.group().replace(" ", "").upper()
        rearranged = code[4:] + code[:4]
        number = "".join(str(int(c, 36)) for c in rearranged)
        if int(number) % 97 == 1:
            return IBAN
    return None


def _ssn(text: str) -> str | None:
    for match in _SSN.finditer(text):
        area, group, serial = match.groups()
        if area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000":
            return US_SSN
    return None


def _ip_address(text: str) -> str | None:
    candidates = [m.group() for m in _IPV4.finditer(text)]
    if text.count(":") >= 2:
        candidates += [m.group() for m in _IPV6.finditer(text) if m.group().count(":") >= 2]
    for candidate in candidates:
        try:
            ipaddress.ip_address(candidate)
        except ValueError:
            continue
        return IP_ADDRESS
    return None


def _isbn10(raw: str) -> bool:
    """An ISBN-10 as books print it (four hyphenated groups, mod-11 check), which
    libphonenumber would take for a national number in some countries."""
    groups = raw.split("-")
    digits = "".join(groups)
    if len(groups) != 4 or len(digits) != 10 or not digits[:9].isdigit():
        return False
    last = digits[9]
    if not (last.isdigit() or last in "xX"):
        return False
    check = 10 if last in "xX" else int(last)
    return (sum((10 - i) * int(d) for i, d in enumerate(digits[:9])) + check) % 11 == 0


def _valid_date(year: int, first: int, second: int) -> bool:
    for month, day in ((first, second), (second, first)):
        try:
            date(year, month, day)
        except ValueError:
            continue
        return True
    return False


def _full_date(text: str) -> str | None:
    for match in _DATE_DMY.finditer(text):
        first, second, year = (int(g) for g in match.groups())
        if _valid_date(year, second, first):
            return FULL_DATE
    for match in _DATE_YMD.finditer(text):
        year, month, day = (int(g) for g in match.groups())
        if _valid_date(year, month, day):
            return FULL_DATE
    return None


class PersonalData:
    """The detectors; ``reason(text)`` names the first that fires (or ``too_long``), None when
    the text may be shown as far as rule 1 goes. Results are cached (bounded)."""

    def __init__(self, extra_patterns: Iterable[str] = (),
                 phone_regions: Iterable[str] = DEFAULT_PHONE_REGIONS,
                 max_chars: int = 200, cache_size: int = 100_000) -> None:
        patterns = list(extra_patterns)
        self.custom = _compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None
        self.phone_regions = tuple(phone_regions)
        self.max_chars = max_chars
        # Each returns the reason it fires for, or None; cheapest first.
        self._detectors: tuple[Callable[[str], str | None], ...] = (
            _email, _iban, _card_or_long_number, _ssn, _ip_address, _full_date, self._phone)
        self._cache: dict[str, str | None] = {}
        self._cache_size = cache_size

    @classmethod
    def from_config(cls, config: Config) -> PersonalData:
        return cls(config["privacy.patterns"], config["privacy.phone_regions"],
                   config["privacy.max_query_chars"])

    def reason(self, text: str) -> str | None:
        found = self._cache.get(text, "")
        if found == "":
            if len(self._cache) >= self._cache_size:
                self._cache.clear()
            found = self._cache[text] = self._reason(text)
        return found

    def _reason(self, text: str) -> str | None:
        if len(text) > self.max_chars:
            return TOO_LONG
        if self.custom is not None and self.custom.search(text):
            return CUSTOM_PATTERN
        if _DIGITS.isdisjoint(text) and _HINT_CHARACTERS.isdisjoint(text) and " at " not in text:
            return None  # C-level checks first: most queries end here, without RE2's wrapper
        if not _HINT.search(text):
            return None
        for detect in self._detectors:
            found = detect(text)
            if found:
                return found
        return None

    def _phone(self, text: str) -> str | None:
        """libphonenumber's matcher (valid numbers only) in each configured region: national
        formats differ by country; an international number is found in any of them."""
        if sum(c.isdigit() for c in text) < _PHONE_DIGITS:
            return None
        for region in self.phone_regions:
            for match in phonenumbers.PhoneNumberMatcher(text, region,
                                                         leniency=phonenumbers.Leniency.VALID):
                if not _isbn10(match.raw_string):
                    return PHONE_NUMBER
        return None

    def reasons(self, texts: Iterable[str]) -> list[str | None]:
        return [self.reason(text) for text in texts]
