"""How a person types a query into a search-as-you-type box, and the query records the box sends
meanwhile: successive prefixes ("r", "ru", "run", … the query), debounced, with pauses, typos
fixed by backspacing or by an edit.

Pure: a random stream and a typing style in, records out. The simulator's traffic types every
search of a type-ahead application with it, and property tests (hypothesis) can draw styles and
seeds for it: ``typed`` returns the records of one query and the intents the written definition
makes of them (docs/metrics.md, "Search intents").

Every two consecutive records continue each other (outcomes.continues with an edit distance of
at most 1, on normalized text) and come at most ``MAX_GAP_MS`` apart, under the rule's 5 s: each
record but the last is a keystroke of the next. That holds by construction — keys within a
record's debounce only type on or only delete, and the user stops after backspacing and around
an edit (noticing, moving the cursor) for longer than any debounce — and it is tested.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from typing import NamedTuple

from collector.outcomes import normalize_query

PAUSE_MS = (1000, 3000)  # a pause to think before a word
LOOK_MS = (350, 900)  # noticing a typo, looking after backspacing
CURSOR_MS = (500, 1500)  # moving the cursor to a typo and back
MAX_INTERVAL_MS = 800  # the slowest key interval outside those
MAX_GAP_MS = 4600  # no two records further apart: the longest pause + interval + max wait
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890")


class Keystroke(NamedTuple):
    ts_ms: int
    text: str  # the box's text as the record sends it (raw, not normalized)


@dataclass(frozen=True)
class TypingStyle:
    """How one person types, and how their search box sends records."""

    interval_ms: float = 240.0  # median time between two keys (people: ~240 ms)
    debounce_ms: int = 150  # the box sends a record once no key came for this long
    max_wait_ms: int = 800  # … and at least this often while keys keep coming
    pause_share: float = 0.15  # chance of a 1–3 s pause before a word
    typo_share: float = 0.03  # chance per letter or digit of a wrong key
    edit_share: float = 0.3  # of typos, the share left and fixed later by an edit

    def __post_init__(self) -> None:
        if not 0 < self.debounce_ms <= 300 or not 0 < self.max_wait_ms <= 800:
            raise ValueError("a debounce of 1–300 ms and a max wait of 1–800 ms keep every "
                             "record within MAX_GAP_MS of the one before")


def style_of(client: str, debounce_ms: int) -> TypingStyle:
    """A person's own speed and habits, the same in every session (drawn from the client id,
    not from a random stream): a median key interval of 120–400 ms, 0–6 % typos, pauses of 1–3 s
    before 5–30 % of words."""
    draws = [zlib.crc32(f"{salt}{client}".encode()) / 2**32 for salt in "abcd"]
    return TypingStyle(interval_ms=120.0 * (400 / 120) ** draws[0], debounce_ms=debounce_ms,
                       pause_share=0.05 + 0.25 * draws[1], typo_share=0.06 * draws[2],
                       edit_share=0.5 * draws[3])


def type_query(rng: random.Random, query: str, style: TypingStyle,
               start_ms: int = 0) -> list[Keystroke]:
    """The records a debounced search box sends while ``query`` is typed from ``start_ms``;
    the last is ``query`` itself, at the time the search is made."""
    return _debounced(_keys(rng, query, style), style, start_ms)


def _keys(rng: random.Random, query: str, style: TypingStyle) -> list[tuple[float, str, bool]]:
    """(time since typing began, the box's text after the key, whether the user stops after
    it for longer than any debounce) for every key, typos and their fixes included."""
    keys: list[tuple[float, str, bool]] = []
    t, text, left = 0.0, "", None  # ``left``: where a typo waits for an edit
    for i, char in enumerate(query):
        if i and query[i - 1] == " " and rng.random() < style.pause_share:
            t += rng.uniform(*PAUSE_MS)
        t += _interval(rng, style)
        if char.isalnum() and left is None and rng.random() < style.typo_share:
            text += _neighbour(rng, char)
            if rng.random() < style.edit_share:
                left = len(text) - 1  # typed on, fixed at the end of the word
            else:
                t, text = _backspaced(rng, keys, t, text, query[i + 1:i + 1 + rng.choice(
                    (0, 1, 2))], style)
                t += _interval(rng, style)
                text += char
        else:
            text += char
        if left is not None and (i + 1 == len(query) or query[i + 1] == " "):
            keys.append((t, text, True))  # the user sees the typo: cursor back, fix, return
            t += rng.uniform(*CURSOR_MS)
            text = text[:left] + query[left] + text[left + 1:]
            left = None
            keys.append((t, text, True))
            t += rng.uniform(*LOOK_MS)
        else:
            keys.append((t, text, False))
    return keys


def _backspaced(rng: random.Random, keys: list[tuple[float, str, bool]], t: float, text: str,
                ahead: str, style: TypingStyle) -> tuple[float, str]:
    """A wrong key, then ``ahead`` typed before noticing it: the user stops, backspaces them
    all and looks before typing on. Returns (time, text) after the backspaces."""
    keys.append((t, text, not ahead))
    for n, char in enumerate(ahead, 1):
        t += _interval(rng, style)
        text += char
        keys.append((t, text, n == len(ahead)))
    t += rng.uniform(*LOOK_MS)
    for _ in range(len(ahead) + 1):
        text = text[:-1]
        keys.append((t, text, False))
        t += _interval(rng, style) * 0.6
    keys[-1] = (keys[-1][0], keys[-1][1], True)
    return t + rng.uniform(*LOOK_MS), text


def _interval(rng: random.Random, style: TypingStyle) -> float:
    return min(MAX_INTERVAL_MS, max(40.0, rng.lognormvariate(0.0, 0.35) * style.interval_ms))


def _neighbour(rng: random.Random, char: str) -> str:
    """A key next to ``char`` on the keyboard (its case kept): the typo a finger makes."""
    lower = char.lower()
    for row in _ROWS:
        at = row.find(lower)
        if at >= 0:
            near = row[max(0, at - 1):at] + row[at + 1:at + 2]
            wrong = rng.choice(near)
            return wrong.upper() if char.isupper() else wrong
    return "x" if lower != "x" else "z"


def _debounced(keys: list[tuple[float, str, bool]], style: TypingStyle,
               start_ms: int) -> list[Keystroke]:
    """The records the box sends: the text once no key came for ``debounce_ms`` (and after a
    key the user stops at), and at least every ``max_wait_ms`` while keys keep coming."""
    records: list[Keystroke] = []
    waiting_since: float | None = None  # the first key not sent yet
    last = -1
    for n, (t, text, stops) in enumerate(keys):
        following = keys[n + 1][0] if n + 1 < len(keys) else None
        if waiting_since is None:
            waiting_since = t
        if stops or following is None or following - t >= style.debounce_ms:
            at = t + style.debounce_ms
        elif following - waiting_since >= style.max_wait_ms:
            at = max(t, waiting_since + style.max_wait_ms)  # throttled: sent while typing
        else:
            continue
        last = max(last + 1, start_ms + round(at))
        records.append(Keystroke(last, text))
        waiting_since = None
    return records


@dataclass(frozen=True)
class Typing:
    """One query typed (``typed``): every record the box sent, the click made mid-typing if
    any, and the intents the written definition makes of them."""

    records: list[Keystroke]
    click: tuple[int, int] | None  # (index of the record clicked, time of the click)
    intents: list[Keystroke]  # the clicked record (if any) and the last: searches, not keystrokes


def typed(query: str, seed: int, style: TypingStyle = TypingStyle(), start_ms: int = 0,
          click_after_ms: int | None = None, resume_ms: int = 4000) -> Typing:
    """``query`` typed at ``style`` from ``start_ms``, drawn from ``random.Random(seed)``; with
    ``click_after_ms``, the user clicks a result that long after the first record that is a
    whole word of the query (if there is one before the last) and types on ``resume_ms`` after
    the click — that record is then an intent of its own (a record the user acted on is never a
    keystroke) and typing goes on as a new chain. For tests of the keystroke rule: the records
    as a front end sends them, and the intents it must count."""
    return typing_of(random.Random(seed), query, style, start_ms, click_after_ms, resume_ms)


def typing_of(rng: random.Random, query: str, style: TypingStyle, start_ms: int,
              click_after_ms: int | None, resume_ms: int) -> Typing:
    """``typed`` on a random stream of the caller's (the simulator's typing stream)."""
    records = type_query(rng, query, style, start_ms)
    at = mid_typing_click(records, query) if click_after_ms is not None else None
    if at is None:
        return Typing(records, None, [records[-1]])
    click_ts = records[at].ts_ms + click_after_ms
    shift = max(0, click_ts + resume_ms - records[at + 1].ts_ms)
    records = records[:at + 1] + [Keystroke(r.ts_ms + shift, r.text) for r in records[at + 1:]]
    return Typing(records, (at, click_ts), [records[at], records[-1]])


def mid_typing_click(records: list[Keystroke], query: str) -> int | None:
    """The first record (before the last) whose text is a whole word or words of ``query``
    of at least three characters: what a user may click a result of while typing on."""
    final = normalize_query(query)
    for index, record in enumerate(records[:-1]):
        text = normalize_query(record.text)
        if len(text) >= 3 and final.startswith(text + " "):
            return index
    return None
