"""Solve for one unknown, the statsmodels ``solve_power`` way.

Exactly one of ``n1``, ``n2``, ``alpha``, ``eps2`` is left out (or, for ``planner power``,
β is solved for); the others are fixed and the answer is the best value of the unknown for
which a plan fits the given user counts: the fewest users (n1, n2), the smallest
detectable distance (α), the strongest privacy for group 2 (the smallest ε2) or the
smallest error bound (β; the power is 1 − β). A plan *fits* when it needs at most ``n1``
users in group 1 and at most ``n2`` in group 2. An unknown with no fitting value is
reported as infeasible with the reason, never as a bracket endpoint: the group that binds
and how many users it
lacks at the unknown's easiest value (:class:`Shortfall`).

The plans weighed are every split ``planner plan --allocation fixed-n2`` weighs (the
paper split's family of valid protocols and the default plan's, ``planner.allocation``):
given n2 users in group 2, the plan that needs the fewest in group 1. A group's given
size is a trade-off between the groups, so the answer may run a split other than the
default's (the solution's plan says which, and ``planner validate --allocation fixed-n2
--n2 N`` checks it). With more users in either group every one of those plans still fits,
and with a larger α or ε2 each needs no more, which the searches rely on.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import partial

import numpy as np

from planner.allocation import AllocationRule, allocate, allocated_plan
from planner.constants import ConstantTable, default_constants
from planner.formulas.search import check_deadline, least_passing, least_passing_integer
from planner.inputs import (
    DEFAULT_BETA,
    EPS_MAX,
    EPS_MIN,
    InputError,
    Query,
    check_choice,
    check_integer,
    check_query,
)
from planner.plan import (
    Coverage,
    Plan,
    Split,
    as_central_plan,
    plan,
    spends_delta_by_choice,
    trust_runs,
)

ALPHA_FLOOR = 1e-6
RELATIVE_PRECISION = 1e-9
"""Relative precision of the bisections on each split's own plan."""
SCAN_POINTS = 80
"""Geometric steps over the searched range of α or ε2 (about 1.2× apart for ε2) in the
search over the wider family of splits (``_smallest_satisfying``)."""
WIDE_PRECISION = 1e-7
"""Relative precision of the bisection over the wider family (each step plans a family
of up to 64 protocols); answers are then rounded up to ``SHOWN_DIGITS``."""
NEAR_BELOW = 1e-4
"""How far below the least value found so far the search over the wider family first
looks (within one step): a family that fits there is bisected down to its edge."""
LOOKAHEAD_STEPS = 12
"""Steps (a factor of about 6.5 in all) below the least value found so far that the
search over the wider family tries before it stops (a review: a shuffle family fitting at
ε2 = 3.30 below a gap, where the splits' own plans first fit at 7.92)."""
SHOWN_DIGITS = 6
"""Significant digits of a solved α or ε2: the answer is rounded up to them where its plan
still fits, so the printed value is one that ``planner validate`` reproduces."""
COVERED_SCAN_POINTS = 400
"""Geometric steps from an uncovered answer up to the range's top, looking for a covered one
(0.2 % apart over α ∈ [1e-4, 1])."""


class Unknown(StrEnum):
    N1 = "n1"
    N2 = "n2"
    ALPHA = "alpha"
    EPS2 = "eps2"
    BETA = "beta"
    """The smallest error bound β for the given n1 and n2 (``planner power``: the power
    is 1 − β); never left out of a query (β has a default), so not one of
    :data:`LEFT_OUT`."""


LEFT_OUT = (Unknown.N1, Unknown.N2, Unknown.ALPHA, Unknown.EPS2)
"""The unknowns a solve finds by leaving them out (``planner solve``, batch files)."""
BETA_FLOOR = 1e-12
"""The smallest β a solve for β searches (a majority vote of 421 runs); a fit there is
reported as every β from it on fitting."""
BETA_TOP = 0.5 * (1 - 1e-9)
"""β just below 1/2, the largest a query accepts."""


