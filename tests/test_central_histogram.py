"""A curator's noisy histogram per group (``central+histogram``): its bound, its tester."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner.formulas.registry import BOUNDS
from planner.validators.central_histogram import CentralHistogramTester
from planner.validators.curator_histogram import HistogramChannel
from planner.validators.engine import verify
from planner.validators.mixed_channels import MixedChannelsTester


def test_the_bound_by_hand() -> None:
    # k = 16, α = 0.2, ε = 5.1: r = e^{−2.55}, v = 2r/(1 − r)²,
    # n = √16·(1 + √(1 + 2·0.04·v·√16))/0.04
    r = math.exp(-2.55)
    v = 2 * r / (1 - r) ** 2
    by_hand = 4 * (1 + math.sqrt(1 + 2 * 0.04 * v * 4)) / 0.04
    assert v == pytest.approx(0.18374, abs=1e-5)
    assert by_hand == pytest.approx(202.898, abs=1e-3)
    bound = BOUNDS["central-histogram"]
    assert bound.evaluate(k=16, alpha=0.2, eps1=5.1, eps2=0.3) == pytest.approx(by_hand, rel=1e-12)
    # group 1's users do not depend on ε2 (each group takes half of the variance budget)
    assert bound.evaluate(k=16, alpha=0.2, eps1=5.1, eps2=20.0) == pytest.approx(by_hand)


def test_the_bound_s_limits_and_exponents() -> None:
    """Without noise the ℓ2 closeness order 2√k/α² a group; where the noise dominates
    k^{3/4}·√(2v)/α: exponent 3/4 in k, 1 in 1/α and in 1/ε at small ε (v ≈ 8/ε²)."""
    bound = BOUNDS["central-histogram"]
    assert bound.evaluate(k=1000, alpha=0.1, eps1=200.0, eps2=200.0) == pytest.approx(
        2 * math.sqrt(1000) / 0.01, rel=1e-9
    )

    def slope(name: str, low: float, high: float, **fixed: float) -> float:
        a = bound.evaluate(**{name: low}, **fixed)
        b = bound.evaluate(**{name: high}, **fixed)
        return math.log(b / a) / math.log(high / low)

    assert slope("k", 1e8, 1e9, alpha=0.5, eps1=1e-3, eps2=1e-3) == pytest.approx(0.75, abs=0.01)
    assert slope("alpha", 0.5, 0.25, k=1e6, eps1=1e-3, eps2=1e-3) == pytest.approx(-1.0, abs=0.01)
    assert slope("eps1", 1e-3, 5e-4, k=1e6, alpha=0.5, eps2=1e-3) == pytest.approx(-1.0, abs=0.01)


def test_the_tester_is_the_curator_s_channel_in_both_groups() -> None:
    """Its two channels are the curator's releases at each group's ε, and on the same seed
    it decides as the mixed-pair tester with both groups under a curator."""
    tester = CentralHistogramTester(64, 0.2, 2.0, 0.5)
    assert tester.channels == (HistogramChannel(64, 2.0), HistogramChannel(64, 0.5))
    mixed = MixedChannelsTester(64, 0.2, 2.0, 0.5, model1="central", model2="central")
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(64))
    ours = tester.simulate_fast(p, p, 400, 300, 50, np.random.default_rng(9))
    theirs = mixed.simulate_fast(p, p, 400, 300, 50, np.random.default_rng(9))
    np.testing.assert_array_equal(ours.rejects, theirs.rejects)


def test_the_user_level_and_fast_paths_agree() -> None:
    """The real releases (exact discrete Laplace noise, users' items) and the fast path
    (multinomial counts, numpy's sampler) reject a far pair equally often, within 5
    standard errors of the difference."""
    tester = CentralHistogramTester(16, 0.3, 1.0, 0.5)
    p = np.full(16, 1 / 16)
    q = p.copy()
    q[:8] += 0.3 / 8
    q[8:] -= 0.3 / 8
    rng = np.random.default_rng(20261129)
    trials, n1, n2 = 300, 150, 150
    slow = np.mean(
        [
            tester.run(rng.choice(16, n1, p=p), rng.choice(16, n2, p=q), rng).reject
            for _ in range(trials)
        ]
    )
    fast = float(np.mean(tester.simulate_fast(p, q, n1, n2, trials, rng).rejects))
    error = math.sqrt(slow * (1 - slow) / trials + fast * (1 - fast) / trials)
    assert 0.1 < fast < 0.95
    assert abs(slow - fast) < 5 * error + 1e-9


@pytest.mark.parametrize(("factor", "meets"), [(1.0, True), (0.25, False)])
def test_its_bound_is_of_the_tester_s_size(factor: float, meets: bool) -> None:
    """At its C = 1 bound a group (k = 16, α = 0.2, ε = 5.1) every family's error is within
    1/3 over 400 trials, and at a quarter of it some family's is not: the bound is the
    tester's size up to the calibrated C, not an O(·) far off either way."""
    bound = BOUNDS["central-histogram"].evaluate(k=16, alpha=0.2, eps1=5.1, eps2=5.1)
    n = math.ceil(factor * bound)
    tester = CentralHistogramTester(16, 0.2, 5.1, 5.1)
    result = verify(tester, 16, 0.2, n, n, trials=400, seed=4, target=1 / 3)
    assert (max(outcome.error_rate for outcome in result.outcomes) <= 1 / 3) is meets
