"""Only mypy reads this file: planner.validators.local_private is validators/local_private.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.local_private import *  # noqa: F403
