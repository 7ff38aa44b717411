"""collector/errors.py: every error class is in one place, each still exported by the module it
was first written in, and each a subclass of the built-in error the CLI's handlers catch, since
an error that moved out from under its old import, or left its base class, would change an exit
code without a test of the command noticing (tests/searchpulse/test_errors.py pins the codes)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from collector import errors

SOURCE = Path(errors.__file__).read_text()
# "# raised by collector/sources/files.py" above each class
RAISED_BY = re.findall(r"^# raised by (\S+)\nclass (\w+)\b", SOURCE, re.MULTILINE)
ROOT = Path(errors.__file__).resolve().parents[1]


def test_every_class_says_which_module_raises_it() -> None:
    classes = {name for name, value in vars(errors).items()
               if inspect.isclass(value) and value.__module__ == errors.__name__}
    assert len(classes) == 20
    assert {name for _, name in RAISED_BY} == classes
    assert [path for path, _ in RAISED_BY if not (ROOT / path).exists()] == []


@pytest.mark.parametrize(("path", "name"), RAISED_BY)
def test_the_module_it_was_first_written_in_still_exports_it(path: str, name: str) -> None:
    module = importlib.import_module(
        path.removesuffix(".py").removesuffix("/").replace("/", "."))
    assert getattr(module, name) is getattr(errors, name)


@pytest.mark.parametrize(("error", "base"), [
    (errors.ConfigError, ValueError),
    (errors.WebConfigError, errors.ConfigError),  # a bad web config file is a usage error
    (errors.StoreIncomplete, errors.StoreError),  # caught first: a command not finished
    (errors.StoreUnavailable, errors.StoreError),  # retried where a bad URL is not
    (errors.StoreError, ValueError),
    (errors.BrokersUnreachable, ConnectionError),
    (errors.InputError, OSError),
    (errors.OutputError, OSError),
    (errors.InputMismatch, ValueError),
    (errors.GateError, ValueError),
    (errors.MeasureError, ValueError),
    (errors.JudgmentsError, ValueError),
    (errors.WorkerFailed, RuntimeError),
    (errors.ToolMissing, RuntimeError),
    (errors.ToolFailed, RuntimeError),
])
def test_each_error_is_the_kind_its_handler_catches(error: type[Exception],
                                                    base: type[Exception]) -> None:
    assert issubclass(error, base)


def test_unrelated_errors_are_not_caught_as_each_other() -> None:
    assert not issubclass(errors.StoreError, errors.ConfigError)
    assert not issubclass(errors.InputMismatch, OSError)  # no retry of a different record
    assert not issubclass(errors.Rejected, ValueError)


def test_rejected_keeps_its_bounded_reason_apart_from_the_detail() -> None:
    rejected = errors.Rejected("bad_timestamp", "timestamp 'soon' is not a number")
    assert (rejected.reason, rejected.detail) == ("bad_timestamp",
                                                  "timestamp 'soon' is not a number")
    assert rejected.args == ("bad_timestamp", "timestamp 'soon' is not a number")
    assert errors.Rejected("empty").detail == ""
