"""Sample-size planner for private closeness testing under heterogeneous privacy.

The Python API::

    from planner import Query, Setting, plan
    result = plan(Query(Setting("shuffle", "private"), k=1000, alpha=0.1,
                        eps1=1.0, eps2=0.25, delta=1e-6))
    result.n_users_group1, result.n_users_group2
"""

from formulas.settings import Coin, Model, Setting
from planner.inputs import Accounting, InputError, Query
from planner.plan import GroupPlan, Plan, Repetition, RepetitionMethod, plan
from planner.solve import Solution, Unknown, solve
from planner.sweep import Sweep, sweep

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
    "Sweep",
    "Unknown",
    "plan",
    "solve",
    "sweep",
]
