"""How the users are split between the groups: the default, the paper's rule and two more.

* ``fewest`` (the default) — the plan's own split: the fewest users in all over the
  tester points ``planner.plan.plan`` weighs (``Split.FEWEST``).
* ``paper`` — the theorems' rule (local n_g ∝ 1/ε_g²; shuffle n2 = (μ2/μ1)·n1; central
  n2 = n1·(e^{ε1}−1)/(e^{ε2}−1)) at the query (``Split.PAPER``).
* ``cost`` — the cheapest c1·n1 + c2·n2 that keeps the tester's guarantee.
* ``fixed-n2`` — group 2's size is given; the fewest group-1 users, or infeasible.

Local model: the Hadamard tester's null variance per block is v = γ1²/(4m1) + γ2²/(4m2)
(m_g users per block), so every (n1, n2) with the same W = γ1²/n1 + γ2²/n2 as a plan
tests alike with that plan's tester; the cheapest is n_g = (γ_g/√c_g)·(Σ_h γ_h√c_h)/W
(README), and a given n2 needs n1 = γ1²/(W − γ2²/n2) (infeasible when n2 ≤ γ2²/W). Both
the paper plan's family and the default plan's are weighed (their testers can run at
different points), the cheaper taken.

Shuffle and central models: each has a one-parameter family of valid protocols that
contains both the paper's rule and the homogeneous protocol. Shuffle: give the stronger
group noise μ′ ∈ [μ_s, μ_w] (more than its own minimum), then n_s = C·bound(μ′, μ_w) and
n_w = (μ_w/μ′)·n_s. Central: run the central tester at ε′ ∈ [ε_w, ε_s] on n′ = C·bound(ε′)
users of each group and subsample the weaker group from n′·(e^{ε′}−1)/(e^{ε_w}−1). The
family is scanned on a geometric grid (64 points) and the best member is returned. At
β < 1/3 under direct calibration each member's C carries the direct factor read at its own
stronger ε (``_member_factor``), as a plan run there would.
Both families are built around the paper's split (``cost`` and ``fixed-n2`` start from
``plan(query, split=Split.PAPER)``: its tester point spans the widest family); the default
plan and the homogeneous protocol's plan (``OWN_PLANS``) are weighed beside them, each run
by its own tester, and are all that is weighed where the paper split's plan lies outside
the covered region and theirs does not. Every
allocation is a pair of sizes that ``planner validate --allocation …`` checks, run by the
tester ``Allocation.split`` names.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np

from planner.constants import ConstantTable, SettingConstant, default_constants
from planner.inputs import InputError, Query, check_integer, check_number
from planner.plan import (
    ABOVE_BASELINE,
    Coverage,
    GroupPlan,
    LoweredPoint,
    Plan,
    RepetitionMethod,
    Split,
    as_central_plan,
    calibrated_multiplier,
    own_lower_bounds,
    poisson_groups_at,
    rescaled_messages,
    spends_delta_by_choice,
    subsampled_release_rungs,
    trust_runs,
    variance_split,
)
from planner.plan import plan as make_plan
from planner.protocols import AllocationFamily, protocol_for

FAMILY_POINTS = 64
PAPER_RULE = "the paper's rule"
"""The reason of an allocation whose sizes are the paper split's own."""
COST_MIN, COST_MAX = 1e-6, 1e6
"""A cost per user's range: a ratio of 10^12 between the groups moves sizes by up to
10^6 (n_g ∝ 1/√c_g); past it a split is no longer a number of people (a review gave
--cost1 1e-300 and got 6.6·10^149 users)."""


class AllocationRule(StrEnum):
    FEWEST = "fewest"
    PAPER = "paper"
    COST = "cost"
    FIXED_N2 = "fixed-n2"


