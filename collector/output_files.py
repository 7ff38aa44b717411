"""A file a command writes (``--out``, ``--truth``, ``--metrics-out``, ``--html``, ``--dlq``),
opened so a write that fails after the checks at start-up (the disk fills up, a quota,
``/dev/full``) is one line naming the flag and the file, a usage error (exit 2) like an output
path that cannot be written at all, not a bare "No space left on device".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from collector.errors import OutputError


def unwritable(flag: str, path: str, error: OSError) -> OutputError:
    """The OutputError for ``error``, raised opening, writing or closing ``flag``'s ``path``."""
    return OutputError(f"{flag} {path}: cannot write ({error.strerror or error}): free space "
                       "there or choose another path")


@contextmanager
def writing(path: str, flag: str, mode: str = "w", newline: str | None = None
            ) -> Iterator[IO[Any]]:
    """``open(path, mode)`` for ``flag``'s file (text: UTF-8); an OSError while opening,
    writing or closing it is an OutputError naming both."""
    text = {} if "b" in mode else {"encoding": "utf-8", "newline": newline}
    try:
        with open(path, mode, **text) as handle:
            yield handle
    except OutputError:
        raise
    except OSError as error:
        raise unwritable(flag, path, error) from None
