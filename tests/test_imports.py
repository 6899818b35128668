"""The rooms' one-way imports (docs/architecture.md), read from the source with ``ast``.

Every import counts, also those inside functions (the CLI imports lazily for its cold
start), so a rule cannot be dodged by moving an import into a command.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FRONT_ENDS = [
    *sorted((ROOT / "planner" / "cli").glob("*.py")),
    ROOT / "planner" / "__main__.py",
    *sorted((ROOT / "planner" / "service").glob("*.py")),
]
"""The CLI and the HTTP service: they reach the mathematics through planner.api."""
CORE = sorted((ROOT / "planner").glob("*.py"))
"""The typed planner (front ends excluded below)."""


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, dotted and absolute (``from a import b`` counts as
    both ``a`` and ``a.b``: ``b`` may be a module)."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    package = "planner" if path.parent.name == "planner" else f"planner.{path.parent.name}"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the file's package
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def offending(path: Path, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        name
        for name in imported_modules(path)
        if any(name == prefix or name.startswith(prefix + ".") for prefix in forbidden)
    )


def test_imported_modules_sees_every_form(tmp_path: Path) -> None:
    """The parser itself: plain, from-, aliased, nested and relative imports are all seen."""
    folder = tmp_path / "service"
    folder.mkdir()
    source = folder / "example.py"
    source.write_text(
        "import planner.formulas.bounds as b\n"
        "def f():\n"
        "    from planner import validators\n"
        "    from ..formulas import settings\n",
        "utf-8",
    )
    assert offending(source, ("planner.formulas", "planner.validators")) == [
        "planner.formulas",
        "planner.formulas.bounds",
        "planner.formulas.settings",
        "planner.validators",
    ]


@pytest.mark.parametrize(
    "path", FRONT_ENDS, ids=lambda path: path.relative_to(ROOT / "planner").as_posix()
)
def test_front_ends_import_nothing_from_formulas_or_validators(path: Path) -> None:
    forbidden = ("planner.formulas", "planner.validators", "formulas", "validators")
    assert offending(path, forbidden) == []


@pytest.mark.parametrize(
    "path",
    [path for path in CORE if path.name != "__main__.py"],
    ids=lambda path: path.name,
)
def test_the_planner_never_imports_its_front_ends(path: Path) -> None:
    assert offending(path, ("planner.cli", "planner.service")) == []


@pytest.mark.parametrize(
    ("folder", "allowed"),
    [
        ("formulas", ("planner.formulas",)),
        ("validators", ("planner.formulas", "planner.validators")),
    ],
)
def test_formulas_and_validators_import_only_downwards(
    folder: str, allowed: tuple[str, ...]
) -> None:
    for path in sorted((ROOT / folder).glob("*.py")):
        project = {
            name
            for name in imported_modules(path)
            if name.split(".")[0] in ("planner", "formulas", "validators")
        }
        wrong = {
            name
            for name in project
            if not any(name == prefix or name.startswith(prefix + ".") for prefix in allowed)
        }
        assert not wrong, f"{path.name} imports {sorted(wrong)}"
