"""Only mypy reads this file: planner.formulas.hadamard is formulas/hadamard.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.hadamard import *  # noqa: F403