def left_out(given: dict[str, object]) -> Unknown:
    """The one of n1, n2, alpha, eps2 that ``given`` leaves out (None or absent), or an
    :class:`InputError` naming the ones left out."""
    missing = [unknown.value for unknown in LEFT_OUT if given.get(unknown.value) is None]
    if len(missing) != 1:
        shown = ", ".join(missing) + " left out" if missing else "none left out"
        raise InputError("unknown", shown, "exactly one of n1, n2, alpha, eps2 left out")
    return Unknown(missing[0])


@dataclass(frozen=True)
class Solution:
    """The solved value of the one unknown, the plan there, or why none fits."""

    unknown: Unknown
    value: float | int | None
    """The solved value (an ``int`` for n1, n2, as the JSON shows it); None when
    infeasible."""
    reason: str
    plan: Plan | None
    """The plan at the solved value (what the given groups will actually run)."""
    shortfall: Shortfall | None = None
    """When infeasible for want of users: the group that binds and how many it lacks."""

    @property
    def feasible(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class Shortfall:
    """The group whose given size no fitting plan reaches, at the easiest value of the
    unknown (α = 1, ε2 = 20, β just below 1/2, or the other group's size unbounded)."""

    group: int
    """1 or 2 (the named group)."""
    needed: int
    """The fewest users it needs there (group 1: with the given n2)."""
    given: int

    @property
    def short(self) -> int:
        return self.needed - self.given

    def words(self, where: str) -> str:
        """``group 2 needs at least N users <where>; given G (S short)``."""
        return (
            f"group {self.group} needs at least {self.needed:,} users {where}; given "
            f"{self.given:,} ({self.short:,} short)"
        )


def _least_group2(query: Query, constants: ConstantTable | None) -> int | None:
    """The fewest group-2 users for which some plan fits with any number in group 1 (more
    in group 2 never hurts: a bisection), None when none up to 2^20 times the paper
    split's largest group does."""
    paper = _paper_plan(query, constants)
    most = max(paper.n_users_group1, paper.n_users_group2) * 2**20
    return least_passing_integer(
        lambda size: fitting_plan(query, None, size, constants) is not None, 1, most=most
    )


def shortfall(
    query: Query, n1: int | None, n2: int | None, constants: ConstantTable | None = None
) -> Shortfall | None:
    """Which group binds at ``query`` and how many users it lacks (None: the given sizes
    fit, or no count of users does). ``n1`` None: group 1 unbounded (a solve for n1);
    ``n2`` None: group 2 unbounded (a solve for n2)."""
    if n2 is not None:
        least2 = _least_group2(query, constants)
        if least2 is None:
            return None
        if n2 < least2:
            return Shortfall(2, least2, n2)
        if n1 is None:
            return None
        found = fitting_plan(query, None, n2, constants)
        if found is None or found.n_users_group1 <= n1:
            return None
        return Shortfall(1, found.n_users_group1, n1)
    if n1 is None:
        return None
    paper = _paper_plan(query, constants)
    most = max(paper.n_users_group1, paper.n_users_group2) * 2**20
    found = fitting_plan(query, None, most, constants)  # group 1's floor, n2 unbounded
    if found is None or found.n_users_group1 <= n1:
        return None
    return Shortfall(1, found.n_users_group1, n1)


def _paper_plan(query: Query, constants: ConstantTable | None) -> Plan:
    """The paper split's plan: the family the allocations are built around."""
    return plan(query, constants, split=Split.PAPER)


def _fits(candidate: Plan, n1: float, n2: float) -> bool:
    return candidate.n_users_group1 <= n1 and candidate.n_users_group2 <= n2


def fitting_plan(
    query: Query, n1: int | None, n2: int, constants: ConstantTable | None = None
) -> Plan | None:
    """The plan that n2 users in group 2 run with the fewest in group 1 (``--allocation
    fixed-n2``), when it needs at most ``n1`` (None: any number); None when none fits.

    Where the paper split's plan is outside the covered region, only the default's and
    the homogeneous protocol's own plans are weighed (where calibrated), and else the paper
    split's plan is returned when it fits (an extrapolated plan: :func:`solve` answers at
    the covered region's edge instead).
    """
    check_deadline()  # a solve weighs up to ~100 of these (the service caps its time)
    paper = _paper_plan(query, constants)
    allocation = allocate(paper, AllocationRule.FIXED_N2, n2=n2, constants=constants)
    fewest = allocation.n_users_group1
    if fewest is not None and (n1 is None or fewest <= n1):
        return allocated_plan(paper, allocation, constants)
    covered = paper.coverage in (Coverage.CALIBRATED, Coverage.NONE)
    if not covered and _fits(paper, math.inf if n1 is None else n1, n2):
        return paper
    return None


def _with_value(query: Query, unknown: Unknown, value: float) -> Query:
    """The query with the solved-for α, ε2 or β set to ``value``."""
    if unknown is Unknown.ALPHA:
        return replace(query, alpha=value)
    if unknown is Unknown.BETA:
        return replace(query, beta=value)
    return replace(query, eps2=value)


def _searched_range(unknown: Unknown) -> tuple[float, float]:
    """The range an α, ε2 or β is solved in: the accepted values (α and β from the search
    floor)."""
    if unknown is Unknown.BETA:
        return (BETA_FLOOR, BETA_TOP)
    return (ALPHA_FLOOR, 1.0) if unknown is Unknown.ALPHA else (EPS_MIN, EPS_MAX)


def _bisected(
    accept: Callable[[float], bool],
    low: float,
    high: float,
    precision: float = RELATIVE_PRECISION,
) -> float | None:
    """Smallest x in [low, high] with ``accept(x)``, monotone (false, then true), by
    bisection on log x to relative ``precision``; None when ``high`` is not accepted."""
    if not accept(high):
        return None
    if accept(low):
        return low
    return least_passing(accept, low, high, precision)


def _smallest_satisfying(
    make_plan: Callable[[float], Plan | None],
    low: float,
    high: float,
    known: float | None = None,
    edges: tuple[float, ...] = (),
) -> float | None:
    """The smallest x in [low, high] with a fitting plan (not None), by geometric steps
    (``SCAN_POINTS`` over the range) and bisection on log x between the last step that
    fails and the first that fits: up from ``low``, or with a ``known`` fitting value,
    down from it (``LOOKAHEAD_STEPS`` steps in a row that fail end the search there: a
    few plans, not a scan of the whole range).

    A plan at a smaller α or ε2 also serves a larger one, so the answer is the least
    fitting value, not the edge of a monotone region: the fewest-users plan's sizes can
    move between the groups as α or ε2 grows (at ε2 above ε1 the groups swap roles), so
    whether given sizes fit is not monotone over the whole range (the steps find the
    window that fits; wiggles narrower than a step can be missed). ``edges`` join the
    steps either way: the covered region's top, above which only an extrapolated plan fits
    (the steps went from α = 0.839 to 1, and down from an extrapolated 0.9545 to 0.80,
    past a window at 0.95 that fits).
    """
    step = (high / low) ** (1 / (SCAN_POINTS - 1))

    def fits(x: float) -> bool:
        return make_plan(x) is not None

    if known is not None:
        lowest, probe, misses = known, known, 0
        while probe > low and misses < LOOKAHEAD_STEPS:
            following = max(probe / step, low)
            inside = [edge for edge in edges if following < edge < probe]
            probe = max(inside) if inside else following  # an edge is not stepped over
            if fits(probe):
                lowest, misses = probe, 0
            else:
                misses += 1
        if lowest == known:  # no step below fits; the family may still reach below it
            near = known * (1 - NEAR_BELOW)
            if near <= low or not fits(near):
                return known
            lowest = near
        below = max(lowest / step, low)
        return lowest if below == lowest else least_passing(fits, below, lowest, WIDE_PRECISION)
    steps = [float(v) for v in np.geomspace(low, high, SCAN_POINTS)]
    scan = sorted({*steps, *(edge for edge in edges if low < edge < high)})
    for index, value in enumerate(scan):
        if fits(value):
            if index == 0:
                return value
            return least_passing(fits, scan[index - 1], value, WIDE_PRECISION)
    return None


def _rounded_up(value: float, digits: int = SHOWN_DIGITS) -> float:
    """``value`` rounded up to ``digits`` significant digits, as the float its printed
    form (``:.{digits}g``) reads back as."""
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(value)))
    up = float(f"{math.ceil(value * scale) / scale:.{digits}g}")
    return up if up >= value else float(f"{(math.ceil(value * scale) + 1) / scale:.{digits}g}")


