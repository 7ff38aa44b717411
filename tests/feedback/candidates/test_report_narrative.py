"""feedback/candidates/report_narrative.py: the feedback report's summary facts are worded as a
reader reads them (counts by name, a long list cut to its first few), never as Python reprs."""

from __future__ import annotations


def test_summary_facts_are_worded():
    from feedback.candidates.report_narrative import counts, listed

    assert counts({"fewer_distinct_clients": 865, "email": 1}) == \
        "865 fewer distinct clients, 1 email"
    assert counts({"tail": {"calibration": 5}}) == "tail: 5 calibration"
    topics = [f"sp-{i:04d}" for i in range(1, 41)]
    assert listed(topics, "topics") == \
        "40 topics: sp-0001, sp-0002, sp-0003, sp-0004, sp-0005 and 35 more"
    assert listed([], "topics") == "none"
