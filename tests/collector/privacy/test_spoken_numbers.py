"""Numbers said as words (collector/privacy/spoken_numbers.py): any digit word of the nine
languages docs/privacy.md names, mixed, in any case, with any separator, reads as its digits;
a phone's, a card's and an SSN's length of them is withheld; a few number words in a product
query are not."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from collector.privacy import check_digits
from collector.privacy import number_detectors as nd
from collector.privacy.canonical import canonical
from collector.privacy.personal_data import PersonalData
from collector.privacy.spoken_numbers import spoken
from tests.hostile_text import SPOKEN_DIGITS

DETECTORS = PersonalData(cache_size=1)
LANGUAGES = sorted(SPOKEN_DIGITS)
SEPARATORS = st.sampled_from([" ", " ", ", ", "-", " - ", " dash ", ". "])


@st.composite
def said(draw, digits: str, grouped: bool = True) -> str:
    """``digits`` as words: each in a language of its own (or one language throughout),
    any case; ``grouped``: a separator of any kind between some (a number in groups)."""
    languages = draw(st.lists(st.sampled_from(LANGUAGES), min_size=1, max_size=3))
    words = [draw(st.sampled_from(languages)) for _ in digits]
    out = []
    for i, (digit, language) in enumerate(zip(digits, words, strict=True)):
        if i:
            out.append(draw(SEPARATORS) if grouped and draw(st.integers(0, 3)) == 0 else " ")
        word = SPOKEN_DIGITS[language][int(digit)]
        out.append(draw(st.sampled_from([word, word.upper(), word.capitalize()])))
    return "".join(out)


def _number(length: int) -> st.SearchStrategy[str]:
    return st.text("0123456789", min_size=length, max_size=length)


@given(st.integers(7, 15).flatmap(_number).flatmap(said),
       st.sampled_from(["", "call ", "my number is ", "tel "]))
def test_seven_digits_or_more_said_are_withheld(text, before):
    assert DETECTORS.reason(before + text) is not None


@given(st.integers(7, 12).flatmap(_number).flatmap(said))
def test_a_phone_s_length_said_is_a_phone_number_when_nothing_sharper_claims_it(text):
    assert DETECTORS.reason(text) in (nd.PHONE_NUMBER, nd.US_SSN, nd.NATIONAL_ID,
                                      nd.FULL_DATE, nd.CARD_NUMBER)


@given(st.integers(14, 18).flatmap(_number).map(
    lambda body: next(body + d for d in "0123456789" if check_digits.luhn(body + d))
).flatmap(lambda digits: said(digits, grouped=False)))
@example("nul nul nul nul nul nul nul nul nul nul nul nul nul nul eight één nul")  # not 18
def test_a_card_number_said_is_a_card_number(text):
    # (one in 97 of 15 digits is a French social security number, one in 11 of 18 a Chinese
    # identity number: sharper reasons)
    assert DETECTORS.reason(f"card {text}") in (nd.CARD_NUMBER, nd.NATIONAL_ID)


@given(st.integers(1, 665).filter(lambda a: a != 666), st.integers(1, 99),
       st.integers(1, 9999), st.data())
def test_an_ssn_said_after_its_name_is_an_ssn(area, group, serial, data):
    text = data.draw(said(f"{area:03}{group:02}{serial:04}", grouped=False))
    assert DETECTORS.reason(f"ssn {text}") == nd.US_SSN


@given(st.integers(0, 9), st.sampled_from(["double", "triple"]), st.data())
def test_double_and_triple_repeat_the_digit_after_them(digit, repeat, data):
    word = SPOKEN_DIGITS["en"][digit]
    count = 2 if repeat == "double" else 3
    text, most = spoken(canonical(f"four one five {repeat} {word} six seven"))
    assert (text, most) == (f"415{str(digit) * count}67", 5 + count)


SPOKEN = [
    ("four one five eight six seven five three zero nine", "4158675309"),
    ("four one five, eight six seven, five three zero nine", "415 867 5309"),
    ("four one five dash eight six seven dash five three zero nine", "415 867 5309"),
    ("415 eight six seven 5309", "4158675309"),
    ("eight six seven fifty three oh nine", "8675309"),
    ("one eight hundred five five five double two one three", "18005552213"),
    ("plus 44 20 7946 0958", "+44 20 7946 0958"),
    ("plus four four two zero seven nine four six zero nine five eight", "+442079460958"),
    ("vier eins funf acht sechs sieben", "415867"),
    ("twenty twenty four calendar", "2024 calendar"),
]


@pytest.mark.parametrize(("text", "digits"), SPOKEN)
def test_a_run_of_number_words_reads_as_its_digits(text, digits):
    assert spoken(text)[0] == digits


@pytest.mark.parametrize("text", ["one piece", "top ten one hit wonders", "iphone 15 plus 128",
                                  "2023 2024 one two", "plus size dress", "fifty shades"])
def test_fewer_than_three_number_words_are_left_as_they_are(text):
    assert spoken(text) == (text, 0)


_PRODUCT_WORDS = st.sampled_from(["tent", "shoes", "red", "size", "pack", "xl", "cotton",
                                  "lamp", "for", "kids", "with", "blue", "chair"])


@given(st.lists(st.one_of(_PRODUCT_WORDS, st.integers(1, 2030).map(str)), max_size=6),
       st.lists(st.sampled_from([w for words in SPOKEN_DIGITS.values() for w in words]),
                max_size=2), st.randoms())
def test_two_number_words_among_product_words_are_no_spoken_number(words, numbers, rng):
    """Nobody's number: a product query holding a number word or two ("one piece", "sei
    pezzi") is read as it is written."""
    mixed = [*words, *numbers]
    rng.shuffle(mixed)
    text = " ".join(mixed)
    assert spoken(canonical(text)) == (canonical(text), 0)
