"""Only mypy reads this file: planner.validators.stats is validators/stats.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.stats import *  # noqa: F403
