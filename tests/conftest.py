"""Shared fixtures: a UBI record factory and a one-call engine run over hand-built records."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from collector.config import load_config
from collector.engine import Engine
from collector.exposition.summary import replay_summary
from testbed.postgres import PostgresServer

# No wall-clock deadline per generated example: on a loaded two-core CI machine it fails on the
# load, not on slow code (speed is measured in benchmarks/, never asserted in tests).
settings.register_profile("searchpulse", deadline=None)
settings.load_profile("searchpulse")

T0 = 1_767_600_000.0  # 2026-01-05T08:00:00Z: every hand-built record is T0 + offset seconds


class UBI:
    """Builds UBI 1.3 records as raw bytes, the way producers send them."""

    def __init__(self) -> None:
        self._serial = 0

    def query(self, qid: str, text: str, at: float, client: str = "c1",
              hits: Iterable[str] | None = ("d1", "d2", "d3"), app: str = "web",
              **attributes: Any) -> bytes:
        record: dict[str, Any] = {
            "query_id": qid, "user_query": text, "client_id": client,
            "timestamp": int(round((T0 + at) * 1000)), "application": app,
            "query_attributes": attributes,
        }
        if hits is not None:
            record["query_response_hit_ids"] = list(hits)
        return json.dumps(record).encode()

    def event(self, qid: str | None, action: str, at: float, position: int | None = None,
              client: str = "c1", obj: str = "d1", **extra: Any) -> bytes:
        attributes: dict[str, Any] = {"object": {"object_id": obj}}
        if position is not None:
            attributes["position"] = {"ordinal": position}
        record: dict[str, Any] = {
            "action_name": action, "query_id": qid, "client_id": client, "session_id": client,
            "timestamp": int(round((T0 + at) * 1000)), "event_attributes": attributes,
        }
        record.update(extra)
        return json.dumps(record).encode()

    def click(self, qid: str, at: float, position: int = 1, **kw: Any) -> bytes:
        return self.event(qid, "click", at, position, **kw)


def examination_file(directory: Path, curves: dict[str, list[float | None]],
                     identified: bool = True) -> Path:
    """An examination.json as `searchpulse clicks` writes it, with these curves."""
    path = directory / "examination.json"
    path.write_text(json.dumps({"model": "position-based", "applications": {
        application: {"examination": curve, "impressions": 1000, "identified": identified}
        for application, curve in curves.items()}}))
    return path


@pytest.fixture
def ubi() -> UBI:
    return UBI()


class RecordingDeadLetters:
    """Keeps dead letters in memory so a test can assert what was kept and why."""

    def __init__(self) -> None:
        self.letters: list[tuple[bytes, str, str]] = []

    @property
    def reasons(self) -> list[str]:
        return [reason for _, reason, _ in self.letters]

    def write(self, raw: bytes, reason: str, detail: str) -> None:
        self.letters.append((raw, reason, detail))

    def close(self) -> None:
        return None


@pytest.fixture
def engine() -> Callable[..., Engine]:
    """``engine(records, **settings)`` → an engine that processed them and was closed."""

    def _engine(records: Iterable[bytes], close: bool = True, **settings: Any) -> Engine:
        built = Engine(load_config(environ={}, overrides=settings), RecordingDeadLetters())
        built.process_all(records)
        if close:
            built.close()
        return built

    return _engine


@pytest.fixture
def run(engine) -> Callable[..., dict[str, Any]]:
    """``run(records, **settings)`` → the replay summary after end of input."""
    return lambda records, **settings: replay_summary(engine(records, **settings))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses the real PostgreSQL is an integration test, however it reaches it."""
    for item in items:
        if "postgres_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A real PostgreSQL (Debian package) for the session, or the one
    `SEARCHPULSE_TEST_POSTGRES` names."""
    external = os.environ.get("SEARCHPULSE_TEST_POSTGRES")
    if external:
        yield external
        return
    server = PostgresServer().start()
    yield server.url
    server.stop()


@pytest.fixture
def postgres_database(postgres_url) -> str:
    """The URL of a new, empty database on the test PostgreSQL."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return postgres_url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def store_url(request, tmp_path) -> str:
    """An empty store of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'aggregates.db'}"
    return request.getfixturevalue("postgres_database")
