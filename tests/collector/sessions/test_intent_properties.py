"""Generated worlds of people typing into search-as-you-type boxes, bursts of human activity,
crawlers and monitors (hypothesis): the engine's searches, keystrokes, clicks, reformulations
and automated searches are exactly what the written definitions give for the plan each world
was built from (docs/metrics.md "Search intents", "Automated traffic")."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import UBI

GAP = 5.0  # intents.keystroke_gap_s
WORDS = [hashlib.sha256(str(n).encode()).hexdigest()[:n % 5 + 4] for n in range(400)]
# a crawler's queries: none continues another's typing (random 12-character words)
CRAWLED = [hashlib.sha256(f"crawl {n}".encode()).hexdigest()[:12] for n in range(400)]


@dataclass
class Intent:
    """What one person meant, and whether they clicked its results."""

    text: str
    ts: float
    clicked: bool


@dataclass
class World:
    records: list[bytes] = field(default_factory=list)
    intents: list[tuple[str, Intent]] = field(default_factory=list)  # (client, intent)
    keystrokes: int = 0
    automated: int = 0
    typed: set[str] = field(default_factory=set)  # what people typed, each query once


@st.composite
def typed_intent(draw, ubi: UBI, world: World, client: str, start: float, serial: list[int]
                 ) -> float:
    """One query typed into the box: prefixes a keystroke gap apart (any speed), perhaps a
    typo fixed by backspacing, perhaps a pause past the gap (the record before it then is an
    intent of its own), perhaps a click mid-typing (that record is an intent); the final
    record is clicked or not. Returns when the person is done."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True))
    text = " ".join(words)
    if text in world.typed:  # a person repeating a query on a schedule would be a monitor
        text += f" {len(world.typed)}"
    world.typed.add(text)
    speed = draw(st.floats(0.05, GAP - 0.1))  # any typing speed within the gap
    cuts = sorted(set(draw(st.lists(st.integers(1, len(text) - 1), max_size=6))))
    steps = [text[:cut] for cut in cuts]
    if draw(st.booleans()) and len(text) > 3:  # a typo, backspaced, before the last letters
        steps += [text[:-2] + text[-1] + text[-2], text[:-2]]
    steps.append(text)
    pause = draw(st.sampled_from([None, *range(len(steps) - 1)]))
    click = draw(st.sampled_from([None, *range(len(steps) - 1)]))
    at = start
    for n, step in enumerate(steps):
        serial[0] += 1
        qid = f"{client}-{serial[0]}"
        world.records.append(ubi.query(qid, step, at, client=client))
        last = n == len(steps) - 1
        acted = n == click or (last and draw(st.booleans()))
        if acted:
            world.records.append(ubi.click(qid, at + 0.5, client=client))
        if last or acted or n == pause:
            world.intents.append((client, Intent(step, at, acted)))
        else:
            world.keystrokes += 1
        at += GAP + 1.0 + draw(st.floats(0, 5)) if n == pause else 1.0 if acted else speed
    return at + draw(st.floats(20.0, 120.0))


@st.composite
def worlds(draw) -> World:
    ubi, world, serial = UBI(), World(), [0]
    for person in range(draw(st.integers(1, 6))):
        at = draw(st.floats(0, 300))
        for _ in range(draw(st.integers(1, 5))):  # a burst of a person's searches
            at = draw(typed_intent(ubi, world, f"p{person}", at, serial))
    for bot in range(draw(st.integers(0, 2))):
        per_minute = draw(st.sampled_from([12, 30, 60]))  # a crawler: 12 to 60 a minute
        count = draw(st.integers(40, 150))
        start = draw(st.floats(0, 600))
        for n in range(count):
            world.records.append(ubi.query(f"b{bot}-{n}", CRAWLED[(n * 7 + bot) % len(CRAWLED)],
                                           start + n * 60.0 / per_minute, client=f"b{bot}"))
        world.automated += count
    if draw(st.booleans()):  # a monitor: one query every 30 to 60 s for an hour
        period = draw(st.floats(30, 60))
        for n in range(int(3600 / period)):
            world.records.append(ubi.query(f"m{n}", "status page", n * period + n % 3,
                                           client="monitor"))
            world.automated += 1
    return world


def expected(world: World) -> dict[str, int]:
    """The definitions applied to the plan: one search per intent, reformulated when the
    client's next intent comes within 300 s with another query and no click before it."""
    by_client: dict[str, list[Intent]] = {}
    for client, intent in world.intents:
        by_client.setdefault(client, []).append(intent)
    reformulated = sum(
        1 for intents in by_client.values() for a, b in zip(intents, intents[1:], strict=False)
        if b.ts - a.ts <= 300 and not a.clicked and a.text.strip() != b.text.strip())
    return {"searches": len(world.intents), "keystrokes": world.keystrokes,
            "clicked": sum(i.clicked for _, i in world.intents), "reformulated": reformulated,
            "automated": world.automated}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(world=worlds())
def test_generated_worlds_count_one_search_per_intent_and_bots_apart(world, engine):
    records = sorted(world.records, key=lambda raw: raw.split(b'"timestamp": ')[1][:16])
    e = engine(records)
    series = e.table.series
    got = {"searches": sum(s.searches for s in series),
           "keystrokes": sum(s.keystrokes for s in series),
           "clicked": sum(s.clicked for s in series),
           "reformulated": sum(sum(s.reformulated.values()) for s in series),
           "automated": sum(sum(s.automated.values()) for s in series)}
    assert got == expected(world)


def test_a_crowd_then_one_crawler_alone_keeps_the_crawler_apart(engine):
    """A stream that thins out after its start (the hypothesis world that found it): five
    people and a fast crawler in the first 80 s, then a slower crawler alone with a monitor.
    The slower crawler's records past the warm-up's quartiles go on from the crowd's, 5 s
    apart: they are the stream, not a clock ahead (retimed, they were read as people)."""
    ubi, world = UBI(), World()
    people = [[0.0], [0.0, 4.0, 5.0, 29.0, 53.0, 80.0], [0.0], [0.0, 21.5, 42.5, 63.5],
              [0.0, 21.0, 42.0, 63.0]]
    for person, times in enumerate(people):
        for n, at in enumerate(times):
            text = WORDS[person * 8 + n]
            world.records.append(ubi.query(f"p{person}-{n}", text, at, client=f"p{person}"))
            world.intents.append((f"p{person}", Intent(text, at, False)))
    for bot, count, every, start in (("b0", 74, 1.0, 0.0), ("b1", 40, 5.0, 2.0)):
        for n in range(count):
            world.records.append(ubi.query(f"{bot}-{n}", CRAWLED[n], start + n * every,
                                           client=bot))
        world.automated += count
    for n in range(102):
        world.records.append(ubi.query(f"m{n}", "status page", n * 35.0 + n % 3,
                                       client="monitor"))
        world.automated += 1
    e = engine(sorted(world.records, key=lambda raw: raw.split(b'"timestamp": ')[1][:16]))
    series = e.table.series
    assert dict(e.stats.retimed) == {}
    assert {"searches": sum(s.searches for s in series),
            "automated": sum(sum(s.automated.values()) for s in series),
            "reformulated": sum(sum(s.reformulated.values()) for s in series),
            } == {key: value for key, value in expected(world).items()
                  if key in ("searches", "automated", "reformulated")}
