"""searchpulse/arguments.py: every flag type returns the value it parsed and refuses a bad one
with the fix in one line, an output path is probed where the command would write and nothing is
left behind, and the parser prints a usage error as one line with exit 2 — since a bad flag must
fail before a replay runs for minutes, never as a traceback."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from searchpulse import arguments


@pytest.mark.parametrize(("parse", "text", "value"), [
    (arguments.period, " 90d ", "90d"),
    (arguments.period, "2024-02-29", "2024-02-29"),
    (arguments.duration, "15s", 15.0),
    (arguments.duration, "250ms", 0.25),
    (arguments.duration, "1.5m", 90.0),
    (arguments.duration, "2h", 7200.0),
    (arguments.duration, "30", 30.0),
    (arguments.label_pair, "job=search=prod", ("job", "search=prod")),
    (arguments.label_pair, "instance=", ("instance", "")),
    (arguments.log_level, " debug", "DEBUG"),
    (arguments.positive_int, "3", 3),
    (arguments.count, "0", 0),
    (arguments.spread, "10", 10.0),
    (arguments.users, "10000000", 10_000_000),
    (arguments.positive, "1e-3", 0.001),
    (arguments.share, "1", 1.0),
    (arguments.preference, "-0.5", -0.5),
    (arguments.click_effect, "-0.99", -0.99),
    (arguments.bootstrap, "k1:9092,k2:9092", "k1:9092,k2:9092"),
])
def test_a_good_value_is_returned_as_parsed(parse: Callable[[str], Any], text: str,
                                            value: Any) -> None:
    assert parse(text) == value


@pytest.mark.parametrize(("parse", "text", "message"), [
    (arguments.period, "36501d",
     "at most 36500d back, got '36501d': for everything, a date like 2000-01-01"),
    (arguments.period, "2023-02-29", "'2023-02-29' is not a calendar date (day is out of range"),
    (arguments.period, "last week",
     "expected a number of days like 90d or a date like 2026-09-01, got 'last week'"),
    (arguments.duration, "0s", "expected a duration > 0 like 15s, 1m or 30 (seconds), got '0s'"),
    (arguments.duration, "1d", "expected a duration > 0 like 15s, 1m or 30 (seconds), got '1d'"),
    (arguments.label_pair, "__name__=x",
     "expected NAME=VALUE with a label name like job or instance, got '__name__=x'"),
    (arguments.label_pair, "9job=x", "expected NAME=VALUE with a label name"),
    (arguments.label_pair, "job", "expected NAME=VALUE with a label name"),
    (arguments.log_level, "verbose",
     "expected one of DEBUG, INFO, WARNING, ERROR (also SEARCHPULSE_LOG_LEVEL), got 'verbose'"),
    (arguments.positive_int, "0", "must be an integer > 0, got '0'"),
    (arguments.positive_int, "1.5", "expected an integer, got '1.5'"),
    (arguments.count, "-1", "must be an integer >= 0, got '-1'"),
    (arguments.spread, "10.5", "must be a number from 0 to 10, got '10.5'"),
    (arguments.users, "10000001", "must be an integer from 0 to 10,000,000, got '10000001'"),
    (arguments.positive, "inf", "must be a finite number > 0, got 'inf'"),
    (arguments.positive, "nan", "expected a number, got 'nan'"),  # NaN passes no bound
    (arguments.share, "1.01", "must be between 0 and 1, got '1.01'"),
    (arguments.preference, "0.6", "must be between -0.5 and 0.5, got '0.6'"),
    (arguments.click_effect, "1", "must be between -1 and 1 (exclusive), got '1'"),
    (arguments.bootstrap, "k1:9092,",
     "must be a comma-separated list of host:port, got 'k1:9092,'"),
])
def test_a_bad_value_says_what_is_needed(parse: Callable[[str], Any], text: str,
                                         message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(message)):
        parse(text)


def test_an_output_file_is_probed_and_not_left_behind(tmp_path: Path) -> None:
    new = tmp_path / "report.html"
    assert arguments.output_file(str(new)) == str(new) and not new.exists()
    kept = tmp_path / "kept.txt"
    kept.write_text("already here")
    assert arguments.output_file(str(kept)) == str(kept)
    assert kept.read_text() == "already here"  # appended nothing
    assert arguments.output_file("-") == "-"
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(
            f"{str(tmp_path)!r} is a directory: name a file in it")):
        arguments.output_file(str(tmp_path))
    missing = tmp_path / "nowhere" / "report.html"
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(
            f"cannot write {str(missing)!r} (No such file or directory): choose a path")):
        arguments.output_file(str(missing))


def test_an_output_directory_may_be_created_below_one_that_exists(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    assert arguments.output_directory(str(deep)) == str(deep)
    assert list(tmp_path.iterdir()) == []  # nothing created, nothing left
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(
            f"cannot write {str(file / 'out')!r} (Not a directory)")):
        arguments.output_directory(str(file / "out"))


def test_why_an_input_cannot_be_read(tmp_path: Path) -> None:
    log = tmp_path / "ubi.jsonl"
    log.write_text("{}\n")
    assert arguments.unreadable(str(log)) is None
    assert arguments.unreadable("-") is None
    assert arguments.unreadable(str(tmp_path / "missing.jsonl")) == "no such file"
    assert arguments.unreadable(str(tmp_path)) == \
        "is a directory: name the log files in it (a shell glob: DIR/*.jsonl)"


def test_a_usage_error_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    parser = arguments.Parser(prog="searchpulse")
    parser.add_argument("--since", type=arguments.period)
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--since", "soon"])
    assert exited.value.code == arguments.EXIT_USAGE == 2
    assert capsys.readouterr().err == (
        "searchpulse: argument --since: expected a number of days like 90d or a date like "
        "2026-09-01, got 'soon' (see searchpulse --help)\n")
