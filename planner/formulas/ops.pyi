"""Only mypy reads this file: planner.formulas.ops is formulas/ops.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.ops import *  # noqa: F403