@dataclass(frozen=True)
class Allocation:
    """The users per group under an allocation rule, and the reason it gives them."""

    rule: AllocationRule
    n_users_group1: int | None
    n_users_group2: int | None
    reason: str
    cost1: float
    cost2: float
    split: Split = Split.PAPER
    """The plan whose tester runs these sizes: the paper split's (its family), or the
    default's (``Split.FEWEST``) or the homogeneous protocol's (``Split.HOMOGENEOUS``) own
    plan where it does better (``OWN_PLANS``)."""
    fallback: bool = True
    """False: that plan is the setting's own protocol's (``plan(…, fallback=False)``), whose
    family does better than the protocol the query's plans run instead."""
    run: Query | None = None
    """The run whose plan these sizes belong to, for a query planned by runs
    (``planner.plan.trust_runs``: a mixed pair's, both groups under the less trusted model
    or the mixed protocol; a central query's that gives δ, the pure ε-DP plan or a shuffle
    protocol's); None: the query's."""
    least_n2: float | None = None
    """An infeasible ``fixed-n2``'s least group 2 that would fit, as its reason says (of
    two refusals the one with the lesser is told: a review found "the fewest is 99,013"
    where a given n2 = 97,926 fitted another run)."""

    @property
    def feasible(self) -> bool:
        return self.n_users_group1 is not None

    @property
    def cost(self) -> float | None:
        if self.n_users_group1 is None or self.n_users_group2 is None:
            return None
        return self.cost1 * self.n_users_group1 + self.cost2 * self.n_users_group2


def _family(plan: Plan, table: ConstantTable) -> list[tuple[int, int, str]]:
    """(n1, n2, description) for the members of the setting's family of valid protocols."""
    query = plan.tester_query
    constant = table.for_setting(plan.protocol)
    eps_strong, eps_weak = sorted((query.eps1, query.eps2), reverse=True)
    strong_first = query.eps1 >= query.eps2
    members = []
    protocol = protocol_for(query.setting)
    if protocol.allocation_family is AllocationFamily.NOISE:
        assert query.delta is not None
        assert protocol.noise_mu is not None and protocol.size_for_noise is not None
        mu_s = protocol.noise_mu(eps_strong, query.delta, query.accounting)
        mu_w = protocol.noise_mu(eps_weak, query.delta, query.accounting)
        compression = constant.compression()
        for mu in np.unique(np.geomspace(mu_s, mu_w, FAMILY_POINTS)):
            # μ ∝ 1/ε²: this member behaves like ε_strong′ = ε_w·√(μ_w/μ′) (C is read there)
            eps_effective = eps_weak * math.sqrt(mu_w / float(mu))
            factor = _member_factor(plan, constant, eps_effective)
            if factor is None or not _covered(query, constant, eps_effective, eps_weak):
                continue
            multiplier = factor * calibrated_multiplier(
                query, constant, eps_effective, eps_weak, query.accounting, compression
            )
            # the member runs the plan's protocol: its L is the plan's (printed, validated),
            # not the bound's argmin at μ′ (a member sized for another L would be run with
            # this one: k = 200, ε = (0.245, 2.9), cost allocation: null error 0.33)
            fixed_L = plan.compression.L if plan.compression is not None else None
            sizes = protocol.size_for_noise(
                query, float(mu), mu_w, multiplier, compression, fixed_L=fixed_L
            )
            pair = (plan.runs * sizes.n_strong, plan.runs * sizes.n_weak)
            members.append(
                (
                    *(pair if strong_first else pair[::-1]),
                    f"stronger group's noise raised to μ = {mu:.4g}",
                )
            )
    elif protocol.allocation_family is AllocationFamily.SUBSAMPLING:
        for eps in np.unique(np.geomspace(eps_weak, eps_strong, FAMILY_POINTS)):
            factor = _member_factor(plan, constant, float(eps))
            if factor is None or not _covered(query, constant, float(eps), eps_weak):
                continue
            multiplier = factor * calibrated_multiplier(
                query, constant, float(eps), eps_weak, query.accounting, (2, 1)
            )
            sizes = protocol.size_run(
                query, float(eps), eps_weak, multiplier, None, query.accounting, (2, 1)
            )
            pair = (plan.runs * sizes.n_strong, plan.runs * sizes.n_weak)
            members.append(
                (*(pair if strong_first else pair[::-1]), f"tester run at ε′ = {eps:.4g}")
            )
    return members


def _member_factor(plan: Plan, constant: SettingConstant, eps_strong: float) -> float | None:
    """The factor on C of a family member whose tester behaves as at ``eps_strong``: the
    plan's own for one run or a vote (the runs repeat the member), but under direct
    calibration the factor read at the member's own point, None where it has none (the
    member is not weighed). The paper point's factor bounds neither way: the shuffle
    factor falls with ε, and central's rises again below ε ≈ 0.05 (k = 16, α = 0.5,
    β = 0.01: 7.28 at ε = 0.01 against 4.81 at 0.25; the member at ε′ = 0.01 sized with
    4.81 had 3,738 users a group where the homogeneous plan has 5,666, and validated FAIL)."""
    direct = (RepetitionMethod.DIRECT, RepetitionMethod.DIRECT_VOTE)
    if plan.repetition.method not in direct:
        return plan.repetition.factor
    tester = plan.tester_query
    run_beta = plan.repetition.tester_beta(tester.beta)  # a vote's runs: their own β
    return constant.direct_factor(run_beta, tester.k, eps_strong, tester.alpha)


