"""Basic auth as exporter-toolkit does it, with bcrypt bounded: one bcrypt per distinct header
(verdicts remembered a minute past their last use), unknown users checked against a dummy hash
of the same cost, over-long passwords refused (401, never a 500), and new headers beyond the
bcrypt queue answered at once (429) while a known header is never held up."""

from __future__ import annotations

import asyncio
import base64
import time
import urllib.error
import urllib.request

import bcrypt
import pytest

from collector.exposition import basic_auth
from collector.exposition.basic_auth import BasicAuth, Verdict
from collector.exposition.http import MetricsServer, WebConfig


def header(user: str, password: str | bytes) -> str:
    raw = password if isinstance(password, bytes) else password.encode()
    return "Basic " + base64.b64encode(user.encode() + b":" + raw).decode()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def auth():
    clock = Clock()
    checker = BasicAuth({"prometheus": bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4))},
                        clock)
    checker.clock = clock
    yield checker
    checker.close()


def verdicts(auth: BasicAuth, *headers: str) -> list[Verdict]:
    async def run() -> list[Verdict]:
        return list(await asyncio.gather(*(auth.verdict(h) for h in headers)))
    return asyncio.run(run())


def test_one_bcrypt_per_distinct_header_for_as_long_as_it_is_used(auth):
    good, wrong = header("prometheus", "s3cret"), header("prometheus", "guess")
    for _ in range(20):
        assert verdicts(auth, good, wrong) == [Verdict.ALLOWED, Verdict.REFUSED]
    assert auth.checks == 2
    for _ in range(5):  # used every 50 s: remembered past the minute
        auth.clock.now += 50
        assert verdicts(auth, good) == [Verdict.ALLOWED]
    assert auth.checks == 2
    auth.clock.now += 61  # unused for over a minute: checked again
    assert verdicts(auth, good, wrong) == [Verdict.ALLOWED, Verdict.REFUSED]
    assert auth.checks == 4


def test_unknown_users_are_checked_against_a_hash_of_the_same_cost(auth):
    assert bcrypt.checkpw(b"s3cret", auth.users["prometheus"])
    assert auth.dummy.split(b"$")[2] == auth.users["prometheus"].split(b"$")[2] == b"04"
    assert verdicts(auth, header("nobody", "s3cret")) == [Verdict.REFUSED]
    assert auth.checks == 1  # a bcrypt, as for a known user's wrong password


def test_over_long_passwords_malformed_headers_are_refused_without_bcrypt(auth):
    long = "x" * 73  # bcrypt 5 raises on more than 72 bytes
    assert verdicts(auth, header("prometheus", long), header("nobody", long),
                    header("prometheus", "é" * 37),  # 74 bytes in UTF-8
                    "Basic !!!", "Bearer abc", "", header("prometheus", b"\xff")[:-2]
                    ) == [Verdict.REFUSED] * 7
    assert auth.checks == 0
    assert verdicts(auth, header("prometheus", "s3cret")) == [Verdict.ALLOWED]  # 72 is fine


def test_new_headers_beyond_the_queue_are_answered_at_once_and_a_known_one_passes(auth):
    good = header("prometheus", "s3cret")
    assert verdicts(auth, good) == [Verdict.ALLOWED]
    flood = [header("prometheus", f"guess{i}") for i in range(30)]
    answers = verdicts(auth, *flood, good)
    assert answers[:basic_auth.QUEUE] == [Verdict.REFUSED] * basic_auth.QUEUE
    assert answers[basic_auth.QUEUE:30] == [Verdict.BUSY] * (30 - basic_auth.QUEUE)
    assert answers[30] is Verdict.ALLOWED  # remembered: never queued
    assert auth.checks == 1 + basic_auth.QUEUE


def test_refused_headers_cannot_push_out_a_verified_one(monkeypatch):
    monkeypatch.setattr(basic_auth, "REFUSED", 40)  # (the same at 4,096, only slower)
    auth = BasicAuth({"prometheus": bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4))})
    good = header("prometheus", "s3cret")
    verdicts(auth, good)
    for start in range(0, basic_auth.REFUSED + 200, basic_auth.QUEUE):
        verdicts(auth, *(header("prometheus", f"g{i}") for i in range(start,
                                                                       start + basic_auth.QUEUE)))
    checks = auth.checks
    assert verdicts(auth, good) == [Verdict.ALLOWED] and auth.checks == checks
    assert verdicts(auth, header("prometheus", "g0")) == [Verdict.REFUSED]  # pushed out:
    assert auth.checks == checks + 1  # checked again
    auth.close()


def serve(directory) -> MetricsServer:
    """A /metrics server with one user, prometheus / s3cret."""
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    path = directory / "web.yml"
    path.write_text(f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    return MetricsServer(lambda: b"demo_total 1.0\n", "127.0.0.1", 0,
                         web_config=WebConfig.load(str(path))).start()


def test_an_over_long_password_gets_401_over_http(tmp_path):
    server = serve(tmp_path)
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/metrics", headers={
            "Authorization": header("prometheus", "p" * 100)})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 401
    finally:
        server.stop()


def test_a_full_bcrypt_queue_answers_429_late_over_http(tmp_path, monkeypatch):
    from collector.exposition import http

    monkeypatch.setattr(basic_auth, "QUEUE", 0)  # every header not seen before: busy
    monkeypatch.setattr(http, "BUSY_DELAY_S", 0.2)
    server = serve(tmp_path)
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/metrics", headers={
            "Authorization": header("prometheus", "s3cret")})
        started = time.perf_counter()
        with pytest.raises(urllib.error.HTTPError) as busy:
            urllib.request.urlopen(request, timeout=5)
        assert busy.value.code == 429 and busy.value.headers["Retry-After"] == "1"
        assert time.perf_counter() - started >= 0.2
    finally:
        server.stop()


def test_a_header_coming_back_after_a_429_gets_a_place_a_flood_of_new_ones_does_not(auth):
    good = header("prometheus", "s3cret")
    first = [header("prometheus", f"guess{i}") for i in range(basic_auth.QUEUE)]
    # the queue full: the right header, new, is answered busy; the flood's next ones too
    assert verdicts(auth, *first, good, header("prometheus", "again"))[-2:] == [
        Verdict.BUSY, Verdict.BUSY]
    later = [header("prometheus", f"later{i}") for i in range(basic_auth.QUEUE)]
    answers = verdicts(auth, *later, header("prometheus", "new"), good)
    assert answers[-2:] == [Verdict.BUSY, Verdict.ALLOWED]  # it came back: let in
    auth.clock.now += basic_auth.RETRY_WITHIN_S + 1  # too long ago to count as coming back
    assert verdicts(auth, *(header("prometheus", f"x{i}") for i in range(basic_auth.QUEUE)),
                    header("prometheus", "again"))[-1] is Verdict.BUSY
