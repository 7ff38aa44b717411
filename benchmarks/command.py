"""The ``searchpulse`` command's module in any checkout a benchmark runs: ``searchpulse`` since
the command left collector/ (issue 39), ``collector.cli`` in the commits before it, which the
benchmarks still compare against."""

from __future__ import annotations

from pathlib import Path


def command_module(tree: Path) -> str:
    """The module that runs the command from ``tree`` (``python -m`` it, or import its
    ``main``): found from the tree itself, never by trying an import, which would find this
    checkout's installed package when the other tree has none of that name."""
    return "searchpulse" if (tree / "searchpulse" / "__init__.py").exists() else "collector.cli"


def running_main(tree: Path) -> str:
    """A ``python -c`` program that runs the command of ``tree`` on its own arguments."""
    return f"import sys; from {command_module(tree)} import main; sys.exit(main())"
