"""The layers hold: nothing under collector/ imports feedback, alerts or dashboards (the
judgment readers live in collector/judgments/, below both), except collector/cli/, the command's
wiring, which sits above every part. An import inside a function counts: the loop issue 27
removed was made of those."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ABOVE_THE_COLLECTOR = ("feedback", "alerts", "dashboards")


def imported(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def collector_modules() -> list[Path]:
    return [path for path in sorted((ROOT / "collector").rglob("*.py"))
            if "cli" not in path.relative_to(ROOT / "collector").parts[:1]]


def test_the_collector_imports_nothing_above_it() -> None:
    modules = collector_modules()
    assert len(modules) > 40  # the walk found the stage folders
    upward = {str(path.relative_to(ROOT)): sorted(name for name in imported(path)
                                                  if name.split(".")[0] in ABOVE_THE_COLLECTOR)
              for path in modules}
    assert {path: names for path, names in upward.items() if names} == {}


def test_the_judgment_package_sits_below_the_stages() -> None:
    """collector/judgments/ reads and checks judgment files for the live scorer, the settings and
    the feedback jobs alike: of the collector it uses only the error classes and the query
    normalization every stage shares."""
    shared = {"collector.errors", "collector.sessions.outcomes"}
    for path in sorted((ROOT / "collector" / "judgments").glob("*.py")):
        project = {name for name in imported(path) if name.split(".")[0] == "collector"}
        assert {name for name in project - shared
                if not name.startswith("collector.judgments")} == set(), path


def test_the_walk_sees_an_upward_import(tmp_path: Path) -> None:
    """The check fails where it should: a lazy import of feedback inside a function."""
    module = tmp_path / "lazy.py"
    module.write_text("def load():\n    from feedback.judging.job import run_import\n")
    assert imported(module) == {"feedback.judging.job"}
