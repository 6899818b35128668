"""Only mypy reads this file: planner.validators.protocol is validators/protocol.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.protocol import *  # noqa: F403
