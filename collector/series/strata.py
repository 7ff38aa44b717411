"""Query strata: known-item by pattern or title, else head / torso / tail by frequency.

Frequency comes from a strata CSV (``query,stratum``, e.g. written by ``searchpulse feedback``)
when one is configured, else from a live, bounded heavy-hitter sketch of recent searches.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import re2

from collector.errors import StrataError
from collector.outcomes import normalize_query
from collector.series.quality import HEAD, KNOWN_ITEM, STRATA, TAIL, TORSO
from collector.text_files import not_text

if TYPE_CHECKING:  # a type only: the stage below it imports nothing above
    from collector.config import Config

# Matched against the whole normalized query, on RE2 (linear time, whatever the query).
DEFAULT_KNOWN_ITEM_PATTERNS = (
    r"(?:isbn(?:-1[03])?[: ]*)?(?:\d[- ]?){9}[\dx]",  # ISBN-10
    r"(?:isbn(?:-1[03])?[: ]*)?97[89](?:[- ]?\d){10}",  # ISBN-13
    r"\d{8}|\d{12,14}",  # EAN-8, UPC-A, EAN-13, GTIN-14
)
# SKU / part / model number: one token of 5–20 characters mixing letters and digits, in runs of
# [a-z0-9] joined by single - . _ or /. Checked with str operations (RE2 has no lookahead, and
# its per-call wrapper costs more than the check); the default patterns need 8 digits or more.
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS = frozenset("0123456789")
_SKU_CHARACTERS = _LETTERS | _DIGITS | frozenset("-._/")
_SEPARATORS_AS_DASH = str.maketrans("._/", "---")
_NO_DIGITS = str.maketrans("", "", "0123456789")
_DEFAULT_MIN_DIGITS = 8


def is_sku(normalized: str) -> bool:
    return (5 <= len(normalized) <= 20 and not _DIGITS.isdisjoint(normalized)
            and not _LETTERS.isdisjoint(normalized) and _SKU_CHARACTERS.issuperset(normalized)
            and "--" not in normalized.translate(_SEPARATORS_AS_DASH)
            and normalized[0] not in "-._/" and normalized[-1] not in "-._/")


_UNSET = -1
RARE = 1  # a query the live sketch has counted this many times or fewer is tail



def load_strata_csv(path: str | Path) -> dict[str, int]:
    """Read ``query,stratum`` rows (header required); queries are normalized on load."""
    try:
        return _strata_rows(path)
    except UnicodeDecodeError as error:
        raise StrataError(f"{path}: {not_text(path, error)}") from None


def _strata_rows(path: str | Path) -> dict[str, int]:
    table: dict[str, int] = {}
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if not reader.fieldnames or not {"query", "stratum"} <= set(reader.fieldnames):
            raise StrataError(f"{path}: header must contain 'query,stratum'")
        for line, row in enumerate(reader, start=2):
            stratum = row["stratum"].strip()
            if stratum not in STRATA:
                raise StrataError(f"{path}:{line}: unknown stratum {stratum!r}")
            table[normalize_query(row["query"])] = STRATA.index(stratum)
    return table


def load_titles(path: str | Path) -> set[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return {normalize_query(line) for line in handle if line.strip()}
    except UnicodeDecodeError as error:
        raise StrataError(f"{path}: {not_text(path, error)}") from None


class HeavyHitters:
    """Approximate query frequencies in bounded memory, with head/torso thresholds.

    Keeps at most ``2 × capacity`` counts; when full, only the ``capacity`` largest survive.
    Every ``8 × capacity`` searches all counts halve, so the strata follow recent traffic.
    Thresholds are recomputed on a doubling schedule (100, 200, 400 … searches) up to every
    ``capacity`` searches: sorting is the only non-O(1) step and stays off the per-search cost.
    """

    def __init__(self, capacity: int, head_share: float, torso_share: float) -> None:
        self.capacity = capacity
        self.head_share = head_share
        self.torso_share = torso_share
        self.counts: dict[str, int] = {}
        self.total = 0
        # every query is head until the first thresholds (``_next_refresh`` searches)
        self.head_min = 1
        self.torso_min = 1
        self._next_refresh = 100
        self._next_decay = 8 * capacity

    def observe(self, query: str) -> int:
        count = self.counts.get(query, 0) + 1
        self.counts[query] = count
        self.total += 1
        if count == 1 and len(self.counts) > 2 * self.capacity:
            self._prune()
        if self.total >= self._next_refresh:
            self._maintain()
        if count >= self.head_min:
            return HEAD
        return TORSO if count >= self.torso_min else TAIL

    def _prune(self) -> None:
        kept = sorted(self.counts.items(), key=lambda item: item[1], reverse=True)
        self.counts = dict(kept[: self.capacity])

    def _maintain(self) -> None:
        if self.total >= self._next_decay:
            self.counts = {q: c // 2 for q, c in self.counts.items() if c > 1}
            self.total //= 2
            self._next_decay = self.total + 8 * self.capacity
        self._refresh_thresholds()
        step = min(self.capacity, max(100, self.total))
        self._next_refresh = self.total + step

    def _refresh_thresholds(self) -> None:
        ranked = sorted(self.counts.values(), reverse=True)
        head_target = self.head_share * self.total
        torso_target = self.torso_share * self.total
        self.head_min = self.torso_min = ranked[-1] if ranked else 1
        running = 0
        head_found = False
        for count in ranked:
            running += count
            if not head_found and running >= head_target:
                self.head_min, head_found = count, True
            if running >= torso_target:
                self.torso_min = count
                break
        # Queries tied with the threshold count all belong to the stratum; a query counted
        # RARE times or fewer is tail whatever the shares say (on a log too small for the
        # shares to reach the single queries, the tail is still the rare ones).
        self.head_min = max(self.head_min, RARE + 1)
        self.torso_min = max(min(self.torso_min, self.head_min), RARE + 1)


class QueryText:
    """A raw query's normalized text and its fixed stratum (``-1``: decided by frequency)."""

    __slots__ = ("normalized", "fixed_stratum")

    def __init__(self, normalized: str, fixed_stratum: int) -> None:
        self.normalized = normalized
        self.fixed_stratum = fixed_stratum


