"""The detectors of personal numbers in query text: IBANs, US SSNs and ITINs, national identity
numbers, card and other long account numbers, IP addresses, full dates (a date of birth cannot be
told from another) and phone numbers, each a shape and the check that tells it from a product
code of the same shape (docs/privacy.md, "The detectors").

Kept apart from personal_data.py, which reads a text with these and the e-mail detectors (its
canonical, spoken, one-by-one and loose forms) and decides whether it may leave: these are the
tables of digits, the bulk of the shapes. ``NUMBER_DETECTORS`` is in the order their reasons take
precedence (after the e-mail ones).
"""

from __future__ import annotations

import ipaddress
import re

import re2

from collector.privacy import check_digits
from collector.privacy.detector import NO_DIGITS, Detector

LONG_NUMBER = "long_number"
IBAN = "iban"
US_SSN = "us_ssn"
NATIONAL_ID = "national_id"
CARD_NUMBER = "card_number"
PHONE_NUMBER = "phone_number"
IP_ADDRESS = "ip_address"
FULL_DATE = "full_date"


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


# -- numbers with check digits -------------------------------------------------------------
def _counts_by_one(match: re2._Match) -> bool:
    """Whether the run of digit groups ``match`` lies in is three groups or more, each one more
    (or one less) than the one before: years, sizes or set numbers listed, which no card or
    account number is. The whole run: the detector's match may be a part of a longer list."""
    text, start, end = match.string, match.start(), match.end()
    while start and (text[start - 1].isdigit() or text[start - 1] in _LIST_SEPARATORS):
        start -= 1
    while end < len(text) and (text[end].isdigit() or text[end] in _LIST_SEPARATORS):
        end += 1
    groups = [int(g) for g in re.findall(r"\d+", text[start:end])]
    steps = {b - a for a, b in zip(groups, groups[1:], strict=False)}
    return len(groups) >= 3 and steps in ({1}, {-1})


_LIST_SEPARATORS = frozenset(" -_.,/:")


def _card_or_long_number(match: re2._Match) -> bool | str:
    """13-19 digits, Luhn-valid; 13 and 14 digits are also GTIN lengths (EAN-13, ISBN-13,
    GTIN-14): a valid GTIN there is a product. Any other run of 15 or more digits is an
    account, customer or id number (GTIN-14 and shorter product codes stay below it). Groups
    that count up or down by one are a list, not a number (``2019 2020 2021 2022``)."""
    if _counts_by_one(match):
        return False
    digits = _digits(match.group())
    if check_digits.luhn(digits) and not (len(digits) <= 14 and check_digits.gtin(digits)):
        return True
    return LONG_NUMBER if len(digits) >= 15 else False


def _iban(match: re2._Match) -> bool:
    # ASCII only: the shape's separators may be any other character, a Cyrillic letter too
    return check_digits.iban("".join(c for c in match.group()
                                     if c.isascii() and c.isalnum()).upper())


def _issued(area: str, group: str, serial: str) -> bool:
    """An SSN as issued (no area 000, 666 or 9xx, no group 00, no serial 0000), or an ITIN
    (area 9xx, group 50-65, 70-88, 90-92, 94-99)."""
    if group == "00" or serial == "0000":
        return False
    if area[0] == "9":
        number = int(group)
        return 50 <= number <= 65 or 70 <= number <= 88 or (90 <= number <= 99 and number != 93)
    return area not in ("000", "666")


def _ssn_groups(text: str) -> tuple[str, str, str]:
    digits = _digits(text)
    return digits[:3], digits[3:5], digits[5:]


# The words people write before an SSN: ssn, s.s.n., s s n, ss#, ss no, s.s. no., social
# security, social sec, soc. sec., socsec, itin; es número de seguro social, numero seguro
# social, no. de seguro social, seguro social, nss (the canonical form has no accents).
_NUMBER_WORD = r"(?:number|numero|num|nro|nr|no|n°|#)"
_SEGURO = rf"(?:{_NUMBER_WORD}\.?\s*)?(?:de\s+)?(?:la\s+)?seguro\s+social"
_SSN_WORD = (r"(?:s[\s./-]{0,2}s[\s./-]{0,2}n|s\.?\s?s\.?\s?(?:#|no\b|nr\b|num)|"
             r"social[\s.-]*sec(?:urity|\.)?|soc\.?[\s.-]*sec\.?|socsec|itin|nss|" + _SEGURO
             # "social" alone, as people say it ("my social is …"): nine digits still needed
             + "|social)")
