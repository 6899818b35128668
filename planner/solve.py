"""Solve for one unknown, the statsmodels ``solve_power`` way.

Exactly one of ``n1``, ``n2``, ``alpha``, ``eps2`` is left out; the others are fixed and
the answer is the best value of the unknown for which the plan fits the given user
counts: the fewest users (n1, n2), the smallest detectable distance (α) or the
strongest privacy for group 2 (the smallest ε2). A plan *fits* when it needs at most
``n1`` users in group 1 and at most ``n2`` in group 2. An unknown with no fitting value
is reported as infeasible with the reason, never as a bracket endpoint.

Plans here keep the paper's split (``Split.PAPER``): given group sizes are a trade-off
between the groups, and under that split each group's need falls as its own budget or α
grows, which the bisections rely on. The default split (the fewest users in all) may move
users from one group to the other as a parameter changes.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np

from planner.constants import ConstantTable
from planner.formulas.search import least_passing
from planner.inputs import (
    EPS_MAX,
    EPS_MIN,
    InputError,
    Query,
    check_choice,
    check_integer,
    check_query,
)
from planner.plan import Coverage, Plan, Split, plan

OTHER_SPLITS = (
    " (solve keeps the paper's split; planner plan --allocation cost or fixed-n2 weighs "
    "other splits between the groups)"
)
"""Ends every infeasible answer's reason."""
ALPHA_FLOOR = 1e-6
RELATIVE_PRECISION = 1e-9
COVERED_SCAN_POINTS = 400
"""Geometric steps from an uncovered answer up to the range's top, looking for a covered one
(0.2 % apart over α ∈ [1e-4, 1])."""


class Unknown(StrEnum):
    N1 = "n1"
    N2 = "n2"
    ALPHA = "alpha"
    EPS2 = "eps2"


@dataclass(frozen=True)
class Solution:
    unknown: Unknown
    value: float | None
    """The solved value (an integer for n1, n2); None when infeasible."""
    reason: str
    plan: Plan | None
    """The plan at the solved value (what the given groups will actually run)."""

    @property
    def feasible(self) -> bool:
        return self.value is not None


def _paper_plan(query: Query, constants: ConstantTable | None) -> Plan:
    """Every plan here: the paper's split (module docstring)."""
    return plan(query, constants, split=Split.PAPER)


def _fits(candidate: Plan, n1: int, n2: int) -> bool:
    return candidate.n_users_group1 <= n1 and candidate.n_users_group2 <= n2


def _smallest_satisfying(
    make_plan: Callable[[float], Plan], accept: Callable[[Plan], bool], low: float, high: float
) -> float | None:
    """Smallest x in [low, high] whose plan is accepted, by bisection on log x.

    ``accept`` must be monotone in x (false, then true): plans need fewer users as α
    grows, and group 2 needs fewer as ε2 grows (property-tested).
    """
    if not accept(make_plan(high)):
        return None
    if accept(make_plan(low)):
        return low
    return least_passing(lambda x: accept(make_plan(x)), low, high, RELATIVE_PRECISION)


def solve(
    query_template: Query,
    unknown: Unknown,
    n1: object = None,
    n2: object = None,
    constants: ConstantTable | None = None,
) -> Solution:
    """Solve for ``unknown``; the template's value for it is ignored.

    ``query_template`` carries the fixed parameters (for an unknown α or ε2, any valid
    placeholder). ``n1``/``n2`` are the given group sizes (the unknown one may be None;
    integers, or raw values checked here).
    An answer whose plan lies outside the covered region is not given (infeasible, with
    the covered ranges it leaves).
    """
    check_query(query_template)
    unknown = Unknown(check_choice("unknown", unknown, Unknown))
    solution = _solve(query_template, unknown, n1, n2, constants)
    if (
        solution.plan is not None
        and solution.value is not None
        and solution.plan.coverage is Coverage.EXTRAPOLATED
        and unknown in (Unknown.ALPHA, Unknown.EPS2)
    ):
        # Both needs fall as α or ε2 grow, so every larger value fits too: the answer is
        # the smallest larger value whose plan is covered (a scan, as coverage is a box).
        field, top = ("alpha", 1.0) if unknown is Unknown.ALPHA else ("eps2", EPS_MAX)

        def covered_at(value: float) -> Plan:
            if field == "alpha":
                return _paper_plan(replace(query_template, alpha=value), constants)
            return _paper_plan(replace(query_template, eps2=value), constants)

        def covered(value: float) -> bool:
            return covered_at(value).coverage is not Coverage.EXTRAPOLATED

        scan = [float(v) for v in np.geomspace(solution.value, top, COVERED_SCAN_POINTS)]
        for below, value in itertools.pairwise(scan):
            if covered(value):  # the covered edge lies in (below, value]: bisect to it
                edge = least_passing(covered, below, value, RELATIVE_PRECISION)
                solution = Solution(
                    unknown,
                    edge,
                    f"{solution.reason}, within the covered region (a smaller value would "
                    "need an extrapolated plan)",
                    covered_at(edge),
                )
                break
    if solution.plan is not None and solution.plan.coverage is Coverage.EXTRAPOLATED:
        return Solution(
            unknown,
            None,
            (
                f"the answer ({unknown.value} ≈ {solution.value:.6g}) lies outside the covered "
                f"region: {'; '.join(solution.plan.coverage_gaps)} (planner plan simulates a "
                "given query there)"
            ),
            None,
        )
    if not solution.feasible:  # other splits may fit: say where to look
        solution = replace(solution, reason=f"{solution.reason}{OTHER_SPLITS}")
    return solution


