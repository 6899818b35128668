"""Nothing unverified is printed as a plan: inside the covered region, or simulated, or refused.

A calibrated plan is backed by evidence only where its setting's constants were fitted and
then validated on fresh random points (``SettingConstant.covered``). Outside that region
the calibrated constant would be carried past its evidence (``Coverage.EXTRAPOLATED``). A
query there is sized by simulating the real tester at this very query — the ``--exact``
search, one run of the tester held to the operating point ``operating_error(β)`` — when that
fits the stated time budget and k is at least ``SIMULATION_K_MIN``, and refused otherwise,
with one line naming the parameter and its covered range.
"""

from __future__ import annotations

import math
from dataclasses import replace

from planner.constants import ConstantSource, ConstantTable, default_constants
from planner.formulas.repetition import PER_RUN_ERROR, majority_vote_runs
from planner.inputs import InputError, Query, check_number, check_query
from planner.plan import (
    Coverage,
    Plan,
    Repetition,
    RepetitionMethod,
    Split,
    at_capped_delta,
    central_delta_plan,
    covered_at_query,
    delta_capped,
    hash_floor_line,
    mixed_plan,
    plan,
    plan_on_domain,
    spends_delta_by_choice,
    stated_messages,
    trust_runs,
)
from planner.protocols import protocol_for
from planner.simulation import SIMULATION_K_MIN, private_coin_twin

SIMULATION_BUDGET_SECONDS = 30.0
"""Default time a plan outside the covered region may spend simulating its own query."""
SIMULATION_BUDGET_MAX = 3600.0
"""The largest ``--simulation-budget`` a plan takes (seconds)."""
SIMULATED_CELLS_PER_SECOND = 2e6
"""Fast-path throughput assumed for the estimate (trial × bin cells per second, one core;
measured 2–5 × 10⁶ on this project's 2-core machine: the estimate errs long)."""
SEARCH_CHECKS = 12
"""Checks of the search's bisection (its range and tolerance give 11; one to spare)."""


class NotCoveredError(InputError):
    """A query outside the covered region whose simulation does not fit the budget."""

    def __init__(self, query: Query, gaps: tuple[str, ...], reason: str) -> None:
        parameter = gaps[0].split(" ", 1)[0] if gaps else "query"
        super().__init__(parameter, None, "inside the covered region")
        self.gaps, self.reason = gaps, reason
        self.args = (f"not covered for {query.setting.key}: {'; '.join(gaps)}; {reason}",)


def simulation_seconds(query: Query, trials: int) -> float:
    """A generous estimate of the ``--exact`` search's time for this query."""
    from planner.validators.instances import FAMILIES

    if query.setting.is_mixed or spends_delta_by_choice(query):
        query = trust_runs(query)[0]  # what it simulates: the less trusted or pure ε-DP run
    bins = protocol_for(query.setting).simulated_bins(query.k)
    cells = SEARCH_CHECKS * len(FAMILIES) * trials * float(bins)
    return cells / SIMULATED_CELLS_PER_SECOND


def seconds_text(seconds: float) -> str:
    """Seconds of simulation as a line shows them: whole, rounded up (at least 1), so that
    a figure shown at or below a budget is within it (rounded to nearest, 30.3 s had read
    "about 30 s, above the 30 s budget", and the web page offered a job the service
    refuses)."""
    return f"{max(1, math.ceil(seconds)):,}"


def covered_plan(
    query: Query,
    constants: ConstantTable | None = None,
    *,
    budget_seconds: float = SIMULATION_BUDGET_SECONDS,
    trials: int = 1000,
    seed: int = 0,
    split: Split = Split.FEWEST,
) -> Plan:
    """The plan, with ``coverage`` calibrated or simulated; raises :class:`NotCoveredError`.

    A plan from the ``order`` or ``proof`` constants (asked for by name) is returned as it
    is: it makes no claim (``Coverage.NONE``). ``split``: ``plan``'s (a simulated plan is
    sized at the query itself, where both rules agree). Each group's messages per user are
    stated as the query's models count them (``planner.plan.stated_messages``).
    """
    made = _covered_plan(
        query, constants, budget_seconds=budget_seconds, trials=trials, seed=seed, split=split
    )
    return stated_messages(made, query)


