"""Judges' agreement against independent computations: Krippendorff's published example,
scikit-learn's weighted kappa, hand-counted shares and confusion matrices; nothing reported
below the minimum of compared pairs; an automatic judge calibrated against the humans."""

from __future__ import annotations

import contextlib
import io
import json
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from feedback.judging.agreement import ALL, HUMANS, agreement, ordinal_alpha, weighted_kappa
from searchpulse import EXIT_OK, main

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 observers × 12
# units example: published alpha nominal .743, ordinal .815, interval .849.
KRIPPENDORFF_2011 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
                     [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN]]


def test_ordinal_alpha_is_krippendorffs_published_value():
    assert ordinal_alpha(np.array(KRIPPENDORFF_2011), scale=5) == pytest.approx(0.815, abs=5e-4)
    assert ordinal_alpha(np.array([[2, 2, 2], [2, 2, 2]], dtype=float), scale=3) is None


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_weighted_kappa_equals_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    reference = rng.integers(0, 4, 60)
    judge = np.clip(reference + rng.integers(-1, 2, 60), 0, 3)
    judge[:5] = 0  # and a grade one rater never used on the other side
    assert weighted_kappa(reference, judge, 3) == pytest.approx(
        cohen_kappa_score(reference, judge, weights="quadratic", labels=[0, 1, 2, 3]))


