"""The multi-message shuffle protocol with a negative-binomial flood, and its planned form
(``shuffle-private+messages``): exact accounting against brute-force enumeration, the
least flood, the users' shares, the tester's identity with the curator's, and the plan's
messages per user against the protocol's own count.

Statistical checks use fixed seeds; each states its level: means within Z = 5 standard
errors, chi-square and two-sample tests at a false-alarm rate of 1e-4."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from planner.formulas.correlated_noise import (
    FLOOD_RATIOS,
    Flood,
    best_flood,
    correlated_noise_delta,
    geometric_ratio,
    least_flood,
    least_mean,
    log_view_pmf,
    rounding_allowance,
)
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.plan import plan
from planner.protocols.shuffle_messages import THETA
from planner.validators.mixed_channels import MixedChannelsTester
from planner.validators.shuffle_multi_message import (
    MultiMessageChannelsTester,
    flood_shares,
    randomize,
)
from tests.test_shuffle_multi_message import flood_pmf, geometric_pmf, view_pmf_by_definition

Z = 5.0
LEVEL = 1e-4


def view_pmf(h: int, p: float, flood: Flood, size: int) -> np.ndarray:
    """f_h(a, b) by the triple sum with geometric noise of ratio p on both signs."""
    geometric = geometric_pmf(p, size)
    return view_pmf_by_definition(h, flood, geometric, geometric, size)


def hockey_stick(eps: float, f0: np.ndarray, f1: np.ndarray) -> float:
    """Σ over the two changed bins' joint views of (P − e^ε·Q)₊: under D the leaving bin
    shows f1 and the joining bin f0, under D′ the reverse (the larger of both orders)."""
    scale, worst = math.exp(eps), 0.0
    for first, second in ((f1, f0), (f0, f1)):
        p_view = np.multiply.outer(first.ravel(), second.ravel())
        q_view = np.multiply.outer(second.ravel(), first.ravel())
        worst = max(worst, float(np.clip(p_view - scale * q_view, 0.0, None).sum()))
    return worst


NB_CASES = [  # (ε, p, flood): a moderate q, a heavy q, and a light one
    (1.0, 0.5, Flood(3.0, 0.5)),
    (0.8, 0.5, Flood(4.0, 0.6)),
    (2.0, 0.3, Flood(2.0, 0.2)),
]


@pytest.mark.parametrize(("eps", "p", "flood"), NB_CASES)
def test_the_shortcut_and_the_exact_delta_hold_for_a_negative_binomial_flood(
    eps: float, p: float, flood: Flood
) -> None:
    """The prefix-sum shortcut equals the triple sum, and the accounted δ is the brute-force
    two-bin hockey stick (pessimistic, within the grid's missing mass and the allowance)."""
    size = 60
    views = [view_pmf(h, p, flood, size) for h in (0, 1)]
    a, b = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    for h in (0, 1):
        shortcut = np.exp(log_view_pmf(a, b, h, p, flood))
        np.testing.assert_allclose(shortcut, views[h], rtol=1e-10, atol=1e-300)
    missing = 2.0 - views[0].sum() - views[1].sum()
    assert missing < 1e-9
    brute = hockey_stick(eps, views[0], views[1])
    exact = correlated_noise_delta(eps, p, flood)
    assert exact >= brute
    assert exact <= brute + missing + rounding_allowance(10**4, 100.0)


@pytest.mark.parametrize(("eps", "theta"), [(0.1, 0.8), (0.5, 0.8), (1.0, 0.7), (3.0, 0.9)])
def test_the_best_flood_meets_delta_is_least_at_its_ratio_and_beats_the_poisson(
    eps: float, theta: float
) -> None:
    delta, p = 1e-6, geometric_ratio(eps, theta)
    flood = best_flood(eps, delta, p)
    assert flood.ratio in FLOOD_RATIOS
    assert correlated_noise_delta(eps, p, flood) <= delta
    assert correlated_noise_delta(eps, p, Flood(flood.mean * (1 - 1e-4), flood.ratio)) > delta
    poisson = least_flood(eps, delta, p)
    assert flood.mean <= poisson
    if eps * (1 - theta) <= 0.03:  # where the ε left to the flood is small: far fewer
        assert flood.mean < poisson / 10
    # the neighbouring ratios need no less (to the coarse search's 5 %)
    index = FLOOD_RATIOS.index(flood.ratio)
    for other in (index - 1, index + 1):
        if 0 < other < len(FLOOD_RATIOS):
            assert least_mean(eps, delta, p, FLOOD_RATIOS[other], rel_tol=1e-3) > 0.93 * flood.mean


@pytest.mark.parametrize("planned", [7, 40])
def test_the_users_negative_binomial_shares_add_up_to_the_flood(planned: int) -> None:
    """``planned`` users' shares summed: the flood's law (chi-square at 1e-4)."""
    flood = Flood(9.0, 0.6)
    rng = np.random.default_rng(20261130 + planned)
    shares = flood_shares(flood, planned, (planned, 40_000), rng).sum(axis=0)
    top = 40
    observed = np.bincount(np.minimum(shares, top), minlength=top + 1)
    pmf = flood_pmf(flood, top)
    expected = np.append(pmf, 1.0 - pmf.sum()) * shares.size
    assert stats.chisquare(observed, expected).pvalue > LEVEL


def test_the_planned_tester_is_the_curators_at_theta_eps_and_runs_the_protocol() -> None:
    """Same seed, same statistic: the fast path equals ``central+channels``'s tester at
    (θε1, θε2); the user-level path (every message, the shuffle, the analyser's counts)
    agrees with it (two-sample KS at 1e-4)."""
    k, alpha, eps1, eps2, n1, n2 = 24, 0.3, 1.2, 0.5, 600, 900
    ours = MultiMessageChannelsTester(k, alpha, eps1, eps2, delta=1e-6, theta=THETA)
    curator = MixedChannelsTester(
        k, alpha, THETA * eps1, THETA * eps2, model1="central", model2="central"
    )
    pmf = np.full(k, 1.0 / k)
    fast = ours.simulate_fast(pmf, pmf, n1, n2, 400, np.random.default_rng(3))
    same = curator.simulate_fast(pmf, pmf, n1, n2, 400, np.random.default_rng(3))
    np.testing.assert_array_equal(fast.statistics, same.statistics)
    rng = np.random.default_rng(4)
    users = [
        ours.run(rng.choice(k, n1, p=pmf), rng.choice(k, n2, p=pmf), rng).statistic
        for _ in range(300)
    ]
    assert stats.ks_2samp(users, fast.statistics).pvalue > LEVEL


def test_a_plans_messages_per_user_are_what_its_users_send() -> None:
    """The plan's messages per user, against the mean over the plan's own users of what
    the protocol's randomizer sends (Z = 5 standard errors)."""
    query = Query(Setting(Model.SHUFFLE, Coin.PRIVATE, "messages"), 64, 0.3, 1.5, 0.6, 1e-6)
    made = plan(query, fallback=False)
    assert made.protocol == "shuffle-private+messages"
    tester = made.tester_query
    rng = np.random.default_rng(11)
    for group, eps in zip(made.groups, (tester.eps1, tester.eps2), strict=True):
        p = geometric_ratio(eps, THETA)
        flood = best_flood(eps, 1e-6, p)
        _, per_user = randomize(rng.integers(0, 64, group.n_users), 64, p, flood, rng)
        assert group.messages_per_user is not None
        spread = per_user.std() / math.sqrt(per_user.size)
        assert abs(per_user.mean() - group.messages_per_user) <= Z * spread


def test_the_derived_constant_is_central_channels_read_at_theta_eps() -> None:
    """The packaged entry is what ``eps_scaled_entry`` makes of today's ``central+channels``
    entry (so the two cannot drift apart), and its ε nodes are the source's divided by θ."""
    import json
    from pathlib import Path

    import planner
    from planner.calibration.derived import eps_scaled_entry
    from planner.protocols.shuffle_messages import EPS_WEAK_MIN, SOURCE_KEY

    document = json.loads((Path(planner.__file__).parent / "data" / "constants.json").read_text())
    settings = document["settings"]
    entry = settings["shuffle-private+messages"]
    derived = eps_scaled_entry(settings[SOURCE_KEY], SOURCE_KEY, THETA, "", EPS_WEAK_MIN)
    assert entry["grid"] == derived["grid"]
    assert entry["covered"] == derived["covered"]
    assert entry.get("covered_above_grid") == derived.get("covered_above_grid")
    assert entry["provenance"] == derived["provenance"]
    nodes = settings[SOURCE_KEY]["grid"]["axes"]["eps_strong"]
    assert entry["grid"]["axes"]["eps_strong"] == pytest.approx([e / THETA for e in nodes])


def test_false_position_brackets_the_least_passing_point_in_a_few_evaluations() -> None:
    """``least_below`` closes a factor-2 bracket to 10⁻⁶ in a handful of evaluations where
    bisection takes 20, on a δ-like curve (a geometric tail over a floor) and a flat-then-
    steep one; its passing end passes, its failing end fails, and the least point lies
    between them."""
    from planner.formulas.search import least_below, least_passing

    target = 1e-6
    for floor, rate in ((1e-9, 1.0), (0.0, 0.05), (5e-7, 3.0)):
        calls: list[float] = []

        def value(
            x: float, floor: float = floor, rate: float = rate, calls: list[float] = calls
        ) -> float:
            calls.append(x)
            return floor + math.exp(-rate * x)

        root = -math.log(target - floor) / rate
        low, high, low_value, high_value = least_below(value, target, root / 1.5, root * 1.3, 1e-6)
        assert len(calls) <= 12, len(calls)
        assert low * (1 - 1e-12) < root <= high * (1 + 1e-12) and high / low <= 1 + 1e-6
        assert high_value == value(high) <= target < low_value == value(low)
        bisected = least_passing(
            lambda x, value=value: value(x) <= target, root / 1.5, root * 1.3, 1e-6
        )
        assert math.isclose(bisected, high, rel_tol=2e-6)


def test_the_best_flood_refines_its_coarse_bracket_in_few_evaluations() -> None:
    """The best flood at ε = 0.25 had taken 61 exact accountings (each candidate's search
    afresh, bisection); refining the best candidate's coarse bracket by false position
    takes about half. Its mean passes δ, and 2·10⁻⁶ less does not."""
    import planner.formulas.correlated_noise as noise

    eps, delta = 0.25, 1e-6
    p = math.exp(-0.8 * eps / 2)
    counted = []
    real = noise.correlated_noise_delta

    def counting(*args: object) -> float:
        counted.append(args)
        return real(*args)  # type: ignore[arg-type]

    noise.best_flood.cache_clear()
    noise.correlated_noise_delta = counting  # type: ignore[assignment]
    try:
        flood = noise.best_flood(eps, delta, p)
    finally:
        noise.correlated_noise_delta = real
        noise.best_flood.cache_clear()
    assert len(counted) <= 40, len(counted)
    assert real(eps, p, flood) <= delta
    assert real(eps, p, Flood(flood.mean / (1 + 2e-6), flood.ratio)) > delta
