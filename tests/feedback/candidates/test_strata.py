"""Strata by cumulative volume share and known-item patterns; strata.csv loads in the collector."""

from __future__ import annotations

import numpy as np
import pandas as pd

from collector.series.strata import StrataClassifier, load_strata_csv
from feedback.candidates.strata import listed_strata, query_strata, stratum_names, write_strata_csv


def test_cumulative_share_and_known_item(tmp_path):
    frame = pd.DataFrame({
        "application": ["web", "web", "mobile", "web", "web", "web", "web"],
        "query": ["tent", "lamp", "tent", "chair", "sofa", "rug", "ab12345"],
        "searches": [30, 25, 20, 10, 8, 7, 100]})
    # query totals: ab12345 100 (known-item by pattern, still counted in the shares),
    # tent 50, lamp 25, chair 10, sofa 8, rug 7 — total 200; share before each:
    # ab12345 0, tent .5, lamp .75, chair .875, sofa .925, rug .965
    volume = frame.groupby("query")["searches"].sum()
    strata = query_strata(StrataClassifier(), 0.5, 0.8, volume, 200)
    frame["stratum"] = stratum_names(frame, strata)
    assert dict(zip(frame["query"] + "@" + frame["application"], frame["stratum"],
                    strict=True)) == {
        "tent@web": "torso", "lamp@web": "torso", "tent@mobile": "torso", "chair@web": "tail",
        "sofa@web": "tail", "rug@web": "tail", "ab12345@web": "known_item"}
    path = tmp_path / "strata.csv"
    assert write_strata_csv(path, listed_strata(
        strata, lambda queries: np.ones(len(queries), bool))) == 2
    assert path.read_text().splitlines() == ["query,stratum", "tent,torso", "lamp,torso"]
    assert load_strata_csv(path) == {"tent": 1, "lamp": 1}
    # a query the privacy rules refuse is not listed
    assert write_strata_csv(path, listed_strata(
        strata, lambda queries: np.asarray(queries != "tent"))) == 1
    assert path.read_text().splitlines() == ["query,stratum", "lamp,torso"]


def test_queries_outside_the_volumes_are_tail_and_the_total_is_the_denominator():
    frame = pd.DataFrame({"application": ["web"] * 3, "query": ["tent", "lamp", "rug"],
                          "searches": [40, 30, 2]})
    volume = pd.Series({"tent": 40, "lamp": 30}, name="searches")
    # 1,000 searches in the period, most of them queries seen once: tent and lamp are head
    strata = query_strata(StrataClassifier(), 0.5, 0.8, volume, 1000)
    assert list(stratum_names(frame, strata)) == ["head", "head", "tail"]
