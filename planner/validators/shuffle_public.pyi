"""Only mypy reads this file: planner.validators.shuffle_public is validators/shuffle_public.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.shuffle_public import *  # noqa: F403
