"""Only mypy reads this file: planner.validators.repetition is validators/repetition.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.repetition import *  # noqa: F403
