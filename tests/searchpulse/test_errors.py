"""Every subcommand fed bad values: a usage or configuration error exits 2 with one line that
names the argument or setting and what it needs; an unreadable input exits 3 naming the file;
no traceback ever (an uncaught exception would fail the test itself)."""

from __future__ import annotations

import gzip
import json
import logging
import socket
from pathlib import Path

import pytest

from collector.store.query_store import open_store
from searchpulse import main

UNKNOWN = "SEARCHPULSE_WINDOWS_ABANDONMNT_S"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A small log, a store of it, a store an interrupted replay left (its input not
    complete), the log gzipped and cut, a regular file (a path under it cannot be written), a
    directory, and a port some other process listens on."""
    work = tmp_path_factory.mktemp("cli")
    assert main(["simulate", "--sessions", "30", "--out", str(work / "ubi.jsonl"), "--truth",
                 str(work / "truth.json"), "--judgments-out", str(work / "judgments.csv")]) == 0
    for name in ("q.db", "partial.db"):
        assert main(["replay", str(work / "ubi.jsonl"), "--store",
                     f"sqlite:///{work / name}", "--json"]) == 0
    partial = open_store(f"sqlite:///{work / 'partial.db'}")
    partial.add([], inputs=[mark._replace(complete=False)
                            for mark in partial.inputs().values()])
    partial.close()
    packed = gzip.compress((work / "ubi.jsonl").read_bytes())
    (work / "cut.jsonl.gz").write_bytes(packed[:len(packed) // 2])
    text = (work / "ubi.jsonl").read_text(encoding="utf-8")
    (work / "utf16.jsonl").write_bytes(text.encode("utf-16"))  # FF FE, then UTF-16LE
    (work / "utf16be.jsonl").write_bytes(b"\xfe\xff" + text.encode("utf-16-be"))
    (work / "utf16le.jsonl").write_bytes(text.encode("utf-16-le"))  # no mark: every other NUL
    (work / "binary.jsonl.gz").write_bytes(gzip.compress(bytes(range(256)) * 64))
    busy = socket.socket()
    busy.bind(("0.0.0.0", 0))
    busy.listen()
    yield {"LOG": str(work / "ubi.jsonl"), "STORE": f"sqlite:///{work / 'q.db'}",
           "FILE": str(work / "truth.json"), "DIR": str(work), "OUT": str(work / "out"),
           "JUDGMENTS": str(work / "judgments.csv"), "BUSY": str(busy.getsockname()[1]),
           "PARTIAL": f"sqlite:///{work / 'partial.db'}", "CUT": str(work / "cut.jsonl.gz"),
           **{name.upper(): str(work / f"{name}.jsonl") for name in (
               "utf16", "utf16be", "utf16le")}, "BINARY_GZ": str(work / "binary.jsonl.gz")}
    busy.close()


# (argv with placeholders, exit code, what the message must name)
CASES = [
    (["--log-level", "LOUD", "config", "check"], 2, "--log-level"),
    (["replay", "DIR"], 3, "is a directory"),
    (["replay", "DIR/missing.jsonl"], 3, "no such file"),
    (["replay", "LOG", "--metrics-out", "FILE/final.prom"], 2, "--metrics-out"),
    (["replay", "LOG", "--dlq", "DIR"], 2, "--dlq"),
    (["replay", "LOG", "--store", "mysql://db"], 2, "store.url"),
    (["replay", "LOG", "--store", "postgresql://alice:pw@./db"], 2, "idna"),  # no host name
    (["replay", "LOG", "--strata-file", "DIR/missing.csv"], 2, "strata.file"),
    (["replay", "LOG", "--set", "windows.abandonment_s"], 2, "--set"),
    (["replay", "LOG", "--set", "windows.abandonment_s=soon"], 2, "windows.abandonment_s"),
    (["replay", "LOG", "--config", "DIR/missing.toml"], 2, "missing.toml"),
    (["replay", "CUT"], 3, "cut.jsonl.gz"),  # what came before the break is counted
    (["replay", "LOG", "LOG", "--store", "sqlite:///DIR/twice.db"], 2, "the same log twice"),
    (["replay", "-", "-"], 2, "standard input named 2 times: it is read once"),
    (["backtest", "LOG", "-", "-"], 2, "standard input named 2 times"),
    (["experiments", "-", "-"], 2, "standard input named 2 times"),
    (["simulate", "--sessions", "-1"], 2, "--sessions"),
    (["simulate", "--sessions", "ten"], 2, "--sessions"),
    (["simulate", "--sessions-per-second", "0"], 2, "--sessions-per-second"),
    (["simulate", "--invalid-rate", "2"], 2, "--invalid-rate"),
    (["simulate", "--interleaving", "0.7"], 2, "--interleaving"),
    (["simulate", "--incident", "meteor:x5:1m+1m"], 2, "meteor"),
    (["simulate", "--start", "yesterday"], 2, "yesterday"),
    (["simulate", "--out", "FILE/ubi.jsonl"], 2, "--out"),
    (["simulate", "--kafka", "127.0.0.1:1", "--pace", "0"], 2, "--pace"),
    (["demo", "--speed", "0"], 2, "--speed"),
    (["demo", "--duration", "soon"], 2, "soon"),
    (["demo", "--port", "BUSY", "--duration", "1s"], 2, "http.port"),
    (["demo", "--web.listen-address", "nowhere"], 2, "--web.listen-address"),
    (["collect", "--metrics-port", "BUSY", "--bootstrap-servers", "127.0.0.1:1"], 2,
     "http.port"),
    (["collect", "--metrics-port", "70000"], 2, "http.port"),
    (["collect", "--idle", "-1"], 2, "--idle"),
    (["feedback", "--store", "STORE", "--out", "OUT", "--since", "banana"], 2, "--since"),
    (["feedback", "--store", "STORE", "--out", "OUT", "--since", "2026-13-45"], 2, "--since"),
    (["feedback", "--store", "STORE", "--out", "FILE/refresh"], 2, "--out"),
    (["feedback", "--out", "OUT"], 2, "store.url"),
    (["feedback", "--store", "sqlite:///DIR/missing/q.db", "--out", "OUT"], 3, "store"),
    # the store, feedback's input, holds part of a replay: unusable as it is (exit 3, as a
    # truncated log), not a bad argument; the same command succeeds once the replay is done
    (["feedback", "--store", "PARTIAL", "--out", "OUT"], 3, "--allow-incomplete"),
    (["feedback", "--store", "PARTIAL", "--out", "OUT", "--set",
      "store.allow_incomplete=maybe"], 2, "store.allow_incomplete"),
    (["clicks", "--store", "PARTIAL", "--out", "OUT"], 3, "unfinished replay"),
    (["clicks", "--store", "STORE", "--out", "OUT", "--since", "banana"], 2, "--since"),
    (["clicks", "--store", "STORE", "--out", "OUT", "--since", "2026-02-30"], 2, "--since"),
    (["judgments", "import", "DIR/missing.csv", "--out", "OUT"], 3, "missing.csv"),
    (["judgments", "import", "JUDGMENTS", "--out", "FILE/x"], 2, "--out"),
    (["judgments", "agreement", "JUDGMENTS", "--html", "FILE/x.html"], 2, "--html"),
    (["evaluate", "--judgments", "JUDGMENTS", "--run", "LOG", "--k", "0"], 2, "--k"),
    (["evaluate", "--judgments", "JUDGMENTS", "--run", "LOG", "--k", "10001"], 2,
     "evaluate.depth"),
    (["evaluate", "--judgments", "JUDGMENTS", "--run", "LOG", "--run", "LOG", "--run", "LOG"],
     2, "--run"),
    (["evaluate", "--judgments", "DIR/missing.csv", "--run", "LOG"], 3, "missing.csv"),
    (["generate", "--out", "FILE/deploy"], 2, "--out"),
    (["generate", "--out", "OUT", "--set", "alerts.thresholds.latency_quantile=1.5"], 2,
     "alerts.thresholds.latency_quantile"),
    (["config", "check", "--set", "alerts.windows.page_short=2h"], 2,
     "alerts.windows.page_short"),
    (["config", "check", "--set", "alerts.thresholds.ctr_drop_factor=1.2"], 2,
     "alerts.thresholds.ctr_drop_factor"),
    (["config", "check", "--set", "alerts.deployment.pager_url=pager"], 2,
     "alerts.deployment.pager_url"),
    (["config", "check", "--set", "alerts.windows.baseline_offsets=1w,lastweek"], 2,
     "alerts.windows.baseline_offsets"),
    (["config", "check", "--set", "nothing.at_all=1"], 2, "nothing.at_all"),
    (["config", "check", "--set", "experiments.guardrail_zero_result_margin=1.5"], 2,
     "experiments.guardrail_zero_result_margin"),
    (["config", "check", "--set", "experiments.control_variant=none"], 2,
     "experiments.control_variant"),
    (["config", "check", "--set", "experiments.split=a=0.5,b=0.5"], 2,
     "experiments.control_variant"),  # the control is no variant of the design
    (["config", "check", "--set", "alerts.thresholds.control_variant=a"], 2,
     "replaced by experiments.control_variant"),
    (["generate", "--out", "OUT", "--set", "experiments.unit_buckets=1"], 2,
     "experiments.unit_buckets"),
    (["simulate", "--users", "-1"], 2, "--users"),
    (["simulate", "--user-click-sigma", "-0.5"], 2, "--user-click-sigma"),
    (["simulate", "--treatment-click-effect", "1"], 2, "--treatment-click-effect"),
    (["experiments", "DIR/missing.jsonl"], 3, "no such file"),
    (["experiments", "--metrics", "DIR"], 3, "is a directory"),
    (["experiments", "LOG", "--html", "FILE/x.html"], 2, "--html"),
    (["nonsense"], 2, "invalid choice: 'nonsense'"),
    # the selector goes between the braces of every rule's series: matchers, nothing else
    (["generate", "--out", "OUT", "--selector", "}{"], 2, "alerts.deployment.selector"),
    (["generate", "--out", "OUT", "--selector", 'job="a"} or vector(1) or {x="'], 2,
     "expected ',' or the end at offset 7"),
    (["generate", "--out", "OUT", "--selector", ""], 2, "--selector"),
    (["generate", "--out", "OUT", "--selector", 'job="a",'], 2, "trailing ','"),
    (["generate", "--out", "OUT", "--selector", "job=a"], 2, "not one quoted string"),
    (["generate", "--out", "OUT", "--selector", 'job=="a"'], 2, "not one quoted string"),
    (["generate", "--out", "OUT", "--selector", 'job="a\\"'], 2, "not one quoted string"),
    (["generate", "--out", "OUT", "--selector", 'job~"a"'], 2, "expected one of = != =~ !~"),
    (["config", "check", "--set", 'alerts.deployment.selector=job="a"}'], 2,
     "alerts.deployment.selector"),
    # a write that fails after the output was opened and checked (a full disk)
    (["replay", "LOG", "--metrics-out", "/dev/full"], 2, "--metrics-out /dev/full"),
    (["simulate", "--sessions", "5", "--out", "/dev/full"], 2, "--out /dev/full"),
    (["simulate", "--sessions", "5", "--out", "DIR/s.jsonl", "--truth", "/dev/full"], 2,
     "--truth /dev/full"),
    (["experiments", "LOG", "--html", "/dev/full"], 2, "--html /dev/full"),
    (["judgments", "agreement", "JUDGMENTS", "--disputed", "/dev/full"], 2,
     "--disputed /dev/full"),
    (["evaluate", "--judgments", "JUDGMENTS", "--run", "LOG", "--html", "/dev/full"], 2,
     "--html /dev/full"),
    # a log in another encoding, or a binary, is refused before a record of it is counted
    (["replay", "UTF16"], 3, "not UTF-8 text: byte 0xFF at offset 0 (a UTF-16 byte-order"),
    (["replay", "UTF16BE"], 3, "not UTF-8 text: byte 0xFE at offset 0"),
    (["replay", "UTF16LE"], 3, "utf16le.jsonl: not UTF-8 text: byte 0x00 at offset 1"),
    (["replay", "BINARY_GZ"], 3, "binary.jsonl.gz: not UTF-8 text: byte 0x00 at offset 0"),
    (["replay", "LOG", "UTF16LE"], 3, "utf16le.jsonl: not UTF-8 text"),
    (["experiments", "UTF16"], 3, "utf16.jsonl: not UTF-8 text: byte 0xFF at offset 0"),
    (["experiments", "BINARY_GZ"], 3, "decompressed content"),
    (["replay", "LOG", "--store", "sqlite:///"], 2, "store.url"),
    (["replay", "LOG", "--store", "sqlite:///  "], 2, "names no database file"),
]


def run(argv: list[str]) -> int:
    """``searchpulse ARGV``'s exit code (argparse's own errors exit through SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exit_:
        return exit_.code


