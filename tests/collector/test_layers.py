"""The layers hold: nothing under collector/ imports feedback, alerts, dashboards or the command
(searchpulse/, the wiring above every part; the judgment readers live in collector/judgments/,
below both), with no exception; and the parts of collector/ (its stage folders and its
top-level modules) import each other without a cycle. An import inside a function counts (the
loop issue 27 removed was made of those), so do relative imports and ``importlib.import_module``
of a literal name; an import under ``if TYPE_CHECKING:`` never runs, so it does not."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ABOVE_THE_COLLECTOR = ("feedback", "alerts", "dashboards", "searchpulse")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")[:len(package.split(".")) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported(path: Path, package: str = "") -> set[str]:
    """Every module a file imports when it runs: at its top, inside a function, relative
    (resolved against ``package``), or by ``importlib.import_module``/``__import__`` of a
    literal; not what only a type checker reads."""
    names: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text(), str(path))]
    while pending:
        node = pending.pop()
        if _type_checking(node):
            pending.extend(getattr(node, "orelse", ()))
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(_absolute(node, package))
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id == "__import__"))):
            names.add(node.args[0].value)
        pending.extend(ast.iter_child_nodes(node))
    return names


def _imports(path: Path) -> set[str]:
    name = module_name(path)
    return imported(path, name if path.name == "__init__.py" else name.rpartition(".")[0])


def collector_modules() -> list[Path]:
    return sorted((ROOT / "collector").rglob("*.py"))


def part(module: str) -> str | None:
    """The part of collector/ a module belongs to: its stage folder, or itself at the top."""
    parts = module.split(".")
    if parts[0] != "collector" or len(parts) == 1:
        return None
    return parts[1]


def test_the_collector_imports_nothing_above_it() -> None:
    modules = collector_modules()
    assert len(modules) > 40  # the walk found the stage folders
    upward = {str(path.relative_to(ROOT)): sorted(name for name in _imports(path)
                                                  if name.split(".")[0] in ABOVE_THE_COLLECTOR)
              for path in modules}
    assert {path: names for path, names in upward.items() if names} == {}


def test_the_parts_of_the_collector_import_each_other_without_a_cycle() -> None:
    """Stage folders and top-level modules as nodes: a cycle (sessions ↔ series through a
    shared module, exposition ↔ engine through a type) means a part cannot be read, tested or
    moved without the other."""
    graph: dict[str, set[str]] = {}
    for path in collector_modules():
        source = part(module_name(path))
        if source is None:
            continue
        targets = {target for name in _imports(path)
                   if (target := part(name)) is not None and target != source}
        graph.setdefault(source, set()).update(targets)
    assert {"ingest", "clock", "sessions", "series", "exposition", "store"} <= set(graph)
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"an import cycle between parts of collector/: {error.args[1]}")
    # the record's path reads bottom-up: each stage is below the ones that take its output
    assert (order.index("ingest") < order.index("clock") < order.index("engine")
            and order.index("series") < order.index("sessions") < order.index("engine"))


def test_the_judgment_package_sits_below_the_stages() -> None:
    """collector/judgments/ reads and checks judgment files for the live scorer, the settings and
    the feedback jobs alike: of the collector it uses only the error classes, the query
    normalization and the account of a file that is not text (text_files), which every stage
    shares."""
    shared = {"collector.errors", "collector.outcomes", "collector.text_files"}
    for path in sorted((ROOT / "collector" / "judgments").glob("*.py")):
        project = {name for name in _imports(path) if name.split(".")[0] == "collector"}
        assert {name for name in project - shared
                if not name.startswith("collector.judgments")} == set(), path


def test_the_walk_sees_every_way_to_import(tmp_path: Path) -> None:
    """The checks fail where they should: a lazy import of feedback inside a function, a
    relative import, a module imported by name; and skip what only a type checker reads."""
    module = tmp_path / "lazy.py"
    module.write_text(
        "import importlib\nfrom typing import TYPE_CHECKING\n"
        "from ..sessions import sessionizer\n"
        "if TYPE_CHECKING:\n    from collector.engine import Engine\n"
        "def load():\n    from feedback.judging.job import run_import\n"
        "    return importlib.import_module('dashboards.queries')\n")
    assert imported(module, "collector.judgments") == {
        "importlib", "typing", "collector.sessions", "feedback.judging.job",
        "dashboards.queries"}
    assert part("collector.sessions.sessionizer") == "sessions"
    assert part("collector.engine") == "engine" and part("feedback.candidates") is None
