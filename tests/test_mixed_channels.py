"""The closeness statistic for a pair of channels under different trust models: a local
group's randomizer against a curator's noisy histogram (``validators/mixed_channels.py``).

The statistic must be unbiased for every pair and every two channels (null mean exactly
0), each group's variance estimate unbiased through its own channel, and the user-level and
fast paths must draw the same releases. Fixed seeds; a tolerance of ``Z`` standard errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from planner.validators.curator_histogram import HistogramChannel, noise_variance
from planner.validators.instances import build
from planner.validators.local_channels import closeness_statistic
from planner.validators.mixed_channels import MixedChannelsTester, group_channel
from planner.validators.protocol import SimulationPath, simulate

Z = 5.0
"""Standard errors allowed to a sample mean (a fixed seed: a flake is a change)."""


@pytest.mark.parametrize(("eps", "n"), [(0.3, 40), (1.0, 200), (4.0, 1000)])
def test_the_histogram_channel_s_estimates_are_unbiased(eps: float, n: int) -> None:
    """p̂ has mean p and u has mean Var p̂ = p(1 − p)/n + v/n², at small n where the
    noise dominates a bin (ε = 0.3: v ≈ 87 against n = 40)."""
    rng = np.random.default_rng(7)
    channel = HistogramChannel(6, eps)
    pmf = np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])
    counts = channel.fast_counts(pmf, n, 200_000, rng)
    estimate, variance = channel.debiased(counts, n)
    truth = pmf * (1 - pmf) / n + noise_variance(eps) / n**2
    spread = estimate.std(axis=0) / np.sqrt(len(estimate))
    assert np.all(np.abs(estimate.mean(axis=0) - pmf) <= Z * spread)
    assert np.allclose(estimate.var(axis=0), truth, rtol=0.02)
    assert np.all(
        np.abs(variance.mean(axis=0) - truth) <= Z * variance.std(axis=0) / np.sqrt(len(variance))
    )


@pytest.mark.parametrize(
    ("models", "eps"),
    [
        (("local", "central"), (1.0, 0.5)),
        (("central", "local"), (0.25, 4.0)),
        (("central", "central"), (0.5, 2.0)),
    ],
)
@pytest.mark.parametrize("family", ["zipf-1", "one-heavy", "paninski"])
def test_the_statistic_s_mean_is_the_squared_distance(models, eps, family) -> None:
    """E Z = ‖p − q‖²₂ exactly: 0 under the null families, the pair's own squared
    distance under the far ones, whatever the two channels."""
    k, n1, n2 = 32, 400, 900
    instance = build(family, k, 0.3)
    assert instance is not None
    tester = MixedChannelsTester(k, 0.3, *eps, model1=models[0], model2=models[1])
    one, two = tester.channels
    rng = np.random.default_rng(11)
    trials = 40_000
    counts1 = one.fast_counts(instance.p, n1, trials, rng)
    counts2 = two.fast_counts(instance.q, n2, trials, rng)
    z = closeness_statistic(counts1, n1, one, counts2, n2, two)
    target = float(np.sum((instance.p - instance.q) ** 2))
    assert abs(z.mean() - target) <= Z * z.std() / np.sqrt(trials)


@pytest.mark.parametrize("models", [("local", "central"), ("central", "local")])
def test_the_user_level_and_fast_paths_agree(models) -> None:
    """Rejection rates of the two paths on a null and a far family at the same sizes,
    within Z standard errors of their difference (the user path draws the curator's noise
    with the exact sampler, the fast path with numpy's)."""
    k, alpha = 64, 0.3
    tester = MixedChannelsTester(k, alpha, 1.0, 0.5, model1=models[0], model2=models[1])
    trials = 600
    for family in ("uniform", "paninski"):
        instance = build(family, k, alpha)
        assert instance is not None
        rates = []
        for path, seed in ((SimulationPath.FAST, 1), (SimulationPath.USER, 2)):
            batch = simulate(
                tester, instance.p, instance.q, 1500, 800, trials, np.random.default_rng(seed), path
            )
            rates.append(float(np.mean(batch.rejects)))
        pooled = (rates[0] + rates[1]) / 2
        spread = np.sqrt(2 * pooled * (1 - pooled) / trials)
        assert abs(rates[0] - rates[1]) <= Z * max(spread, 1 / trials), (family, rates)


def test_a_curator_group_needs_far_fewer_users_than_the_same_group_reporting_locally() -> None:
    """At the same sizes the curator's release leaves far less noise than any local
    randomizer at its ε: ε = 0.5, k = 64, n = 2,000, the mean u (the estimate's variance)
    is about 1/60 of the best local channel's."""
    local, curator = group_channel("local", 64, 0.5), group_channel("central", 64, 0.5)
    rng = np.random.default_rng(3)
    pmf = np.full(64, 1 / 64)
    local_u = local.debiased(local.fast_counts(pmf, 2000, 200, rng), 2000)[1].mean()
    curator_u = curator.debiased(curator.fast_counts(pmf, 2000, 200, rng), 2000)[1].mean()
    assert 40 * curator_u < local_u


def test_a_group_s_model_and_release_are_checked() -> None:
    with pytest.raises(ValueError, match="model must be one of local, central"):
        group_channel("shuffle", 10, 1.0)
    with pytest.raises(ValueError, match="k ≥ 2 and a finite ε > 0"):
        HistogramChannel(1, 1.0)
    with pytest.raises(ValueError, match="k ≥ 2 and a finite ε > 0"):
        HistogramChannel(4, float("inf"))
    released = HistogramChannel(4, 1.0).randomize(np.array([0, 0, 3]), np.random.default_rng(0))
    assert released.shape == (4,) and released.dtype.kind == "i"


@pytest.mark.parametrize(
    ("models", "eps", "sizes", "family"),
    [
        (("central", "central"), (8.0, 8.0), (1000, 1000), "uniform"),
        (("local", "central"), (8.0, 8.0), (1619, 1619), "point-mass-heavy"),
    ],
)
def test_a_curator_s_negative_counts_do_not_reject_sparse_nulls(models, eps, sizes, family):
    """A curator's release can put −1 in a bin nobody holds: its estimate is negative,
    and weighed by the bare noise variance (the pooled estimate clipped at 0) one such
    bin could reject alone (these nulls erred 0.95 and 0.98 so). Floored at a uniform
    bin's weight, 1,000 trials err at most 0.30 (the normal tail at κ = 0.7 is 0.24)."""
    k = 1000
    tester = MixedChannelsTester(k, 0.2, *eps, model1=models[0], model2=models[1])
    instance = build(family, k, 0.2)
    assert instance is not None
    batch = tester.simulate_fast(instance.p, instance.q, *sizes, 1000, np.random.default_rng(41))
    assert float(np.mean(batch.rejects)) <= 0.30
