"""Wire format: one UBI 1.3 JSON record (bytes) → a typed ``WireRecord`` or a ``Rejected`` reason.

The fast path is a single typed msgspec decode (~0.4 µs). Only a record that fails it takes the
slow path, which finds the offending field, tolerates what real producers send (a bad ``position``
makes the click's position unknown, a timestamp in another ISO 8601 spelling, numbers sent as
strings) and otherwise rejects the record with a reason from a fixed, bounded set.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Annotated, Any

import msgspec

from collector.errors import Rejected

# Reject reasons (a closed set: they are label values of searchpulse_invalid_records_total);
# a field of the wrong type is rejected as ``invalid_<field>`` (``_reason_for``).
MALFORMED_JSON = "malformed_json"
NOT_AN_OBJECT = "not_an_object"
NOT_QUERY_OR_EVENT = "not_query_or_event"
MISSING_QUERY_ID = "missing_query_id"
MISSING_TIMESTAMP = "missing_timestamp"
INVALID_TIMESTAMP = "invalid_timestamp"
TIMESTAMP_OUT_OF_RANGE = "timestamp_out_of_range"
OVERSIZED = "oversized"

EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc).timestamp()
LATEST = datetime(2200, 1, 1, tzinfo=timezone.utc).timestamp()  # a sanity bound, not a clock
_MAX_EPOCH_DIGITS = 16  # epoch milliseconds as a string: more digits is not a time
_BOM = b"\xef\xbb\xbf"
# A latency outside [0, 1 h] (or NaN) is not a latency: the field is dropped, the search kept,
# and its latency_ms is set to INVALID_LATENCY_MS so that the sessionizer counts it
# (data-quality issue `invalid_latency`) instead of observing it.
Latency = Annotated[float, msgspec.Meta(ge=0, le=3_600_000)]
_LATENCY_PATH = "query_attributes.latency_ms"
INVALID_LATENCY_MS = -1.0
# Python's json module writes NaN and ±Infinity as these bare words, which JSON does not allow:
# a record holding one is read by json.loads, so that only its bad field is dropped.
_NON_FINITE = (b"NaN", b"Infinity")


class Position(msgspec.Struct, gc=False):
    ordinal: int | None = None


class EventObject(msgspec.Struct, gc=False):
    object_id: str | int | None = None
    # The team of an interleaved result (collector/sessions/interleaving.py), as each producer names
    # it: the OpenSearch UBI data generator and Chorus, SRW's interleaving UI, SRW's hits.
    search_config: str | int | None = None
    search_configuration_uuid: str | int | None = None
    search_configuration_id: str | int | None = msgspec.field(
        default=None, name="_search_configuration_id")


class EventAttributes(msgspec.Struct, gc=False):
    object: EventObject | None = None
    position: Position | None = None
    rank: int | None = None  # 0-based, older OpenSearch UBI data generator


class QueryAttributes(msgspec.Struct, gc=False):
    session_id: str | None = None
    total_hits: Annotated[int, msgspec.Meta(ge=0)] | None = None
    page: int | None = None
    latency_ms: Latency | None = None
    experiment: str | int | None = None
    variant: str | int | None = None


class WireRecord(msgspec.Struct, gc=False):
    """The fields searchpulse reads from a UBI query or event record; all others are ignored."""

    action_name: str | None = None
    query_id: str | None = None
    session_id: str | None = None
    client_id: str | None = None
    user_query: str | None = None
    timestamp: datetime | int | float | None = None
    application: str | None = None
    # Tuples, not lists: as fast to decode, ready as keys of the pages a per-query row counts
    # and of the rankings judged scoring remembers (no copy), and the garbage collector
    # untracks them after one look while the record waits in the event-time buffer.
    query_response_hit_ids: tuple[str | int, ...] | None = None
    query_response_objects_ids: tuple[str | int, ...] | None = None
    query_attributes: QueryAttributes | None = None
    event_attributes: EventAttributes | None = None



_generic = msgspec.json.Decoder()
_encode = msgspec.json.Encoder().encode
_PATH = re.compile(r"at `\$\.?([^`]*)`")
_INDEX = re.compile(r"\[[^\]]*\]")
# Fields whose bad value is tolerated by dropping it: the click's position, the search's
# latency become unknown (counted as data-quality issues by the sessionizer's rules).
# A wrong value of these optional fields drops the field, not the record (a click with a
# malformed team still counts as a click).
_DROPPABLE_PATHS = (
    "event_attributes.position", "event_attributes.rank", _LATENCY_PATH,
    "event_attributes.object.search_config", "event_attributes.object.search_configuration_uuid",
    "event_attributes.object._search_configuration_id")
TEAM_ATTRIBUTE = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}")


class WireFormat:
    """The record type and its decoder; ``team_attribute`` names one more attribute of
    ``event_attributes.object`` that carries an interleaving team (read as ``object.team``)."""

    def __init__(self, team_attribute: str = "") -> None:
        record: type[WireRecord] = WireRecord
        paths = _DROPPABLE_PATHS
        if team_attribute:
            # the same types with one more field, as fast to decode as the plain ones
            tagged = msgspec.defstruct(
                "EventObject", [("team", str | int | None,
                                 msgspec.field(default=None, name=team_attribute))],
                bases=(EventObject,), gc=False)
            attributes = msgspec.defstruct(
                "EventAttributes", [("object", tagged | None, None)], bases=(EventAttributes,),
                gc=False)
            record = msgspec.defstruct(
                "WireRecord", [("event_attributes", attributes | None, None)],
                bases=(WireRecord,), gc=False)
            paths = (*paths, f"event_attributes.object.{team_attribute}")
        self.record = record
        self.droppable = {path: tuple(path.split(".")) for path in paths}
        self._decoder = msgspec.json.Decoder(record)

    def decode(self, raw: bytes) -> WireRecord:
        """Decode one record; raise ``Rejected`` with a reason when it is unusable."""
        try:
            return self._decoder.decode(raw)
        except msgspec.ValidationError as exc:
            return _decode_leniently(_object_of(raw), exc, self.record, self.droppable)
        except msgspec.DecodeError as exc:
            if raw[:3] == _BOM:  # a producer that writes a byte-order mark before a record
                return self.decode(raw[3:])
            if _non_finite(raw, exc):
                return _decode_leniently(_python_json(raw, exc), exc, self.record,
                                         self.droppable)
            raise Rejected(MALFORMED_JSON, str(exc)) from None
        except RecursionError:  # nesting deeper than this thread's stack allows
            raise Rejected(MALFORMED_JSON, "nested too deeply") from None


decode = WireFormat().decode  # the plain format: no configured team attribute


def _object_of(raw: bytes) -> Any:
    """The record as a generic object (the typed decode may have stopped before the end)."""
    try:
        return _generic.decode(raw)
    except (msgspec.DecodeError, RecursionError) as exc:
        if _non_finite(raw, exc):
            return _python_json(raw, exc)
        raise Rejected(MALFORMED_JSON, str(exc)[:200]) from None


def _python_json(raw: bytes, first_error: Exception) -> Any:
    """A record with bare NaN / Infinity or a number beyond a double (read as infinite), as
    Python's json module accepts it; not one whose text is not Unicode (a lone surrogate)."""
    try:
        obj = json.loads(raw)
        _encode(obj)
    except (ValueError, RecursionError):  # also: too many digits, a lone surrogate
        raise Rejected(MALFORMED_JSON, str(first_error)[:200]) from None
    return obj


