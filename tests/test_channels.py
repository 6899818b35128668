"""Local channels (k-RR, bit flipping) and the closeness statistic for any two of them
(``validators/local_channels.py``): exact privacy, an unbiased statistic, both paths alike."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from planner.validators.local_channels import (
    AffineChannel,
    Randomizer,
    TwoChannelTester,
    closeness_statistic,
)
from planner.validators.protocol import SimulationPath, simulate


@pytest.mark.parametrize("randomizer", list(Randomizer))
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0, 8.0])
def test_every_report_is_exactly_eps_private(randomizer: Randomizer, k: int, eps: float) -> None:
    """The largest likelihood ratio of any report between any two inputs is e^ε, reached
    (k-RR: a report naming one of the two inputs; bit flipping: the two inputs' bits)."""
    channel = AffineChannel(randomizer, k, eps)
    tables = [channel.report_probabilities(value) for value in range(k)]
    for table in tables:
        assert math.isclose(sum(table.values()), 1.0, rel_tol=1e-12)
    worst = max(
        tables[x][report] / tables[y][report]
        for x, y in itertools.permutations(range(k), 2)
        for report in tables[x]
    )
    assert worst == pytest.approx(math.exp(eps), rel=1e-12)


@pytest.mark.parametrize("randomizer", list(Randomizer))
def test_the_affine_map_is_each_bins_report_frequency(randomizer: Randomizer) -> None:
    """π_j = a·p_j + b: the chance that one user's report names bin j, from the report
    table itself."""
    channel = AffineChannel(randomizer, 4, 1.3)
    a, b = channel.affine
    for value in range(4):
        table = channel.report_probabilities(value)
        for j in range(4):
            if randomizer is Randomizer.K_RR:
                named = table[(j,)]
            else:
                named = sum(prob for bits, prob in table.items() if bits[j] == 1)
            assert named == pytest.approx(a * (j == value) + b, rel=1e-12)


def _pair(k: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """A skewed p and q = p moved by α in total variation."""
    p = np.linspace(1.0, 3.0, k)
    p /= p.sum()
    q = p.copy()
    q[: k // 2] += 2 * alpha / k
    q[k // 2 :] -= 2 * alpha / k
    return p, q


@pytest.mark.parametrize(
    "first,second", [(Randomizer.K_RR, Randomizer.K_RR), (Randomizer.K_RR, Randomizer.UNARY)]
)
def test_the_statistic_is_unbiased_for_any_two_channels(
    first: Randomizer, second: Randomizer
) -> None:
    """Mean of Z over 40,000 fast trials: within 4 standard errors of ‖p − q‖²₂, under the
    null (a skewed p, so no symmetry helps) and at a distance; ε differ per group."""
    k, n1, n2 = 12, 300, 700
    one, two = AffineChannel(first, k, 2.0), AffineChannel(second, k, 0.7)
    rng = np.random.default_rng(20261128)
    for p, q in (_pair(k, 0.0), _pair(k, 0.2)):
        z = closeness_statistic(
            one.fast_counts(p, n1, 40_000, rng),
            n1,
            one,
            two.fast_counts(q, n2, 40_000, rng),
            n2,
            two,
        )
        target = float(((p - q) ** 2).sum())
        assert abs(z.mean() - target) < 4 * z.std() / math.sqrt(z.size)


@pytest.mark.parametrize("randomizer", list(Randomizer))
def test_user_level_and_fast_paths_reject_at_the_same_rate(randomizer: Randomizer) -> None:
    """2,000 trials each way at a point where the tester rejects about half the time: the
    two rates differ by less than 4 standard errors of their difference."""
    k = 8
    p, q = _pair(k, 0.15)
    tester = TwoChannelTester(
        k, 0.15, AffineChannel(randomizer, k, 1.5), AffineChannel(Randomizer.K_RR, k, 3.0)
    )
    rng = np.random.default_rng(7)
    rates = [
        simulate(tester, p, q, 400, 300, 2000, rng, path).rejects.mean()
        for path in (SimulationPath.USER, SimulationPath.FAST)
    ]
    pooled = sum(rates) / 2
    assert 0.1 < pooled < 0.9
    assert abs(rates[0] - rates[1]) < 4 * math.sqrt(2 * pooled * (1 - pooled) / 2000)


def test_k_rr_at_low_privacy_needs_a_tiny_fraction_of_the_one_bit_plan() -> None:
    """At k = 1000, α = 0.1, ε = 8 (both groups) the one-bit Hadamard plan is millions of
    users a group; k-RR with this statistic tells Paninski's pair from uniform with 8,000
    a group (about 1/3 error each way at 4,000; 0.15 and 0.17 at 8,000 over 2,000 trials):
    both errors below 1/3 over 400 trials each (at a true rate of 1/3, 100 errors or fewer
    of 400 has probability below 0.001)."""
    k, alpha, n = 1000, 0.1, 8000
    uniform = np.full(k, 1.0 / k)
    far = uniform * (1 + 2 * alpha * np.where(np.arange(k) % 2 == 0, 1.0, -1.0))
    channel = AffineChannel(Randomizer.K_RR, k, 8.0)
    tester = TwoChannelTester(k, alpha, channel, channel)
    rng = np.random.default_rng(3)
    false_rejects = tester.simulate_fast(uniform, uniform, n, n, 400, rng).rejects.sum()
    misses = (~tester.simulate_fast(uniform, far, n, n, 400, rng).rejects).sum()
    assert false_rejects <= 100 and misses <= 100


def test_a_channel_refuses_what_it_cannot_be() -> None:
    with pytest.raises(ValueError, match="k ≥ 2"):
        AffineChannel(Randomizer.K_RR, 1, 1.0)
    with pytest.raises(ValueError, match="finite"):
        AffineChannel(Randomizer.UNARY, 4, float("nan"))
    assert AffineChannel(Randomizer.K_RR, 1000, 1.0).bits_per_user == 10
    assert AffineChannel(Randomizer.UNARY, 1000, 1.0).bits_per_user == 1000