def _covered_plan(
    query: Query,
    constants: ConstantTable | None,
    *,
    budget_seconds: float,
    trials: int,
    seed: int,
    split: Split,
) -> Plan:
    """:func:`covered_plan`'s body (its messages not yet stated)."""
    check_query(query)
    if query.setting.is_mixed:  # each run covered as its own setting's; mixed ones calibrated
        table = constants or default_constants()

        def covered_run(run: Query) -> Plan:
            if run.setting.is_mixed:
                return plan(run, table, split=split)
            return covered_plan(
                run, table, budget_seconds=budget_seconds, trials=trials, seed=seed, split=split
            )

        try:
            return mixed_plan(query, table, covered_run)
        except NotCoveredError as error:  # named as asked, not as the run that refused
            raise NotCoveredError(query, error.gaps, error.reason) from None
    if spends_delta_by_choice(query):  # the pure ε-DP run covered as ever; a shuffle run
        table = constants or default_constants()  # only where calibrated

        def central_run(run: Query) -> Plan:
            if run.setting.needs_delta:
                return plan(run, table, split=split)
            return covered_plan(
                run, table, budget_seconds=budget_seconds, trials=trials, seed=seed, split=split
            )

        return central_delta_plan(query, table, central_run)
    capped = delta_capped(query, constants or default_constants())
    if capped is not query:  # planned at the covered δ, which answers it (``plan``)
        made = covered_plan(
            capped, constants, budget_seconds=budget_seconds, trials=trials, seed=seed, split=split
        )
        return at_capped_delta(made, query)
    result = coverable_plan(
        query, constants, budget_seconds=budget_seconds, trials=trials, split=split
    )
    if result.coverage is not Coverage.EXTRAPOLATED:
        return _simulated_if_fewer(query, result, constants, budget_seconds, trials, seed, split)
    fallback = _twin_fits(query, simulation_seconds(query, trials), trials, budget_seconds)
    return simulated_plan(query, result, trials=trials, seed=seed, fallback=fallback)


def _twin_fits(query: Query, needed: float, trials: int, budget_seconds: float) -> bool:
    """Whether a public-coin query's private-coin twin may be simulated too (``needed``:
    the query's own simulation's seconds) within the budget."""
    private = private_coin_twin(query)
    return private is not None and needed + simulation_seconds(private, trials) <= budget_seconds


OWN_DOMAIN_UNCOVERED = "outside the covered region: simulating it"
"""Words of the line a plan on a larger domain carries when the query's own domain could be
simulated (the service's page offers the simulation beside it)."""


def _simulated_if_fewer(
    query: Query,
    result: Plan,
    constants: ConstantTable | None,
    budget_seconds: float,
    trials: int,
    seed: int,
    split: Split,
) -> Plan:
    """A plan whose tester runs on a larger domain (``Plan.tester_point.k``), or runs
    another protocol than the setting's own, where the query's own domain is outside the
    covered region, of every protocol the query may run or of its setting's own: that
    domain is simulated (the setting's own tester), as it was before larger domains and
    other protocols were weighed, within the budget, and the simulated plan is taken when
    it needs fewer users in all (else, or where it cannot be simulated, the covered plan
    stands, with a line saying a simulation may need fewer users).

    The shuffle private coin below its covered ε = 0.001 runs a local randomizer: k = 16,
    α = 0.2, ε = 0.0005, δ = 10⁻⁶ is 58 billion users in all, where a simulation of the
    shuffle tester needs about 525,000."""
    point = result.tester_point
    padded = point is not None and point.k is not None
    if (not padded and result.protocol == query.setting.key) or query.k < SIMULATION_K_MIN:
        return result
    if split is Split.HOMOGENEOUS:  # its plan is the equal-ε query's, padded there
        return result
    table = constants or default_constants()
    # the query's own domain: the plan itself where it was not run on a larger one
    own = plan_on_domain(query, table, split=split) if padded else result
    whose = ""
    if own.coverage is not Coverage.EXTRAPOLATED:
        # another protocol covers the domain (k-RR covers small domains at every ε), but
        # the setting's own may not (a shuffle query at δ above the covered 10⁻³): a
        # simulation of that one may need far fewer users (shuffle public coin, k = 12,
        # α = 0.3, ε = (1, 0.005), δ = 0.01: about 18,000 against 42.6 million)
        if covered_at_query(query, table):  # its own plan is covered: nothing to simulate
            return result
        own = plan_on_domain(query, table, fallback=False, split=split)
        if own.coverage is not Coverage.EXTRAPOLATED:
            return result
        whose = f" for the {protocol_for(own.protocol).title} protocol"
    needed = simulation_seconds(query, trials)
    if needed > budget_seconds:  # not simulated here: the line says it could be
        # on its own domain, the query is uncovered by what its plan names (a review: the
        # line blamed a covered k = 100,000 where δ and ε were outside)
        gaps = "; ".join(own.coverage_gaps)
        subject = (
            (f"the query's own {query.k}-bin domain" if padded else "the query")
            + whose
            + (f" ({gaps})" if gaps else "")
        )
        line = (
            f"{subject} is {OWN_DOMAIN_UNCOVERED} (about "
            f"{seconds_text(needed)} s; --simulation-budget, or a plan job in the service) "
            "may need fewer users"
        )
        return replace(result, warnings=(*result.warnings, line))
    fallback = _twin_fits(query, needed, trials, budget_seconds)
    try:
        simulated = simulated_plan(query, own, trials=trials, seed=seed, fallback=fallback)
    except NotCoveredError:
        return result
    if simulated.total_users < result.total_users:
        where = (
            f"on a domain of k = {point.k:,}"
            if point is not None and point.k is not None
            else f"of the {protocol_for(result.protocol).title} protocol"
        )
        line = (
            f"the covered plan {where} needs {result.total_users:,} users in all: more "
            "than this simulation of the asked one"
        )
        return replace(simulated, warnings=(*simulated.warnings, line))
    line = (
        f"simulating the asked {query.k}-bin domain needed {simulated.total_users:,} users "
        "in all: more than this plan"
    )
    return replace(result, warnings=(*result.warnings, line))