def _non_finite(raw: bytes, error: Exception) -> bool:
    return any(word in raw for word in _NON_FINITE) or "out of range" in str(error)


def _decode_leniently(obj: Any, first_error: msgspec.MsgspecError, record: type[WireRecord],
                      droppable_paths: dict[str, tuple[str, ...]]) -> WireRecord:
    """The record as a generic object (the typed decode stopped at a wrong type), converted
    with what real producers send tolerated; a dropped latency is marked invalid."""
    if not isinstance(obj, dict):
        raise Rejected(NOT_AN_OBJECT, str(first_error))
    _reparse_timestamp(obj)
    latency_dropped = False
    for _ in range(len(droppable_paths) + 1):
        try:
            rec = msgspec.convert(obj, record, strict=False)
            if latency_dropped and rec.query_attributes is not None:
                rec.query_attributes.latency_ms = INVALID_LATENCY_MS
            return rec
        except msgspec.ValidationError as exc:
            path = _field_path(str(exc))
            dropped = _drop_field(obj, path, droppable_paths)
            if dropped is None:
                raise Rejected(_reason_for(path), str(exc)[:500]) from None
            latency_dropped = latency_dropped or dropped is droppable_paths.get(_LATENCY_PATH)
        except RecursionError:
            raise Rejected(MALFORMED_JSON, "nested too deeply") from None
    raise Rejected(_reason_for(""), str(first_error))  # unreachable: each retry drops a field


