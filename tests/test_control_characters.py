"""Control characters (C0, DEL, C1) handed to each writer raw — as no normalized query holds
them, but a writer must not depend on it — leave none raw, and each file reads back by its
own reader as the visible ``\\xNN`` (CSV, TSV, HTML, Prometheus label values) or as the exact
text (JSON)."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from collector import definitions as d
from collector.config import load_config
from collector.control_characters import json_text, visible
from collector.engine import Engine
from collector.exposition.metrics import Exposition
from collector.judgments.readers import read_topics
from collector.outcomes import normalize_query
from collector.privacy.personal_data import PersonalData
from collector.series.quality import HEAD, TORSO
from collector.series.strata import load_strata_csv
from collector.series.zero_result_queries import QueryRelease, label
from feedback.candidates import handoff
from feedback.candidates.outputs import CANDIDATE_COLUMNS, write_candidates
from feedback.candidates.strata import write_strata_csv
from feedback.pages.page import document
from tests.hostile_text import page_text

HOSTILE = ["q\x00nul", "\x1b[31mred", "tab\there", "cr\rlf\nline", "del\x7f c1\x9b[0m",
           "=cmd\x00"]
SHOWN = {"q\x00nul": "q\\x00nul", "\x1b[31mred": "\\x1b[31mred", "tab\there": "tab\\x09here",
         "cr\rlf\nline": "cr\\x0dlf\\x0aline", "del\x7f c1\x9b[0m": "del\\x7f c1\\x9b[0m",
         "=cmd\x00": "=cmd\\x00"}
RAW = re.compile("[\x00-\x1f\x7f-\x9f]")
RAW_IN_HTML = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def test_normalization_makes_control_characters_spaces():
    assert [normalize_query(q) for q in HOSTILE] == [
        "q nul", "31mred", "tab here", "cr lf line", "del c1 [0m", "=cmd"]


def test_candidates_csv_by_the_csv_module_and_pandas(tmp_path):
    frame = pd.DataFrame([{c: 0 for c in CANDIDATE_COLUMNS} | {
        "query": q, "application": "web", "sample_reformulations": q} for q in HOSTILE])
    path = tmp_path / "candidates.csv"
    write_candidates(path, frame.rename(columns={"ctr": "ctr_rate"}))
    text = path.read_text(encoding="utf-8")
    assert not RAW.search(text.replace("\n", ""))
    rows = list(csv.DictReader(io.StringIO(text)))
    expected = [("'" if q.startswith("=") else "") + SHOWN[q] for q in HOSTILE]
    assert [r["query"] for r in rows] == expected
    assert [r["sample_reformulations"] for r in rows] == expected
    assert pd.read_csv(path, keep_default_na=False)["query"].tolist() == expected


def test_strata_csv_by_pandas_and_the_collector_s_reader(tmp_path):
    listed = pd.Series([HEAD, TORSO] * 3, index=pd.Index(HOSTILE, name="query"))
    path = tmp_path / "strata.csv"
    assert write_strata_csv(path, listed) == 6
    assert not RAW.search(path.read_text(encoding="utf-8").replace("\n", ""))
    assert pd.read_csv(path, keep_default_na=False)["query"].tolist() == [
        SHOWN[q] for q in HOSTILE]
    assert len(load_strata_csv(path)) == 6


def test_trec_topics_one_line_of_two_fields_per_topic(tmp_path):
    handoff.write_trec_topics(tmp_path, [(f"t{i}", q, f"app\x1b{i}")
                                         for i, q in enumerate(HOSTILE)])
    text = (tmp_path / "topics.tsv").read_text(encoding="utf-8")
    assert not RAW.search(text.replace("\n", "").replace("\t", ""))
    lines = [line.split("\t") for line in text.split("\n")[:-1]]  # as ir_datasets reads it
    assert lines == [[f"t{i}", SHOWN[q]] for i, q in enumerate(HOSTILE)]
    assert list(read_topics(tmp_path / "topics.tsv")) == [f"t{i}" for i in range(6)]
    applications = (tmp_path / "topic-applications.tsv").read_text(encoding="utf-8")
    assert applications.splitlines()[0] == "t0\tapp\\x1b0"


def test_pages_by_html_parser():
    from html import escape

    page = document("report \x1b[2J", "".join(f"<p>{escape(q)}</p>" for q in HOSTILE))
    assert not RAW_IN_HTML.search(page)
    data = page_text(page)
    assert "report \\x1b[2J" in data
    assert "q\\x00nul" in data and "del\\x7f c1\\x9b[0m" in data


def test_label_values_by_prometheus_client_s_parser():
    """Queries with control characters as candidates (9, 8, … searches, one client each)."""
    config = load_config(environ={}, overrides={"privacy.min_distinct_clients": 1})
    released = QueryRelease(10, 1, PersonalData()).release(
        {"web": [(q, 9 - i, frozenset({1}), 0) for i, q in enumerate(HOSTILE)]})
    view = replace(Engine(config).view(), released=released)
    body = Exposition(lambda: view).render().decode()
    assert not RAW.search(body.replace("\n", ""))
    shown = [s.labels["query"] for f in text_string_to_metric_families(body)
             if f.name == d.TOP_ZERO_RESULT_QUERIES.stem for s in f.samples]
    assert sorted(shown) == sorted(SHOWN[q] for q in HOSTILE)
    assert label("\x00" * 70) == "\\x00" * 15 + "\\x0…"  # made visible, then capped


@given(st.text(st.characters(max_codepoint=0x2ff), max_size=30))
def test_json_reads_back_the_exact_text_with_no_control_raw(text):
    written = json_text({"query": text, "queries": [text]})
    assert not RAW.search(written.replace("\n", ""))
    assert json.loads(written) == {"query": text, "queries": [text]}


@given(st.text(st.characters(max_codepoint=0x2ff), max_size=30))
def test_visible_writes_each_control_character_as_its_code_and_nothing_else_changes(text):
    assert visible(text) == "".join(f"\\x{ord(c):02x}" if RAW.match(c) else c for c in text)