def _panel(items: int = 40) -> pd.DataFrame:
    """ann and ben grade every item; llm grades every item one grade high on the tail."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(items):
        query = f"q{i % 20}"
        ann = int(rng.integers(0, 4))
        ben = int(np.clip(ann + (1 if i % 5 == 0 else 0) - (1 if i % 7 == 0 else 0), 0, 3))
        llm = min(ann + 1, 3) if i % 20 >= 10 else ann
        for rater, grade in (("ann", ann), ("ben", ben), ("llm", llm)):
            rows.append(("web", query, f"d{i}", rater, grade))
    rows.append(("web", "q0", "d0", "", 3))  # anonymous: not paired
    return pd.DataFrame(rows, columns=["application", "query", "doc_id", "rater", "grade"])


STRATA = pd.Series({f"q{i}": "head" if i < 10 else "tail" for i in range(20)})


def _find(rows, reference, judge, stratum):
    return next(r for r in rows if (r.reference, r.judge, r.stratum) == (reference, judge,
                                                                          stratum))


def test_pair_of_raters_every_statistic():
    grades = _panel()
    rows = agreement(grades, STRATA, scale=3, min_pairs=30, automatic=frozenset({"llm"}))
    named = grades[grades["rater"] != ""]
    ann = named[named["rater"] == "ann"]["grade"].to_numpy()
    ben = named[named["rater"] == "ben"]["grade"].to_numpy()
    pair = _find(rows, "ann", "ben", ALL)
    assert pair.pairs == 40
    assert pair.exact == pytest.approx(np.mean(ann == ben))
    assert pair.within_one == pytest.approx(np.mean(abs(ann - ben) <= 1))
    assert pair.mean_difference == pytest.approx(np.mean(ben - ann))
    expected = np.zeros((4, 4), dtype=int)
    for a, b in zip(ann, ben, strict=True):
        expected[a, b] += 1
    assert pair.confusion == expected.tolist()
    assert pair.kappa == pytest.approx(cohen_kappa_score(ann, ben, weights="quadratic",
                                                         labels=[0, 1, 2, 3]))
    assert pair.alpha == pytest.approx(ordinal_alpha(np.vstack([ann, ben]).astype(float), 3))
    assert 0.5 < pair.alpha < 1
    # no pair of human and automatic rater: the automatic one is calibrated instead
    assert not [r for r in rows if "llm" in (r.reference, r.judge) and r.reference != HUMANS]


def test_nothing_is_reported_below_the_minimum_of_compared_pairs():
    rows = agreement(_panel(), STRATA, scale=3, min_pairs=30, automatic=frozenset({"llm"}))
    head = _find(rows, "ann", "ben", "head")
    assert head.pairs == 20 and head.alpha is None and head.kappa is None
    assert head.exact is None and head.confusion is None
    assert head.note == "fewer than 30 compared pairs"
    assert _find(rows, "ann", "ben", "head").as_dict() == {
        "reference": "ann", "judge": "ben", "stratum": "head", "pairs": 20,
        "note": "fewer than 30 compared pairs"}
    rows = agreement(_panel(), STRATA, scale=3, min_pairs=20, automatic=frozenset({"llm"}))
    assert _find(rows, "ann", "ben", "head").alpha is not None


def test_overall_counts_every_pair_of_grades_of_an_item():
    grades = _panel()
    rows = agreement(grades, STRATA, scale=3, min_pairs=30, automatic=frozenset({"llm"}))
    overall = _find(rows, ALL, "", ALL)
    assert overall.pairs == 40  # the humans only: one pair per item
    everyone = _find(agreement(grades, STRATA, 3, 30), ALL, "", ALL)
    assert everyone.pairs == 3 * 40  # three raters: three pairs per item
    wide = grades[grades["rater"] != ""].pivot_table(index="doc_id", columns="rater",
                                                     values="grade")
    assert everyone.alpha == pytest.approx(ordinal_alpha(wide.to_numpy().T.astype(float), 3))


def test_automatic_judge_calibrated_against_the_humans_per_stratum():
    rows = agreement(_panel(), STRATA, scale=3, min_pairs=10, automatic=frozenset({"llm"}))
    head = _find(rows, HUMANS, "llm", "head")
    tail = _find(rows, HUMANS, "llm", "tail")
    assert head.pairs == tail.pairs == 20
    assert head.mean_difference < tail.mean_difference  # it grades the tail one grade high
    assert tail.exact < head.exact


def test_cli_agreement_table_json_and_html(tmp_path):
    judgments = tmp_path / "judgments.csv"
    _panel().to_csv(judgments, index=False)
    strata = tmp_path / "strata.csv"
    strata.write_text("query,stratum\n" + "".join(f"q{i},head\n" for i in range(10)))
    html = tmp_path / "agreement.html"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["judgments", "agreement", str(judgments), "--strata", str(strata),
                     "--automatic", "llm", "--html", str(html), "--json"]) == EXIT_OK
    result = json.loads(printed.getvalue())
    assert result["raters"] == ["ann", "ben", "llm"] and result["anonymous_grades"] == 1
    strata_seen = {row["stratum"] for row in result["agreement"]}
    assert strata_seen == {"all", "head", "tail"}  # unlisted queries are tail
    tags: list[str] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append(tag)

    Tags().feed(html.read_text())
    # pairwise heat map; confusion ann × ben and humans × llm; llm's bias per grade, per stratum
    assert tags.count("svg") == 5
    assert tags.count("table") == 3  # the facts, the disputed pairs, every statistic
    assert "{" not in html.read_text().split("<body>")[1].split("<script>")[0]  # no reprs
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["judgments", "agreement", str(judgments), "--automatic", "llm"]) == EXIT_OK
    table = printed.getvalue().splitlines()
    assert table[0].split()[:4] == ["stratum", "reference", "judge", "pairs"]
    assert any(line.split()[:4] == ["all", "ann", "ben", "40"] for line in table)


def test_pairwise_alpha_bands_disputed_pairs_and_the_judges_bias(tmp_path):
    from collector.judgments.judgment_set import combine, round_half_up
    from feedback.judging.agreement import bias_by_grade, pairwise_alpha
    from feedback.judging.agreement_report import band
    from feedback.judging.disputes import disputed, write_csv

    grades = _panel()
    raters, matrix = pairwise_alpha(grades, 3, 30)
    assert raters == ["ann", "ben", "llm"] and matrix[0][0] is None
    wide = grades[grades["rater"] != ""].pivot_table(index="doc_id", columns="rater",
                                                     values="grade")
    for i, j in ((0, 1), (0, 2), (1, 2)):
        pair = wide[[raters[i], raters[j]]].to_numpy().T.astype(float)
        assert matrix[i][j] == matrix[j][i] == pytest.approx(ordinal_alpha(pair, 3))
    assert [band(a) for a in (0.8, 0.7999, 0.667, 0.6669, None)] == [
        "reliable", "tentative", "tentative", "discard", "not reported"]
    # disputed: the items ann and ben graded differently, widest spread first; llm listed
    table = disputed(grades, automatic={"llm"})
    differ = wide[wide["ann"] != wide["ben"]]
    assert sorted(table["doc_id"]) == sorted(differ.index)
    assert list(table["spread"]) == sorted(table["spread"], reverse=True)
    first = table.iloc[0]
    assert first["grades"] == {r: int(wide.loc[first["doc_id"], r]) for r in raters}
    path = tmp_path / "disputed.csv"
    hostile = grades.copy()
    hostile.loc[hostile["doc_id"] == first["doc_id"], "query"] = "=HYPERLINK(1)"
    assert write_csv(path, disputed(hostile, {"llm"})) == len(table)
    lines = path.read_text().splitlines()
    assert lines[0] == "application,query,doc_id,raters,spread,ann,ben,llm"
    assert lines[1].startswith("web,'=HYPERLINK(1),")  # a spreadsheet will not evaluate it
    # the automatic judge's bias per human grade, from its calibration's confusion matrix
    rows = agreement(grades, STRATA, 3, 30, automatic=frozenset({"llm"}))
    calibration = _find(rows, HUMANS, "llm", ALL)
    humans = np.array([round_half_up(combine([a, b]))
                       for a, b in zip(wide["ann"], wide["ben"], strict=True)])
    llm = wide["llm"].to_numpy()
    expected = [float(np.mean(llm[humans == g] - g)) if (humans == g).any() else None
                for g in range(4)]
    assert bias_by_grade(calibration.confusion) == pytest.approx(expected)
