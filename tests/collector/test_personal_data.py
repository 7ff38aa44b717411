"""Each personal-data detector: what it must find, and the near-misses (product codes, prices,
model numbers) it must leave alone; every detector in linear time on hostile input."""

from __future__ import annotations

import time

import pytest

from collector import personal_data as pd
from collector.personal_data import PersonalData, luhn_valid

FOUND = [
    # e-mail, plain and obfuscated
    ("order for jane.doe+shop@example.co.uk", pd.EMAIL),
    ("john dot doe at example dot com", pd.OBFUSCATED_EMAIL),
    ("john.doe(at)example.com", pd.OBFUSCATED_EMAIL),
    ("write to jane [at] mail [dot] org", pd.OBFUSCATED_EMAIL),
    # cards: any separator, Luhn-valid; other long numbers
    ("4111 1111 1111 1111", pd.CARD_NUMBER),
    ("card 4111.1111.1111.1111", pd.CARD_NUMBER),
    ("4111/1111/1111/1111 expired", pd.CARD_NUMBER),
    ("3782-822463-10005", pd.CARD_NUMBER),  # Amex, 15 digits
    ("customer 1234567890123456789", pd.LONG_NUMBER),  # 19 digits, not Luhn-valid
    # IBAN with its mod-97 check, spaced or not
    ("de89 3704 0044 0532 0130 00", pd.IBAN),
    ("refund GB82WEST12345698765432", pd.IBAN),
    # US social security number (valid area, group, serial)
    ("ssn 123-45-6789", pd.US_SSN),
    ("123 45 6789 tax", pd.US_SSN),
    # phone numbers, national and international
    ("call 020 7946 0958", pd.PHONE_NUMBER),  # UK national
    ("06 12 34 56 78", pd.PHONE_NUMBER),  # FR national
    ("0612345678", pd.PHONE_NUMBER),  # FR, no separators
    ("2025550143", pd.PHONE_NUMBER),  # US, no separators
    ("(202) 555-0143", pd.PHONE_NUMBER),
    ("+44 20 7946 0958", pd.PHONE_NUMBER),
    ("0044 20 7946 0958", pd.PHONE_NUMBER),
    # IP addresses
    ("router 192.168.1.20 login", pd.IP_ADDRESS),
    ("2001:db8::8a2e:370:7334", pd.IP_ADDRESS),
    ("fe80::1 ping", pd.IP_ADDRESS),
    # full dates (a date of birth cannot be told from another date)
    ("born 12/05/1987", pd.FULL_DATE),
    ("1987-05-12 horoscope", pd.FULL_DATE),
    ("31.12.2001", pd.FULL_DATE),
]

SAFE = [
    "4006381333931",  # EAN-13
    "5901234123457",  # EAN-13
    "40170725",  # EAN-8
    "00012345600012",  # GTIN-14
    "978-3-16-148410-0",  # ISBN-13
    "9780306406157",  # ISBN-13
    "0-306-40615-2",  # ISBN-10
    "b07xlfyn6s",  # ASIN
    "wh-1000xm4 headphones",
    "price 1299.99",
    "iphone 15 pro 256gb",
    "rtx 4090 24gb",
    "tv 55 inch",
    "samsung 65\" qn90c",
    "what to look at in paris",
    "1234567",
    "de89 tent",  # not an IBAN
    "123-45-678",  # not an SSN
    "000-12-3456",  # area 000: not issued
    "999.999.999.999",  # not an address
    "12:30:45 timer",  # a time, not IPv6
    "31/02/1999",  # no such day
    "windows 10 22h2",
    "running shoes size 10.5",
]


@pytest.mark.parametrize(("text", "reason"), FOUND)
def test_each_detector_finds_its_kind(text, reason):
    assert PersonalData().reason(text) == reason


@pytest.mark.parametrize("text", SAFE)
def test_product_codes_prices_and_model_numbers_survive(text):
    assert PersonalData().reason(text) is None


def test_luhn_custom_patterns_and_length():
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    detectors = PersonalData([r"\bcust-\d+\b"], max_chars=50)
    assert detectors.reason("invoice cust-991") == pd.CUSTOM_PATTERN
    assert detectors.reason("running shoes") is None
    assert detectors.reason("x" * 51) == pd.TOO_LONG


HOSTILE = [
    "a" * 1_000_000,  # the quadratic e-mail pattern's worst case: word characters, no @
    "a." * 500_000,
    "1 " * 500_000,
    "a at " * 200_000,
    "a dot " * 160_000 + "at",
    "(" * 1_000_000,
    "1-" * 500_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:12]))
def test_every_detector_is_linear_on_a_megabyte(text):
    """The length rule stops what is shown; each detector must still be linear on its own."""
    detectors = PersonalData(max_chars=len(text))
    started = time.perf_counter()
    detectors.reason(text)
    elapsed = time.perf_counter() - started
    # linear: a megabyte in well under a second (phone matching is capped by its digit
    # pre-check and libphonenumber's own bounded candidate length)
    assert elapsed < 1.0, elapsed
    started = time.perf_counter()
    PersonalData().reason(text)  # the default: too long, never scanned
    assert time.perf_counter() - started < 0.005
