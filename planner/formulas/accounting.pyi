"""Only mypy reads this file: planner.formulas.accounting is formulas/accounting.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.accounting import *  # noqa: F403
