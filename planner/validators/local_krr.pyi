"""Only mypy reads this file: planner.validators.local_krr is validators/local_krr.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.local_krr import *  # noqa: F403