_NUMBERS = (
    # any one separator between the groups (the mod 97 is the guard): BE68/5390/0754/7034
    # (a separator after the country too: gb 12 barc 9430 7546 0174 41)
    Detector(IBAN, r"\b[a-z]{2}[^a-z0-9]?\d{2}(?:[^a-z0-9]?[a-z0-9]{4}){2,7}"
                   r"(?:[^a-z0-9]?[a-z0-9]{1,4})?\b",
             _iban, 8),
    # ":" is the loose form's separator (collector/privacy/canonical.py): 501/22/3344
    Detector(US_SSN, r"\b(\d{3})(?:\s?[-.:]\s?|\s)(\d{2})(?:\s?[-.:]\s?|\s)(\d{4})\b",
             lambda m: _issued(*m.groups()), 9),
    # nine digits in any grouping after the word or an abbreviation of it (below)
    Detector(US_SSN, rf"\b{_SSN_WORD}[./-]?(?:\s*(?:{_NUMBER_WORD}|is|es|#|:)\.?)*[\s:#=-]*"
                     r"((?:\d[\s.:/-]?){8}\d)\b", lambda m: _issued(*_ssn_groups(m.group(1))), 9),
    # MX Número de Seguridad Social (IMSS): 11 digits after its name
    Detector(NATIONAL_ID, rf"\b(?:nss|imss|{_SEGURO})(?:\s*(?:{_NUMBER_WORD}|es|#|:)\.?)*"
                          r"[\s:#=-]*(?:\d[\s.:/-]?){10}\d\b", None, 11),
)
# After the national ids (their reason is sharper): any separator between digits, space,
# - _ . , / : (the loose form's, for any other) and " - "; a longer run's first 19 digits.
_CARDS = (Detector(CARD_NUMBER, r"\d(?:(?:\s?[-_.,/:]\s?|\s)?\d){12,18}", _card_or_long_number,
                   13),)


# -- national identity numbers (a table per country in
#    tests/collector/privacy/test_personal_data.py)
def _dni(match: re2._Match) -> bool:
    """A DNI's 8 digits or an NIE's letter and 7, however dotted, and their check letter."""
    number = "".join(c for c in match.group(1) if c.isalnum())
    return len(number) == 8 and check_digits.spanish_dni(number, match.group(2))


def _nino(match: re2._Match) -> bool:
    return match.group(1).lower() not in ("bg", "gb", "nk", "kn", "tn", "nt", "zz")


def _nordic(match: re2._Match) -> bool:
    """Swedish personnummer (YYMMDD-NNNC, Luhn over the ten digits) or Danish CPR number
    (DDMMYY-NNNN: a real date)."""
    birth, serial = match.group(1)[-6:], match.group(2)
    a, b, c = int(birth[:2]), int(birth[2:4]), int(birth[4:])
    swedish = check_digits.luhn(birth + serial) and any(
        check_digits.real_date(century + a, b, c % 60) for century in (1900, 2000))
    danish = any(check_digits.real_date(century + c, b, a) for century in (1900, 2000))
    return swedish or danish


