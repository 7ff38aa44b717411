"""Every SRW body we write passes SRW's own text validation, transcribed here from its source
(independently of collector/judgments/srw_text.py) and checked against the cases of SRW's own tests.

Source: opensearch-project/search-relevance,
src/main/java/org/opensearch/searchrelevance/utils/TextValidationUtil.java at
a261178c95ff994be7f2775638390153d7a33876 (query-set values refuse newline, `#` and `:`) and at
0b75cf84b5b2f43367410d505b138937b0ca361a (newline only); its tests
src/test/java/org/opensearch/searchrelevance/util/TextValidationUtilTests.java at
21ebcbd23c20d69922dd53c3df4a2f18a48915ec.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.config import load_config
from collector.judgments import srw_text
from collector.replay import replay
from feedback.candidates import handoff
from feedback.candidates.handoff import write_query_sets, write_srw_judgments
from feedback.clicks import job as clicks_job
from searchpulse import main
from tests.conftest import UBI


# ------------------------------------------------------------------ the transcription
def validate_text(text: str | None, max_length: int = 2000) -> str | None:
    """TextValidationUtil.validateText: its error message, or None when valid."""
    if text is None:
        return "Text cannot be null"
    if text == "":
        return "Text cannot be empty"
    if len(text.encode("utf-16-le")) // 2 > max_length:  # Java's String.length()
        return f"Text exceeds maximum length of {max_length} characters"
    # text.matches(".*" + "[\"\\\\<>]+" + ".*"): Java's `.` stops at line terminators, so a
    # forbidden character on a later line escapes `matches`; DOTALL is the stricter reading
    if re.fullmatch(r'.*["\\<>]+.*', text, re.S):
        return ("Text contains invalid characters (quotes, backslashes, or HTML tags are not "
                "allowed)")
    return None


def validate_name(text: str | None) -> str | None:
    return validate_text(text, 50)


def validate_description(text: str | None) -> str | None:
    return validate_text(text, 250)


def validate_query_set_value(text: str | None, reserved: str = "\n\r#:") -> str | None:
    """validateQuerySetValue: a261178c's reserved characters by default, 0b75cf84's with
    ``reserved="\\n\\r"``."""
    problem = validate_text(text)
    if problem is None and any(c in text for c in reserved):
        return "Text contains reserved characters"
    return problem


def test_the_transcription_agrees_with_srw_s_own_tests():
    """TextValidationUtilTests (21ebcbd2, the newest rule for query-set values)."""
    assert validate_text(None) == "Text cannot be null"
    assert validate_text("") == "Text cannot be empty"
    assert validate_text("a" * 2001) == "Text exceeds maximum length of 2000 characters"
    assert validate_text("a" * 2000) is None
    for valid in ("Hello, World!", "Test_123", "What's up?", "OpenSearch-2.0", "#hashtag",
                  "user@domain", "some_variable_name", "Path/to/file", "[bracket]",
                  "(parenthesis)", "{curly}", "100%", "$price", "value=123", "a+b",
                  "item1;item2", "key:value"):
        assert validate_text(valid) is None, valid
    for invalid in ('Invalid"quote', "Invalid\\backslash", "Invalid<tag>", "Invalid>arrow",
                    'String with "quotes"', "Path\\to\\file"):
        assert validate_text(invalid).startswith("Text contains invalid characters"), invalid
    assert validate_text("a" * 100, 50) and validate_text("a" * 100, 200) is None
    assert validate_name("a" * 50) is None
    assert validate_name("a" * 51) == "Text exceeds maximum length of 50 characters"
    assert validate_description("a" * 250) is None
    assert validate_description("a" * 251) == "Text exceeds maximum length of 250 characters"
    newest = "\n\r"
    for valid in ("What is OpenSearch?", "red shoes", "Expected score 0.95", "What is C#?",
                  "color #FF0000", "key: value", "time is 2:30 PM", "query#text"):
        assert validate_query_set_value(valid, newest) is None, valid
    for invalid in ("text with\nnewline", "line1\nline2", "query\nkey: value",
                    'text with "quotes"', "text with \\backslash", "text with <tag>"):
        assert validate_query_set_value(invalid, newest), invalid
    assert validate_query_set_value("a" * 2000, newest) is None
    assert validate_query_set_value("a" * 2001, newest)
    # a261178c: "#" and ":" reserved too (its queryText#\nkey: value format)
    for reserved in ("What is C#?", "key: value", "time is 2:30 PM"):
        assert validate_query_set_value(reserved)


def test_our_rules_refuse_exactly_what_the_transcription_refuses():
    for text in ("", "a" * 2000, "a" * 2001, "🎈" * 1000, "🎈" * 1001, 'a"b', "a\\b", "<b>",
                 "size: xl", "c# book", "two\nlines", "cr\r", "plain words"):
        assert (srw_text.query_text_refusal(text) is None) == \
            (validate_query_set_value(text) is None), text


# ------------------------------------------------------------------ what we write
HOSTILE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120)
TITLES = st.sampled_from(["candidates 2026-11-30", "imported judgments", "implicit 2026-11-30"])


@settings(max_examples=300, deadline=None)
@given(application=HOSTILE, title=TITLES, part=st.sampled_from(["", "-2", "-13"]))
def test_every_name_passes_validate_name(application, title, part):
    name = srw_text.name(application, title, part)
    assert validate_name(name) is None, name
    assert name.startswith(title + part) or name.startswith(application)


@settings(max_examples=200, deadline=None)
@given(first=HOSTILE, second=HOSTILE, title=TITLES)
def test_names_of_two_applications_differ(first, second, title):
    if first != second:
        assert srw_text.name(first, title) != srw_text.name(second, title)


def test_a_short_valid_name_is_kept_and_a_long_one_keeps_title_and_application():
    assert srw_text.name("web", "candidates 2026-11-30") == \
        "web · searchpulse candidates 2026-11-30"
    long = "storefront-search-eu-west1"  # 26 characters: the full name is 60
    name = srw_text.name(long, "candidates 2026-11-30", "-2")
    assert len(name) <= 50 and name.startswith("candidates 2026-11-30-2 ")
    assert re.fullmatch(r"candidates 2026-11-30-2 [0-9a-f]{8} storefront-search", name), name
    quoted = srw_text.name('shop "eu"', "imported judgments")
    assert validate_name(quoted) is None and "shop _eu_" in quoted


@settings(max_examples=200, deadline=None)
@given(description=HOSTILE)
def test_every_description_passes_validate_description(description):
    if description:
        assert validate_description(srw_text.description(description * 3)) is None


@settings(max_examples=100, deadline=None)
@given(queries=st.lists(HOSTILE.filter(bool), min_size=1, max_size=30, unique=True),
       application=HOSTILE)
def test_a_query_set_holds_every_acceptable_query_and_counts_the_rest(queries, application,
                                                                      tmp_path_factory):
    directory = tmp_path_factory.mktemp("srw")
    withheld = write_query_sets(directory, pd.DataFrame(
        {"application": application, "query": queries}), "candidates 2026-11-30")
    written = [json.loads(path.read_text()) for path in directory.glob("*.json")]
    texts = [q["queryText"] for body in written for q in body["querySetQueries"]]
    for body in written:
        assert validate_name(body["name"]) is None
        assert validate_description(body["description"]) is None
    assert all(validate_query_set_value(text) is None for text in texts)
    refused = [q for q in queries if validate_query_set_value(q) is not None]
    assert sorted(texts) == sorted(set(queries) - set(refused))  # never altered
    assert sum(withheld.values()) == len(refused)


def test_the_issue_s_set_one_query_no_longer_fails_it(tmp_path):
    withheld = write_query_sets(tmp_path, pd.DataFrame({
        "application": "storefront-search-eu-west1",
        "query": ['21" monitor', "size: xl", "tent", "c# book", "lamp"]}),
        "candidates 2026-11-30")
    (path,) = tmp_path.glob("*.query-set.json")
    body = json.loads(path.read_text())
    assert [q["queryText"] for q in body["querySetQueries"]] == ["tent", "lamp"]
    assert withheld == {"forbidden_character": 1, "reserved_character": 2}
    assert validate_name(body["name"]) is None


def test_judgment_bodies_pass_and_keep_their_query_texts(tmp_path: Path):
    """The judgment import validates name and description only (its processor checks docId
    and rating): query texts are the judged ones, unaltered."""
    path = tmp_path / "j.json"
    write_srw_judgments(path, "storefront-search-eu-west1", "imported judgments",
                        'Judgments <imported> by "searchpulse"',
                        [('21" monitor', [("d1", 2.0)]), ("size: xl", [("d2", 1.0)])])
    body = json.loads(path.read_text())
    assert validate_name(body["name"]) is None
    assert validate_description(body["description"]) is None
    assert [e["query"] for e in body["judgmentRatings"]] == ['21" monitor', "size: xl"]


def test_every_description_we_hand_to_srw_passes_as_written():
    """Our fixed descriptions need no cutting: what the user reads is what we wrote."""
    sources = "".join(Path(module.__file__).read_text() for module in (handoff, clicks_job))
    texts = re.findall(r'"((?:Candidates|Judgments|Implicit judgments)[^"]*)"', sources)
    assert len(texts) == 3
    for text in texts:
        assert validate_description(text) is None and srw_text.description(text) == text


def test_feedback_of_a_long_named_application_hands_srw_files_it_accepts(tmp_path):
    """The issue's case end to end: an application of 26 characters, queries SRW refuses."""
    application = "storefront-search-eu-west1"
    queries = ['21" monitor', "size: xl", "tent", "lamp"]
    ubi = UBI()
    records = [ubi.query(f"{q}-{c}", q, 10.0 * i + c, client=f"c{c}", app=application,
                         hits=(f"d{i}",))
               for i, q in enumerate(queries) for c in range(4)]
    log = tmp_path / "ubi.jsonl"
    log.write_bytes(b"\n".join(records) + b"\n")
    store = f"sqlite:///{tmp_path / 'q.db'}"
    replay([str(log)], load_config(environ={}), store=store)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["feedback", "--store", store, "--out", str(tmp_path / "out"), "--json",
                     "--since", "2026-01-01", "--set", "feedback.min_searches=1",
                     "--set", "feedback.calibration_share=0.9"]) == 0
    summary = json.loads(printed.getvalue())
    (path,) = (tmp_path / "out" / "srw").glob("*.query-set.json")
    body = json.loads(path.read_text())
    assert validate_name(body["name"]) is None and validate_description(body["description"]) \
        is None
    written = [q["queryText"] for q in body["querySetQueries"]]
    assert all(validate_query_set_value(text) is None for text in written)
    assert sorted(written) == ["lamp", "tent"]
    assert summary["srw_queries_withheld"] == {"forbidden_character": 1,
                                               "reserved_character": 1}
