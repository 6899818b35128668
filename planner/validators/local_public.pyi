"""Only mypy reads this file: planner.validators.local_public is validators/local_public.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.local_public import *  # noqa: F403
