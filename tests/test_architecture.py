"""docs/architecture.md's module maps are true: every module it maps exists, and every module of
the product is mapped — the collector's and the command's by path in their tables, those of
alerts/, dashboards/ and feedback/ by name in their folder's row. A module added, moved or
removed without its map fails here, so a reader's one hop from the map always lands."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
TICKED = re.compile(r"`([^`\s]+)`")


def _section(title: str) -> str:
    start = DOC.index(f"\n## {title}")
    end = DOC.find("\n## ", start + 1)
    return DOC[start:end if end != -1 else len(DOC)]


def _first_cells(section: str) -> list[str]:
    """The first cell of every table row of the section but its header and rule."""
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [row.split("|")[1] for row in rows]


def _modules(package: str) -> set[str]:
    """The package's modules, relative to it: every .py file but an ``__init__.py`` that only
    marks a package (one with code is a module of its own)."""
    base = ROOT / package
    return {str(path.relative_to(base)) for path in base.rglob("*.py")
            if "__pycache__" not in path.parts
            and (path.name != "__init__.py" or _has_code(path))}


def _has_code(path: Path) -> bool:
    text = re.sub(r'^(""".*?"""|\'\'\'.*?\'\'\')', "", path.read_text(encoding="utf-8").strip(),
                  flags=re.S)
    return any(line.strip() and not line.startswith(("#", "from __future__"))
               for line in text.splitlines())


def test_every_collector_module_is_mapped_and_every_mapped_one_exists() -> None:
    mapped = {name for cell in _first_cells(_section("Module map (`collector/`)"))
              for name in TICKED.findall(cell) if name.endswith(".py")}
    assert len(mapped) > 80  # the table was found
    assert sorted(mapped - _modules("collector")) == []  # mapped, gone
    assert sorted(_modules("collector") - mapped) == []  # there, unmapped


def test_every_module_of_the_command_is_mapped_and_exists() -> None:
    mapped = {name.removeprefix("searchpulse/")
              for cell in _first_cells(_section("Around the collector"))
              for name in TICKED.findall(cell)
              if name.startswith("searchpulse/") and name.endswith(".py")}
    ours = _modules("searchpulse") - {"__main__.py"}  # named in __init__.py's row
    assert sorted(mapped - ours) == [] and sorted(ours - mapped) == []


def test_every_module_of_alerts_dashboards_and_feedback_is_named_in_its_folders_row() -> None:
    rows = {row.split("|")[1].strip().strip("`"): row for row in
            _section("Around the collector").splitlines() if row.startswith("| `")}
    for folder in ("alerts/", "dashboards/", "feedback/"):
        named = set(TICKED.findall(rows[folder]))
        files = {Path(module).name for module in _modules(folder.rstrip("/"))}
        named_files = {Path(name).name for name in named
                       if name.endswith(".py") and not name.startswith("collector/")}
        assert sorted(files - named_files) == [], folder  # there, unnamed
        assert sorted(named_files - files) == [], folder  # named, gone
