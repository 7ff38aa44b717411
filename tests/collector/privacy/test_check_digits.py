"""collector/privacy/check_digits.py: each check-digit algorithm accepts the published example
numbers and refuses them with one digit changed, since a check that passed everything would
flag every product code of the same shape as personal data, and one that passed nothing would
let real card numbers and national ids through."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from collector.privacy import check_digits


@pytest.mark.parametrize(("check", "valid", "one_off"), [
    (check_digits.luhn, "4111111111111111", "4111111111111112"),  # the test Visa number
    (check_digits.luhn, "79927398713", "79927398710"),  # Luhn's own example
    (check_digits.gtin, "4006381333931", "4006381333932"),  # EAN-13
    (check_digits.gtin, "036000291452", "036000291453"),  # UPC-A
    (check_digits.isbn10, "0306406152", "0306406153"),
    (check_digits.iban, "DE89370400440532013000", "DE89370400440532013001"),
    (check_digits.iban, "GB82WEST12345698765432", "GB82WEST12345698765433"),
    (check_digits.verhoeff, "2363", "2364"),  # Verhoeff's check digit of 236 is 3
    (check_digits.brazil_cpf, "11144477735", "11144477736"),
    (check_digits.polish_pesel, "44051401359", "44051401358"),  # born 1944-05-14
    (check_digits.china_resident_id, "11010519491231002X", "110105194912310021"),
])
def test_a_published_example_passes_and_one_changed_digit_fails(
        check: Callable[[str], bool], valid: str, one_off: str) -> None:
    assert check(valid) is True
    assert check(one_off) is False


def test_isbn10_takes_x_as_ten_and_refuses_other_shapes() -> None:
    assert check_digits.isbn10("080442957X") and check_digits.isbn10("080442957x")
    assert not check_digits.isbn10("03064061")  # too short
    assert not check_digits.isbn10("03064A6152")  # a letter before the check
    assert not check_digits.isbn10("X306406152")


def test_iban_reads_letters_in_either_case_and_refuses_separators() -> None:
    assert check_digits.iban("de89370400440532013000")
    assert not check_digits.iban("DE89 3704 0044 0532 0130 00")
    assert not check_digits.iban("DE89３70400440532013000")  # a full-width digit


def test_spanish_dni_and_nie_letters() -> None:
    assert check_digits.spanish_dni("12345678", "Z")  # 12345678 mod 23 = 14: Z
    assert check_digits.spanish_dni("12345678", "z")
    assert not check_digits.spanish_dni("12345678", "A")
    assert check_digits.spanish_dni("X1234567", "L")  # NIE: X counts as 0
    assert check_digits.spanish_dni("Y1234567", "X")  # Y as 1: 11234567 mod 23 = 10


def test_french_nir_key_and_corsica() -> None:
    assert check_digits.french_nir("1841276451089", "46")
    assert not check_digits.french_nir("1841276451089", "45")
    # 2A reads as 19 minus 1,000,000: 97 - 1841218451089 mod 97 = 60; 2B would subtract 2,000,000
    assert check_digits.french_nir("184122A451089", "60")
    assert check_digits.french_nir("184122a451089", "60")
    assert not check_digits.french_nir("184122B451089", "60")


def test_brazil_cpf_of_one_repeated_digit_is_not_issued() -> None:
    # 111.111.111-11 satisfies both mod-11 checks, yet no such CPF exists
    assert not check_digits.brazil_cpf("11111111111")


@pytest.mark.parametrize(("pesel", "valid"), [
    ("02270803624", True),  # month 27: 2002-07-08
    ("80810100004", True),  # month 81: 1880-01-01
    ("44131401350", False),  # the check digit holds but month 13 is no month
])
def test_polish_pesel_needs_a_real_date_of_birth(pesel: str, valid: bool) -> None:
    assert check_digits.polish_pesel(pesel) is valid


def test_real_date_knows_leap_years() -> None:
    assert check_digits.real_date(2024, 2, 29)
    assert not check_digits.real_date(2023, 2, 29)
    assert not check_digits.real_date(1900, 2, 29)
    assert not check_digits.real_date(2000, 13, 1)
