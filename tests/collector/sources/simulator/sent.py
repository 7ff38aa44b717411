"""What the simulator sent, read back: its raw records decoded, which of them are query records,
and a record's event time (shared by the front ends', bots' and outages' tests)."""

from __future__ import annotations

import json


def decoded(records: list[bytes]) -> list[dict]:
    return [json.loads(raw) for raw in records]


def is_query(record: dict) -> bool:
    return "user_query" in record and "action_name" not in record


def event_ms(record: dict) -> int:
    """A record's event time in ms (mobile stamps numbers, the rest ISO text)."""
    stamp = record["timestamp"]
    if isinstance(stamp, int):
        return stamp
    from datetime import datetime
    return round(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
