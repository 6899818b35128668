"""Only mypy reads this file: planner.formulas.poisson is formulas/poisson.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.poisson import *  # noqa: F403
