"""Check-digit algorithms of the numbers people paste into search boxes, and of the product
codes that look like them.

A pattern finds a shape; a check digit says whether the shape is what it looks like: one random
digit string in ten passes Luhn, one in 97 an IBAN's mod-97, so a check keeps product codes of
the same shape visible. Every function takes the digits as a string (validated by the caller's
pattern) and is linear in its length.
"""

from __future__ import annotations

from datetime import date

# Verhoeff's dihedral-group tables (Aadhaar's check digit).
_VERHOEFF_D = ((0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5),
               (2, 3, 4, 0, 1, 7, 8, 9, 5, 6), (3, 4, 0, 1, 2, 8, 9, 5, 6, 7),
               (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
               (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3),
               (8, 7, 6, 5, 9, 3, 2, 1, 0, 4), (9, 8, 7, 6, 5, 4, 3, 2, 1, 0))
_VERHOEFF_P = ((0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4),
               (5, 8, 0, 3, 7, 9, 6, 1, 4, 2), (8, 9, 1, 6, 0, 4, 3, 5, 2, 7),
               (9, 4, 5, 3, 1, 2, 6, 8, 7, 0), (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
               (2, 7, 9, 3, 8, 0, 6, 4, 1, 5), (7, 0, 4, 6, 9, 1, 3, 2, 5, 8))
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_CHINA_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_PESEL_WEIGHTS = (1, 3, 7, 9, 1, 3, 7, 9, 1, 3)


def luhn(digits: str) -> bool:
    """Payment cards (ISO/IEC 7812), Canadian SINs, Swedish personal numbers."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char)
        if i % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def gtin(digits: str) -> bool:
    """EAN-8, UPC-A, EAN-13, GTIN-14: weights 3 and 1 from the right, mod 10."""
    total = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(reversed(digits)))
    return total % 10 == 0


def isbn10(code: str) -> bool:
    """Ten characters, the last a digit or X: Σ (10 - i) × digit ≡ 0 (mod 11)."""
    if len(code) != 10 or not code[:9].isdigit() or not (code[9].isdigit() or code[9] in "xX"):
        return False
    check = 10 if code[9] in "xX" else int(code[9])
    return (sum((10 - i) * int(d) for i, d in enumerate(code[:9])) + check) % 11 == 0


def iban(code: str) -> bool:
    """ISO 13616: the country and check digits moved to the end, letters as 10–35, mod 97."""
    if not code.isascii() or not code.isalnum():
        return False
    rearranged = code[4:] + code[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def verhoeff(digits: str) -> bool:
    """India's Aadhaar number."""
    check = 0
    for i, char in enumerate(reversed(digits)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[i % 8][int(char)]]
    return check == 0


def spanish_dni(number: str, letter: str) -> bool:
    """DNI (8 digits) or NIE (X/Y/Z as 0/1/2, then 7 digits): the letter is number mod 23."""
    if number[0] in "xyzXYZ":
        number = str("xyz".index(number[0].lower())) + number[1:]
    return _DNI_LETTERS[int(number) % 23] == letter.upper()


def french_nir(digits: str, key: str) -> bool:
    """Numéro de sécurité sociale: 13 characters (Corsica's 2A/2B as 19/18 subtracted), key =
    97 - (number mod 97)."""
    upper = digits.upper()
    number = int(upper.replace("2A", "19").replace("2B", "18"))
    if "2A" in upper:
        number -= 1_000_000
    elif "2B" in upper:
        number -= 2_000_000
    return 97 - number % 97 == int(key)


def brazil_cpf(digits: str) -> bool:
    """CPF: two mod-11 check digits; a number of one repeated digit is not issued."""
    if len(set(digits)) == 1:
        return False
    for length in (9, 10):
        total = sum(int(d) * (length + 1 - i) for i, d in enumerate(digits[:length]))
        if (total * 10 % 11) % 10 != int(digits[length]):
            return False
    return True


def polish_pesel(digits: str) -> bool:
    """PESEL: weights 1 3 7 9 mod 10, and a real date of birth (the month carries the
    century)."""
    total = sum(int(d) * w for d, w in zip(digits, _PESEL_WEIGHTS, strict=False))
    if (10 - total % 10) % 10 != int(digits[10]):
        return False
    year, month, day = int(digits[:2]), int(digits[2:4]), int(digits[4:6])
    century = {0: 1900, 20: 2000, 40: 2100, 60: 2200, 80: 1800}.get(month - month % 20)
    return century is not None and real_date(century + year, month % 20, day)


def china_resident_id(code: str) -> bool:
    """18 characters, the last a digit or X (ISO 7064 MOD 11-2)."""
    total = sum(int(d) * w for d, w in zip(code[:17], _CHINA_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == code[17].upper()


def real_date(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True
