"""Every error class of searchpulse, in one place, each saying what is unusable.

The CLI turns them into exit codes (searchpulse/__init__.py ``main`` and the commands' handlers;
tests/searchpulse/test_errors.py pins every case): a setting, an argument or a file of
settings that is unusable is a usage or configuration error (exit 2), an input that cannot be
read to its end is exit 3, a regression found by ``evaluate``'s gate is exit 4. Each message
names the key, the file or the line, so the one line the CLI prints is enough to fix it.
Modules raise them from here; the modules they were first written in still export them.
"""

from __future__ import annotations


# raised by collector/config/
class ConfigError(ValueError):
    """A setting is unknown, malformed or inconsistent; the message names the key."""


# raised by collector/exposition/http.py
class WebConfigError(ConfigError):
    """The web configuration file is unusable; the message names the file and the key."""


# raised by collector/series/strata.py
class StrataError(ValueError):
    """The strata CSV or titles file is unusable; the message names the file and line."""


# raised by collector/store/query_store.py
class StoreError(ValueError):
    """The store is unusable (bad URL, unreachable, not a database); the message names it."""


# raised by collector/store/query_store.py
class StoreUnavailable(StoreError):
    """The database did not answer or refused a statement (stopped, unreachable, locked):
    worth trying again later, unlike a URL or a missing driver; the message names it."""


# raised by collector/replay.py
class StoreIncomplete(StoreError):
    """A command's writes to the store stopped short (the store still away at ``store.wait_s``;
    collector/store/replay_lock.py: its replay lock taken by another replay): not a usage
    error but a command that could not finish (exit 1); what the store holds stays, and the
    same command finishes it."""


# raised by collector/sources/kafka/run.py
class BrokersUnreachable(ConnectionError):
    """No Kafka broker answered within ``kafka.connect_timeout_s``; the message names them."""


# raised by collector/sources/files.py
class InputError(OSError):
    """An input could not be read to its end; the message names it."""


# raised by collector/sources/files.py
class InputMismatch(ValueError):
    """An input's records differ from the ones expected at a position (the message says)."""


# raised by collector/ingest/events.py
class Rejected(Exception):
    """The record cannot be used; ``reason`` is a bounded label value, ``detail`` is for people."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


# raised by collector/judgments/measures.py
class MeasureError(ValueError):
    """A measure name ir_measures cannot parse, or one nothing here can compute."""


# raised by collector/judgments/gate.py
class GateError(ValueError):
    """A gate rule that cannot be read; the message names the rule and what is wrong."""


# raised by collector/judgments/readers.py
class JudgmentsError(ValueError):
    """A judgments, topics or run file is unusable; the message names the file and line."""


# raised by feedback/clicks/job.py
class ClicksError(ValueError):
    """The store or a previous curve is unusable; the message names it."""


# raised by feedback/candidates/job.py
class FeedbackError(ValueError):
    """The job cannot run on this input (an empty period, an unusable argument)."""


# raised by feedback/experiments/verdicts.py
class ExperimentError(ValueError):
    """An experiment report cannot compare: no variant is the control, and the message names
    the application, the control looked for and the variants seen."""


# raised by collector/output_files.py
class OutputError(OSError):
    """A file the command writes could not be written to its end (a full disk, a quota, a
    device that refuses it) after it was opened; the message names the flag and the file."""


# raised by collector/replay_workers.py
class WorkerFailed(RuntimeError):
    """A ``replay --workers`` worker ended without its result (killed, out of memory): the
    replay wrote nothing it would not write again; the message names the worker."""


# raised by collector/backtest/tools.py
class ToolMissing(RuntimeError):
    """A program the command runs (Prometheus, promtool) is not installed; the message says
    how to install it."""


# raised by collector/backtest/tsdb.py
class ToolFailed(RuntimeError):
    """Prometheus or promtool refused what it was given; the message holds what it said."""
