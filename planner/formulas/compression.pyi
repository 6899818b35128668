"""Only mypy reads this file: planner.formulas.compression is formulas/compression.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from formulas.compression import *  # noqa: F403