def _covered(query: Query, constant: SettingConstant, eps_strong: float, eps_weak: float) -> bool:
    """Is the member whose tester runs at (ε_strong′, ε_weak) inside the covered region?
    (Members outside it would carry the calibrated constant past its evidence.)"""
    if not constant.covered:
        return True
    gaps = constant.coverage_gaps(query.k, query.alpha, eps_strong, eps_weak, query.delta)
    return not gaps


def split_for(rule: AllocationRule) -> Split:
    """The plan an allocation starts from: the default's own split for ``fewest``, the
    paper's for the others (``cost`` and ``fixed-n2`` search the family around it)."""
    return Split.FEWEST if rule is AllocationRule.FEWEST else Split.PAPER


def allocate(
    plan: Plan,
    rule: AllocationRule,
    *,
    cost1: object = 1.0,
    cost2: object = 1.0,
    n2: object = None,
    constants: ConstantTable | None = None,
) -> Allocation:
    """Split the users between the groups by ``rule`` (see the module docstring).

    ``plan`` is the query's plan by the rule's split (:func:`split_for`); one by another
    split is planned again by the rule's. ``cost1``, ``cost2`` and ``n2`` are checked here
    (raw values, e.g. from a command line, are welcome): an :class:`InputError` names the
    one out of range.
    """
    if plan.split is not split_for(rule) and plan.coverage is Coverage.CALIBRATED:
        plan = make_plan(plan.query, constants, split=split_for(rule))
    cost1 = check_number("cost1", cost1, COST_MIN, COST_MAX, low_open=False, high_open=False)
    cost2 = check_number("cost2", cost2, COST_MIN, COST_MAX, low_open=False, high_open=False)
    asked = plan.query.setting
    by_runs = (asked.is_mixed and not asked.mechanism) or spends_delta_by_choice(plan.query)
    if by_runs and rule not in OWN_SPLIT_RULES:
        return _mixed_allocation(plan, rule, cost1, cost2, n2, constants)
    found = _allocate(plan, rule, cost1, cost2, n2, constants)
    if rule in (AllocationRule.PAPER, AllocationRule.FEWEST) or plan.coverage is Coverage.NONE:
        return found
    # the query's plans may run another protocol than its setting's own (k-RR for a small
    # domain, a local mechanism for a shuffle query) because it needs fewer users in all; a
    # given n2 or unequal costs may be met better by the setting's own protocol's family
    # (central at k = 3, ε = (10⁻⁴, 0.0027), n2 = 1.29·10⁹: k-RR needs 1.34·10¹⁰ in each
    # group, the central tester on 16 bins 6.9·10¹⁰ in group 1 with that n2)
    own = make_plan(plan.query, constants, split=split_for(rule), fallback=False)
    if own.protocol == plan.protocol or own.coverage is not Coverage.CALIBRATED:
        return found
    other = _allocate(own, rule, cost1, cost2, n2, constants)
    if other.split is Split.PAPER:
        title = protocol_for(own.protocol).title
        other = replace(other, fallback=False, reason=f"on the {title} protocol: {other.reason}")
    return _better(found, other, rule)


OWN_SPLIT_RULES = (AllocationRule.PAPER, AllocationRule.FEWEST)
"""The rules whose sizes are a plan's own split (no allocation to weigh)."""


