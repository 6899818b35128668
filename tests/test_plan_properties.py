"""Properties of plans, measured from plans (not from the code's constants)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.constants import default_constants
from planner.formulas.compression import integer_argmin
from planner.formulas.registry import BOUNDS
from planner.plan import RepetitionMethod, Split, grid_kinks, plan, strong_eps_ladder
from planner.protocols.shuffle_private import noise_mu
from planner.solve import Unknown, fitting_plan, solve
from tests.conftest import SETTING_KEYS, make_query, order_table

ORDER = order_table()


@pytest.mark.parametrize("key", SETTING_KEYS)
def test_swapping_the_groups_swaps_the_answer(key: str) -> None:
    for eps1, eps2 in [(1.0, 0.25), (0.3, 0.9), (0.5, 0.5)]:
        forward = plan(make_query(key, eps1=eps1, eps2=eps2))
        backward = plan(make_query(key, eps1=eps2, eps2=eps1))
        assert (forward.n_users_group1, forward.n_users_group2) == (
            backward.n_users_group2,
            backward.n_users_group1,
        )


def test_doubling_k_scales_local_private_by_two_to_the_three_halves() -> None:
    small, large = (plan(make_query("local-private", k=k), ORDER) for k in (1024, 2048))
    assert large.n_users_group1 / small.n_users_group1 == pytest.approx(2**1.5, rel=1e-6)
    assert large.n_users_group2 / small.n_users_group2 == pytest.approx(2**1.5, rel=1e-6)


def test_doubling_k_doubles_local_public() -> None:
    small, large = (plan(make_query("local-public", k=k), ORDER) for k in (1000, 2000))
    assert large.n_users_group1 / small.n_users_group1 == pytest.approx(2, rel=1e-5)


@pytest.mark.parametrize("key", ["local-private", "local-public"])
def test_halving_eps1_quadruples_local_n1(key: str) -> None:
    base = plan(make_query(key, eps1=0.8, eps2=0.2), ORDER)
    halved = plan(make_query(key, eps1=0.4, eps2=0.2), ORDER)
    assert halved.n_users_group1 / base.n_users_group1 == pytest.approx(4, rel=1e-5)
    assert halved.n_users_group2 == base.n_users_group2


@pytest.mark.parametrize("key", ["shuffle-private", "shuffle-public"])
@pytest.mark.parametrize("accounting", ["exact", "paper"])
def test_shuffle_group_ratio_is_the_noise_ratio(key: str, accounting: str) -> None:
    query = make_query(key, eps1=1.0, eps2=0.2, accounting=accounting)
    result = plan(query, split=Split.PAPER)
    mu_ratio = noise_mu(0.2, 1e-6, query.accounting) / noise_mu(1.0, 1e-6, query.accounting)
    assert result.n_users_group2 / result.n_users_group1 == pytest.approx(
        mu_ratio, abs=(mu_ratio + 1) / result.n_users_group1
    )
    # equal mixing weights μ_g / n_g, each group at least its own minimum noise
    g1, g2 = result.groups
    assert g1.noise_mu / g1.n_users == pytest.approx(g2.noise_mu / g2.n_users, rel=1e-12)
    assert g1.noise_mu >= g1.noise_mu_minimum and g2.noise_mu >= g2.noise_mu_minimum


def test_central_group_ratio_is_the_subsampling_ratio() -> None:
    result = plan(make_query("central", k=10**5, alpha=0.05, eps1=1.0, eps2=0.1), split=Split.PAPER)
    ratio = math.expm1(1.0) / math.expm1(0.1)
    assert result.n_users_group2 / result.n_users_group1 == pytest.approx(
        ratio, abs=1 / result.n_users_group1
    )
    amplified = math.log1p(result.n_users_group1 / result.n_users_group2 * math.expm1(1.0))
    assert amplified <= 0.1


POINTS = [
    (k, a, e1, e2)
    for k in (2, 10, 1000, 10**6)
    for a in (0.01, 0.2, 1.0)
    for e1, e2 in ((1.0, 0.1), (0.5, 0.5), (0.05, 0.2))
]


@pytest.mark.parametrize("model", ["local", "shuffle"])
def test_public_coin_never_needs_more_than_private_coin(model: str) -> None:
    for k, a, e1, e2 in POINTS:
        for split in Split:
            asked = {"k": k, "alpha": a, "eps1": e1, "eps2": e2}
            private = plan(make_query(f"{model}-private", **asked), split=split)
            public = plan(make_query(f"{model}-public", **asked), split=split)
            if split is Split.PAPER:  # the same trade-off between the groups, each cheaper
                assert public.n_users_group1 <= private.n_users_group1
                assert public.n_users_group2 <= private.n_users_group2
            assert public.total_users <= private.total_users
        hashed = plan(make_query(f"{model}-public", k=k, alpha=a, eps1=e1, eps2=e2), fallback=False)
        # a domain below the covered k is planned on a larger one (padded: its L may be up
        # to that domain's k)
        assert 2 <= hashed.compression.L <= hashed.tester_query.k


def test_closed_form_and_numeric_L_agree_within_rounding() -> None:
    interior = 0
    for k, a, e1, e2 in POINTS:
        for e1_, e2_ in ((e1, e2), (0.9, 0.9)):
            result = plan(
                make_query("shuffle-public", k=k, alpha=a, eps1=e1_, eps2=e2_), fallback=False
            )
            c, domain = result.compression, result.tester_query.k  # k or a padded domain
            assert 2 <= c.L_argmin <= c.L <= domain
            assert abs(c.L_argmin - c.L_closed_form) <= 1
            interior += 2 < c.L_argmin < domain
    assert interior >= 5


def test_closed_form_L_is_the_root_sympy_finds() -> None:
    import sympy

    from planner.formulas.compression import closed_form_L

    L = sympy.Symbol("L", positive=True)
    k, alpha, mu1, mu2 = 10**5, sympy.Rational(1, 10), 40, 700
    n1 = (
        k / (sympy.sqrt(L) * alpha**2)
        + L ** sympy.Rational(1, 4) * sympy.sqrt(k * mu1) / alpha
        + k**2 / (L**2 * alpha**4 * mu1 * mu2)
    )
    stationary = sympy.nsolve(sympy.diff(n1, L), L, 5000)
    assert closed_form_L(k, 0.1, 40.0, 700.0) == pytest.approx(float(stationary), rel=1e-9)


def test_integer_argmin_is_exact_against_brute_force() -> None:
    bound = BOUNDS["shuffle-public-compressed"]
    for k in (3, 50, 5000, 20000):
        for a, mu1, mu2 in ((0.1, 40.0, 900.0), (0.9, 3.0, 3.0), (0.01, 2000.0, 2100.0)):
            values = {"k": k, "alpha": a, "mu1": mu1, "mu2": mu2}
            import numpy as np

            everything = bound.evaluate(**values, L=np.arange(2, k + 1))
            best = 2 + int(np.argmin(everything))
            assert integer_argmin(lambda L, v=values: bound.evaluate(**v, L=L), 2, k) == best


# Property-based monotonicity. Formulas (C = 1): over the theorems' range (ε ≤ 1,
# δ ≤ 1e-2). Calibrated plans: inside the calibration grid (k ∈ [16, 4096], α ∈ [0.05, 0.5],
# ε_strong ∈ [0.25, 1], ε_weak/ε_strong ≥ 0.25), where n is monotone by construction;
# outside it the constant is extrapolated from the grid's edge and the plan says so.
ks = st.integers(min_value=2, max_value=10**6)
alphas = st.floats(min_value=0.01, max_value=1.0)
epsilons = st.floats(min_value=0.05, max_value=1.0)
# δ ≤ 1e-3: nearer 1e-2 the theorem's own shuffle bound can grow with δ, because its
# term 1/(α⁴μ1μ2) rises as μ shrinks (k = 16, α = 0.078, ε = (1, 0.5): δ = 0.0078 → 0.01
# takes n1 from 1093 to 1097 with C = 1) — a property of the paper's formula.
deltas = st.floats(min_value=1e-10, max_value=1e-3)
keys = st.sampled_from(SETTING_KEYS)
grid_ks = st.integers(min_value=16, max_value=4096)
grid_alphas = st.floats(min_value=0.05, max_value=0.5)
grid_epsilons = st.floats(min_value=0.25, max_value=1.0)
grid_ratios = st.floats(min_value=0.25, max_value=1.0)
PROPERTY = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
CALIBRATED = default_constants()


def no_group_needs_more(first, second) -> bool:
    return (
        second.n_users_group1 <= first.n_users_group1
        and second.n_users_group2 <= first.n_users_group2
    )


def needs_no_more(first, second, split: Split) -> bool:
    """Does ``second`` need no more users than ``first``: in each group for the paper's
    split, in all for the default (which may move users between the groups as it
    chooses another tester point), and in all where the two run different protocols (a
    channel per group splits its users otherwise than Hadamard response: a group may grow
    where that lowers the total)?"""
    if split is Split.PAPER and first.protocol == second.protocol:
        return no_group_needs_more(first, second)
    return second.total_users <= first.total_users


def check_monotone_in_k_alpha_delta_beta(
    query, table, factor: float, *, k_cap: int, alpha_cap: float, splits=tuple(Split)
) -> None:
    for split in splits:
        base = plan(query, table, split=split)
        harder_k = plan(
            replace(query, k=min(k_cap, math.ceil(query.k * factor))), table, split=split
        )
        easier_alpha = plan(
            replace(query, alpha=min(alpha_cap, query.alpha * factor)), table, split=split
        )
        stricter_beta = plan(replace(query, beta=query.beta / factor), table, split=split)
        assert needs_no_more(harder_k, base, split)
        assert needs_no_more(base, easier_alpha, split)
        assert needs_no_more(stricter_beta, base, split)
        if query.delta is not None:
            # in all only: a looser δ lowers μ1 and μ2 at different rates, so the paper's
            # n2 = (μ2/μ1)·n1 can move a few users into group 1 (k = 2, α = 0.0488,
            # ε = (1, 0.5), δ = 1e-5 → 2e-5: 843 + 2,625 → 845 + 2,605)
            looser = plan(replace(query, delta=min(1e-3, query.delta * factor)), table, split=split)
            assert looser.total_users <= base.total_users


LADDER_SLACK = 1.05
"""The default's total may fall by this much when a group's ε falls: the query's own
point is a candidate but not a ladder rung (powers of 2), so a stricter ε can bring a
point the looser query did not weigh (observed at most 1.043 over 3,000 box queries)."""


def check_monotone_in_own_epsilon(
    query, table, factor: float, eps_floor: float, splits=tuple(Split)
) -> None:
    """More privacy for a group never lowers that group's count under the paper's split,
    nor (up to :data:`LADDER_SLACK`) the users in all under the default.

    (Under the paper's allocation the *other* group's count can move either way: in the
    shuffle and central models group 2's count grows with ε1 — n2 = (μ2/μ1)·n1 and
    n2 = n1·(e^{ε1}−1)/(e^{ε2}−1) — which the plan reports against the baseline.)
    """
    for split in splits:
        base = plan(query, table, split=split)
        stricter1 = plan(
            replace(query, eps1=max(eps_floor, query.eps1 / factor)), table, split=split
        )
        stricter2 = plan(
            replace(query, eps2=max(eps_floor, query.eps2 / factor)), table, split=split
        )
        if split is Split.PAPER:
            assert stricter1.n_users_group1 >= base.n_users_group1
            assert stricter2.n_users_group2 >= base.n_users_group2
        else:
            assert stricter1.total_users * LADDER_SLACK >= base.total_users
            assert stricter2.total_users * LADDER_SLACK >= base.total_users


factors = st.floats(min_value=1.01, max_value=4.0)


@PROPERTY
@given(key=keys, k=ks, alpha=alphas, eps1=epsilons, eps2=epsilons, delta=deltas, factor=factors)
def test_formulas_are_monotone(key, k, alpha, eps1, eps2, delta, factor) -> None:
    query = make_query(key, k=k, alpha=alpha, eps1=eps1, eps2=eps2, delta=delta)
    # the order constants weigh no tester point but the query's: one split, the paper's
    only_the_paper = (Split.PAPER,)
    check_monotone_in_k_alpha_delta_beta(
        query, ORDER, factor, k_cap=10**7, alpha_cap=1.0, splits=only_the_paper
    )
    check_monotone_in_own_epsilon(query, ORDER, factor, 1e-4, splits=only_the_paper)


@PROPERTY
@given(
    key=keys,
    k=grid_ks,
    alpha=grid_alphas,
    eps_strong=grid_epsilons,
    ratio=grid_ratios,
    swap=st.booleans(),
    delta=deltas,
    factor=st.floats(min_value=1.01, max_value=1.5),
)
def test_calibrated_plans_are_monotone_inside_the_grid(
    key, k, alpha, eps_strong, ratio, swap, delta, factor
) -> None:
    eps1, eps2 = (eps_strong * ratio, eps_strong) if swap else (eps_strong, eps_strong * ratio)
    query = make_query(key, k=k, alpha=alpha, eps1=eps1, eps2=eps2, delta=delta)
    harder_ok = k * factor <= 4096 and alpha / factor >= 0.05
    if harder_ok:
        check_monotone_in_k_alpha_delta_beta(query, CALIBRATED, factor, k_cap=4096, alpha_cap=0.5)
    weak = min(eps1, eps2)
    if weak / factor >= 0.25 * eps_strong and eps_strong / factor >= 0.25:
        check_monotone_in_own_epsilon(query, CALIBRATED, factor, 1e-4)


@pytest.mark.slow  # 40 examples × 4 solves (~60 plans each at fresh ε, δ): ~8 s of a loaded run
@settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    key=keys,
    k=grid_ks,
    alpha=grid_alphas,
    eps_strong=grid_epsilons,
    ratio=grid_ratios,
    delta=deltas,
)
def test_solve_round_trips(key, k, alpha, eps_strong, ratio, delta) -> None:
    """Given a plan's own sizes, each answer fits them and is no worse than the query's:
    exactly so for the paper split's sizes (each group's need is monotone in α and
    group 2's in ε2). The default's sizes fit at the query too, but the fewest-users
    split moves users between the groups as α or ε2 moves, so the values where they
    fit need not form an interval: there the answer is only checked to fit."""
    eps2 = eps_strong * ratio
    query = make_query(key, k=k, alpha=alpha, eps1=eps_strong, eps2=eps2, delta=delta)
    for split in (Split.PAPER, Split.FEWEST):
        base = plan(query, split=split)
        n1, n2 = base.n_users_group1, base.n_users_group2
        exact = split is Split.PAPER
        for unknown, sizes in ((Unknown.N1, {"n2": n2}), (Unknown.N2, {"n1": n1})):
            solved = solve(query, unknown, **sizes)
            assert solved.feasible and solved.plan is not None
            assert solved.value <= (n1 if unknown is Unknown.N1 else n2)
            assert (solved.plan.n_users_group1, solved.plan.n_users_group2) <= (n1, n2)
            if unknown is Unknown.N1:
                assert solved.value == solved.plan.n_users_group1
            else:  # n2 is monotone for any split: the least that fits, exactly
                assert fitting_plan(query, n1, int(solved.value) - 1) is None
        for unknown, asked in ((Unknown.ALPHA, alpha), (Unknown.EPS2, eps2)):
            solved = solve(query, unknown, n1=n1, n2=n2)
            assert solved.feasible and solved.plan is not None
            assert solved.plan.n_users_group1 <= n1 and solved.plan.n_users_group2 <= n2
            if exact:  # to the printed digits, rounded up (``solve.SHOWN_DIGITS``)
                assert solved.value <= asked * (1 + 1e-5)


def test_solve_reports_infeasible_asks() -> None:
    query = make_query("local-private", k=100, alpha=0.2)
    # a group 2 a little short of the paper split's is made up by more group-1 users (the
    # Hadamard tester's variance γ1²/n1 + γ2²/n2: the allocations start from the paper's
    # split, which never runs a channel per group); one user in group 2 never is
    needed = plan(query, split=Split.PAPER)
    assert needed.protocol == "local-private"
    short = solve(query, Unknown.N1, n2=needed.n_users_group2 * 9 // 10)
    assert short.feasible and short.value > needed.n_users_group1
    too_few = solve(query, Unknown.N1, n2=1)
    assert not too_few.feasible and "below" in too_few.reason
    hopeless = solve(query, Unknown.ALPHA, n1=10, n2=10)
    assert not hopeless.feasible and "α = 1" in hopeless.reason
    no_eps = solve(query, Unknown.EPS2, n1=needed.n_users_group1, n2=5)
    assert not no_eps.feasible and hopeless.value is None and no_eps.value is None


def test_beta_below_a_third_multiplies_by_the_exact_run_count() -> None:
    # below k = 16 no direct factor is measured: on its own domain the vote is the plan
    # (``plan`` itself also weighs k = 16, where direct calibration needs fewer users)
    from planner.constants import default_constants
    from planner.plan import plan_on_domain

    table = default_constants()
    third = plan_on_domain(make_query("central", k=8, eps1=3.0, eps2=0.75), table)
    five_percent = plan_on_domain(make_query("central", k=8, eps1=3.0, eps2=0.75, beta=0.05), table)
    padded = plan(make_query("central", k=8, eps1=3.0, eps2=0.75, beta=0.05))
    assert padded.tester_point is not None and padded.tester_point.k == 16
    assert padded.total_users < five_percent.total_users
    # P(Bin(r, 1/3) ≥ (r+1)/2): r = 21 → 0.0557, r = 23 → 0.0480 (checked with scipy)
    assert five_percent.runs == 23
    assert five_percent.n_users_group1 == 23 * third.n_users_group1


def test_a_plan_runs_the_stronger_group_lower_when_that_needs_fewer_users_in_each_group() -> None:
    """Central, k = 27, α = 0.25, ε = (2.4, 19.2), β = 1/3. The paper's split feeds the
    weaker group through subsampling at rate (e^ε_w − 1)/(e^ε_s − 1) ≈ e^(2.4 − 19.2), so
    its population is about e^16.8 ≈ 2·10⁷ times the tester's sample: billions of users
    (at the asked point a noisy histogram per group, ``central+channels``, which needs no
    subsampling, does better: 326 in all). The homogeneous tester at ε_w = 2.4 needs fewer.
    The plan runs the stronger group lower, at a rung of ``strong_eps_ladder`` (a power of
    2, or 2.4), with that point's numbers, a line with the asked point's cost, and it
    passes validation (seeded)."""
    from dataclasses import replace

    from planner.plan import strong_eps_ladder
    from planner.validate import validate

    query = make_query("central", k=27, alpha=0.25, eps1=2.4, eps2=19.2, beta=1 / 3)
    made = plan(query)
    point = made.tester_point
    assert point is not None and (point.eps1, point.alpha) == (2.4, 0.25)
    assert point.eps2 in strong_eps_ladder(19.2, 2.4)
    assert strong_eps_ladder(19.2, 2.4)[-1] == 2.4  # j = 0: the homogeneous tester
    at_point = plan(replace(query, eps2=point.eps2))
    assert (made.n_users_group1, made.n_users_group2) == (
        at_point.n_users_group1,
        at_point.n_users_group2,
    )
    (line,) = [w for w in made.warnings if w.startswith("the tester runs at")]
    asked_total = int(line.split("fewer than ")[1].split(" ")[0].replace(",", ""))
    assert made.total_users < 300 and asked_total > made.total_users
    report = validate(query, seed=37)
    assert report.tester["eps2"] == point.eps2
    assert report.passed, [(o.family, o.error_rate) for o in report.verification.outcomes]


@pytest.mark.parametrize(
    ("key", "k", "alpha", "eps1", "eps2"),
    [
        ("central", 64, 0.05, 20.0, 0.5),
        ("central", 256, 0.15, 3.0, 0.01),
        ("shuffle-private", 256, 0.15, 3.0, 0.5),
        ("shuffle-public", 1000, 0.1, 5.0, 0.25),
        ("local-private", 1000, 0.1, 5.0, 0.25),
    ],
)
def test_a_beta_just_below_a_third_needs_no_fewer_users_than_a_third(
    key: str, k: int, alpha: float, eps1: float, eps2: float
) -> None:
    """ε above 1 is capped at 1 (when that needs fewer users in all) at β = 1/3 as below it,
    so the step from β = 1/3 to 0.3333 (the majority vote or direct calibration at a factor
    near 1) adds users and never removes any: before, central k = 256, ε = (3, 0.01) needed
    1,650,255 users in group 2 at β = 1/3 and 164,987 at β = 0.3333 (a fresh-user review).
    Under the paper's split the rise is a few per cent at most (the local vote's and the
    direct factor's). The default may rise more: its local split by the tester's variance
    favours a large ε1 (γ(5) = 1.01 against γ(1) = 2.16), which one run at β = 1/3 may
    keep and direct calibration (measured up to ε_strong = 1) may not; never fewer."""
    for split in Split:
        asked = {"k": k, "alpha": alpha, "eps1": eps1, "eps2": eps2}
        third = plan(make_query(key, **asked, beta=1 / 3), split=split)
        below = plan(make_query(key, **asked, beta=0.3333), split=split)
        assert third.total_users <= below.total_users
        if split is Split.PAPER and below.protocol == third.protocol:
            # (a channel per group has no direct calibration: below 1/3 it votes, and
            # where it wins at 1/3 the plan below may run Hadamard response's direct run)
            assert below.total_users <= 1.06 * third.total_users


@pytest.mark.parametrize("split", [Split.PAPER, Split.FEWEST])
def test_alpha_just_above_direct_calibrations_top_keeps_the_asked_eps(split: Split) -> None:
    """Local private coin, β = 0.05, ε = (10, 1): its direct factors hold up to ε_strong = 20
    but α only up to 0.5. At α = 0.51 the plan runs the α = 0.5 tester at the asked ε (a
    second review found the paper split capping ε at 1 as well: 34,451 + 34,451 against
    7,427 + 34,768 at α = 0.5), so it needs exactly the users of α = 0.5. The public coin
    capped ε at 1 at β = 0.2 (its factors stop at ε_strong = 1) until one public hash
    stopped being held to β = 0.2 (a floor of 1/L = 1/4): now its plan there is a vote of
    independent hashes, or a private-coin protocol (since 2026-11-29 a channel per group
    held to β directly), at the asked ε."""
    at = make_query("local-private", k=53, alpha=0.5, eps1=10.0, eps2=1.0, beta=0.05)
    above = plan(replace(at, alpha=0.51), split=split)
    assert above.tester_point is not None
    assert (above.tester_point.eps1, above.tester_point.alpha) == (10.0, 0.5)
    assert above.total_users == plan(at, split=split).total_users
    public = plan(
        make_query("local-public", k=64, alpha=0.3, eps1=4.0, eps2=0.5, beta=0.2), split=split
    )
    assert public.tester_point is None
    assert public.protocol.startswith("local-private") or (
        public.repetition.method is RepetitionMethod.MAJORITY_VOTE
    )


@pytest.mark.parametrize("key", ["local-private", "local-public", "shuffle-private", "central"])
def test_alpha_above_the_covered_top_needs_no_more_than_the_top(key: str) -> None:
    """At β < 1/3 an α above the covered 0.95 runs its tester at α = 0.95 when that is the
    cheaper point, as α = 0.95 itself would: a second review found α = 0.96 at 611,233
    users (its tester at α = 0.5) against 412,458 at α = 0.95 (local, k = 53, ε = (0.5, 0.1),
    β = 0.3), and the warning claiming it fewer than the vote."""
    at_top = make_query(key, k=53, alpha=0.95, eps1=0.5, eps2=0.1, beta=0.3)
    for alpha in (0.96, 1.0):
        above = plan(replace(at_top, alpha=alpha))
        assert above.coverage.value == "calibrated"
        assert above.total_users <= plan(at_top).total_users


def test_a_public_coin_plan_never_needs_more_users_than_the_private_coin_plan() -> None:
    """A public-coin query may run the private-coin protocol, at the query or at any
    tester point below it, so its plan needs at most the private-coin plan's users in
    all. Before the tops of direct calibration were read for both protocols, a shuffle
    public-coin query at β = 0.01 with α just above 0.5 took its own 47-run vote, up to
    14× the private-coin plan (k = 26, α = 0.5168, ε = (0.031, 0.0145): 655,603 against
    45,708; a fresh-user review). 400 random queries over the accepted range, seeded."""
    import random

    from planner.formulas.settings import Coin, Model, Setting
    from planner.inputs import Query
    from planner.plan import Coverage

    rng = random.Random(20261127)

    def log_uniform(low: float, high: float) -> float:
        return math.exp(rng.uniform(math.log(low), math.log(high)))

    compared = 0
    for index in range(400):
        model = (Model.SHUFFLE, Model.LOCAL)[index % 2]
        asked = {
            "k": int(log_uniform(16, 1e5)),
            "alpha": log_uniform(0.01, 1),
            "eps1": log_uniform(0.01, 20),
            "eps2": log_uniform(0.01, 20),
            "delta": 1e-6 if model is Model.SHUFFLE else None,
            "beta": log_uniform(0.01, 1 / 3),
        }
        public = plan(Query(Setting(model, Coin.PUBLIC), **asked))
        private = plan(Query(Setting(model, Coin.PRIVATE), **asked))
        if public.coverage is Coverage.CALIBRATED and private.coverage is Coverage.CALIBRATED:
            compared += 1
            assert public.total_users <= private.total_users, asked
    assert compared > 300
    assert (
        plan(
            Query(Setting(Model.SHUFFLE, Coin.PUBLIC), 26, 0.5168, 0.031, 0.0145, 1e-6, 0.01)
        ).total_users
        == plan(
            Query(Setting(Model.SHUFFLE, Coin.PRIVATE), 26, 0.5168, 0.031, 0.0145, 1e-6, 0.01)
        ).total_users
    )


def test_the_default_takes_the_split_with_far_fewer_users_and_names_the_papers() -> None:
    """Shuffle, k = 19, α = 0.011, ε = (0.0222, 1.162), β = 1/3: the paper's split gives
    group 1 (ε = 0.022) 26.6 million users and group 2 26,162. With group 2 run at
    ε = 0.03 (a rung: a node of the calibration grid's ε_strong axis) the split is about
    253,000 + 145,000: 67× fewer in all, but more in group 2. The default takes it and
    names the paper's split (the trade-off ``--allocation paper`` keeps); the paper-split
    plan names the default's."""
    query = make_query(
        "shuffle-private",
        k=19,
        alpha=0.010986286584823174,
        eps1=0.022173883574967274,
        eps2=1.1620293838132942,
        beta=1 / 3,
    )
    # the Poisson protocol's own plans (the multi-message protocol, which needs fewer
    # users still, is weighed by the default with fallback)
    fewest = plan(query, fallback=False)
    paper = plan(query, split=Split.PAPER, fallback=False)
    assert fewest.tester_point is not None and fewest.tester_point.eps2 == 0.03
    assert 0.03 in strong_eps_ladder(query.eps2, query.eps1, grid_kinks(query.setting, CALIBRATED))
    assert 50 * fewest.total_users < paper.total_users
    assert fewest.n_users_group2 > paper.n_users_group2  # another trade-off
    homogeneous = plan(replace(query, eps2=query.eps1), fallback=False)
    assert fewest.total_users <= homogeneous.total_users
    assert plan(query).total_users <= fewest.total_users
    (line,) = [w for w in fewest.warnings if w.startswith("the paper's split")]
    assert "fewer users in group 2 and more in all" in line
    assert f"n1 = {paper.n_users_group1:,}, n2 = {paper.n_users_group2:,} " in line
    (other,) = [w for w in paper.warnings if w.startswith("the default split")]
    assert f"n1 = {fewest.n_users_group1:,}, n2 = {fewest.n_users_group2:,} " in other


def test_the_default_split_line_gives_the_default_plans_numbers_and_an_allocation_drops_it() -> (
    None
):
    """Central k = 1000, α = 0.1, ε = (1, 0.123456789): the paper's split needs more than
    1.25× the default's users in all (the homogeneous tester at 0.123456789), so the
    paper-split plan names the default's sizes, exactly those ``plan`` gives. An
    allocation's sizes replace the paper's split, so an allocated plan leaves it out."""
    from planner.allocation import AllocationRule, allocate, allocated_plan

    query = make_query("central", k=1000, alpha=0.1, eps1=1.0, eps2=0.123456789, beta=1 / 3)
    paper, fewest = plan(query, split=Split.PAPER), plan(query)
    assert fewest.tester_point is not None and fewest.tester_point.eps1 == 0.123456789
    (line,) = [w for w in paper.warnings if w.startswith("the default split")]
    assert f"n1 = {fewest.n_users_group1:,}, n2 = {fewest.n_users_group2:,} " in line
    assert "ε1 = 0.1235" in line
    assert not [w for w in fewest.warnings if w.startswith("the default split")]
    cheap = allocated_plan(paper, allocate(paper, AllocationRule.COST))
    assert not [w for w in cheap.warnings if w.startswith("the default split")]


def test_planning_a_plans_tester_point_again_gives_the_same_plan() -> None:
    """The ladder is one grid for all queries and either split's rule keeps the fewest
    users among its points, so the plan at a plan's own tester point is that plan,
    never lowered again (a per-query ladder broke this: 240 + 112 users, then 196 + 112).
    300 random queries over the accepted range, all five settings, seeded."""
    import random
    from dataclasses import replace

    from planner.formulas.settings import ALL_SETTINGS, Model
    from planner.inputs import Query

    rng = random.Random(20261128)

    def log_uniform(low: float, high: float) -> float:
        return math.exp(rng.uniform(math.log(low), math.log(high)))

    lowered = 0
    for index in range(300):
        setting = ALL_SETTINGS[index % len(ALL_SETTINGS)]
        query = Query(
            setting,
            int(log_uniform(16, 1e5)),
            log_uniform(0.01, 1),
            log_uniform(0.01, 20),
            log_uniform(0.01, 20),
            1e-6 if setting.model is Model.SHUFFLE else None,
            log_uniform(0.01, 1 / 3) if index % 2 else 1 / 3,
        )
        for split in Split:
            made = plan(query, split=split)
            point = made.tester_point
            if point is None:
                continue
            lowered += 1
            at_point = replace(query, eps1=point.eps1, eps2=point.eps2, alpha=point.alpha)
            if point.k is not None:  # a larger domain's point: planned there
                at_point = replace(at_point, k=point.k)
            again = plan(at_point, split=split)
            assert again.tester_point is None, (query, split)
            assert (again.n_users_group1, again.n_users_group2) == (
                made.n_users_group1,
                made.n_users_group2,
            ), (query, split)
    assert lowered > 250


@pytest.mark.parametrize(
    ("key", "k", "eps1", "eps2", "n"),
    # central's covered α ends at 0.95 (again since its refit of 2026-11-28): 145 users a
    # group lie between α = 0.95's 142 and α = 0.9's 153 (at ε = 0.44, as homogeneous);
    # the shuffle plans run the multi-message protocol: 3,170 users a group answer
    # α = 0.838 at ε = (1, 0.25) and the covered top 0.95 at ε = (0.25, 0.25), where α = 1
    # would need 3,166 in group 2
    [("shuffle-private", 1000, 1.0, 0.25, 3170), ("central", 1184, 1.0, 0.44, 145)],
)
def test_solving_alpha_finds_an_answer_just_below_the_covered_top(key, k, eps1, eps2, n) -> None:
    """The upward scan stepped from α = 0.839 to 1, which lies outside the covered α of
    0.95, and called the query infeasible, though the plan at α = 0.9 (shuffle) has exactly
    these sizes (a review). The covered top joins the steps, and a solve at ε1 > ε2 is never
    worse than at ε1 = ε2."""
    from planner.constants import default_constants

    top = default_constants().for_setting(key).covered["alpha"][1]
    template = make_query(key, k=k, alpha=0.5, eps1=eps1, eps2=eps2)
    solved = solve(template, Unknown.ALPHA, n1=n, n2=n)
    homogeneous = solve(replace(template, eps1=eps2), Unknown.ALPHA, n1=n, n2=n)
    assert solved.value is not None and homogeneous.value is not None
    assert 0.88 * top < solved.value <= top and solved.value <= homogeneous.value
    at_value = plan(replace(template, alpha=solved.value))
    assert at_value.coverage.value == "calibrated"


@pytest.mark.parametrize(
    ("key", "k", "eps1", "eps2", "n1", "n2"),
    [
        ("local-private", 90, 1.777, 0.462, 2249, 22480),
        ("local-private", 100, 7.144, 2.497, 1391, 1639),
    ],
)
def test_solving_alpha_down_from_an_extrapolated_answer_stops_at_the_covered_top(
    key, k, eps1, eps2, n1, n2
) -> None:
    """A review: a split's answer above the covered α of 0.95 (0.9545, extrapolated) was
    searched downwards in steps of 1.19×, past the fitting window at 0.95, and the solve
    called infeasible; the plan at α = 0.95 has these sizes."""
    template = make_query(key, k=k, alpha=0.5, eps1=eps1, eps2=eps2)
    solved = solve(template, Unknown.ALPHA, n1=n1, n2=n2)
    assert solved.value is not None and solved.value <= 0.95
    assert solved.plan is not None and solved.plan.coverage.value == "calibrated"
