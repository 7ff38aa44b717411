"""HTTP basic auth for /metrics the way prometheus/exporter-toolkit does it, with the bcrypt
work bounded so that wrong passwords cannot starve scrapes.

- A header's verdict is remembered: bcrypt (~80 ms at cost 10) runs once per distinct header,
  not once per scrape. A verified header stays verified while it is used at least once a
  minute (``TTL_S`` after its last use); a refused one is refused again for a minute without
  bcrypt. The two are kept apart and bounded (``VERIFIED``, ``REFUSED`` entries): headers that
  fail cannot push out the one that works. Entries are keyed by a SHA-256 of the user, its
  hash and the password, never the password itself.
- An unknown user is checked against a dummy hash of the configured cost, so it costs what a
  known user costs (no user names found by timing); bcrypt compares in constant time.
- A password over bcrypt's 72 bytes can match no hash (bcrypt 5 refuses to truncate it): it is
  refused (401) before any work, for known and unknown users alike.
- bcrypt runs on a pool of its own (``BCRYPT_WORKERS``, exporter-toolkit serialises it with a
  mutex) behind a bounded queue (``QUEUE``): when it is full, a header not seen before is
  answered 429 (the server answers it late: a flood slows to what bcrypt can check).
  Rendering has its own pool: an attack costs at most that one core, and a scrape with a
  known header never waits for a bcrypt.
- A header answered 429 that comes back (a client retrying, as Prometheus does at its next
  scrape) may take one of ``RETRY_SLOTS`` more places in the queue: a flood that sends a new
  password with every request never comes back with one, so it cannot keep a new right
  header out (a collector restarted during an attack is let in on a retry).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from enum import Enum

import bcrypt

TTL_S = 60.0
VERIFIED = 64  # headers that passed: only the holders of a password can add one
REFUSED = 4096  # headers that failed: an attacker's, mostly
BCRYPT_WORKERS = 1
QUEUE = 8  # bcrypt checks waiting or running at once
RETRY_SLOTS = 2  # more, for headers coming back after a 429
RETRY_WITHIN_S = 10.0  # a header answered 429 counts as coming back within this
MAX_PASSWORD_BYTES = 72  # bcrypt's limit


class Verdict(Enum):
    ALLOWED = "allowed"
    REFUSED = "refused"  # 401
    BUSY = "busy"  # 429: too many new headers waiting for bcrypt


class _Remembered:
    """Keys with a time-to-live counted from their last use, at most ``size`` (the least
    recently used go first)."""

    def __init__(self, size: int, ttl_s: float, clock: Callable[[], float]) -> None:
        self.size = size
        self.ttl_s = ttl_s
        self.clock = clock
        self._entries: OrderedDict[bytes, float] = OrderedDict()

    def __contains__(self, key: bytes) -> bool:
        now = self.clock()
        used = self._entries.get(key)
        if used is None or now - used > self.ttl_s:
            self._entries.pop(key, None)
            return False
        self._entries[key] = now
        self._entries.move_to_end(key)
        return True

    def add(self, key: bytes) -> None:
        self._entries[key] = self.clock()
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)


def _cost(hashed: bytes) -> int:
    return int(hashed.split(b"$")[2])


class BasicAuth:
    """Verdicts on ``Authorization`` headers against ``users`` (user → bcrypt hash)."""

    def __init__(self, users: dict[str, bytes], clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self.users = users
        cost = max((_cost(h) for h in users.values()), default=4)
        self.dummy = bcrypt.hashpw(secrets.token_bytes(16), bcrypt.gensalt(rounds=cost))
        self.verified = _Remembered(VERIFIED, TTL_S, clock)
        self.refused = _Remembered(REFUSED, TTL_S, clock)
        self.pool = ThreadPoolExecutor(max_workers=BCRYPT_WORKERS,
                                       thread_name_prefix="metrics-bcrypt")
        self.busy = _Remembered(REFUSED, RETRY_WITHIN_S, clock)  # headers answered 429
        self.waiting = 0  # bcrypt checks queued or running (event-loop thread only)
        self.retrying = 0  # of which in the places for headers coming back
        self.checks = 0  # bcrypt checks run (for tests and the benchmark)

    async def verdict(self, header: str) -> Verdict:
        """On the event loop: the remembered verdict at once, else a bcrypt on the pool."""
        credentials = _credentials(header)
        if credentials is None:
            return Verdict.REFUSED
        user, password = credentials
        hashed = self.users.get(user)
        known = hashed is not None
        hashed = hashed if known else self.dummy
        key = hashlib.sha256(b"\0".join((user.encode(), hashed, password))).digest()
        if key in self.verified:
            return Verdict.ALLOWED
        if key in self.refused:
            return Verdict.REFUSED
        retry = False
        if self.waiting - self.retrying >= QUEUE:
            retry = self.retrying < RETRY_SLOTS and key in self.busy
            if not retry:
                self.busy.add(key)
                return Verdict.BUSY
        self.waiting += 1
        self.retrying += retry
        try:
            matches = await asyncio.get_running_loop().run_in_executor(
                self.pool, self._check, password, hashed)
        finally:
            self.waiting -= 1
            self.retrying -= retry
        if matches and known:
            self.verified.add(key)
            return Verdict.ALLOWED
        self.refused.add(key)
        return Verdict.REFUSED

    def _check(self, password: bytes, hashed: bytes) -> bool:
        self.checks += 1
        return bcrypt.checkpw(password, hashed)

    def close(self) -> None:
        self.pool.shutdown(wait=False)


def _credentials(header: str) -> tuple[str, bytes] | None:
    """(user, password) of a ``Basic`` header; None when malformed or the password is longer
    than bcrypt can check."""
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True)
        user, colon, password = decoded.partition(b":")
        name = user.decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    if not colon or len(password) > MAX_PASSWORD_BYTES:
        return None
    return name, password