def _drop_field(obj: dict[str, Any], path: str, droppable_paths: dict[str, tuple[str, ...]]
                ) -> tuple[str, ...] | None:
    """Remove the field at the wrong-typed ``path`` when it is one real producers send wrong
    and a record is still useful without (``droppable_paths``); the keys dropped, or None
    when the field is required (the record is then rejected)."""
    droppable = next((f for p, f in droppable_paths.items() if path.startswith(p)), None)
    if droppable is None:
        return None
    parent: Any = obj
    for key in droppable[:-1]:
        parent = parent.get(key) if isinstance(parent, dict) else None
    if not isinstance(parent, dict) or droppable[-1] not in parent:
        return None
    del parent[droppable[-1]]
    return droppable


def _field_path(message: str) -> str:
    match = _PATH.search(message)
    return _INDEX.sub("", match.group(1)) if match else ""


def _reason_for(path: str) -> str:
    """``query_attributes.total_hits`` → ``invalid_total_hits``: the leaf names the field."""
    leaf = path.rsplit(".", 1)[-1]
    return f"invalid_{leaf}" if leaf else NOT_AN_OBJECT


def _reparse_timestamp(obj: dict[str, Any]) -> None:
    """Accept ISO 8601 spellings that RFC 3339 does not (``20240516T123456Z``, ``+0200``)."""
    value = obj.get("timestamp")
    if isinstance(value, str):
        if value.isascii() and value.isdigit():  # "²" is a digit to str.isdigit, not to int()
            if len(value) > _MAX_EPOCH_DIGITS:
                raise Rejected(INVALID_TIMESTAMP, f"{len(value)} digits: not epoch milliseconds")
            obj["timestamp"] = int(value)
            return
        try:
            if len(value) > 64:
                raise ValueError(value)
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise Rejected(INVALID_TIMESTAMP,
                           f"not ISO 8601 or epoch milliseconds: {value[:80]!r}") from None
        obj["timestamp"] = parsed.isoformat()


def event_time(record: WireRecord) -> float:
    """Seconds since the epoch; a zone-less ISO time is UTC, a number is epoch milliseconds.
    Never compared with the wall clock: a log of last year or next month is as valid as now."""
    value = record.timestamp
    if value is None:
        raise Rejected(MISSING_TIMESTAMP)
    if value.__class__ is datetime:
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        seconds = value.timestamp()
    else:
        seconds = value / 1000.0
    if not EARLIEST <= seconds <= LATEST:  # NaN fails too
        raise Rejected(TIMESTAMP_OUT_OF_RANGE, f"{seconds:.3f} is outside [2000, 2200)")
    return seconds

