"""Only mypy reads this file: planner.validators.mixed_channels is validators/mixed_channels.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.mixed_channels import *  # noqa: F403
