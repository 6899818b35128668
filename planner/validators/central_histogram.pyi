"""Only mypy reads this file: planner.validators.central_histogram is
validators/central_histogram.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.central_histogram import *  # noqa: F403
