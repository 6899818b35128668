"""Only mypy reads this file: planner.validators.shuffle_multi_message is
validators/shuffle_multi_message.py.

pyproject.toml installs formulas/ and validators/ inside planner; [tool.mypy] says
why mypy needs these re-exports.
"""

from validators.shuffle_multi_message import *  # noqa: F403
