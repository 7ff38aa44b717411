"""The project's JSON Schema describes what the simulator writes and what real producers send;
the OpenSearch UBI data generator's chunked, 0-based output replays to exact numbers."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from collector.sources.simulator import SimulationSpec, Simulator

SCHEMA = json.loads((Path(__file__).parents[3] / "collector/schema/ubi-record.schema.json")
                    .read_text())
FIXTURES = Path(__file__).parents[2] / "fixtures"
validator = jsonschema.Draft202012Validator(SCHEMA)


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_simulated_and_fixture_records_match_the_schema():
    lines = list(Simulator(SimulationSpec(seed=5, sessions=200)).records())
    lines += (FIXTURES / "opensearch-generator-chunk.jsonl").read_bytes().splitlines()
    for line in lines:
        errors = list(validator.iter_errors(json.loads(line)))
        assert not errors, (line, errors[0].message)


@pytest.mark.parametrize("record", [
    {"user_query": "no id", "timestamp": "2026-01-05T09:00:00Z"},
    {"query_id": "q", "timestamp": "2026-01-05T09:00:00Z"},
    {"query_id": "q", "user_query": "x", "timestamp": "2026-01-05T09:00:00Z",
     "query_attributes": {"page": 0}},
    {"action_name": "click"},
])
def test_schema_rejects_what_the_engine_rejects(record):
    assert not validator.is_valid(record)


def test_opensearch_generator_chunk_replays_exactly(run):
    lines = (FIXTURES / "opensearch-generator-chunk.jsonl").read_bytes().splitlines()
    s = run(lines, **{"events.position_base": 0})
    assert (s["searches"], s["zero_result_searches"], s["zero_result_exits"]) == (3, 1, 1)
    assert (s["clicked_searches"], s["clicks"], s["converted_searches"]) == (2, 2, 1)
    assert s["reformulated_searches"] == 0  # og-1 was clicked (a late record) before og-3
    assert s["abandoned_searches"] == 0
    assert s["mean_time_to_first_click_s"] == 4.25
    assert s["mrr_first_click"] == 0.75
    # ten records are fewer than the stream clock's warm-up: applied whole, in event-time order
    assert (s["late_events"], s["ignored_records"], s["records"]) == (0, 1, 10)