def solve(
    query_template: Query,
    unknown: Unknown,
    n1: object = None,
    n2: object = None,
    constants: ConstantTable | None = None,
    *,
    precision: float = RELATIVE_PRECISION,
) -> Solution:
    """Solve for ``unknown``; the template's value for it is ignored.

    ``query_template`` carries the fixed parameters (for an unknown α or ε2, any valid
    placeholder). ``n1``/``n2`` are the given group sizes (the unknown one may be None;
    integers, or raw values checked here).
    An answer whose plan lies outside the covered region is not given (infeasible, with
    the covered ranges it leaves). ``precision``: the relative precision of a solve for β
    (a bisection: more users never need a larger β).
    """
    check_query(query_template)
    unknown = Unknown(check_choice("unknown", unknown, Unknown))
    if spends_delta_by_choice(query_template):
        return _solve_by_runs(query_template, unknown, n1, n2, constants, precision)
    solution = _solve(query_template, unknown, n1, n2, constants, precision)
    if (
        solution.plan is not None
        and solution.value is not None
        and solution.plan.coverage is Coverage.EXTRAPOLATED
        and unknown in (Unknown.ALPHA, Unknown.EPS2)
    ):
        # Every larger value fits too: the answer is the smallest larger value whose plan
        # is covered (a scan, as coverage is a box).
        top = _searched_range(unknown)[1]

        def query_at(value: float) -> Query:
            return _with_value(query_template, unknown, value)

        def covered(value: float) -> bool:
            return _paper_plan(query_at(value), constants).coverage is not Coverage.EXTRAPOLATED

        # outside on an axis the unknown does not move (k, δ): no value of it is covered
        movable = {"alpha"} if unknown is Unknown.ALPHA else {"eps_strong", "eps_ratio", "eps_weak"}
        reachable = set(solution.plan.coverage_axes) <= movable
        scan = [float(v) for v in np.geomspace(solution.value, top, COVERED_SCAN_POINTS)]
        for below, value in itertools.pairwise(scan if reachable else []):
            if covered(value):  # the covered edge lies in (below, value]: bisect to it
                edge = least_passing(covered, below, value, RELATIVE_PRECISION)
                at_edge = fitting_plan(
                    query_at(edge),
                    check_integer("n1", n1, 1),
                    check_integer("n2", n2, 1),
                    constants,
                )
                if at_edge is not None:
                    solution = Solution(
                        unknown,
                        edge,
                        f"{solution.reason}, within the covered region (a smaller value "
                        "would need an extrapolated plan)",
                        at_edge,
                    )
                break
    if (
        solution.value is not None
        and solution.plan is not None
        and solution.plan.coverage is not Coverage.EXTRAPOLATED
        and unknown in (Unknown.ALPHA, Unknown.EPS2, Unknown.BETA)
        and solution.value != DEFAULT_BETA  # β = 1/3 exactly: shown as 1/3
    ):
        # the value as printed (SHOWN_DIGITS), rounded up where its plan still fits: what
        # `planner validate` is given is then what was solved
        shown = _rounded_up(solution.value)
        at_shown = None
        if shown != solution.value and shown <= _searched_range(unknown)[1]:
            at_shown = fitting_plan(
                _with_value(query_template, unknown, shown),
                check_integer("n1", n1, 1),
                check_integer("n2", n2, 1),
                constants,
            )
        if at_shown is not None and at_shown.coverage is not Coverage.EXTRAPOLATED:
            solution = replace(solution, value=shown, plan=at_shown)
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
    return solution


