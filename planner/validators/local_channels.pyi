"""Only mypy reads this file: planner.validators.local_channels is validators/local_channels.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.local_channels import *  # noqa: F403