@pytest.mark.parametrize(("argv", "code", "named"), CASES, ids=lambda v: " ".join(v)
                         if isinstance(v, list) else None)
def test_a_bad_value_exits_with_one_line_naming_it(argv, code, named, files, capsys, caplog):
    argv = [files.get(a, a).replace("FILE/", files["FILE"] + "/").replace("DIR/",
                                                                          files["DIR"] + "/")
            for a in argv]
    with caplog.at_level(logging.ERROR):
        exit_code = run(argv)
    err = capsys.readouterr().err
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    lines = err.strip().splitlines() + errors
    assert exit_code == code, (argv, lines)
    assert len(lines) == 1, lines
    assert named in lines[0], lines


def test_an_unknown_searchpulse_variable_is_a_warning_naming_the_close_match(files, monkeypatch,
                                                                            caplog):
    monkeypatch.setenv(UNKNOWN, "600")
    with caplog.at_level(logging.WARNING):
        assert main(["replay", files["LOG"], "--json"]) == 0
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned == [f"{UNKNOWN}: no such setting; did you mean "
                      "SEARCHPULSE_WINDOWS_ABANDONMENT_S? (ignored)"]


def test_config_check_refuses_an_unknown_variable(monkeypatch, capsys):
    monkeypatch.setenv(UNKNOWN, "600")
    monkeypatch.setenv("SEARCHPULSE_TEST_BOOTSTRAP", "x")  # the test suite's own: not a setting
    assert main(["config", "check"]) == 2
    assert capsys.readouterr().err == (f"searchpulse config check: {UNKNOWN}: no such setting; "
                                       "did you mean SEARCHPULSE_WINDOWS_ABANDONMENT_S?\n")


