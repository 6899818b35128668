"""Types are checked, not only declared: mypy passes on formulas, validators and planner.

This is how CI runs mypy (`python -m pip install -e '.[test]'`, then `python -m pytest`):
the same command as by hand, `python -m mypy formulas validators planner`, with the
settings in pyproject.toml's [tool.mypy] (a warm run takes seconds: mypy keeps its cache
in .mypy_cache).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("formulas", "validators", "planner")


def _mypy(*extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", *PACKAGES, *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_mypy_passes_on_the_three_packages() -> None:
    result = _mypy()
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_settings_catch_a_str_passed_as_int_and_an_untyped_function(tmp_path: Path) -> None:
    canary = tmp_path / "canary.py"
    canary.write_text(
        "from planner.inputs import check_integer\n"
        "\n"
        "\n"
        "def untyped(k):\n"
        "    return k\n"
        "\n"
        "\n"
        "def typed() -> int:\n"
        '    return check_integer("k", 5, "2")\n',
        encoding="utf-8",
    )
    result = _mypy(str(canary))
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert result.returncode == 1, result.stdout + result.stderr
    assert all("canary.py:" in line for line in errors), errors  # nothing else fails
    assert any(re.search(r":4: error: .*\[no-untyped-def\]", line) for line in errors), errors
    assert any(re.search(r':9: error: .*"str".*"int".*\[arg-type\]', line) for line in errors)


def test_every_module_of_formulas_and_validators_has_its_alias_for_mypy() -> None:
    """planner/formulas/*.pyi and planner/validators/*.pyi name each module of formulas/ and
    validators/ by its installed name (see [tool.mypy]); they hold nothing else."""
    for package in ("formulas", "validators"):
        modules = {path.stem for path in (ROOT / package).glob("*.py")}
        aliases = {path.stem for path in (ROOT / "planner" / package).glob("*.pyi")}
        assert aliases == modules
        assert not list((ROOT / "planner" / package).glob("*.py"))  # Python never imports here
        for stub in (ROOT / "planner" / package).glob("*.pyi"):
            source = package if stub.stem == "__init__" else f"{package}.{stub.stem}"
            assert f"from {source} import *" in stub.read_text(encoding="utf-8")
