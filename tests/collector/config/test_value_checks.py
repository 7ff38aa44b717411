"""collector/config/value_checks.py: each check of a setting's value accepts the edges of its
range and names what is wrong just past them, since the message is what a user reads for a
wrong setting, and a value let through (an infinite timeout, an empty broker list, a SQLite URL
with no file) switches a mechanism off without a word."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from collector.config import value_checks

INF = math.inf


@pytest.mark.parametrize(("check", "accepted", "refused", "message"), [
    (value_checks.positive, [1e-9, 1, 1e300], [0, -1, INF, math.nan],
     "must be a finite number > 0"),
    (value_checks.non_negative, [0, 0.5, 1e300], [-1e-9, INF, math.nan],
     "must be a finite number >= 0"),
    (value_checks.share, [1e-9, 0.5, 1 - 1e-9], [0, 1, 2], "must be between 0 and 1 (exclusive)"),
    (value_checks.fraction, [0, 0.999], [1, -0.1], "must be between 0 (inclusive: off) and 1"),
    (value_checks.percent, [0.1, 100], [0, 100.1], "must be in (0, 100]"),
    (value_checks.rank, [1, 10_000], [0, 10_001, 2**63], "must be a rank between 1 and 10,000"),
    (value_checks.port, [0, 65535], [-1, 65536], "must be a TCP port (0-65535)"),
    (value_checks.bucket_count, [2, 1024], [1, 1025], "must be between 2 and 1024"),
    (value_checks.base, [0, 1], [2, -1], "must be 0 or 1"),
    (value_checks.client_marks, [1, 8], [0, 9],
     "must be between 1 and 8 (the client marks a store keeps per row)"),
    (value_checks.record_timestamps, ["arrival", "ignore"], ["Arrival", ""],
     "must be arrival or ignore"),
])
def test_the_edges_of_a_range_pass_and_just_past_them_is_named(
        check: Callable[[Any], str | None], accepted: list[Any], refused: list[Any],
        message: str) -> None:
    assert [check(value) for value in accepted] == [None] * len(accepted)
    assert [check(value) for value in refused] == [message] * len(refused)


def test_attribute_name_is_a_plain_json_key_of_at_most_64() -> None:
    for name in ("", "team", "_x", "a-b_9", "a" * 64):
        assert value_checks.attribute_name(name) is None, name
    for name in ("9team", "a b", "a.b", "a" * 65, "équipe"):
        assert value_checks.attribute_name(name) == (
            "must be a plain JSON key: a letter or _, then letters, digits, _ or - (≤ 64)"), name


def test_store_url_needs_a_known_scheme_and_a_sqlite_file() -> None:
    for url in ("", "sqlite:///searchpulse.db", "postgresql://u@h/db", "postgres://h/db"):
        assert value_checks.store_url(url) is None, url
    assert value_checks.store_url("sqlite:///") == value_checks.store_url("sqlite:///  ") == (
        "names no database file: sqlite:///PATH (e.g. sqlite:///searchpulse.db)")
    assert value_checks.store_url("mysql://h/db") == "must be sqlite:///PATH or postgresql://…"


def test_bootstrap_servers_refuse_an_empty_entry() -> None:
    assert value_checks.bootstrap_servers("k1:9092") is None
    assert value_checks.bootstrap_servers("k1:9092, k2:9092") is None
    for value in ("", "  ", "k1:9092,", "k1:9092,,k2:9092"):
        assert value_checks.bootstrap_servers(value) == \
            "must be a comma-separated list of host:port", value


def test_variant_is_a_label_value_and_not_a_reserved_one() -> None:
    assert value_checks.variant("treatment-2.b") is None
    for value in ("none", "other", "a b", "x" * 65):
        assert value_checks.variant(value).startswith("must be a variant label value"), value


def test_split_reports_the_parsers_reason() -> None:
    assert value_checks.split(["control=0.5", "treatment=0.5"]) is None
    assert value_checks.split(["control=0.5", "treatment=0.6"]) == \
        "the shares sum to 1.1, not 1"
    assert value_checks.split(["control=1"]) == "a split needs at least two variants"
    assert value_checks.split(["control"]) == \
        "'control': expected VARIANT=SHARE with a share > 0"


def test_linear_patterns_refuse_what_re2_cannot_run() -> None:
    assert value_checks.linear_patterns([r"\d{3}-\d{4}", "[a-z]+"]) is None
    problem = value_checks.linear_patterns(["ok", r"(a)\1"])  # a back-reference
    assert problem is not None and problem.startswith(
        r"'(a)\\1' is not a linear-time (RE2) pattern: ")


def test_measures_and_gate_rules_pass_when_empty_and_name_a_bad_one() -> None:
    assert value_checks.measures([]) is None and value_checks.gate_rules([]) is None
    assert value_checks.measures(["nDCG@10", "AP"]) is None
    assert value_checks.gate_rules(["nDCG@10 margin=0.01"]) is None
    assert "measure not found" in value_checks.measures(["Bogus@10"])
    assert "margin must be >= 0" in value_checks.gate_rules(["nDCG@10 margin=-1"])
