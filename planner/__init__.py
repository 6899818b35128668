"""Sample-size planner for private closeness testing under heterogeneous privacy.

The Python API::

    from planner import Query, Setting, plan
    result = plan(Query(Setting("shuffle", "private"), k=1000, alpha=0.1,
                        eps1=1.0, eps2=0.25, delta=1e-6))
    result.n_users_group1, result.n_users_group2
    paper = plan(..., split=Split.PAPER)  # the paper's split instead of the fewest users

``plan`` answers as ``planner plan`` does: outside the covered region it simulates the
query's tester within ``budget_seconds`` (default 30) or raises ``NotCoveredError`` (an
``InputError`` naming the parameter and the covered range). ``planner.plan.plan`` is the
raw computation, whose plan there is ``extrapolated``: backed by no tester.
"""

from planner.startup import starting_command_line as _starting_command_line

_starting_command_line()  # Ctrl-C during the imports below: "aborted", exit 130

from pathlib import Path as _Path  # noqa: E402

# formulas/ and validators/ sit beside planner/ in the repository and are installed inside
# it (pyproject's package-dir) as planner.formulas and planner.validators, so they never
# collide with the PyPI packages of those names. In a checkout, look for them beside it.
_ROOT = _Path(__file__).resolve().parent.parent
if (_ROOT / "formulas" / "registry.py").is_file() and (_ROOT / "pyproject.toml").is_file():
    __path__.append(str(_ROOT))  # the package's own search path

from planner.coverage import covered_plan as plan  # noqa: E402  (as planner plan answers)
from planner.formulas.settings import Coin, Model, Setting  # noqa: E402
from planner.inputs import Accounting, InputError, Query  # noqa: E402
from planner.plan import GroupPlan, Plan, Repetition, RepetitionMethod, Split  # noqa: E402
from planner.solve import Solution, Unknown, solve  # noqa: E402
from planner.sweep import Sweep, sweep  # noqa: E402

__all__ = [
    "Accounting",
    "Coin",
    "GroupPlan",
    "InputError",
    "Model",
    "Plan",
    "Query",
    "Repetition",
    "RepetitionMethod",
    "Setting",
    "Solution",
    "Split",
    "Sweep",
    "Unknown",
    "plan",
    "solve",
    "sweep",
]
