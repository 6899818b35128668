"""Only mypy reads this file: planner.formulas.repetition is formulas/repetition.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.repetition import *  # noqa: F403
