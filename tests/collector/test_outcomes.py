from __future__ import annotations

import sys
import unicodedata

import pytest

from collector.outcomes import PUNCTUATION_PLANES, normalize_query, reformulation_kind


@pytest.mark.parametrize(("raw", "normalized"), [
    ("  Running   SHOES ", "running shoes"),
    ("¿Dónde está?", "dónde está"),
    ("ﬁle Straße", "file strasse"),  # NFKC ligature, casefold ß
    ("“quoted”", "quoted"),
    ("...", ""),
    ("c++", "c++"),  # symbols are not punctuation
    ("Maximilian.Horst@", "maximilian.horst@"),  # an address being typed (docs/privacy.md)
    ("\uff20nike!", "@nike"),
    ("tab\tand\nnewline", "tab and newline"),
])
def test_normalize(raw, normalized):
    assert normalize_query(raw) == normalized


def test_every_punctuation_character_is_in_the_planes_normalization_scans():
    """This Python's Unicode database has no punctuation past the planes scanned at import."""
    punctuation = [c for c in range(sys.maxunicode + 1)
                   if unicodedata.category(chr(c)).startswith("P")]
    assert len(punctuation) > 800 and max(punctuation) < PUNCTUATION_PLANES
    assert normalize_query("\U0001e95fword\U0001e95e") == "word"  # Adlam, the last of them


@pytest.mark.parametrize(("before", "after", "kind"), [
    ("iphone", "iphnoe", "spelling"),  # distance 2
    ("wireless headphones", "wirless headphone", "spelling"),  # 2 ≤ 20 % of 19 chars
    ("running shoes for men", "running shoes for men red", "spelling"),  # 4 ≤ 20 % of 25
    ("tv", "tv 4k", "specialization"),  # distance 3 > 2 and > 20 % of 5
    ("black leather jacket", "jacket", "generalization"),
    ("black leather jacket", "leather jacket women", "other"),
    ("shoes", "laptop", "other"),
])
def test_reformulation_kind(before, after, kind):
    assert reformulation_kind(before, after) == kind


def test_a_megabyte_query_is_its_first_thousand_characters_and_stalls_nothing(ubi, engine):
    import time

    from collector.outcomes import MAX_QUERY_CHARS, normalize_query

    assert normalize_query("Ab " * 1_000_000) == ("ab " * 334)[:MAX_QUERY_CHARS].strip()
    started = time.perf_counter()  # two huge queries in one session: a reformulation check
    engine([ubi.query("q1", "a" * 1_000_000, 0, hits=()),
            ubi.query("q2", "b" * 999_999 + "c", 10, hits=())])
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(("before", "after", "expected"), [
    ("r", "ru", True), ("ru", "running shoes", True),  # typing on, debounced or not
    ("runnign", "runni", True),  # backspace
    ("running", "running", True),  # a space typed: the same normalized text
    ("runnign", "running", True),  # a typo fixed (two substitutions)
    ("tent person", "tent 4 person", True),  # two characters inserted in the middle
    ("", "t", True),  # everything deleted, then typing again
    ("red tent", "tent", False),  # a term dropped at the front: 4 edits
    ("tent", "red tent", False),  # a modifier put in front
    ("shoes", "boots", False),  # another query
])
def test_continues_is_extension_deletion_or_a_small_edit(before, after, expected):
    from collector.outcomes import continues

    assert continues(before, after, 2) is expected
    assert continues(after, before, 2) is expected  # the relation is symmetric


def test_bidi_controls_and_the_byte_order_mark_never_leave_raw():
    assert normalize_query("ctrlrlo \u202edrowssap\u202c") == "ctrlrlo drowssap"
    bidi = [*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)), "\ufeff"]
    assert normalize_query("".join(f"a{c}b " for c in bidi)) == " ".join(["ab"] * len(bidi))
