"""One replay into a store at a time.

Two replays of one input into one store, started together, each find nothing of it in the
store, each count it, and the store holds it twice (an attack of 2026-12-04: 10,244 searches
where the log holds 5,122, both exits 0). A replay into a store takes this lock before it reads
what the store holds and keeps it until its last write, so a second one is refused at once,
naming the store. The lock is the operating system's or the database's — SQLite: ``flock`` on
a file beside the database (``STORE.replay-lock``, left in place: removing it would let a
replay lock a file another has just opened); PostgreSQL: a session advisory lock on a
connection of its own — so a replay that dies releases it with its process or its connection:
there is nothing stale to clear by hand. That connection can drop while the replay lives (a
PostgreSQL restart, a terminated backend): ``keep`` runs before each of the replay's writes
(``StoreWriter.guard``) and takes the lock again, or stops the replay when another took it
meanwhile — its writes so far stay, and the same command resumes from them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from typing import Any

from collector.errors import StoreError, StoreIncomplete, StoreUnavailable
from collector.privacy.redaction import redact

# pg_try_advisory_lock's key for searchpulse replays: b"spreplay" as a signed 64-bit integer
_ADVISORY_KEY = int.from_bytes(b"spreplay", "big", signed=True)
_BUSY = ("another replay into it is running{holder}: one replay into a store at a time (two "
         "would each count what the store does not hold yet); wait for it, or replay into "
         "another store")


class ReplayLock:
    """Held from ``taken`` until ``release`` (or the process's end)."""

    def __init__(self, url: str, hold: Any) -> None:
        self.url = url
        self._hold = hold  # the lock file's descriptor, or the PostgreSQL connection

    @classmethod
    def taken(cls, url: str) -> ReplayLock:
        """The store's replay lock; a ``StoreError`` when another replay holds it."""
        if url.startswith("sqlite:///"):
            return cls(url, _file_lock(url, url.removeprefix("sqlite:///") + ".replay-lock"))
        return cls(url, _advisory_lock(url))

    def keep(self) -> None:
        """Still held, or taken again (PostgreSQL: its connection dropped). Raises
        ``StoreError`` when another replay holds it now (this one must not write: both would
        count what the store does not hold yet), ``StoreUnavailable`` while PostgreSQL cannot
        be reached (the write waits for the store, as any write does)."""
        if isinstance(self._hold, int):  # flock goes only with the process
            return
        import psycopg

        try:
            self._hold.execute("SELECT 1")
            return
        except psycopg.Error:
            with contextlib.suppress(psycopg.Error):
                self._hold.close()
        try:
            self._hold = _advisory_lock(self.url)
        except StoreUnavailable:
            raise
        except StoreError as error:
            raise StoreIncomplete(f"{error}. This replay's lock went with its connection to "
                             "PostgreSQL (a restart?) and another replay took the store "
                             "meanwhile: this one stops; what it wrote stays, and the same "
                             "command resumes from it") from None

    def release(self) -> None:
        if isinstance(self._hold, int):
            os.close(self._hold)
        else:
            self._hold.close()

    def __enter__(self) -> ReplayLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _file_lock(url: str, path: str) -> int:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise StoreUnavailable(f"store {redact(url)}: its replay lock {path}: "
                               f"{error.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
        os.close(fd)
        raise StoreError(f"store {redact(url)}: "
                         + _BUSY.format(holder=f" (process {holder})" if holder else "")
                         ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _advisory_lock(url: str) -> Any:
    import psycopg  # the store itself has just been opened with it

    try:
        db = psycopg.connect(url, connect_timeout=10, autocommit=True,
                             application_name="searchpulse replay lock")
        row = db.execute("SELECT pg_try_advisory_lock(%s)", (_ADVISORY_KEY,)).fetchone()
    except (psycopg.Error, UnicodeError) as error:
        raise StoreUnavailable(redact(f"store {url}: {error}", url)) from None
    if row is None or not row[0]:
        try:
            holder = db.execute(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
                "objid = (%s::bigint & 4294967295)::oid LIMIT 1", (_ADVISORY_KEY,)).fetchone()
        except psycopg.Error:  # only for the message
            holder = None
        db.close()
        raise StoreError(f"store {redact(url)}: " + _BUSY.format(
            holder=f" (PostgreSQL backend {holder[0]})" if holder else ""))
    return db
