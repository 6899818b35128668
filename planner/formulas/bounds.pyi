"""Only mypy reads this file: planner.formulas.bounds is formulas/bounds.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.bounds import *  # noqa: F403
