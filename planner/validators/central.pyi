"""Only mypy reads this file: planner.validators.central is validators/central.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.central import *  # noqa: F403
