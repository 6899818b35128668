"""Installed, ``formulas`` and ``validators`` live inside ``planner``: PyPI's packages of
those names install beside it and neither breaks the other (issue 11)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CHECK = """
import importlib.util, sys
import formulas, validators                   # PyPI's
assert hasattr(validators, "email"), validators.__file__
assert hasattr(formulas, "Parser"), formulas.__file__
import planner.formulas.registry, planner.validators.engine   # ours
assert "site-packages" in planner.formulas.registry.__file__
from planner import Query, Setting, plan
assert plan(Query(Setting("central", "private"), 100, 0.1, 1.0, 0.5)).n_users_group1 > 0
"""
OURS = """
import planner.validators.engine, planner.formulas.registry
from planner.cli import main
assert main(["plan", "--model", "local", "-k", "100", "--alpha", "0.5", "--eps1", "1",
             "--eps2", "1", "--json"]) == 0
"""


def test_the_installed_packages_are_the_planner_only() -> None:
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    assert '"planner.formulas" = "formulas"' in text
    assert '"planner.validators" = "validators"' in text
    assert '"formulas*"' not in text and '"validators*"' not in text


@pytest.mark.slow
def test_pypi_formulas_and_validators_install_beside_the_planner(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    source = tmp_path / "source"  # setuptools builds in the source tree: not in ours
    junk = shutil.ignore_patterns(".git", "build", "*.egg-info", ".hypothesis", "__pycache__")
    shutil.copytree(ROOT, source, ignore=junk)
    subprocess.run([*pip, "--no-deps", str(source)], check=True, cwd=tmp_path)
    subprocess.run([*pip, "validators", "formulas"], check=True, cwd=tmp_path)
    subprocess.run([python, "-c", CHECK], check=True, cwd=tmp_path)
    # uninstalling PyPI's validators must leave ours whole (it used to delete __init__.py)
    uninstall = [python, "-m", "pip", "uninstall", "-q", "-y", "validators", "formulas"]
    subprocess.run(uninstall, check=True, cwd=tmp_path)
    subprocess.run([python, "-c", OURS], check=True, cwd=tmp_path)


def test_the_readmes_shown_outputs_are_what_the_commands_print() -> None:
    """Every ```text block starting ``$ planner …`` is re-run (80 columns): a fresh-user
    trial found one that still showed an older refusal line."""
    import subprocess
    import sys

    checked = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "update_readme_outputs.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
