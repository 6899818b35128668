"""``planner plan --exact``: this very query's minimal group sizes, by simulation.

The search runs the setting's real tester once (no majority vote, so for β < 1/3 it is
direct calibration at β) and bisects on the multiplier C of the order bound until every
instance family's observed error is at most ``operating_error(β)``: the largest error at
which ``planner validate --trials auto`` certifies the plan by its 3,200-trial look with
probability 0.9. So the sizes it prints meet the same promise as the default plan's, and
default ÷ exact measures what the calibrated grid costs (interpolation, safety margin),
not a looser criterion.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.calibration.search import SEARCH_RANGE, exact_search, table_with
from planner.inputs import InputError, Query, beta_text
from planner.plan import Plan, hash_floor_line, plan
from planner.simulation import check_simulation_k, private_coin_twin
from planner.statistics import OPERATING_PASS_PROBABILITY, OPERATING_TRIALS, operating_error
from planner.validators.engine import FamilyOutcome

EXACT_TRIALS = 1000
"""Default trials per family per check of the search."""


@dataclass(frozen=True)
class ExactPlan:
    query: Query
    plan: Plan | None
    """The minimal plan found, or None when no C in the search range passes."""
    multiplier: float | None
    trials: int
    seed: int
    target: float
    """Every family's observed error is at most this (``operating_error(β)``)."""
    worst: FamilyOutcome | None
    """The family with the highest observed error at the plan found."""

    @property
    def confidence(self) -> str:
        return (
            f"every family's observed error ≤ {self.target:.3f} over {self.trials} trials: "
            f"the operating point for β = {beta_text(self.query.beta)} (planner validate --trials "
            f"auto certifies it by {OPERATING_TRIALS:,} trials with probability ≈ "
            f"{OPERATING_PASS_PROBABILITY:.0%})"
        )


def exact_plan(
    query: Query, *, trials: int = EXACT_TRIALS, seed: int = 0, private_coin_too: bool = True
) -> ExactPlan:
    """This query's smallest plan by simulation.

    A public-coin query searches its own protocol and its model's private-coin protocol
    (which simply ignores the coin, as the default plan offers when it needs fewer users)
    and keeps the smaller plan; ``plan.protocol`` says which runs. Without that, a query
    whose default plan runs the private-coin protocol (every public-coin shuffle plan at
    β = 0.1 in the calibrated box) got an "exact" plan larger than its default one.
    ``private_coin_too=False``: the query's own protocol only (a simulated plan's first
    try, within its time budget), as found: the caller weighs a public hash's floor
    (``hash_floor_line``), which with the twin rules the public-coin plan out. A query below
    ``SIMULATION_K_MIN`` raises :class:`InputError`, and so does a mixed pair's query (its
    plan runs one of several protocols: ``planner.api.exact_query`` names the one to search).
    """
    if query.setting.key not in SEARCH_RANGE:
        raise InputError(
            "setting",
            query.setting.key,
            "a protocol's own setting (a mixed pair's plan runs one of several: search its "
            "tester_query, as planner.api.exact_query does)",
        )
    check_simulation_k(query)
    found = _exact_protocol(query, trials, seed)
    private = private_coin_twin(query)
    if private is None or not private_coin_too:
        return found
    if found.plan is not None and hash_floor_line(found.plan.compression, query.beta):
        # one public hash misses a pair it merges more often than β allows (plan.py): not a
        # plan, though the families cannot show it; the private-coin protocol answers
        found = replace(found, plan=None, multiplier=None, worst=None)
    other = _exact_protocol(private, trials, seed)
    if other.plan is None or (
        found.plan is not None and found.plan.total_users <= other.plan.total_users
    ):
        return found
    sized = replace(other.plan, query=replace(query, beta=1 / 3))
    return replace(other, query=query, plan=sized)


def _exact_protocol(query: Query, trials: int, seed: int) -> ExactPlan:
    """The search for the query's own protocol (its setting's tester, no fallback)."""
    target = operating_error(query.beta)
    search = exact_search(query, trials=trials, seed=seed)
    if search.multiplier is None or search.verification is None:
        return ExactPlan(query, None, None, trials, seed, target, None)
    sized = plan(
        replace(query, beta=1 / 3), table_with(query.setting.key, search.multiplier), fallback=False
    )
    worst = max(
        (o for o in search.verification.outcomes if o.applicable), key=lambda o: o.error_rate
    )
    return ExactPlan(query, sized, search.multiplier, trials, seed, target, worst)
