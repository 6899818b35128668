"""Only mypy reads this file: planner.validators.compression is validators/compression.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.compression import *  # noqa: F403
