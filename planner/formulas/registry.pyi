"""Only mypy reads this file: planner.formulas.registry is formulas/registry.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.registry import *  # noqa: F403
