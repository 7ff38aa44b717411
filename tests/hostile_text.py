"""Personal data as an attacker or an unusual keyboard writes it: invisible characters inside,
other dashes and spaces as separators, digits of other scripts and numerals that are not
digits (一, ①, ⑴, ⒈, ❶, ²), look-alike colons, spoken e-mails and spoken numbers. Shared by the
detectors' property tests (tests/collector/privacy/test_personal_data.py) and the end-to-end test of
every exit path (tests/test_privacy.py), with the text of a page as a browser's parser reads
it."""

from __future__ import annotations

import random
import sys
import unicodedata
from html.parser import HTMLParser

# One needle per detector (and per spoken language of an e-mail), with the reason it must get.
NEEDLES = {
    "email": ("mail jane.doe+shop@example.co.uk", "email"),
    "card_number": ("card 4111-1111-1111-1111", "card_number"),
    "long_number": ("customer 1234567890123456789", "long_number"),
    "iban": ("refund de89 3704 0044 0532 0130 00", "iban"),
    "us_ssn": ("ssn 123-45-6789", "us_ssn"),
    "us_ssn_keyword": ("ssn 123456789", "us_ssn"),
    "national_id": ("dni 12345678-z", "national_id"),
    "phone_number": ("call 555-123-4567", "phone_number"),
    "ip_address": ("router 192.168.1.20", "ip_address"),
    "full_date": ("born 1987-05-12", "full_date"),
    "spoken_en": ("jane.doe at mailbox dot org", "obfuscated_email"),
    "spoken_es": ("maria.lopez arroba correo punto es", "obfuscated_email"),
    "spoken_pt": ("joao.silva arroba uol ponto com ponto br", "obfuscated_email"),
    "spoken_fr": ("jean.dupont arobase orange point fr", "obfuscated_email"),
    "spoken_de": ("hans.meier at web punkt de", "obfuscated_email"),
    "spoken_it": ("mario.rossi chiocciola libero punto it", "obfuscated_email"),
    "spoken_nl": ("jan.jansen apenstaartje ziggo punt nl", "obfuscated_email"),
    "spoken_pl": ("jan.kowalski małpa onet kropka pl", "obfuscated_email"),
    "spoken_sv": ("sven.svensson snabel-a telia punkt se", "obfuscated_email"),
    # issue 35's second held-out attack: the kinds it found, one needle each
    "us_ssn_abbreviated": ("s.s.n. 123456789", "us_ssn"),
    "us_ssn_spanish": ("numero de seguro social 123456789", "us_ssn"),
    "number_spoken": ("call four one five eight six seven five three zero nine",
                      "phone_number"),
    "number_spoken_es": ("llamar cuatro uno cinco ocho seis siete cinco tres cero nueve",
                         "phone_number"),
    "email_truncated": ("maximilian.horst@", "email"),
    "email_spoken_bei": ("max punkt horst bei gmx punkt de", "obfuscated_email"),
    "phone_spoken_plus": ("plus 44 20 7946 0958", "phone_number"),
    "phone_bracketed": ("(415)8675301", "phone_number"),
    "ipv6": ("router fe80::1ff:fe23:4567:890a", "ip_address"),
    # what the second held-out attack left
    "phone_one_by_one": ("4 1 5 3 9 2 7 7 0 1", "phone_number"),
    "ssn_social": ("my social is 670365114", "us_ssn"),
    "phone_glued_keyword": ("tel07700900237", "phone_number"),
    "email_at_the_rate": ("araminta at the rate gmail dot com", "obfuscated_email"),
    "ip_said_dot": ("151[dot]101[dot]65[dot]140", "ip_address"),
    "phone_spoken_fr_pairs": ("zéro six douze trente-quatre cinquante-six soixante-dix-huit",
                              "phone_number"),
    "phone_spoken_glued": ("fouronefiveeightsixseventhreezeroninenine", "phone_number"),
    # what the third held-out attack found
    "email_spoken_ru": ("ivan.petrov собака mail точка ru", "obfuscated_email"),
    "email_lenticular": ("taro.yamada【at】example【dot】jp", "obfuscated_email"),
    "phone_spoken_nl_pairs": ("nul zes twaalf vierendertig zesenvijftig achtenzeventig",
                              "phone_number"),
    "national_id_dotted": ("dni 87.971.696-p", "national_id"),
    "full_date_pt": ("nascido em 12 de maio de 1987", "full_date"),
}

# Characters a person does not see: format characters (Cf: zero-width space, joiners, soft
# hyphen, word joiner, BOM, bidi marks and isolates, invisible operators, tags), the
# combining grapheme joiner, variation selectors, Hangul fillers. None composes with a
# letter under NFKC, so each may go anywhere.
INVISIBLE = sorted({chr(c) for c in range(0x20000) if unicodedata.category(chr(c)) == "Cf"}
                   | {chr(c) for c in range(0xE0000, 0xE0080)}
                   | {"\u034f", *map(chr, range(0xFE00, 0xFE10)), "\u115f", "\u1160",
                      "\u3164", "\uffa0"})
