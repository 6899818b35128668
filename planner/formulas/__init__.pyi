"""Only mypy reads this file: planner.formulas is formulas/__init__.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas import *  # noqa: F403
