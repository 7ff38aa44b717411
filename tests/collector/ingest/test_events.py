"""Wire format: what real producers send is decoded; what cannot be used gets a reason."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.ingest.events import Rejected, decode, event_time


def ts_of(raw: bytes) -> float:
    return event_time(decode(raw))


@pytest.mark.parametrize(("stamp", "expected"), [
    ("2026-01-05T09:00:00Z", 1767603600.0),
    ("2026-01-05T09:00:00.250Z", 1767603600.25),
    ("2026-01-05T10:00:00+01:00", 1767603600.0),
    ("2026-01-05T09:00:00", 1767603600.0),  # no zone: UTC
    ("2026-01-05 09:00:00Z", 1767603600.0),
    ("20260105T090000Z", 1767603600.0),  # ISO 8601 basic format (slow path)
    ("2026-01-05T10:00:00+0100", 1767603600.0),
    (1767603600000, 1767603600.0),  # epoch milliseconds
    (1767603600250.0, 1767603600.25),
    ("1767603600000", 1767603600.0),  # epoch milliseconds sent as a string
])
def test_timestamps(stamp, expected):
    assert ts_of(json.dumps({"user_query": "x", "timestamp": stamp}).encode()) == expected


@pytest.mark.parametrize(("record", "reason"), [
    (b"{not json", "malformed_json"),
    (b"[1, 2]", "not_an_object"),
    (b'"text"', "not_an_object"),
    (b'{"user_query": "x", "timestamp": "yesterday"}', "invalid_timestamp"),
    (b'{"user_query": "x", "timestamp": true}', "invalid_timestamp"),
    (b'{"user_query": "x", "query_attributes": {"page": "two"}}', "invalid_page"),
    (b'{"user_query": "x", "query_attributes": {"total_hits": [1]}}', "invalid_total_hits"),
    (b'{"user_query": "x", "query_attributes": []}', "invalid_query_attributes"),
    (b'{"user_query": 42}', "invalid_user_query"),
    (b'{"user_query": "x", "query_response_hit_ids": "a,b"}', "invalid_query_response_hit_ids"),
    (b'\xff\xfe{"user_query": "x"}', "malformed_json"),
])
def test_rejections_name_the_reason(record, reason):
    with pytest.raises(Rejected) as caught:
        decode(record)
    assert caught.value.reason == reason


def test_timestamp_range_is_checked():
    with pytest.raises(Rejected, match="timestamp_out_of_range"):
        ts_of(b'{"user_query": "x", "timestamp": 1767603600}')  # seconds sent as milliseconds
    with pytest.raises(Rejected, match="timestamp_out_of_range"):  # past 2200: not a time
        ts_of(b'{"user_query": "x", "timestamp": 7258118400001}')
    assert ts_of(b'{"user_query": "x", "timestamp": 4102444800000}') == 4102444800.0  # 2100
    with pytest.raises(Rejected, match="missing_timestamp"):
        ts_of(b'{"user_query": "x"}')


def test_real_producer_quirks_are_tolerated():
    page_exit = {  # the UBI 1.3 sample event: position {}, object without object_id
        "action_name": "page_exit", "user_id": "1821196507152684",
        "query_id": "00112233-4455-6677-8899-aabbccddeeff",
        "session_id": "c3d22be7-6bdc-4250-91e1-fc8a92a9b1f9", "page_id": "/docs/latest/",
        "timestamp": "2024-05-16T12:34:56.789Z", "message_type": None,
        "event_attributes": {"position": {}, "object": {"idleTimeoutMs": 5000}},
    }
    rec = decode(json.dumps(page_exit).encode())
    assert rec.action_name == "page_exit"
    assert rec.event_attributes.position.ordinal is None
    assert rec.event_attributes.object.object_id is None

    odd_position = {"action_name": "click", "query_id": "q", "timestamp": 1767603600000,
                    "event_attributes": {"position": {"ordinal": "third"},
                                         "object": {"object_id": 17}}}
    rec = decode(json.dumps(odd_position).encode())
    assert rec.event_attributes.position is None  # unusable position: unknown, click kept
    assert rec.event_attributes.object.object_id == 17

    numbers_as_strings = {"user_query": "x", "query_id": "q", "timestamp": 1767603600000,
                          "query_attributes": {"total_hits": "12", "page": "1",
                                               "latency_ms": "80.5"}}
    attrs = decode(json.dumps(numbers_as_strings).encode()).query_attributes
    assert (attrs.total_hits, attrs.page, attrs.latency_ms) == (12, 1, 80.5)

    legacy = decode(b'{"user_query": "x", "query_response_objects_ids": ["a", 2]}')
    assert legacy.query_response_objects_ids == ("a", 2)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(["query_id", "user_query", "timestamp", "action_name",
                                       "event_attributes", "position", "ordinal", "object",
                                       "query_attributes", "page", "total_hits", "x"]),
                      children, max_size=5),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(_json)
def test_fuzz_structured_records_never_raise_anything_but_rejected(value):
    try:
        decode(json.dumps(value).encode())
    except Rejected as rejected:
        assert rejected.reason


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200), st.integers(min_value=0, max_value=300))
def test_fuzz_mutated_bytes_never_raise_anything_but_rejected(noise, cut):
    valid = (b'{"action_name":"click","query_id":"q1","session_id":"s","timestamp":'
             b'"2026-01-05T09:00:00Z","event_attributes":{"position":{"ordinal":2}}}')
    for raw in (valid[:cut] + noise, noise + valid[cut:], valid.replace(b'"', noise[:1] or b"'")):
        try:
            decode(raw)
        except Rejected as rejected:
            assert rejected.reason