def _solve(
    query_template: Query,
    unknown: Unknown,
    n1: object,
    n2: object,
    constants: ConstantTable | None,
    precision: float = RELATIVE_PRECISION,
) -> Solution:
    n1_ = None if n1 is None else check_integer("n1", n1, 1)
    n2_ = None if n2 is None else check_integer("n2", n2, 1)
    if unknown is Unknown.N1:
        if n2_ is None:
            raise InputError("n2", None, "given when solving for n1")
        found = fitting_plan(query_template, None, n2_, constants)
        if found is None:
            lacking = shortfall(query_template, None, n2_, constants)
            return Solution(
                unknown,
                None,
                (
                    f"n2 = {n2_:,} is below the group-2 users every split needs at these α, "
                    "ε1, ε2; no n1 compensates there"
                    + ("" if lacking is None else f"; {lacking.words('whatever n1')}")
                ),
                None,
                lacking,
            )
        return Solution(
            unknown, int(found.n_users_group1), "fewest group-1 users with these n2", found
        )
    if unknown is Unknown.N2:
        if n1_ is None:
            raise InputError("n1", None, "given when solving for n2")
        given_n1 = n1_
        # a plan that fits in some n2 fits in every larger one: the fewest n2 is found by
        # doubling, then bisection (up to the largest group any split of the query needs)
        paper = _paper_plan(query_template, constants)
        most = max(paper.n_users_group1, paper.n_users_group2) * 2**20
        least = least_passing_integer(
            lambda size: fitting_plan(query_template, given_n1, size, constants) is not None,
            1,
            most=most,
        )
        found = None if least is None else fitting_plan(query_template, given_n1, least, constants)
        if least is None or found is None:
            lacking = shortfall(query_template, given_n1, None, constants)
            return Solution(
                unknown,
                None,
                (
                    f"n1 = {given_n1:,} is below the group-1 users every split needs at these "
                    "α, ε1, ε2; no n2 compensates there"
                    + ("" if lacking is None else f"; {lacking.words('whatever n2')}")
                ),
                None,
                lacking,
            )
        return Solution(unknown, int(least), "fewest group-2 users with these n1", found)

    if n1_ is None or n2_ is None:
        missing = "n1" if n1_ is None else "n2"
        raise InputError(missing, None, f"given when solving for {unknown.value}")
    given = (n1_, n2_)
    low, high = _searched_range(unknown)

    def query_at(value: float) -> Query:
        return _with_value(query_template, unknown, value)

    def fitting(value: float) -> Plan | None:
        return fitting_plan(query_at(value), *given, constants)

    if unknown is Unknown.BETA:
        # more users never need a larger β (each split's sizes fall as β grows; tested), so
        # the smallest fitting β is a bisection's; above 1/3 no plan is smaller than at 1/3
        bisected = _bisected(lambda value: fitting(value) is not None, low, high, precision)
        if bisected is None:
            return _infeasible(query_at(high), unknown, given, constants)
        smallest: float = bisected
        if smallest > DEFAULT_BETA * (1 - 1e-6) and fitting(DEFAULT_BETA) is not None:
            smallest = DEFAULT_BETA  # the bisection's last steps round about the 1/3 plan
        found = fitting(smallest)
        assert found is not None
        reason = (
            "smallest error bound β (worst-family error of both kinds; power 1 − β)"
            if smallest > BETA_FLOOR
            else f"every β ≥ {BETA_FLOOR:g} (the search floor) fits"
        )
        return Solution(unknown, smallest, reason, found)

    def split_fits(split: Split, value: float, group2_only: bool = False) -> bool:
        made = plan(query_at(value), constants, split=split)
        return made.n_users_group2 <= n2_ and (group2_only or made.n_users_group1 <= n1_)

    # Each split's own plan, exactly: each group's need falls as α grows, and group 2's
    # as ε2 grows (property-tested), so the least value at which a split fits is a
    # bisection's; group 1's need does not fall with ε2 (in the shuffle model a stronger
    # group 2 lets group 1 give less), so it is checked where group 2 first fits. The
    # wider family of splits (``fitting_plan``) by a scan; the answer is the least.
    answers: list[float] = []
    for split in (Split.PAPER, Split.FEWEST, Split.HOMOGENEOUS):
        exact = _bisected(
            partial(split_fits, split, group2_only=unknown is Unknown.EPS2), low, high
        )
        # (a split's own plan outside the covered region is no answer: fitting_plan
        # weighs the own plans only where they are calibrated)
        if exact is not None and split_fits(split, exact) and fitting(exact) is not None:
            answers.append(exact)
    table = constants or default_constants()
    key = query_template.setting.key
    # a mixed pair has no constant of its own (its runs' plans are each covered)
    covered = table.for_setting(key).covered if table.has_setting(key) else {}
    edges = (covered["alpha"][1],) if unknown is Unknown.ALPHA and "alpha" in covered else ()
    wide = _smallest_satisfying(fitting, low, high, min(answers, default=None), edges)
    if wide is not None:
        answers.append(wide)
    if not answers:
        return _infeasible(query_at(high), unknown, given, constants)
    value = min(answers)
    solved = fitting(value)
    # ε2 = ε1 is where the groups swap the paper's roles; rounding makes the counts jump
    # there, and bisection can only approach that threshold from above: try it exactly.
    if unknown is Unknown.EPS2 and abs(value - query_template.eps1) <= 1e-6 * value:
        at_swap = fitting(query_template.eps1)
        if at_swap is not None:
            value, solved = query_template.eps1, at_swap
    assert solved is not None  # every answer was checked with fitting_plan
    if unknown is Unknown.ALPHA:
        reason = (
            "smallest detectable total-variation distance α"
            if value > ALPHA_FLOOR
            else f"every α ≥ {ALPHA_FLOOR:g} (the search floor) fits"
        )
    else:
        reason = (
            "smallest ε2 (strongest privacy for group 2)"
            if value > EPS_MIN
            else f"the smallest ε2 the planner accepts ({EPS_MIN:g}) already fits"
        )
    return Solution(unknown, value, reason, solved)


