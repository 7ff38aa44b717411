"""Selection: quotas, calibration share, near-duplicates, determinism."""

from __future__ import annotations

import pandas as pd

from feedback.candidates.selection import CALIBRATION, FAILING, SelectionRules, select


def _frame() -> pd.DataFrame:
    rows = []
    for i in range(40):  # failing tail queries, impact falling with i
        rows.append(("web", f"broken thing {i:02d}", "tail", 0.5, 100.0 - i, 50))
    rows.append(("web", "thing broken 00", "tail", 0.5, 99.5, 50))  # reordered duplicate
    rows.append(("web", "broken thinh 01", "tail", 0.5, 98.5, 50))  # a typo of one
    rows.append(("mobile", "broken thing 00", "tail", 0.5, 99.0, 50))  # other app: distinct
    for i in range(200):
        rows.append(("web", f"fine query {i:03d}", "tail", 0.0, 0.0, 1 + i))
    for i in range(5):
        rows.append(("web", f"head failing {i}", "head", 0.3, 500.0 - i, 900))
    frame = pd.DataFrame(rows, columns=["application", "query", "stratum", "failure", "impact",
                                        "searches"])
    return frame.sort_values(["application", "query"], ignore_index=True)  # as the store gives


RULES = SelectionRules(quotas={"head": 10, "tail": 20}, calibration_share=0.25,
                       failure_threshold=0.1, similarity=90.0, seed=7)


def test_quotas_calibration_and_near_duplicates():
    selection = select(_frame(), RULES)
    chosen = selection.chosen
    tail = chosen[chosen["stratum"] == "tail"]
    assert (tail["selected_as"] == FAILING).sum() == 15
    assert (tail["selected_as"] == CALIBRATION).sum() == 5
    failing = tail[tail["selected_as"] == FAILING]
    assert list(failing["query"][:3]) == ["broken thing 00", "broken thing 00",
                                          "broken thing 01"]
    assert list(failing["application"][:2]) == ["web", "mobile"]
    assert "thing broken 00" not in set(chosen["query"])
    assert "broken thinh 01" not in set(chosen["query"])
    assert selection.collapsed == 2
    assert set(tail[tail["selected_as"] == CALIBRATION]["query"]) <= {
        f"fine query {i:03d}" for i in range(200)}
    head = chosen[chosen["stratum"] == "head"]
    # 10 head slots: 8 failing wanted, only 5 exist; 2 calibration wanted, none exist
    assert len(head) == 5
    assert selection.shortfall == {"head": {FAILING: 3, CALIBRATION: 2}}


def test_the_seed_decides_the_calibration_sample():
    first = select(_frame(), RULES).chosen
    again = select(_frame(), RULES).chosen
    other = select(_frame(), SelectionRules(**{**RULES.__dict__, "seed": 8})).chosen
    assert first.equals(again)
    calibration = first[first["selected_as"] == CALIBRATION]["query"]
    other_calibration = other[other["selected_as"] == CALIBRATION]["query"]
    assert set(calibration) != set(other_calibration)


def test_calibration_follows_traffic():
    """Sampled ∝ searches: over many seeds the busiest healthy queries come up most."""
    counts: dict[str, int] = {}
    for seed in range(60):
        chosen = select(_frame(), SelectionRules(**{**RULES.__dict__, "seed": seed})).chosen
        for query in chosen[chosen["selected_as"] == CALIBRATION]["query"]:
            counts[query] = counts.get(query, 0) + 1
    busy = sum(counts.get(f"fine query {i:03d}", 0) for i in range(150, 200))
    quiet = sum(counts.get(f"fine query {i:03d}", 0) for i in range(0, 50))
    assert busy > 4 * quiet
