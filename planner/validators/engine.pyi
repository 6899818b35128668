"""Only mypy reads this file: planner.validators.engine is validators/engine.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.engine import *  # noqa: F403