def _solve_by_runs(
    query_template: Query,
    unknown: Unknown,
    n1: object,
    n2: object,
    constants: ConstantTable | None,
    precision: float,
) -> Solution:
    """A central query that gives δ (``planner.plan.trust_runs``): each run solved as its
    own query (the pure ε-DP plan, each shuffle protocol its curator may run), the least
    value that fits kept (the pure run's on a tie, and its answer where none fits), its
    plan named as the query asks with the line saying which privacy it gives. Every value
    solved for is better smaller (α, ε2, β, a group's size). A shuffle run is solved only
    where its plans fit the given sizes just below the pure run's answer (for α, ε2 and β,
    where more of each never needs more users: a run that does not fit there fits nowhere
    below): its solve costs several times the pure one's."""
    pure, *others = trust_runs(query_template)
    solutions = [solve(pure, unknown, n1, n2, constants, precision=precision)]
    bound = solutions[0].value
    for run in others:
        if bound is not None and unknown in (Unknown.ALPHA, Unknown.EPS2, Unknown.BETA):
            below = _with_value(run, unknown, float(bound) * (1 - 1e-6))
            sizes = check_integer("n1", n1, 1), check_integer("n2", n2, 1)  # both given
            if fitting_plan(below, *sizes, constants) is None:
                continue
        solutions.append(solve(run, unknown, n1, n2, constants, precision=precision))
    feasible = [solution for solution in solutions if solution.feasible]
    best = min(feasible, key=lambda solution: float(solution.value or 0)) if feasible else None
    if best is None:
        return solutions[0]
    assert best.plan is not None  # a feasible answer has its plan
    return replace(best, plan=as_central_plan(best.plan, query_template))


def _infeasible(
    easiest: Query, unknown: Unknown, given: tuple[int, int], constants: ConstantTable | None
) -> Solution:
    """No value of an α, ε2 or β fits ``given``: the binding group and what it lacks at the
    easiest value (``easiest``: the query there)."""
    where = {
        Unknown.ALPHA: f"even at α = {easiest.alpha:g}",
        Unknown.EPS2: f"even at ε2 = {easiest.eps2:g}",
        Unknown.BETA: "even at β just below 1/2 (no plan is smaller than at β = 1/3)",
    }[unknown]
    lacking = shortfall(easiest, *given, constants)
    if lacking is None:  # no count of users fits there (e.g. outside the covered region)
        worst = _paper_plan(easiest, constants)
        reason = (
            f"{where.removeprefix('even at ')} needs more users than given (the paper's split: "
            f"n1 = {worst.n_users_group1:,}, n2 = {worst.n_users_group2:,})"
        )
        return Solution(unknown, None, "even " + reason, None)
    if lacking.group == 1:
        where = f"with n2 = {given[1]:,}, {where}"
    return Solution(unknown, None, lacking.words(where), None, lacking)
