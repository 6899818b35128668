"""Only mypy reads this file: planner.formulas.correlated_noise is
formulas/correlated_noise.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.correlated_noise import *  # noqa: F403
