"""Only mypy reads this file: planner.formulas.search is formulas/search.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.search import *  # noqa: F403
