"""No secret in any output: every form of store URL (any scheme, empty user, @ / ? # ; in the
password, ?password=, libpq keywords) against every path a URL can take out — `config check`,
configuration errors, replay and feedback errors, logs, the feedback summary and report; and
generated passwords (hypothesis) through the same paths."""

from __future__ import annotations

import json
import logging
import string
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from collector.privacy.redaction import redact
from searchpulse import EXIT_OK, main
from tests.conftest import UBI

SECRET = "Sw0rdf1sh"
FORMS = [
    f"postgresql://alice:{SECRET}@127.0.0.1:1/db",
    f"postgresql://:{SECRET}@127.0.0.1:1/db",
    f"postgresql://alice:p@{SECRET}@127.0.0.1:1/db",
    f"postgresql://alice:a/{SECRET}@127.0.0.1:1/db",
    f"postgres://127.0.0.1:1/db?sslmode=disable&password={SECRET}",
    f"mysql://alice:{SECRET}@db.example/db",  # an unknown scheme
    f"host=127.0.0.1 port=1 password={SECRET} user=alice",  # a libpq DSN, not a URL
    f"postgresql://alice:{SECRET}@127.0.0.1:1/db?options=x@y",
    f"postgresql://u1:pa?{SECRET}@127.0.0.1:1/db",  # ? # ; in the password
    f"postgresql://u1:pa#{SECRET}@127.0.0.1:1/db",
    f"postgresql://u1:pa;{SECRET}@127.0.0.1:1/db",
    f"postgresql://u1:{SECRET}?@127.0.0.1:1/db?sslmode=disable",
    f"postgres://127.0.0.1:1/db?password=pa;{SECRET}&sslmode=disable",  # ; in ?password=
    f"postgres://127.0.0.1:1/db?password=pa#{SECRET}",
    f"host=127.0.0.1 port=1 password='pa ss;{SECRET}' user=alice",  # quoted libpq value
    f"host=127.0.0.1 port=1 password=pa;{SECRET} user=alice",
    f"redis://:{SECRET}@cache:6379/0",
]


@pytest.mark.parametrize("url", FORMS)
def test_redact_masks_every_form(url):
    masked = redact(url)
    assert SECRET not in masked and "***" in masked
    assert "alice" in masked or "alice" not in url  # the user name stays, for the operator


def _everything(capsys, caplog) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err + "\n".join(r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("url", FORMS)
def test_no_command_prints_a_store_password(url, tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    log = tmp_path / "ubi.jsonl"
    log.write_bytes(UBI().query("q1", "tent", 0) + b"\n")
    main(["config", "check", "--set", f"store.url={url}"])
    main(["replay", str(log), "--store", url])
    main(["feedback", "--store", url, "--out", str(tmp_path / "out")])
    output = _everything(capsys, caplog)
    assert SECRET not in output
    assert "store" in output  # the errors were printed, masked


@pytest.mark.integration
def test_feedback_summary_and_report_mask_a_password_parameter(postgres_database, tmp_path,
                                                               capsys, caplog):
    caplog.set_level(logging.DEBUG)
    url = f"{postgres_database}?password={SECRET}"  # trust authentication ignores it
    ubi = UBI()
    log = tmp_path / "ubi.jsonl"
    log.write_bytes(b"\n".join(ubi.query(f"q{i}", "tent", i, client=f"c{i}", hits=())
                               for i in range(5)) + b"\n")
    assert main(["replay", str(log), "--store", url]) == EXIT_OK
    replayed = _everything(capsys, caplog)
    out = tmp_path / "out"
    assert main(["feedback", "--store", url, "--out", str(out), "--json"]) == EXIT_OK
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    output = replayed + captured.out + captured.err + "\n".join(
        r.getMessage() for r in caplog.records)
    assert summary["store"].endswith("password=***")
    assert SECRET not in output
    assert SECRET not in (out / "report.html").read_text()


def test_config_check_masks_every_secret_setting(capsys, monkeypatch):
    monkeypatch.setenv("SEARCHPULSE_KAFKA_SASL_PASSWORD", SECRET)
    assert main(["config", "check", "--set", f"store.url=postgresql://u:{SECRET}@h/db"]) == 0
    output = capsys.readouterr().out
    assert SECRET not in output
    assert output.count('"***"') == 2  # kafka.sasl_password and store.url


# Passwords as people make them: any printable character but whitespace (a URL needs it
# percent-encoded) — ? # ; / @ : % and quotes included.
# (not found in what surrounds it either, as "127.0.0." is in every form: _forms, MESSAGES)
PASSWORDS = st.text(string.ascii_letters + string.digits + string.punctuation, min_size=8,
                    max_size=24).filter(lambda p: not p.startswith(("'", '"'))
                                        and p not in " ".join([*_forms(""), *MESSAGES]))
MESSAGES = ["store {}: connection refused", "{}", "retry {} in 5 s", "store '{}' failed: x"]


def _forms(password: str) -> list[str]:
    """The password in every form a store URL takes: user information (as typed, and
    percent-encoded), a query parameter (& separates parameters: encoded there), a libpq
    keyword string (plain, and quoted with its quotes escaped)."""
    escaped = password.replace("\\", "\\\\").replace("'", "\\'")
    return [f"postgresql://alice:{password}@127.0.0.1:1/db",
            f"postgresql://alice:{quote(password, safe='')}@127.0.0.1:1/db",
            f"postgresql://127.0.0.1:1/db?sslmode=disable&password="
            f"{password.replace('&', '%26')}",
            f"host=127.0.0.1 port=1 password={password} user=alice",
            f"host=127.0.0.1 port=1 password='{escaped} x' user=alice"]


@given(PASSWORDS, st.sampled_from(MESSAGES))
def test_a_generated_password_never_survives_redaction(password, message):
    for url in _forms(password):
        assert password not in redact(message.format(url)), url
        assert password not in redact(message.format(url), url)
        assert "alice" in redact(message.format(url)) or "alice" not in url


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(password=PASSWORDS)
def test_no_command_prints_a_generated_password(password, tmp_path, capsys, caplog):
    """config check, replay and feedback with each form: every line they print or log."""
    caplog.set_level(logging.DEBUG)
    log = tmp_path / "ubi.jsonl"
    log.write_bytes(UBI().query("q1", "tent", 0) + b"\n")
    main(["config", "check"])  # what is printed anyway: "localhos" is no leak of a password
    assume(password not in _everything(capsys, caplog) + str(log) + str(tmp_path / "out"))
    caplog.clear()
    for url in _forms(password):
        main(["config", "check", "--set", f"store.url={url}"])
        main(["replay", str(log), "--store", url])
        main(["feedback", "--store", url, "--out", str(tmp_path / "out")])
    output = _everything(capsys, caplog)
    caplog.clear()
    assert password not in output


def test_every_log_record_and_uncaught_traceback_is_redacted(capsys):
    """Any logger's message and the traceback a formatter appends; the hook for uncaught
    exceptions (installed by the CLI, as here)."""
    import io
    import sys

    from collector.privacy import redaction

    redaction.install()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    library = logging.getLogger("some.library")
    library.addHandler(handler)
    try:
        try:
            raise ValueError(f"cannot reach postgresql://u:pa?{SECRET}@h/db")
        except ValueError:
            library.error("retrying %s", f"host=h password={SECRET}", exc_info=True)
            sys.excepthook(*sys.exc_info())
    finally:
        library.removeHandler(handler)
    written = stream.getvalue() + capsys.readouterr().err
    assert "retrying host=h password=***" in written
    assert "ValueError: cannot reach postgresql://u:***@h/db" in written
    assert SECRET not in written