_NATIONAL_IDS = (
    # GB National Insurance number: AB 12 34 56 C
    Detector(NATIONAL_ID, r"\b([a-ceghj-pr-tw-z][a-ceghj-npr-tw-z])[\s-]?\d{2}[\s-]?\d{2}[\s-]?"
                          r"\d{2}[\s-]?[a-d]\b", _nino, 6),
    # ES DNI 12345678Z and NIE X1234567L (the letter is the check), as Spain writes them
    # too: 12.345.678-Z, X-1234567-L
    Detector(NATIONAL_ID, r"\b((?:[xyz][\s-]?)?\d{1,2}\.?\d{3}\.?\d{3})[\s-]?([a-z])\b",
             _dni, 7),
    # FR numéro de sécurité sociale: 1 87 05 75 123 456 78 (key = 97 - number mod 97)
    Detector(NATIONAL_ID, r"\b([12])\s?(\d{2})\s?(\d{2})\s?(\d{2}|2a|2b)\s?(\d{3})\s?(\d{3})"
                          r"\s?(\d{2})\b",
             lambda m: check_digits.french_nir("".join(m.groups()[:6]), m.group(7)), 13),
    # BR CPF 123.456.789-09
    Detector(NATIONAL_ID, r"\b\d{3}[.\s]?\d{3}[.\s]?\d{3}[-.\s]?\d{2}\b",
             lambda m: check_digits.brazil_cpf(_digits(m.group())), 11),
    # SE personnummer 870512-1234, DK CPR 120587-1234
    Detector(NATIONAL_ID, r"\b((?:19|20)?\d{6})[-+](\d{4})\b", _nordic, 10),
    # IT codice fiscale RSSMRA85T10A562S: its shape is its own
    Detector(NATIONAL_ID, r"\b[a-z]{6}\d{2}[abcdehlmprst]\d{2}[a-z]\d{3}[a-z]\b", None, 7),
    # … and in the groups its parts make (surname, name, birth, place: BNC GLI 80A41 H501U)
    Detector(NATIONAL_ID, r"\b[a-z]{3}\s[a-z]{3}\s\d{2}[abcdehlmprst]\d{2}\s[a-z]\d{3}[a-z]\b",
             None, 7),
    # IN Aadhaar 2345 6789 0124 (Verhoeff; spaced: a bare 12 digits is a UPC-A; years
    # listed are none)
    Detector(NATIONAL_ID, r"\b[2-9]\d{3}\s\d{4}\s\d{4}\b",
             lambda m: not _counts_by_one(m) and check_digits.verhoeff(_digits(m.group())), 12),
    # CA social insurance number 046 454 286 (Luhn)
    Detector(NATIONAL_ID, r"\b[0-79]\d{2}[\s-]\d{3}[\s-]\d{3}\b",
             lambda m: check_digits.luhn(_digits(m.group())), 9),
    # IN Aadhaar and CA SIN written together after their name (aadhaar no 234567890124, sin
    # number 046454286): the check digit decides, as for the spaced forms
    Detector(NATIONAL_ID, rf"\b(?:aadhaa?r|uidai|uid)(?:\s*(?:{_NUMBER_WORD}|card|is|:)\.?)*"
                          r"[\s:#=-]*([2-9]\d{11})\b",
             lambda m: check_digits.verhoeff(m.group(1)), 12),
    Detector(NATIONAL_ID, rf"\b(?:sin|social\s+insurance)(?:\s*(?:{_NUMBER_WORD}|is|:)\.?)*"
                          r"[\s:#=-]*(\d{9})\b", lambda m: check_digits.luhn(m.group(1)), 9),
    # PL PESEL 44051401359 (check digit and date of birth)
    Detector(NATIONAL_ID, r"\b\d{11}\b", lambda m: check_digits.polish_pesel(m.group()), 11),
    # CN resident identity card 11010519491231002X (ISO 7064 MOD 11-2)
    Detector(NATIONAL_ID, r"\b\d{17}[\dx]\b",
             lambda m: check_digits.china_resident_id(m.group()), 17),
)


# -- IP addresses ----------------------------------------------------------------------------
_IP_SEPARATORS = frozenset(".:-")


def _ipv4(match: re2._Match) -> bool:
    """Four numbers up to 255, leading zeros or not (192.168.001.010 is what it says), that
    are not four groups of a longer run (01.23.45.67.89 is a phone number), written with one
    separator throughout (10:30-18:00 is a time)."""
    text, start, end = match.string, match.start(), match.end()
    if len(set(match.group().translate(NO_DIGITS))) != 1:
        return False
    after = text[end:end + 1]  # a port after a dotted address (…44:443) is not a longer run
    if (after in _IP_SEPARATORS and text[end + 1:end + 2].isdigit()
            and not (after == ":" and "." in match.group())):
        return False
    if text[start - 1:start] in _IP_SEPARATORS and text[start - 2:start - 1].isdigit():
        return False
    return all(int(part) <= 255 for part in re2.split(r"[^0-9]", match.group()))


def _ip(match: re2._Match) -> bool:
    try:
        ipaddress.ip_address(match.group())
    except ValueError:
        return False
    return True


