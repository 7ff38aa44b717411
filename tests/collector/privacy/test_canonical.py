"""The canonical form the detectors read: every invisible character gone, every digit ASCII,
every dash and space one character, whatever script or code point carried them; idempotent,
and printable ASCII untouched."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collector.privacy.canonical import canonical
from tests.hostile_text import (
    COLONS,
    DASHES,
    INVISIBLE,
    NUMERALS,
    ON_DIGITS,
    SPACES,
    ZEROS,
    in_script,
)


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


def test_every_numeral_worth_one_digit_is_that_digit():
    """Not only decimal digits: 〇 一 … 九, 壱 弐 参, ① ⑴ ⒈ ❶ ➀ ⓵ 🄂, ² ₂, Ⅳ, ፬ …"""
    assert sum(map(len, NUMERALS.values())) >= 500
    assert all(canonical(c) == d for d, numerals in NUMERALS.items() for c in numerals)
    assert canonical("〇一二三四五六七八九 零 壱弐参") == "0123456789 0 123"
    assert canonical("⑴⑵⑶-⒋⒌-❻❼➇➒ ¹²₃") == "123-45-6789 123"


def test_enclosed_numbers_above_nine_are_their_digits_multipliers_stay():
    assert canonical("⑫ ⑽ ⒓ ⓬ ❿ ➉ ㉑ ㊿") == "12 10 12 12 10 10 21 50"
    assert canonical("二十 百 千 万 ௰") == "2十 百 千 万 ௰"  # 十 multiplies: 二十 is 20, not 210


@given(st.lists(st.sampled_from(COLONS), min_size=1, max_size=7))
def test_look_alike_colons_are_colons(colons):
    assert canonical("2001" + "db8".join(colons) + "1") == "2001" + "db8".join(
        ":" * len(colons)) + "1"