class StrataClassifier:
    """Normalizes a raw query once (bounded cache) and gives the stratum of each search."""

    def __init__(
        self,
        head_share: float = 0.5,
        torso_share: float = 0.8,
        sketch_capacity: int = 10000,
        patterns: Iterable[str] = (),
        titles: Iterable[str] = (),
        table: dict[str, int] | None = None,
        cache_size: int = 200_000,
    ) -> None:
        # Every default pattern needs 8 digits: most queries skip them.
        self.default_known_item = re2.compile("|".join(
            f"(?:{p})" for p in DEFAULT_KNOWN_ITEM_PATTERNS))
        patterns = list(patterns)
        self.known_item = (re2.compile("|".join(f"(?:{p})" for p in patterns)) if patterns
                           else None)
        self.titles = set(titles)
        self.table = table
        self.sketch = HeavyHitters(sketch_capacity, head_share, torso_share)
        self._cache: dict[str, QueryText] = {}
        self._cache_size = cache_size

    @classmethod
    def from_config(cls, config: Config) -> StrataClassifier:
        """The classifier the settings describe (the engine and the feedback job share it)."""
        return cls(
            head_share=config["strata.head_share"],
            torso_share=config["strata.torso_share"],
            sketch_capacity=config["strata.sketch_capacity"],
            patterns=config["strata.known_item_patterns"],
            titles=(load_titles(config["strata.known_item_titles_file"])
                    if config["strata.known_item_titles_file"] else ()),
            table=load_strata_csv(config["strata.file"]) if config["strata.file"] else None,
        )

    def text(self, raw: str) -> QueryText:
        found = self._cache.get(raw)
        if found is None:
            if len(self._cache) >= self._cache_size:
                self._cache.clear()  # generational: the hot queries come back in one lookup
            normalized = normalize_query(raw)
            found = self._cache[raw] = QueryText(normalized, self._fixed(normalized))
        return found

    def is_known_item(self, normalized: str) -> bool:
        return (normalized in self.titles or is_sku(normalized)
                or (len(normalized) - len(normalized.translate(_NO_DIGITS))
                    >= _DEFAULT_MIN_DIGITS
                    and self.default_known_item.fullmatch(normalized) is not None)
                or (self.known_item is not None
                    and self.known_item.fullmatch(normalized) is not None))

    def _fixed(self, normalized: str) -> int:
        if self.is_known_item(normalized):
            return KNOWN_ITEM
        if self.table is not None:
            return self.table.get(normalized, TAIL)
        return _UNSET

    def stratum(self, text: QueryText) -> int:
        fixed = text.fixed_stratum
        return fixed if fixed >= 0 else self.sketch.observe(text.normalized)
