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


# --- no import circle ------------------------------------------------------------------

PACKAGE_FOLDERS = {
    "planner": ROOT / "planner",
    "planner.formulas": ROOT / "formulas",
    "planner.validators": ROOT / "validators",
}
"""Each installed package and the folder it is read from (pyproject's package-dir)."""


def module_files(folders: dict[str, Path]) -> dict[str, Path]:
    """Every module under ``folders`` (package name → folder) by its dotted name; a
    package's ``__init__.py`` is the package itself."""
    modules: dict[str, Path] = {}
    for package, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([package, *parts])] = path
    return modules


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's edges to the other modules it imports: every import statement (at the
    top, inside functions, under ``TYPE_CHECKING``); ``import a.b`` is an edge to ``a.b``
    (a subpackage's import does not count as its parent's ``__init__``), ``from a import
    b`` to ``a.b`` when that is a module, else to ``a``."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolve against the module's package
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            else:
                continue
            edges.update(target for target in targets if target in modules and target != name)
        graph[name] = edges
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``graph``: its strongly connected components of more than one module
    (Tarjan's algorithm), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(circles)


def test_the_circle_finder_finds_a_planted_two_cycle(tmp_path: Path) -> None:
    """a imports b inside a function, b imports a under TYPE_CHECKING: one circle; c's
    import of a and ``from pkg import sub`` (a subpackage, not pkg's ``__init__``) make
    none."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg.c import g\n", "utf-8")
    (package / "a.py").write_text("def f():\n    from pkg import b\n", "utf-8")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n", "utf-8"
    )
    (package / "c.py").write_text("import pkg.a\nfrom pkg import sub\ndef g(): ...\n", "utf-8")
    (package / "sub" / "__init__.py").write_text("from pkg.sub import d\n", "utf-8")
    (package / "sub" / "d.py").write_text("import numpy\n", "utf-8")
    graph = import_graph(module_files({"pkg": package}))
    assert graph["pkg.c"] == {"pkg.a", "pkg.sub"}
    assert import_circles(graph) == [["pkg.a", "pkg.b"]]


def test_no_module_imports_itself_through_a_circle() -> None:
    """No import circle among planner's, formulas' and validators' modules, lazy imports
    included: each module can be understood (and imported) below the ones that use it."""
    circles = import_circles(import_graph(module_files(PACKAGE_FOLDERS)))
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)