def _mixed_allocation(
    plan: Plan,
    rule: AllocationRule,
    cost1: float,
    cost2: float,
    n2: object,
    constants: ConstantTable | None,
) -> Allocation:
    """The allocation of a query planned by runs (a mixed pair, or a central query that
    gives δ: ``planner.plan.trust_runs``): each run allocated as its own query (each run's
    family, and its setting's own protocol's), the cheapest (``cost``) or the one needing
    the fewest group-1 users (``fixed-n2``) kept, with the run it belongs to. A run after
    the first (a mixed protocol's, a shuffle protocol's) is weighed where its plan is
    calibrated, as the plan weighs it."""
    best: Allocation | None = None
    runs = list(enumerate(trust_runs(plan.query)))
    # a subsampled curator's run at lower local ε too (``subsampled_release_rungs``), each
    # weighed as a run after the first
    runs += [(1, rung) for _, run in runs for rung in subsampled_release_rungs(run)]
    for index, run in runs:
        made = make_plan(run, constants, split=split_for(rule))
        if index > 0 and made.coverage is not Coverage.CALIBRATED:
            continue
        found = replace(
            allocate(made, rule, cost1=cost1, cost2=cost2, n2=n2, constants=constants), run=run
        )
        best = found if best is None else _better(best, found, rule)
    assert best is not None  # the less trusted model's run is always weighed
    return best


OWN_PLANS = {
    Split.FEWEST: "the default split's own sizes and tester (--allocation fewest)",
    Split.HOMOGENEOUS: "the homogeneous protocol's own sizes and tester (both groups at the "
    "weaker ε)",
}
"""The plans weighed beside the paper split's family, run by their own testers."""


def _own_plans_n2(plan: Plan, table: ConstantTable) -> list[int]:
    """Group 2's users in each of ``OWN_PLANS`` that is covered (what ``_no_dearer_than``
    may take for a given n2)."""
    if plan.coverage is Coverage.NONE:
        return []
    sizes = []
    for split in OWN_PLANS:
        own = make_plan(plan.query, table, split=split)
        if own.coverage is Coverage.CALIBRATED:
            sizes.append(own.n_users_group2)
    return sizes


def _no_dearer_than_own_plans(
    plan: Plan, found: Allocation, table: ConstantTable, given_n2: int | None = None
) -> Allocation:
    """``_no_dearer_than`` each of ``OWN_PLANS``: the default plan, then the homogeneous one."""
    for split in OWN_PLANS:
        found = _no_dearer_than(plan, found, table, given_n2, split)
    return found


def _no_dearer_than(
    plan: Plan, found: Allocation, table: ConstantTable, given_n2: int | None, split: Split
) -> Allocation:
    """The plan of ``split`` (the default's, or the homogeneous protocol's), its own sizes
    run by its own tester, where they beat ``found`` (the paper split's family, whose
    tester can sit at another point, e.g. a stronger ε capped at 1 where the default runs
    it on the ladder: a review found the family up to 1.77× the default's users at unit
    costs; the public coin's family keeps the paper plan's hash size, L = 101 where the
    homogeneous plan takes 8, up to 1.26× its cost): for ``cost`` when they cost less; for
    ``fixed-n2`` (``given_n2``) when its group 2 fits in the given n2 with fewer group-1
    users, or where nothing else fits (the given n2 is kept, as for a member)."""
    if plan.coverage is Coverage.NONE:  # order or proof constants: their own plan alone
        return found
    own = make_plan(plan.query, table, split=split)
    if own.coverage is not Coverage.CALIBRATED:
        return found
    n1, n2 = own.n_users_group1, own.n_users_group2
    if given_n2 is None:
        if found.cost is not None and found.cost1 * n1 + found.cost2 * n2 >= found.cost:
            return found
        better = "cost less than"
    else:
        fewer = found.n_users_group1 is None or n1 < found.n_users_group1
        if n2 > given_n2 or not fewer:
            return found
        n2, better = given_n2, "need fewer group-1 users than"
    return replace(
        found,
        n_users_group1=n1,
        n_users_group2=n2,
        reason=f"{OWN_PLANS[split]}, which {better} every other candidate",
        split=split,
    )


def _variance_budget(plan: Plan) -> tuple[float, float, float]:
    """A local plan's γ1, γ2 (at its tester's ε) and its variance W = γ1²/n1 + γ2²/n2."""
    tester = plan.tester_query
    weight = protocol_for(plan.protocol).variance_weight
    assert weight is not None
    gamma1, gamma2 = weight(tester.k, tester.eps1), weight(tester.k, tester.eps2)
    return gamma1, gamma2, gamma1**2 / plan.n_users_group1 + gamma2**2 / plan.n_users_group2


