"""Only mypy reads this file: planner.validators.local_hashed is validators/local_hashed.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.local_hashed import *  # noqa: F403
