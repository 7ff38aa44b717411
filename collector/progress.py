"""Progress on stderr for a command that can run longer than a couple of seconds: a bar of
what is counted where the amount is known (bytes of a replay, sessions of a simulation), else
of the job's named steps. Whether it is shown is the command's ``--progress`` (default: when
stderr is a terminal; searchpulse/options.py ``show_progress``): a bar never reaches a log
file or a pipe unless asked for."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

from tqdm import tqdm


class Steps:
    """A bar of named steps, labelled with the command (``evaluate``, ``judgments import``):
    :meth:`begin` each step in turn (the one before it counts as done); the steps not begun
    count as done at the end (a job that skipped one finished all the same)."""

    def __init__(self, label: str, steps: Sequence[str], shown: bool) -> None:
        self._bar = tqdm(total=len(steps), desc=label, unit="step", disable=not shown)
        self._underway = False

    def begin(self, step: str) -> None:
        if self._underway:
            self._bar.update()
        self._underway = True
        self._bar.set_postfix_str(step)

    def close(self) -> None:
        self._bar.update(self._bar.total - self._bar.n)
        self._bar.close()

    def __enter__(self) -> Steps:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if kind is None:
            self.close()
        else:  # a failed job leaves its bar where it stopped
            self._bar.close()


def counted(label: str, total: int | None, unit: str, shown: bool) -> tqdm:
    """A bar of ``total`` things counted as the job goes (None: a running count)."""
    return tqdm(total=total, desc=label, unit=unit, unit_scale=True, disable=not shown)
