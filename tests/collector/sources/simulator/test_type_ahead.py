"""How people type into a search-as-you-type box (simulator/type_ahead.py): at any speed, with
pauses, typos and backspaces, every record but the last is a keystroke of the next by the
written definition (outcomes.continues, within the gap), and the last is the query; a click
mid-typing makes that record an intent of its own. ``typed`` is the generator the engine's
property tests draw from: it must hold for every style and seed they can draw."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.outcomes import continues, normalize_query
from collector.sources.simulator.intents import KEYSTROKE_GAP_S, MAX_EDIT
from collector.sources.simulator.type_ahead import (
    MAX_GAP_MS,
    Keystroke,
    TypingStyle,
    mid_typing_click,
    style_of,
    type_query,
    typed,
)

QUERIES = ("running shoes", "Waterproof Jacket", "A1234567-B12", "tent", "acme wireless "
           "headphones", "kids fan", "x", "4 person tent", "Sunglasses  polarized")

styles = st.builds(TypingStyle, interval_ms=st.floats(30.0, 900.0),
                   debounce_ms=st.integers(1, 300), max_wait_ms=st.integers(1, 800),
                   pause_share=st.floats(0.0, 1.0), typo_share=st.floats(0.0, 0.5),
                   edit_share=st.floats(0.0, 1.0))


def chained(records: list[Keystroke]) -> bool:
    """Every record a keystroke of the next by the written rule (the gap, the edit relation)."""
    return all(0 < b.ts_ms - a.ts_ms <= KEYSTROKE_GAP_S * 1000
               and continues(normalize_query(a.text), normalize_query(b.text), MAX_EDIT)
               for a, b in zip(records, records[1:], strict=False))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(QUERIES), st.integers(0, 2**32), styles, st.integers(0, 10**12))
def test_every_record_but_the_last_is_a_keystroke_of_the_next(query, seed, style, start_ms):
    records = type_query(random.Random(seed), query, style, start_ms)
    assert records[-1].text == query  # the last is the search itself
    assert records[0].ts_ms > start_ms
    assert chained(records)
    assert all(b.ts_ms - a.ts_ms <= MAX_GAP_MS for a, b in zip(records, records[1:],
                                                                   strict=False))
    # an edit of one character at most: the rule's max_edit 2 holds with room to spare
    assert all(continues(normalize_query(a.text), normalize_query(b.text), 1)
               for a, b in zip(records, records[1:], strict=False))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([q for q in QUERIES if " " in q.strip()]), st.integers(0, 2**32),
       styles, st.integers(1, 5000), st.integers(1, 60000))
def test_a_click_mid_typing_makes_a_second_intent(query, seed, style, after, resume):
    typing = typed(query, seed, style, 1000, click_after_ms=after, resume_ms=resume)
    if typing.click is None:  # the debounce sent no record of a whole word before the last
        assert mid_typing_click(typing.records, query) is None
        assert typing.intents == [typing.records[-1]] and chained(typing.records)
        return
    at, click_ts = typing.click
    clicked = typing.records[at]
    assert typing.intents == [clicked, typing.records[-1]]
    assert normalize_query(query).startswith(normalize_query(clicked.text) + " ")
    assert clicked.ts_ms < click_ts < typing.records[at + 1].ts_ms  # clicked before typing on
    assert typing.records[at + 1].ts_ms >= click_ts + resume
    assert chained(typing.records[:at + 1]) and chained(typing.records[at + 1:])
    assert typing.records[-1].text == query


def test_typing_is_realistic_and_varied():
    """Per user speeds, gaps from the debounce to a second and more, pauses, backspaces (a
    record that is a prefix of the one before) and edits (neither prefix), a prefix skipped by
    the debounce now and then — measured over 2,000 typed queries."""
    gaps, per_query, backspaces, edits, skipped = [], [], 0, 0, 0
    rng = random.Random(5)
    for n in range(2000):
        query = rng.choice(QUERIES[:6])
        records = type_query(rng, query, style_of(f"c-{n}", rng.choice((80, 150, 250))))
        per_query.append(len(records))
        for a, b in zip(records, records[1:], strict=False):
            gaps.append(b.ts_ms - a.ts_ms)
            before, after = normalize_query(a.text), normalize_query(b.text)
            backspaces += before.startswith(after) and before != after
            edits += not (before.startswith(after) or after.startswith(before))
            skipped += after.startswith(before) and len(after) > len(before) + 1
    gaps.sort()
    assert 80 <= gaps[0] and gaps[len(gaps) // 2] < 500 and 1000 < gaps[-1] <= MAX_GAP_MS
    assert 4 < sum(per_query) / len(per_query) < 16
    assert backspaces > 200 and edits > 100 and skipped > 2000


def test_a_users_style_is_their_own_in_every_session():
    assert style_of("c-1", 150) == style_of("c-1", 150)
    speeds = {round(style_of(f"c-{n}", 150).interval_ms) for n in range(200)}
    assert len(speeds) > 150 and 120 <= min(speeds) and max(speeds) <= 400


def test_a_style_that_could_break_the_gap_is_refused():
    with pytest.raises(ValueError, match="debounce"):
        TypingStyle(debounce_ms=500)


def test_typed_by_hand():
    """One query, exactly: what a property test of the engine gets to replay."""
    typing = typed("tent", 1, TypingStyle(typo_share=0.0, pause_share=0.0), start_ms=10_000)
    assert [r.text for r in typing.records] == ["t", "te", "ten", "tent"]
    assert typing.click is None and typing.intents == [typing.records[-1]]
    assert all(10_000 < r.ts_ms < 12_000 for r in typing.records)
    no_word = typed("tent", 1, click_after_ms=1000)  # no whole word before the last: no click
    assert no_word.click is None and len(no_word.intents) == 1