_IP_ADDRESSES = (
    # dotted, or with a dash or the loose form's ":" (83-145-201-20, 83[.]145[.]201[.]17)
    Detector(IP_ADDRESS, r"\b\d{1,3}(?:[.:-]\d{1,3}){3}\b", _ipv4, 4),
    # IPv6, of two groups at least (a lone "::" is the unspecified address, and what a run
    # of colon-like separators reads as: 4111 ∶∶ 1111 … is a card)
    Detector(IP_ADDRESS, r"[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}",
             lambda m: len(m.group().replace(":", " ").split()) >= 2 and _ip(m)),
)


# -- dates (a date of birth cannot be told from another full date) ---------------------------
_MONTHS = sorted({
    # en, fr, de, es, it, nl: full names and the usual abbreviations, without accents (the
    # canonical form has none)
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
    "janvier", "fevrier", "mars", "avril", "mai", "juin", "juillet", "aout",
    "septembre", "octobre", "novembre", "decembre",
    "januar", "janner", "februar", "marz", "maerz", "juni", "juli", "oktober", "dezember",
    "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
    "setiembre", "octubre", "noviembre", "diciembre",
    "gennaio", "febbraio", "aprile", "maggio", "giugno", "luglio", "settembre", "ottobre",
    "dicembre",
    "januari", "februari", "maart", "mei", "augustus",
    # pt, pl (the genitive a date takes: 14 lipca 1979), sv: the other languages
    # docs/privacy.md names
    "janeiro", "fevereiro", "marco", "maio", "junho", "julho", "setembro", "outubro", "novembro",
    "dezembro",
    "stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia",
    "wrzesnia", "pazdziernika", "listopada", "grudnia",
    "maj", "augusti",
}, key=lambda name: (-len(name), name))
_MONTH = "(?:" + "|".join(_MONTHS) + ")"


def _year(text: str) -> list[int]:
    """The years a written year may mean: 87 is 1987 or 2087."""
    year = int(text)
    return [year] if len(text) == 4 else [1900 + year, 2000 + year]


def _day_month_year(day: str, month: str, year: str, either_order: bool = True) -> bool:
    orders = ((int(day), int(month)), (int(month), int(day))) if either_order else (
        (int(day), int(month)),)
    return any(check_digits.real_date(y, m, d) for y in _year(year) for d, m in orders)


def _compact_date(match: re2._Match) -> bool:
    """Eight digits that are a real date as YYYYMMDD, DDMMYYYY or MMDDYYYY (1900-2099)."""
    text = match.group()
    return (text[:2] in ("19", "20") and check_digits.real_date(
        int(text[:4]), int(text[4:6]), int(text[6:]))) or (
        text[4:6] in ("19", "20") and _day_month_year(text[:2], text[2:4], text[4:]))


_ROMAN_MONTHS = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii")


def _roman_month(match: re2._Match) -> bool:
    month = _ROMAN_MONTHS.index(match.group(2).lower()) + 1
    return check_digits.real_date(int(match.group(3)), month, int(match.group(1)))


def _written_day(match: re2._Match) -> bool:
    day = int(match.group(1))
    return 1 <= day <= 31 and (len(match.group(2)) == 2 or 1900 <= int(match.group(2)) < 2100)


_DATES = (
    Detector(FULL_DATE, r"\b(\d{1,2})[./-](\d{1,2})[./-]((?:19|20)\d\d)\b",
             lambda m: _day_month_year(*m.groups()), 4),
    Detector(FULL_DATE, r"\b((?:19|20)\d\d)[./-](\d{1,2})[./-](\d{1,2})\b",
             lambda m: _day_month_year(m.group(3), m.group(2), m.group(1)), 4),
    # two-digit years: 12.5.87 (day first, as every country writing dots does), 5/12/87
    Detector(FULL_DATE, r"\b(\d{1,2})\.(\d{1,2})\.(\d\d)\b",
             lambda m: _day_month_year(*m.groups(), either_order=False), 4),
    Detector(FULL_DATE, r"\b(\d{1,2})[/-](\d{1,2})[/-](\d\d)\b",
             lambda m: _day_month_year(*m.groups()), 4),
    Detector(FULL_DATE, r"\b\d{8}\b", _compact_date, 8),  # 19870512, 12051987
    # born 12 may 1987, 12th of may 87, 12. Mai 1987, 12 de mayo de 1987
    Detector(FULL_DATE, rf"\b(\d{{1,2}})(?:st|nd|rd|th|er|e|\.)?\s*(?:of\s+|de\s+)?{_MONTH}"
                        r"\.?,?\s*(?:de\s+|del\s+)?(\d{4}|\d\d)\b", _written_day, 3),
    # the month in Roman numerals, as Poland and Italy write it: 12.V.1987, 3 xi 1982
    Detector(FULL_DATE, r"\b(\d{1,2})[.\s]\s?(i|ii|iii|iv|v|vi|vii|viii|ix|x|xi|xii)[.\s]\s?"
                        r"((?:19|20)\d\d)\b", _roman_month, 5),
    # year, month and day with their CJK signs: 1987年5月12日
    Detector(FULL_DATE, r"((?:19|20)\d\d)\s?年\s?(\d{1,2})\s?月\s?(\d{1,2})\s?日",
             lambda m: _day_month_year(m.group(3), m.group(2), m.group(1), either_order=False),
             5),
    # may 12, 1987
    Detector(FULL_DATE, rf"\b{_MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}}|\d\d)\b",
             _written_day, 3),
)


