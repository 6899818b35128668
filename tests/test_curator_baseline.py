"""The trusted-curator baseline of benchmarks/bench_curator_baseline.py: its noise is the
two-sided geometric of the stated variance, its statistic is centred under the null and
tracks ‖p − q‖² under the alternative, and its release is exactly ε-DP."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from planner.validators.curator_histogram import (
    SENSITIVITY,
    CuratorHistogramTester,
    noise_log_pmf,
    noise_ratio,
    noise_variance,
    release,
    release_log_likelihood,
    sample_noise,
)
from planner.validators.instances import build

Z = 5.0
"""Standard errors allowed to a sample mean (a fixed seed: a flake is a change)."""


@pytest.mark.parametrize("eps", [0.2, 1.0, 4.0])
def test_the_stated_variance_is_the_two_sided_geometric_pmfs(eps: float) -> None:
    r = noise_ratio(eps)
    assert r == pytest.approx(math.exp(-eps / 2))
    support = np.arange(-4000, 4001)
    pmf = np.exp(noise_log_pmf(support, eps))
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert pmf[support == 0][0] == pytest.approx((1 - r) / (1 + r))
    assert float(np.sum(support**2 * pmf)) == pytest.approx(noise_variance(eps), rel=1e-9)
    assert noise_variance(eps) == pytest.approx(2 * r / (1 - r) ** 2)


@pytest.mark.parametrize("eps", [0.3, 2.0, 8.0])
def test_the_fast_noise_has_mean_0_and_the_stated_variance(eps: float) -> None:
    draws = 400_000
    noise = sample_noise(eps, draws, np.random.default_rng(11))
    variance = noise_variance(eps)
    assert abs(noise.mean()) <= Z * math.sqrt(variance / draws)
    # Var of the sample variance: (μ4 − σ⁴)/n, μ4 of the two-sided geometric from its pmf
    support = np.arange(-20_000, 20_001)
    fourth = float(np.sum(support.astype(float) ** 4 * np.exp(noise_log_pmf(support, eps))))
    assert abs(noise.var() - variance) <= Z * math.sqrt((fourth - variance**2) / draws)
    for value in (0, 1, -1, 2):
        p = math.exp(float(noise_log_pmf(np.array(value), eps)))
        observed = float(np.mean(noise == value))
        assert abs(observed - p) <= Z * math.sqrt(p * (1 - p) / draws), value


def test_the_exact_release_draws_the_same_noise() -> None:
    eps, bins = 1.5, 4000
    noisy = release(np.full(bins, 7), eps, random.Random(5)) - 7
    for value in (0, 1, -1):
        p = math.exp(float(noise_log_pmf(np.array(value), eps)))
        assert abs(float(np.mean(noisy == value)) - p) <= Z * math.sqrt(p * (1 - p) / bins)
    assert abs(noisy.mean()) <= Z * math.sqrt(noise_variance(eps) / bins)


def _scores(
    tester: CuratorHistogramTester, p: np.ndarray, q: np.ndarray, n: tuple[int, int]
) -> np.ndarray:
    trials, k = 4000, p.size
    rng = np.random.default_rng(3)
    x = rng.multinomial(n[0], np.broadcast_to(p, (trials, k)))
    x = x + sample_noise(tester.eps1, (trials, k), rng)
    y = rng.multinomial(n[1], np.broadcast_to(q, (trials, k)))
    y = y + sample_noise(tester.eps2, (trials, k), rng)
    return tester.statistic(x, y, *n)


@pytest.mark.parametrize("family", ["uniform", "zipf-1"])
def test_the_statistic_is_centred_under_the_null(family: str) -> None:
    k, n = 64, (3000, 2000)
    tester = CuratorHistogramTester(k, 0.2, 1.0, 0.5)
    instance = build(family, k, 0.2)
    assert instance is not None
    z = _scores(tester, instance.p, instance.q, n)
    assert abs(z.mean()) <= 0.05 * z.std()  # the multinomial's own bias is smaller
    assert abs(z.mean()) <= Z * z.std() / math.sqrt(z.size)


@pytest.mark.parametrize("family", ["paninski", "perturbed-zipf"])
def test_the_statistic_tracks_the_squared_distance_under_the_alternative(family: str) -> None:
    """E Z ≈ Σ n1²n2²(p_i − q_i)²/(n1p_i + n2q_i + w) at counts well above the noise."""
    k, n1, n2 = 64, 3000, 2000
    tester = CuratorHistogramTester(k, 0.2, 1.0, 0.5)
    instance = build(family, k, 0.2)
    assert instance is not None
    p, q = instance.p, instance.q
    z = _scores(tester, p, q, (n1, n2))
    expected = float(
        np.sum(n1**2 * n2**2 * (p - q) ** 2 / (n1 * p + n2 * q + tester.offset(n1, n2)))
    )
    assert z.mean() == pytest.approx(expected, rel=0.03)
    assert z.mean() >= tester.threshold(n1, n2) / tester.fraction * 0.9  # the least mean


def _histograms(k: int, n: int) -> list[np.ndarray]:
    return [
        np.bincount(np.array(items, dtype=int), minlength=k)
        for items in itertools.combinations_with_replacement(range(k), n)
    ]


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
@pytest.mark.parametrize(("k", "n"), [(2, 3), (3, 2), (4, 2)])
def test_the_release_is_exactly_eps_dp_over_replace_one_neighbours(
    eps: float, k: int, n: int
) -> None:
    """Every histogram of n users over k bins, every replace-one neighbour, every output in
    a window reaching past both: the log-likelihood ratio is ≤ ε, and reaches it."""
    window = np.arange(-6, n + 7)
    outputs = np.array(list(itertools.product(window, repeat=k)))
    worst = -math.inf
    for histogram in _histograms(k, n):
        likelihood = np.sum(noise_log_pmf(outputs - histogram, eps), axis=1)
        for source, target in itertools.permutations(range(k), 2):
            if histogram[source] == 0:
                continue
            neighbour = histogram.copy()
            neighbour[source] -= 1
            neighbour[target] += 1
            assert np.abs(neighbour - histogram).sum() == SENSITIVITY
            other = np.sum(noise_log_pmf(outputs - neighbour, eps), axis=1)
            worst = max(worst, float(np.max(likelihood - other)))
    assert worst <= eps + 1e-12
    assert worst == pytest.approx(eps, abs=1e-12)
    corner = release_log_likelihood(np.zeros(k, dtype=int), np.zeros(k, dtype=int), eps)
    assert corner == pytest.approx(k * math.log((1 - noise_ratio(eps)) / (1 + noise_ratio(eps))))
