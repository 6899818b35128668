"""Only mypy reads this file: planner.validators.threshold is validators/threshold.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.threshold import *  # noqa: F403