# -- phone numbers: a digits rule (libphonenumber's POSSIBLE leniency, without its cost) -----
def _national(match: re2._Match) -> bool:
    """A trunk-prefixed national number (0…): 9-12 digits in groups, or 10-11 written
    together (12-14 together are UPC/EAN/GTIN lengths; a 0-led ISBN-10 is a book)."""
    text = match.group()
    digits = _digits(text)
    if digits == text:
        return len(digits) in (10, 11) and not check_digits.isbn10(digits)
    return 9 <= len(digits) <= 12


def _not_years(match: re2._Match) -> bool:
    return not all(part[:2] in ("19", "20") for part in match.group().split("-"))


_SEP = r"[\s./:-]"  # ":": the loose form's separator
# What people write before their number, in the languages docs/privacy.md names (without
# accents, as the canonical form has none): after these, 7-15 digits in any grouping are a
# phone number (llámame al 612 345 678: a 3-3-3 grouping no shape alone may claim).
_CALL_WORDS = (r"call(?:\s+me)?(?:\s+(?:at|on))?|ring\s+me(?:\s+on)?|text\s+me(?:\s+(?:at|on))?|"
               r"reach\s+me(?:\s+at)?|my\s+(?:phone\s+|cell\s+|mobile\s+)?number\s+is|tel|tlf|"
               r"tfno|telf|ph|mob|whatsapp|llamame(?:\s+al)?|llama(?:me)?\s+al|"
               r"mi\s+(?:numero|telefono|celular|movil)(?:\s+es)?|me\s+liga(?:\s+no)?|"
               r"ligue(?:\s+para)?|meu\s+(?:numero|telefone|celular)(?:\s+e)?|"
               r"appel(?:le|ez)[\s-]moi(?:\s+au)?|mon\s+(?:numero|portable)(?:\s+(?:est|c'est))?|"
               r"ruf\s+mich\s+an(?:\s+unter)?|meine\s+(?:handy)?nummer(?:\s+ist)?|"
               r"chiamami(?:\s+al)?|il\s+mio\s+numero(?:\s+e)?|bel\s+me(?:\s+op)?|"
               r"mijn\s+nummer(?:\s+is)?|zadzwon(?:\s+pod)?|moj\s+numer(?:\s+to)?|"
               r"ring\s+mig(?:\s+pa)?|mitt\s+nummer(?:\s+ar)?")
# The words for a phone that are product words too ("phone 15 pro max 256"): a number after
# them counts only written against them (tel07700900237, phone:+44…) or after a colon or a
# word for "number" (teléfono: 612 345 678, handy nr 0151 2345678).
_PHONE_WORDS = (r"phone|telephone|telefon|telefono|telefone|telefoon|mobile|mobil|mobiel|"
                r"cell|cellulare|celular|movil|handy|portable|komorka")
