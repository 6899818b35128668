"""Only mypy reads this file: planner.validators.discrete_laplace is validators/discrete_laplace.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.discrete_laplace import *  # noqa: F403