def coverable_plan(
    query: Query,
    constants: ConstantTable | None = None,
    *,
    budget_seconds: float = SIMULATION_BUDGET_SECONDS,
    trials: int = 1000,
    split: Split = Split.FEWEST,
) -> Plan:
    """The analytic plan, after every check :func:`covered_plan` makes before it
    simulates (:class:`NotCoveredError` where it would refuse: below
    :data:`SIMULATION_K_MIN`, or a simulation over the budget), without simulating: a
    service job is refused at submission, not after it was queued. Outside the covered
    region the plan returned is the extrapolated one (``Coverage.EXTRAPOLATED``), which
    :func:`covered_plan` replaces by simulation."""
    budget_seconds = check_number(
        "simulation-budget",
        budget_seconds,
        0.0,
        SIMULATION_BUDGET_MAX,
        low_open=False,
        high_open=False,
    )
    result = plan(query, constants, split=split)
    if result.coverage is not Coverage.EXTRAPOLATED:
        return result
    if query.k < SIMULATION_K_MIN:
        raise NotCoveredError(
            query,
            result.coverage_gaps,
            f"and a query below k = {SIMULATION_K_MIN} is not simulated (pairs outside the "
            "built-in families defeat such plans: docs/coverage.md)",
        )
    needed = simulation_seconds(query, trials)
    if needed > budget_seconds:
        raise NotCoveredError(
            query,
            result.coverage_gaps,
            (
                f"simulating this query would take about {seconds_text(needed)} s, above the "
                f"{budget_seconds:g} s budget (--simulation-budget)"
                if budget_seconds > 0
                else "simulating it is off (a budget of 0 s: --simulation-budget)"
            ),
        )
    return result


def simulated_plan(
    query: Query, extrapolated: Plan, *, trials: int, seed: int, fallback: bool = False
) -> Plan:
    """This query's own minimal sizes by simulation, as a plan (``Coverage.SIMULATED``).

    ``fallback``: when no size meets the target with a public-coin query's own protocol
    (its hash merges bins: at a small k it can leave an error floor above the target),
    simulate the private-coin protocol, which serves a public-coin query as well (as
    ``plan`` offers it when cheaper); the plan's ``protocol`` then says which was sized.
    """
    from planner.exact import exact_plan

    candidates = [query]
    private = private_coin_twin(query)
    if fallback and private is not None:
        candidates.append(private)
    found, merged = None, None
    for candidate in candidates:
        try:
            found = exact_plan(candidate, trials=trials, seed=seed, private_coin_too=False)
        except InputError as error:  # the search reached sizes beyond what can be simulated
            raise NotCoveredError(
                query, extrapolated.coverage_gaps, f"and it cannot be simulated here: {error}"
            ) from None
        if found.plan is not None and found.multiplier is not None:
            # one public hash: met on the families, but not on a pair it merges (plan.py)
            merged = hash_floor_line(found.plan.compression, query.beta)
            if merged is None:
                break
            found = None
    if found is None or found.plan is None or found.multiplier is None:
        raise NotCoveredError(
            query,
            extrapolated.coverage_gaps,
            f"and one simulated run cannot meet β here ({merged})"
            if merged is not None
            else "and no size in the search range met the target on every family in simulation",
        )
    direct = query.beta < PER_RUN_ERROR
    repetition = Repetition(  # one run, simulated at β itself: no calibrated factor
        RepetitionMethod.DIRECT if direct else RepetitionMethod.NONE,
        majority_vote_runs(query.beta, PER_RUN_ERROR) if direct else 1,
        None,
        None,
        "outside the covered region: one run was simulated at β itself" if direct else None,
    )
    ran = found.plan.protocol
    note = (
        f"simulated: outside the covered region ({'; '.join(extrapolated.coverage_gaps)}), "
        f"so this query's real tester was simulated"
        f"{'' if ran == query.setting.key else f' (the {ran} protocol: its own found no size)'}"
        f" ({trials} trials per family per check, "
        f"seed {seed}) until every family's error was ≤ {found.target:.3f}; the baseline "
        "column is extrapolated"
    )
    return replace(
        found.plan,
        query=query,
        constant_source=ConstantSource.SIMULATED,
        repetition=repetition,
        coverage=Coverage.SIMULATED,
        coverage_gaps=extrapolated.coverage_gaps,
        split=Split.PAPER,  # the query's own point, searched with the paper's split
        warnings=(
            *(w for w in found.plan.warnings if not w.startswith("constant source 'order'")),
            note,
        ),
    )
