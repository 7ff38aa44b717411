"""The canonical form the detectors read: every invisible character gone, every digit ASCII,
every dash and space one character, whatever script or code point carried them; idempotent,
and printable ASCII untouched."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collector.privacy.canonical import canonical
from tests.hostile_text import DASHES, INVISIBLE, ON_DIGITS, SPACES, ZEROS, in_script


@pytest.mark.parametrize("zero", ZEROS, ids=lambda z: f"U+{ord(z):04X}")
def test_every_script_s_digits_are_ascii_digits(zero):
    assert canonical(in_script("card 4111 0987 6543 2", zero)) == "card 4111 0987 6543 2"


def test_every_decimal_digit_of_unicode_is_its_ascii_digit():
    digits = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Nd"]
    assert len(digits) >= 650
    assert all(canonical(d) == str(unicodedata.decimal(d)) for d in digits)


def test_invisible_characters_are_removed_dashes_and_spaces_unified():
    assert all(canonical(f"4{c}1") == "41" for c in INVISIBLE)
    assert all(canonical(f"4{m}1{m}") == "41" for m in ON_DIGITS)
    assert all(canonical(f"555{d}0147") == "555-0147" for d in DASHES)
    assert all(canonical(f"555{s}0147") == "555 0147" for s in SPACES)
    assert canonical("q\x00nul \x1b[31mred\x9b") == "qnul [31mred"
    assert canonical("a\u200b \u00a0\u2009b") == "a b"
    assert canonical("\u0661\u0662\u066b\u0665 \u0663\u3002\u0664 1\u20442") == "12,5 3.4 1/2"


@given(st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=40))
def test_printable_ascii_is_its_own_canonical_form_up_to_repeated_spaces(text):
    assert canonical(text) == (" ".join(text.split()) if "  " in text else text)


@given(st.text(max_size=40))
def test_canonical_is_idempotent_and_holds_no_digit_but_ascii(text):
    once = canonical(text)
    assert canonical(once) == once
    assert all(c in "0123456789" for c in once if unicodedata.category(c) == "Nd")
    assert not any(unicodedata.category(c) in ("Cf", "Cc", "Mn", "Me", "Pd") for c in once
                   if c != "-")
