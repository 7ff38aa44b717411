"""docs/metrics.md against collector/definitions.py: every exposed family documented with its
exact type and labels, nothing documented that is not exposed, every rate's definition as the
rows compute it."""

from __future__ import annotations

import re
from pathlib import Path

from collector import definitions as d

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def _rows(header: str) -> list[list[str]]:
    """The cells of every row of every table of docs/metrics.md under ``header``."""
    rows: list[list[str]] = []
    inside = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line == header:
            inside = True
        elif inside and line.startswith("| ") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
        elif inside and not line.startswith("|"):
            inside = False
    return rows


def _documented() -> dict[str, tuple[str, tuple[str, ...]]]:
    found = {}
    for name, kind, labels, _ in _rows("| metric | type | labels | meaning |"):
        assert re.fullmatch(r"`searchpulse_[a-z0-9_]+`", name), name
        assert name.strip("`") not in found, f"{name} documented twice"
        found[name.strip("`")] = (kind.split()[0],
                                  () if labels == "—" else tuple(
                                      label.strip(" `") for label in labels.split(",")))
    return found


def test_every_exposed_family_is_documented_with_its_type_and_labels():
    documented = _documented()
    defined = {family.name: (family.type, family.labels) for family in d.FAMILIES}
    assert len(defined) == len(d.FAMILIES) == 77  # no family defined twice
    assert documented == defined


def test_the_table_of_rates_has_every_rate_with_its_definition_and_numerator():
    rows = {rate.lower(): (definition, promql)
            for rate, definition, promql in _rows("| rate | definition | PromQL (5 min, per "
                                                  "application) |")}
    for rate in d.RATES:
        definition, promql = rows[rate.noun.lower()]
        assert definition == rate.definition, rate.key
        sample = d.COUNTS[rate.numerator].sample
        assert not sample or sample.removesuffix("_sum") in promql, rate.key
    # the only rows that are not a ratio of two counts: a quantile
    assert set(rows) - {rate.noun.lower() for rate in d.RATES} == {"latency p99"}


def test_every_count_a_rate_divides_is_an_exposed_series_or_derived():
    exposed = {family.name for family in d.FAMILIES}
    histograms = {f"{family.name}_{part}" for family in d.FAMILIES
                  if family.type in ("histogram", "summary") for part in ("sum", "count")}
    for count in d.COUNTS.values():
        if count.difference or count.total:
            assert all(part in d.COUNTS for part in count.difference or count.total)
        elif count.sample:
            assert count.sample in exposed | histograms, count.name
        else:  # per unit bucket only: its experiment family
            assert count.attribute in {family.attribute for family in d.BUCKET_COUNTS}
    assert d.count_of({"searches": 10, "zero_result": 3}, d.WITH_RESULTS) == 7
    assert d.rate_of({"searches": 10, "zero_result": 3, "clicked": 2}, d.CTR) == 2 / 7
    assert d.rate_of({"searches": 4, "zero_result": 4, "clicked": 0}, d.CTR) is None
    assert d.CTR.ratio == "clicked_searches_per_tracked_searches_with_results"
    counts = {"searches": 10, "zero_result": 3, "untracked": 2, "clicked": 2}
    assert d.rate_of(counts, d.CTR) == 2 / 5
    assert d.rate_of({"searches": 10, "untracked": 2, "reformulated": 2},
                     d.REFORMULATION_RATE) == 2 / 8
    assert d.REFORMULATION_RATE.ratio == "reformulated_searches_per_tracked_searches"
    assert d.rate_of({"searches": 6, "automated_searches": 2}, d.AUTOMATED_SHARE) == 2 / 8
    assert d.rate_of({"searches": 0, "automated_searches": 0}, d.AUTOMATED_SHARE) is None