def _solve(
    query_template: Query,
    unknown: Unknown,
    n1: object,
    n2: object,
    constants: ConstantTable | None,
) -> Solution:
    n1_ = None if n1 is None else check_integer("n1", n1, 1)
    n2_ = None if n2 is None else check_integer("n2", n2, 1)
    if unknown in (Unknown.N1, Unknown.N2):
        base = _paper_plan(query_template, constants)
        given_name, given, needed = (
            ("n2", n2_, base.n_users_group2)
            if unknown is Unknown.N1
            else ("n1", n1_, base.n_users_group1)
        )
        if given is None:
            raise InputError(given_name, None, "given when solving for " + unknown.value)
        if given < needed:
            return Solution(
                unknown,
                None,
                (
                    f"{given_name} = {given:,} is below the {needed:,} users that group needs at "
                    f"these α, ε1, ε2 under the paper's split; no {unknown.value} compensates there"
                ),
                None,
            )
        users = base.n_users_group1 if unknown is Unknown.N1 else base.n_users_group2
        return Solution(unknown, float(users), "fewest users for this group", base)

    if n1_ is None or n2_ is None:
        missing = "n1" if n1_ is None else "n2"
        raise InputError(missing, None, f"given when solving for {unknown.value}")
    if unknown is Unknown.ALPHA:

        def plan_at(alpha: float) -> Plan:
            return _paper_plan(replace(query_template, alpha=alpha), constants)

        value = _smallest_satisfying(plan_at, lambda p: _fits(p, n1_, n2_), ALPHA_FLOOR, 1.0)
        if value is None:
            worst = plan_at(1.0)
            return Solution(
                unknown,
                None,
                (f"even α = 1 needs n1 = {worst.n_users_group1:,}, n2 = {worst.n_users_group2:,}"),
                None,
            )
        reason = (
            "smallest detectable total-variation distance α"
            if value > ALPHA_FLOOR
            else f"every α ≥ {ALPHA_FLOOR:g} (the search floor) fits"
        )
        return Solution(unknown, value, reason, plan_at(value))

    def plan_with(eps2: float) -> Plan:
        return _paper_plan(replace(query_template, eps2=eps2), constants)

    # Group 2's need falls as ε2 grows; group 1's need does not fall (in the shuffle
    # model it grows: a larger group 2 helps group 1). So the smallest ε2 that group 2
    # affords is also the best point for group 1: check group 1 there.
    value = _smallest_satisfying(plan_with, lambda p: p.n_users_group2 <= n2_, EPS_MIN, EPS_MAX)
    if value is None:
        return Solution(
            unknown,
            None,
            (f"even ε2 = {EPS_MAX:g} needs n2 = {plan_with(EPS_MAX).n_users_group2:,} users"),
            None,
        )
    solved = plan_with(value)
    # ε2 = ε1 is where the groups swap the paper's roles; rounding makes the counts jump
    # there, and bisection can only approach that threshold from above: try it exactly.
    if abs(value - query_template.eps1) <= 1e-6 * value:
        at_swap = plan_with(query_template.eps1)
        if _fits(at_swap, n1_, n2_):
            value, solved = query_template.eps1, at_swap
    if solved.n_users_group1 > n1_:
        return Solution(
            unknown,
            None,
            (
                f"at the smallest ε2 = {value:.6g} that n2 = {n2_:,} affords, group 1 needs "
                f"{solved.n_users_group1:,} > n1 = {n1_:,} users"
            ),
            None,
        )
    reason = (
        "smallest ε2 (strongest privacy for group 2)"
        if value > EPS_MIN
        else f"the smallest ε2 the planner accepts ({EPS_MIN:g}) already fits"
    )
    return Solution(unknown, value, reason, solved)
