"""Only mypy reads this file: planner.validators.instances is validators/instances.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.instances import *  # noqa: F403