def _variance_family_sizes(
    plan: Plan, rule: AllocationRule, cost1: float, cost2: float, n2: int | None
) -> tuple[int, int] | None:
    """A local plan's allocation on its own variance family (the module docstring): the
    cheapest sizes with the plan's W at its tester's ε (``cost``), or the given n2 with the
    n1 that keeps W (``fixed-n2``; None when n2 ≤ γ2²/W, which alone uses up W)."""
    gamma1, gamma2, budget = _variance_budget(plan)
    own = (plan.n_users_group1, plan.n_users_group2)
    least_users = protocol_for(plan.protocol).min_users * plan.runs
    if rule is AllocationRule.COST:
        exact = variance_split(*own, gamma1, gamma2, cost1, cost2)
        sizes = (max(least_users, math.ceil(exact[0])), max(least_users, math.ceil(exact[1])))
        # the plan's own sizes are a member: rounding up never makes the rule dearer
        own_cost, cost = (cost1 * n[0] + cost2 * n[1] for n in (own, sizes))
        return own if own_cost <= cost else sizes
    assert n2 is not None
    remaining = budget - gamma2**2 / n2
    if remaining <= 0:
        return (own[0], n2) if own[1] <= n2 else None
    least = max(least_users, math.ceil(gamma1**2 / remaining))
    return (min(least, own[0]) if own[1] <= n2 else least), n2


def _local_allocation(
    plan: Plan,
    rule: AllocationRule,
    cost1: float,
    cost2: float,
    n2: int | None,
    table: ConstantTable,
    refused: Allocation | None = None,
) -> Allocation:
    """``cost`` or ``fixed-n2`` in the local model: on the paper plan's variance family,
    or on that of one of ``OWN_PLANS`` (the default's, the homogeneous protocol's) where
    it costs less (needs fewer group-1 users), run by that plan's tester. Their testers can
    sit at other points (ε on the ladder where the paper split caps it at 1, say), and each
    plan's own sizes are a member of its family, so the allocation never does worse than
    their sizes. With ``refused`` (the paper's plan is not calibrated), their families
    alone, or that refusal when neither is calibrated."""
    families = [] if refused is not None else [plan]
    for split in OWN_PLANS:  # the default's tester, and the homogeneous protocol's
        own = make_plan(plan.query, table, split=split)
        if (
            plan.coverage is not Coverage.NONE  # order or proof constants: the query alone
            and own.coverage is Coverage.CALIBRATED
            and protocol_for(own.protocol).allocation_family is AllocationFamily.VARIANCE
        ):
            families.append(own)
    if not families:
        assert refused is not None
        return refused

    def worth(sizes: tuple[int, int] | None) -> float:
        if sizes is None:
            return math.inf
        return cost1 * sizes[0] + cost2 * sizes[1] if rule is AllocationRule.COST else sizes[0]

    found = [_variance_family_sizes(family, rule, cost1, cost2, n2) for family in families]
    best = min(range(len(families)), key=lambda index: worth(found[index]))
    sizes = found[best]
    if sizes is None:
        assert n2 is not None
        floor = min(gamma2**2 / budget for _, gamma2, budget in map(_variance_budget, families))
        return Allocation(
            rule,
            None,
            None,
            (
                f"n2 = {n2:,} leaves no variance budget: group 2 needs more than "
                f"{math.ceil(floor):,} users"
            ),
            cost1,
            cost2,
            least_n2=float(math.floor(floor) + 1),
        )
    if families[best] is plan:
        how = (
            "n_g ∝ γ_g/√c_g at the paper plan's variance"
            if rule is AllocationRule.COST
            else "same variance W = γ1²/n1 + γ2²/n2 as the paper's plan"
        )
        return Allocation(rule, *sizes, how, cost1, cost2)
    better = "costs less than" if rule is AllocationRule.COST else "needs fewer group-1 users than"
    tester = (
        "the default split's tester (--allocation fewest)"
        if families[best].split is Split.FEWEST
        else "the homogeneous protocol's tester (both groups at the weaker ε)"
    )
    how = f"{tester} on its own variance W = γ1²/n1 + γ2²/n2, which {better} the paper plan's"
    return Allocation(rule, *sizes, how, cost1, cost2, families[best].split)


