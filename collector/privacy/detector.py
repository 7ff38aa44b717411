"""What a personal-data detector is: a shape, and the check a match of it must pass.

Its own module because both tables of detectors are built of it — the e-mail ones in
personal_data.py and the number ones in number_detectors.py — and the reader in personal_data.py
runs them: below both, it keeps their imports without a cycle. ``NO_DIGITS`` counts a text's
digits (its length less that of its translation), what ``min_digits`` is compared with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import re2

# What a match of a shape is: True (the detector's reason), another reason, or nothing.
Check = Callable[["re2._Match"], bool | str]


@dataclass(frozen=True, slots=True)
class Detector:
    """A shape, and the check a match of it must pass (None: the shape is enough). The
    shape's own digits bound ``min_digits``: a text with fewer never runs the check."""

    reason: str
    shape: str
    check: Check | None = None
    min_digits: int = 0


NO_DIGITS = str.maketrans("", "", "0123456789")  # a text without its digits
