"""``planner plan --exact``: this very query's minimal group sizes, by simulation.

The search runs the setting's real tester once (no majority vote, so for β < 1/3 it is
direct calibration at β) and bisects on the multiplier C of the order bound until every
instance family's 95 % Wilson upper bound on the error is at most β.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.calibrate import exact_search, table_with
from planner.inputs import Query
from planner.plan import Plan, plan


@dataclass(frozen=True)
class ExactPlan:
    query: Query
    plan: Plan | None
    """The minimal plan found, or None when no C in the search range passes."""
    multiplier: float | None
    trials: int
    seed: int
    worst_family: str | None
    worst_upper_bound: float | None


def exact_plan(query: Query, *, trials: int = 600, seed: int = 0) -> ExactPlan:
    search = exact_search(query, trials=trials, seed=seed)
    if search.multiplier is None or search.verification is None:
        return ExactPlan(query, None, None, trials, seed, None, None)
    sized = plan(
        replace(query, beta=1 / 3), table_with(query.setting.key, search.multiplier), fallback=False
    )
    worst = max((o for o in search.verification.outcomes if o.applicable), key=lambda o: o.ci_high)
    return ExactPlan(query, sized, search.multiplier, trials, seed, worst.family, worst.ci_high)
