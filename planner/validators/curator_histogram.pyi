"""Only mypy reads this file: planner.validators.curator_histogram is
validators/curator_histogram.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.curator_histogram import *  # noqa: F403
