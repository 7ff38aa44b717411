"""No secret in any output: every form of store URL (any scheme, empty user, @ or / in the
password, ?password=, libpq keywords) against every path a URL can take out — `config check`,
configuration errors, replay and feedback errors, logs, the feedback summary and report."""

from __future__ import annotations

import json
import logging

import pytest

from collector.cli import EXIT_OK, main
from collector.redaction import redact
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