_PHONE_DIGITS = r"\+?\d(?:[\s./()-]{0,2}\d){6,14}\b"
_PHONES = (
    # international: + or 00, a country code, at least 7 more digits in any grouping (the +
    # may be the heavy plus sign of emoji keyboards, ➕: not in the canonical form, where it
    # would make "➕ emoji sticker" a spreadsheet formula)
    Detector(PHONE_NUMBER, r"[+\x{2795}]\(?\d(?:[\s./():-]{0,2}\d){7,14}", None, 8),
    Detector(PHONE_NUMBER, r"\b00\d{1,4}[\s./():-]{1,2}\d(?:[\s./():-]{0,2}\d){5,13}", None, 9),
    # 3-3-4: 555-123-4567, (202) 555-0143 (NANP), 347 123 4567 (IT mobile)
    Detector(PHONE_NUMBER, rf"\(?\b\d{{3}}\)?{_SEP}{{0,2}}\d{{3}}{_SEP}{{1,2}}\d{{4}}\b",
             None, 10),
    # a local 3-4 number as written in NANP countries: 555-0147
    Detector(PHONE_NUMBER, r"\b[2-9]\d{2}[-.]\d{4}\b", None, 7),
    # trunk prefix 0: 020 7946 0958, 06 12 34 56 78, 030/12345678, (02) 9876 5432, 03-1234-5678
    Detector(PHONE_NUMBER, rf"\(?\b0\d{{1,4}}\)?(?:{_SEP}{{0,2}}\(?\d{{2,8}}\)?){{1,4}}\b",
             _national, 9),
    # 4-4 with a hyphen: 6123-4567 (SG, HK); not a span of years
    Detector(PHONE_NUMBER, r"\b\d{4}-\d{4}\b", _not_years, 8),
    # ES 612 34 56 78 and 91 123 45 67
    Detector(PHONE_NUMBER, r"\b[6-9]\d{2}(?:[\s.-]\d{2}){3}\b", None, 9),
    Detector(PHONE_NUMBER, r"\b[89]\d[\s.-]\d{3}(?:[\s.-]\d{2}){2}\b", None, 9),
    # an area code in brackets (its "(" may be gone with the punctuation normalization strips
    # at the start), then 6 or more digits in one or two groups: (415)8675301,
    # (415) 867-5301, (020)7946 0958, (11) 91234-5678; 9-12 digits in all
    Detector(PHONE_NUMBER, r"\(?\b\d{1,5}\)[\s./:-]{0,3}\d{3,8}(?:[\s./:-]{1,2}\d{2,8})?\b",
             lambda m: 9 <= len(_digits(m.group())) <= 12, 9),
    # RU: the trunk 8 and a mobile's 9xx, then 3-2-2 (8 (912) 345-67-89, 8 916 354 20 21)
    Detector(PHONE_NUMBER, r"\b8[\s-]?\(?9\d{2}\)?[\s-]?\d{3}[\s-]?\d{2}[\s-]?\d{2}\b", None, 11),
    # BR (11) 91234-5678, CN 138 1234 5678, IN 98765 43210
    Detector(PHONE_NUMBER, r"\(\d{2}\)\s?9?\d{4}[\s-]?\d{4}\b", None, 10),
    Detector(PHONE_NUMBER, r"\b1[3-9]\d(?:[\s-]?\d{4}){2}\b", None, 11),
    Detector(PHONE_NUMBER, r"\b[6-9]\d{4}[\s-]\d{5}\b", None, 10),
    # after the words people write before their number (_CALL_WORDS, _PHONE_WORDS)
    Detector(PHONE_NUMBER, rf"\b(?:{_CALL_WORDS})[\s:.#=-]*{_PHONE_DIGITS}", None, 7),
    Detector(PHONE_NUMBER, rf"\b(?:{_CALL_WORDS}|{_PHONE_WORDS})[:#=]?(?:\+|\d{{4}})"
                           r"(?:[\s./()-]{0,2}\d){3,14}\b", None, 7),
    Detector(PHONE_NUMBER, rf"\b(?:{_PHONE_WORDS})(?:\s*(?:{_NUMBER_WORD}|nummer)\.?\s*[:#=]?"
                           rf"|\s*[:#=])\s*{_PHONE_DIGITS}", None, 7),
    # ten digits together: 2025550143 (not an ISBN-10)
    Detector(PHONE_NUMBER, r"\b\d{10}\b", lambda m: not check_digits.isbn10(m.group()), 10),
)

# In the order their reasons take precedence.
NUMBER_DETECTORS: tuple[Detector, ...] = (*_NUMBERS, *_NATIONAL_IDS, *_CARDS, *_IP_ADDRESSES,
                                          *_DATES, *_PHONES)
