"""Only mypy reads this file: planner.formulas.subsampling is formulas/subsampling.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.subsampling import *  # noqa: F403
