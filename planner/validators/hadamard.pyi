"""Only mypy reads this file: planner.validators.hadamard is validators/hadamard.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.hadamard import *  # noqa: F403
