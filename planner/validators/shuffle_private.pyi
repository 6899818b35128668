"""Only mypy reads this file: planner.validators.shuffle_private is validators/shuffle_private.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.shuffle_private import *  # noqa: F403
