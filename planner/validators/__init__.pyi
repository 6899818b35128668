"""Only mypy reads this file: planner.validators is validators/__init__.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators import *  # noqa: F403