def test_a_moved_variable_names_its_new_name(monkeypatch, capsys):
    monkeypatch.setenv("SEARCHPULSE_ALERTS_THRESHOLDS_GUARDRAIL_ZERO_RESULT_MARGIN", "0.02")
    assert main(["config", "check"]) == 2
    assert capsys.readouterr().err == (
        "searchpulse config check: SEARCHPULSE_ALERTS_THRESHOLDS_GUARDRAIL_ZERO_RESULT_MARGIN: "
        "no such setting; replaced by SEARCHPULSE_EXPERIMENTS_GUARDRAIL_ZERO_RESULT_MARGIN\n")


def test_config_check_reads_alerts_sections_of_the_file(tmp_path, capsys):
    config = tmp_path / "searchpulse.toml"
    config.write_text("[alerts.thresholds]\nzero_result_rate_critical = 1.5\n")
    assert main(["config", "check", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        "searchpulse config check: alerts.thresholds.zero_result_rate_critical: must be a share "
        f"between 0 and 1 (exclusive), got 1.5 (from {config})\n")
    config.write_text("[alerts.thresholds]\nzero_result_rate_critical = 0.2\n")
    assert main(["config", "check", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"0.2                      ({config})" in out.split(
        "alerts.thresholds.zero_result_rate_critical")[1].splitlines()[0]


def test_a_bad_log_level_in_the_environment_is_named(monkeypatch, capsys):
    monkeypatch.setenv("SEARCHPULSE_LOG_LEVEL", "LOUD")
    assert run(["config", "check"]) == 2
    assert "SEARCHPULSE_LOG_LEVEL" in capsys.readouterr().err


def test_a_refused_selector_writes_nothing(tmp_path, capsys):
    """Checked before any work: no rule file, no dashboard under --out."""
    out = tmp_path / "deploy"
    assert run(["generate", "--out", str(out), "--selector", 'job="a"} or vector(1)']) == 2
    assert "alerts.deployment.selector" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("name", ["UTF16", "UTF16LE", "BINARY_GZ"])
def test_a_log_that_is_not_text_counts_no_record(name, files, capsys, caplog):
    """Refused at its first chunk, not read as garbage records up to a 'mid-record' end."""
    with caplog.at_level(logging.ERROR):
        assert run(["replay", files[name], "--json", "--no-progress"]) == 3
    summary = json.loads(capsys.readouterr().out)
    assert summary["records"] == 0 and summary["invalid_records"] == 0
    assert [r.getMessage() for r in caplog.records
            if r.levelno >= logging.ERROR][0].startswith(f"input {files[name]}: not UTF-8 text")


def test_a_few_poison_lines_at_the_start_are_records_not_a_refusal(files, tmp_path, capsys):
    """A NUL record and a Latin-1 record before a log's text lines are dead-lettered, not the
    log refused: only an input that is mostly not text is."""
    assert run(["replay", files["LOG"], "--json", "--no-progress"]) == 0
    whole = json.loads(capsys.readouterr().out)
    log_ = tmp_path / "poison-first.jsonl"
    log_.write_bytes(b"\x00" * 64 + b"\n" + '{"user_query": "caf\u00e9"}\n'.encode("latin-1")
                     + Path(files["LOG"]).read_bytes())
    assert run(["replay", str(log_), "--json", "--no-progress"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["records"] == whole["records"] + 2
    assert summary["invalid_records"] == whole["invalid_records"] + 2
    assert summary["searches"] == whole["searches"]
