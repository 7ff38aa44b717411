"""collector/privacy/redaction.py: ``redact`` masks exactly the password of a URL (wherever
``?``, ``#``, ``;`` or ``@`` appear in it), secret query parameters and ``password=``-style
keywords, keeps the user name, hosts and everything else, masks the pieces of a known URL's
password a database's error repeats, and ``install`` puts it on every log record and uncaught
traceback, since every error, log line and report passes through it. (tests/test_secrets.py
drives the same forms through every command's output.)"""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator

import pytest

from collector.privacy import redaction
from collector.privacy.redaction import redact


@pytest.mark.parametrize(("text", "masked"), [
    ("postgresql://alice:s3cret@db:5432/app", "postgresql://alice:***@db:5432/app"),
    ("postgresql://u:pa?ss@host/db", "postgresql://u:***@host/db"),  # libpq's reading of ?
    ("postgresql://u:p@ss@host/db", "postgresql://u:***@host/db"),  # the last @ before a host
    ("cannot reach postgresql://u:pa#ss@h1:5432,h2:5433/db.",
     "cannot reach postgresql://u:***@h1:5432,h2:5433/db."),
    ("postgresql://alice:Sw0rd@127.0.0.1:1/db?options=x@y",  # an @ in a parameter
     "postgresql://alice:***@127.0.0.1:1/db?options=x@y"),
    ("postgres://h/db?sslmode=disable&password=x1y2&user=a",
     "postgres://h/db?sslmode=disable&password=***&user=a"),
    ("mysql://root:toor@db/x", "mysql://root:***@db/x"),  # any scheme
    ("host=h password='a b' user=u", "host=h password=*** user=u"),  # a quoted libpq value
    ("token=abc123 next", "token=*** next"),
    ("API_KEY = zzz9", "API_KEY = ***"),
])
def test_exactly_the_secret_is_masked(text: str, masked: str) -> None:
    assert redact(text) == masked


@pytest.mark.parametrize("text", [
    "postgresql://alice@db/app",  # a user, no password
    "see https://example.org/a?b=c.",
    "a path https://h/x@y/z",  # an @ along a path ends no user information
    "nothing secret here",
])
def test_text_without_a_secret_is_left_as_it_is(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("message", "url", "masked"), [
    # libpq names a "host" parsed from a password holding @
    ('could not translate host name "w0rd@host" to address',
     "postgresql://u:p4ss@w0rd@host/db", 'could not translate host name "***@host" to address'),
    ("authentication failed for t@ngo/z3bra", "postgresql://u:t%40ngo%2Fz3bra@h/db",
     "authentication failed for ***"),  # percent-decoded
    ("bad password x9y8z7 given", "host=h password='x9y8z7' user=u", "bad password *** given"),
    ("the value x is short", "postgresql://u:x@h/db", "the value x is short"),  # under 3
])
def test_the_pieces_of_a_known_urls_password_are_masked_where_repeated(
        message: str, url: str, masked: str) -> None:
    assert redact(message, url) == masked


@pytest.fixture
def installed() -> Iterator[None]:
    """``install`` for one test, then the record factory and the hook it replaced."""
    factory, hook = logging.getLogRecordFactory(), sys.excepthook
    redaction.install()
    try:
        yield
    finally:
        logging.setLogRecordFactory(factory)
        sys.excepthook = hook


@pytest.mark.usefixtures("installed")
def test_installed_every_log_record_and_its_traceback_are_redacted() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("tests.redaction")
    logger.addHandler(handler)
    try:
        try:
            raise ConnectionError("cannot reach postgresql://u:hunter22@h/db")
        except ConnectionError:
            logger.error("retrying %s", "host=h password=hunter22", exc_info=True)
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert written.startswith("retrying host=h password=***\n")
    assert "ConnectionError: cannot reach postgresql://u:***@h/db" in written
    assert "hunter22" not in written


@pytest.mark.usefixtures("installed")
def test_installed_an_uncaught_exception_is_printed_redacted(
        capsys: pytest.CaptureFixture[str]) -> None:
    try:
        raise ValueError("store postgresql://u:hunter22@h/db refused")
    except ValueError:
        sys.excepthook(*sys.exc_info())
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.endswith("ValueError: store postgresql://u:***@h/db refused\n")
