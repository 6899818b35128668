"""Only mypy reads this file: planner.formulas.errors is formulas/settings.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.errors import *  # noqa: F403