# Marks drawn on a digit: combining low line, long stroke overlay, overline, enclosing keycap.
ON_DIGITS = ("\u0332", "\u0336", "\u0305", "\u20e3", "\ufe0f\u20e3")
DASHES = sorted({chr(c) for c in range(sys.maxunicode + 1)
                 if unicodedata.category(chr(c)) == "Pd"}
                | set("\u2212\u2796\u02d7\u2043\u207b\u208b\ufe63\uff0d"))
SPACES = sorted({chr(c) for c in range(sys.maxunicode + 1)
                 if unicodedata.category(chr(c)) == "Zs"} | {"\u2800"})
# The zero of every script's decimal digits (Nd comes in runs of ten, 0 to 9).
ZEROS = sorted(chr(c) for c in range(sys.maxunicode + 1)
               if unicodedata.category(chr(c)) == "Nd" and unicodedata.decimal(chr(c)) == 0)


# Numerals that are not decimal digits (not Nd), by the digit they are worth: CJK and
# financial ideographs, Hangzhou numerals, circled, parenthesized and full-stop digits,
# dingbats, superscripts and subscripts, Ethiopic, counting rods … — not those NFKC (the
# query's normalization, before any detector reads it) makes Latin letters or a fraction:
# Roman Ⅶ is "vii", ⅟ is "1⁄".
NUMERALS = {str(d): sorted(c for c in map(chr, range(sys.maxunicode + 1)) if c.isnumeric()
                           and unicodedata.category(c) != "Nd"
                           and unicodedata.numeric(c) == d
                           and not any(n.isascii() and n.isalpha() or n == "\u2044"
                                       for n in unicodedata.normalize("NFKC", c)))
            for d in range(10)}
# What reads as a colon (Unicode's confusables of ":"), U+2236 RATIO first.
COLONS = ("\u2236", "\ua789", "\ufe13", "\ufe55", "\uff1a", "\u02d0", "\u02f8", "\u0589",
          "\u05c3", "\u0703", "\u0704", "\u1365", "\u1804", "\u16ec", "\u205a", "\u2982",
          "\ua4fd")
# Digit words, 0 to 9, in every language docs/privacy.md names (with their accents: the
# canonical form reads them without), and the English "oh".
SPOKEN_DIGITS = {
    "en": "zero one two three four five six seven eight nine".split(),
    "es": "cero uno dos tres cuatro cinco seis siete ocho nueve".split(),
    "pt": "zero um dois três quatro cinco seis sete oito nove".split(),
    "fr": "zéro un deux trois quatre cinq six sept huit neuf".split(),
    "de": "null eins zwei drei vier fünf sechs sieben acht neun".split(),
    "it": "zero uno due tre quattro cinque sei sette otto nove".split(),
    "nl": "nul één twee drie vier vijf zes zeven acht negen".split(),
    "pl": "zero jeden dwa trzy cztery pięć sześć siedem osiem dziewięć".split(),
    "sv": "noll ett två tre fyra fem sex sju åtta nio".split(),
    "en-oh": "oh one two three four five six seven eight nine".split(),
}


def in_numerals(text: str, rng: random.Random) -> str:
    """``text`` with each ASCII digit written as a numeral of its value (not Nd)."""
    return "".join(rng.choice(NUMERALS[c]) if c.isascii() and c.isdigit() else c
                   for c in text)


def in_script(text: str, zero: str) -> str:
    """``text`` with its ASCII digits written in the script whose zero is ``zero``."""
    return "".join(chr(ord(zero) + int(c)) if c.isascii() and c.isdigit() else c
                   for c in text)


def with_invisible(text: str, rng: random.Random, count: int) -> str:
    characters = list(text)
    for _ in range(count):
        characters.insert(rng.randrange(len(characters) + 1), rng.choice(INVISIBLE))
    return "".join(characters)


def variants(rng: random.Random, per_needle: int = 3) -> list[tuple[str, str]]:
    """(text, reason): for every needle, ``per_needle`` variants of each trick and one of all
    at once; deterministic for a seeded ``rng``."""
    out = []
    for text, reason in NEEDLES.values():
        for _ in range(per_needle):
            out.append((with_invisible(text, rng, rng.randint(1, 4)), reason))
            out.append((text.replace("-", rng.choice(DASHES)).replace(" ", rng.choice(SPACES)),
                        reason))
            if any(c.isdigit() for c in text):
                out.append((in_script(text, rng.choice(ZEROS)), reason))
                out.append((in_numerals(text, rng), reason))
                out.append(("".join(c + rng.choice(ON_DIGITS) if c.isdigit() else c
                                    for c in text), reason))
        if ":" in text:
            out.append((text.replace(":", rng.choice(COLONS)), reason))
        mixed = in_script(text.replace("-", "\u2013").replace(" ", "\u00a0"), "\u0660")
        out.append((with_invisible(mixed, rng, 3), reason))
    return out


class _PageText(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.data: list[str] = []

    def handle_data(self, data: str) -> None:
        self.data.append(data)


def page_text(page: str) -> list[str]:
    """The text runs of ``page`` as ``html.parser`` reads them."""
    parser = _PageText()
    parser.feed(page)
    parser.close()
    return parser.data