def _allocate(
    plan: Plan,
    rule: AllocationRule,
    cost1: float,
    cost2: float,
    given_n2: object,
    constants: ConstantTable | None,
) -> Allocation:
    table = constants or default_constants()
    paper = (plan.n_users_group1, plan.n_users_group2)
    if rule is AllocationRule.PAPER:
        return Allocation(rule, *paper, PAPER_RULE, cost1, cost2)
    if rule is AllocationRule.FEWEST:
        return Allocation(rule, *paper, "the plan's own split", cost1, cost2)
    n2: int | None = None
    if rule is AllocationRule.FIXED_N2:
        if given_n2 is None:
            raise InputError("n2", None, "given with --allocation fixed-n2")
        n2 = check_integer("n2", given_n2, 1)
    by_variance = protocol_for(plan.protocol).allocation_family is AllocationFamily.VARIANCE
    if plan.coverage not in (Coverage.CALIBRATED, Coverage.NONE):
        # the paper split's plan is outside the covered region (or simulated): only
        # OWN_PLANS, where they are calibrated (a review: solve crashed there)
        refused = Allocation(
            rule,
            None,
            None,
            f"the query is outside the covered region ({'; '.join(plan.coverage_gaps)}): only "
            "the paper's split was sized by simulation",
            cost1,
            cost2,
        )
        fixed = n2 if rule is AllocationRule.FIXED_N2 else None
        if by_variance:
            local = _local_allocation(plan, rule, cost1, cost2, n2, table, refused)
            return _no_dearer_than_own_plans(plan, local, table, fixed)
        return _no_dearer_than_own_plans(plan, refused, table, fixed)
    if by_variance:
        # the default and homogeneous plans' own sizes too, where they run a protocol
        # without a variance family (a channel per group)
        local = _local_allocation(plan, rule, cost1, cost2, n2, table)
        fixed = n2 if rule is AllocationRule.FIXED_N2 else None
        return _no_dearer_than_own_plans(plan, local, table, fixed)
    members = [(*paper, PAPER_RULE), *_family(plan, table)]  # a tie: the paper's rule
    if rule is AllocationRule.COST:
        n1_best, n2_best, how = min(members, key=lambda m: (cost1 * m[0] + cost2 * m[1], m[0]))
        found = Allocation(rule, n1_best, n2_best, how, cost1, cost2)
    else:
        assert n2 is not None
        fitting = [m for m in members if m[1] <= n2]
        if fitting:
            n1_best, _, how = min(fitting, key=lambda m: (m[0], m[1]))
            found = Allocation(rule, n1_best, n2, how, cost1, cost2)
        else:
            # the family's fewest, and the own plans' (``_no_dearer_than``), which may run
            # another protocol with fewer group-2 users (a new user's trial: "the fewest is
            # 2,147" where the default plan's n2 = 1,520 was taken)
            fewest = min([m[1] for m in members] + _own_plans_n2(plan, table))
            found = Allocation(
                rule,
                None,
                None,
                (
                    f"n2 = {n2:,} is below every valid plan's group 2 (the family of valid "
                    f"protocols and the default and homogeneous plans: the fewest is {fewest:,})"
                ),
                cost1,
                cost2,
                least_n2=float(fewest),
            )
    # the paper split may run a protocol whose groups share one size (k-RR), where the
    # default's runs one with a variance family (the Hadamard response on a larger
    # domain): that family may fit a given n2 the paper split's cannot
    found = _better(found, _local_allocation(plan, rule, cost1, cost2, n2, table, found), rule)
    return _no_dearer_than_own_plans(plan, found, table, n2)


def _better(first: Allocation, second: Allocation, rule: AllocationRule) -> Allocation:
    """The feasible one, else the one that costs less (``cost``) or needs fewer group-1
    users (``fixed-n2``); ``first`` on a tie."""
    if not first.feasible and not second.feasible:  # the refusal with the lesser n2 told
        least = [math.inf if a.least_n2 is None else a.least_n2 for a in (first, second)]
        return second if least[1] < least[0] else first
    if not second.feasible:
        return first
    if not first.feasible:
        return second
    return second if _worth(second, rule) < _worth(first, rule) else first


def _worth(allocation: Allocation, rule: AllocationRule) -> float:
    """A feasible allocation's cost (``cost``) or group-1 users (``fixed-n2``)."""
    value = allocation.cost if rule is AllocationRule.COST else allocation.n_users_group1
    assert value is not None  # feasible
    return float(value)


def _lowered_run_point(run: Query, asked: Query) -> LoweredPoint | None:
    """Where a run whose groups' ε are below the query's runs its tester (None: at the
    query's ε)."""
    if (run.eps1, run.eps2) == (asked.eps1, asked.eps2):
        return None
    return LoweredPoint(run.eps1, run.eps2, run.alpha)


def _lowered_run_line(run: Query, asked: Query) -> tuple[str, ...]:
    """The line saying that a run's group runs at a smaller ε than asked (none if not)."""
    lowered = [
        f"group {group} runs at ε = {ran:g} (asked {given:g})"
        for group, ran, given in ((1, run.eps1, asked.eps1), (2, run.eps2, asked.eps2))
        if ran != given
    ]
    if not lowered:
        return ()
    return (f"{'; '.join(lowered)}: a group run at a smaller ε is still ε-DP",)


def allocated_plan(
    plan: Plan, allocation: Allocation, constants: ConstantTable | None = None
) -> Plan:
    """The plan with its groups' sizes replaced by a feasible allocation's; for the
    default's own sizes (``Allocation.split`` FEWEST), the default plan's (its tester point
    and split), with a line saying why.

    The per-group noise of a Poisson shuffle allocation is not the paper rule's (the
    stronger group's μ is raised, as ``Allocation.reason`` says, or a fixed n2 above the
    default's): each group's μ and messages per user are those its tester runs at the
    allocated sizes (:func:`planner.plan.poisson_groups_at`).
    """
    if not allocation.feasible or allocation.rule in (AllocationRule.PAPER, AllocationRule.FEWEST):
        return plan
    n1, n2 = allocation.n_users_group1, allocation.n_users_group2
    assert n1 is not None and n2 is not None  # feasible
    base = plan
    if allocation.run is not None:  # a mixed pair's run: its plan, named as the pair asks
        asked = plan.query
        base = make_plan(
            allocation.run, constants, split=allocation.split, fallback=allocation.fallback
        )
        if spends_delta_by_choice(asked):  # its privacy line is the run's that is printed
            base = as_central_plan(base, asked)
        else:
            base = replace(
                own_lower_bounds(base, asked),
                query=asked,
                tester_point=base.tester_point or _lowered_run_point(allocation.run, asked),
                warnings=(
                    *asked.warnings,
                    *base.warnings,
                    *_lowered_run_line(allocation.run, asked),
                ),
            )
    elif allocation.split is not Split.PAPER or not allocation.fallback:  # that plan's tester
        base = make_plan(
            plan.query, constants, split=allocation.split, fallback=allocation.fallback
        )
    shuffle = protocol_for(base.protocol).noise_messages

    def resized(group: GroupPlan, size: int) -> GroupPlan:
        if group.messages_by is not None and size != group.n_users:
            # a multi-message group's noise is a fixed total: each user's share rescales
            factor = group.n_users / size
            later = functools.partial(rescaled_messages, group.messages_by, factor)
            return replace(group, n_users=size, messages_by=later)
        return replace(group, n_users=size)

    if shuffle and (n1, n2) != (base.n_users_group1, base.n_users_group2):
        # the Poisson noise both groups' tester runs at these sizes (equal mixing weights)
        groups = poisson_groups_at(base, (n1, n2))
    else:
        groups = (resized(base.groups[0], n1), resized(base.groups[1], n2))
    note = f"allocation {allocation.rule.value}: {allocation.reason}"
    # the paper's rule of the plan whose sizes these are: a run's own (``Allocation.run``)
    ruled = base if allocation.run is not None else plan
    if allocation.reason == PAPER_RULE and n2 != ruled.n_users_group2:  # fixed-n2, a larger n2
        mine = f"n1 = {ruled.n_users_group1:,} for its n2 = {ruled.n_users_group2:,}"
        note += f" ({mine}, with n2 as given)"
    elif (n1, n2) != (plan.n_users_group1, plan.n_users_group2):
        note += f" (the paper's rule: n1 = {plan.n_users_group1:,}, n2 = {plan.n_users_group2:,})"
    # lines about the paper's split that the allocated sizes make stale
    sizes_changed = (n1, n2) != (base.n_users_group1, base.n_users_group2)
    kept = tuple(
        w
        for w in base.warnings
        if ABOVE_BASELINE not in w
        and not w.startswith(("the default split", "the paper's split needs"))
        # its totals are the base plan's own sizes: the JSON tester_point keeps where it runs
        and not (sizes_changed and w.startswith(("the tester runs at", "the tester runs on")))
    )
    return replace(base, groups=groups, warnings=(*kept, note))
