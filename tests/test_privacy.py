"""Privacy of the real protocols, checked exactly on small cases."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from planner.formulas.accounting import poisson_histogram_delta
from planner.protocols.shuffle_private import noise_mu
from planner.validators import central, local_private, shuffle_private
from planner.validators.hadamard import in_block_set
from tests.conftest import make_query


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0])
def test_randomized_response_ratio_is_exactly_e_to_the_eps(eps: float) -> None:
    flip = local_private.flip_probability(eps)
    law = {
        truth: {output: (1 - flip) if output == truth else flip for output in (0, 1)}
        for truth in (0, 1)
    }
    ratios = [law[a][o] / law[b][o] for a in (0, 1) for b in (0, 1) for o in (0, 1)]
    assert max(ratios) == pytest.approx(math.exp(eps), rel=1e-12)


@pytest.mark.parametrize("k", [3, 5, 8])
def test_hadamard_response_message_is_eps_ldp_over_every_pair_of_inputs(k: int) -> None:
    eps = 0.7
    flip = local_private.flip_probability(eps)
    order = 1 << (k - 1).bit_length()
    worst = 0.0
    for block in range(1, order):
        for x, y in itertools.product(range(k), repeat=2):
            bx = in_block_set(np.array([x]), np.array([block]))[0]
            by = in_block_set(np.array([y]), np.array([block]))[0]
            for output in (0, 1):
                px = (1 - flip) if output == bx else flip
                py = (1 - flip) if output == by else flip
                worst = max(worst, px / py)
    assert worst == pytest.approx(math.exp(eps), rel=1e-12)


def test_randomizer_flips_at_the_stated_rate() -> None:
    rng = np.random.default_rng(5)
    eps = 0.5
    messages = local_private.randomize(np.zeros(200_000, dtype=int), eps, 8, rng)
    truthful = in_block_set(np.zeros(200_000, dtype=int), messages.block)  # x = 0: always in
    observed = np.mean(messages.bit != truthful)
    expected = local_private.flip_probability(eps)
    assert abs(observed - expected) < 4 * math.sqrt(expected * (1 - expected) / 200_000)


def _z(values1: tuple, values2: tuple, k: int, kind: str = central.CentralStatistic.ZHANG) -> float:
    """The central tester's integer statistic on two equal-size datasets."""
    if kind == central.CentralStatistic.CONDITIONAL:
        x, y = (np.bincount(np.array(v, dtype=int), minlength=k) for v in (values1, values2))
        return float(central.conditional_statistic(x, y, len(values1)))
    half1, half2 = len(values1) // 2, len(values2) // 2
    hist = [
        np.bincount(np.array(part, dtype=int), minlength=k)
        for part in (values1[:half1], values1[half1:], values2[:half2], values2[half2:])
    ]
    return float(central.zhang_statistic(*hist))


def _neighbours(values: tuple, k: int):
    for position in range(len(values)):
        for replacement in range(k):
            if replacement != values[position]:
                yield (*values[:position], replacement, *values[position + 1 :])


def test_central_statistic_sensitivity_is_four_under_replacement() -> None:
    k, other = 3, (0, 1, 2, 2)
    changes = [
        abs(_z(d, other, k) - _z(n, other, k))
        for d in itertools.product(range(k), repeat=4)
        for n in _neighbours(d, k)
    ]
    assert max(changes) == 4  # attained: the paper's "2" holds for add/remove only


def test_conditional_statistic_sensitivity_is_within_four_counts_under_replacement() -> None:
    """Every replace-one neighbour of every dataset pair (k = 3, three users a group):
    the integer statistic moves by at most its stated sensitivity 4Q + 2, and T itself
    (unrounded) by at most 4 counts."""
    kind = central.CentralStatistic.CONDITIONAL
    k, used = 3, 3
    bound = central.integer_sensitivity(kind)
    assert bound == 4 * central.RESOLUTION + 2

    def exact(values1: tuple, values2: tuple) -> float:
        x, y = (np.bincount(np.array(v, dtype=int), minlength=k) for v in (values1, values2))
        g = central.mean_absolute_difference(used, x + y)
        return float(np.sum(np.abs(x - y) - g))

    worst_integer = worst_exact = 0.0
    for d in itertools.product(range(k), repeat=used):
        for other in itertools.product(range(k), repeat=used):
            for n in _neighbours(d, k):
                worst_integer = max(
                    worst_integer, abs(_z(d, other, k, kind) - _z(n, other, k, kind))
                )
                worst_exact = max(worst_exact, abs(exact(d, other) - exact(n, other)))
    assert worst_integer <= bound
    assert worst_exact <= 4 + 1e-12


def test_conditional_centring_is_the_hypergeometric_mean_absolute_difference() -> None:
    """g_m(s) = E|2H − s|, H ~ Hypergeometric(2m, m, s), against the sum over the support
    (by hand: g_1 = (0, 1, 0); g_2(2) = 2·(1/6) + 2·(1/6) = 2/3), and each step of G = round(Q·g) is
    at most Q + 1, also at sizes plans reach (up to MAX_USED)."""
    from scipy.stats import hypergeom

    assert central.mean_absolute_difference(1, np.arange(3)) == pytest.approx([0, 1, 0])
    assert central.mean_absolute_difference(2, np.array([2]))[0] == pytest.approx(2 / 3)
    for used in (3, 8, 25):
        totals = np.arange(2 * used + 1)
        brute = [
            sum(hypergeom.pmf(h, 2 * used, used, s) * abs(2 * h - s) for h in range(s + 1))
            for s in totals
        ]
        assert central.mean_absolute_difference(used, totals) == pytest.approx(brute, abs=1e-12)
    for used in (1000, 10**6, 10**10, 10**12, central.MAX_USED):
        # runs of consecutive totals at the bottom, around 2·10⁶ (where the log-gamma pmf
        # would lose 1e-7 at m = 1e9) and at the top of [0, 2m]
        for start in (0, min(2 * 10**6, used), 2 * used - 3000):
            totals = np.arange(start, start + 3001)
            steps = np.abs(np.diff(central.centring(used, totals)))
            assert steps.max() <= central.RESOLUTION + 1, (used, start)


def test_conditional_statistic_is_centred_under_the_null_whatever_p() -> None:
    """E T = 0 exactly for multinomial samples of equal size (no Poissonisation): the mean
    over 200,000 null draws at a skewed p is within 4 standard errors of 0."""
    rng = np.random.default_rng(20261126)
    p = np.array([0.5, 0.3, 0.1, 0.05, 0.05])
    used = 40
    draws = [rng.multinomial(used, np.broadcast_to(p, (200_000, p.size))) for _ in range(2)]
    values = central.conditional_statistic(*draws, used) / central.RESOLUTION
    assert abs(values.mean()) < 4 * values.std() / math.sqrt(values.size)


@functools.cache
def _reject_probability(values1: tuple, values2: tuple, k: int, tester) -> float:
    """Exact reject probability: average over group 2's uniform ordered subsample.

    Remembered per dataset pair (each is also its neighbours' neighbour), and the law per
    value of the statistic (many subsamples share it): the same sums, in the same order."""
    used = min(len(values1), len(values2))
    eps = central.test_epsilon(len(values1), len(values2), tester.eps1, tester.eps2)
    total, count = 0.0, 0
    for chosen in itertools.permutations(range(len(values2)), used):
        subsample = tuple(values2[i] for i in chosen)
        total += _reject_at(_z(values1, subsample, k, tester.kind), used, eps, tester)
        count += 1
    return total / count


@functools.cache
def _reject_at(z: float, used: int, eps: float, tester) -> float:
    return float(
        central.reject_probability(
            np.array(z), used, eps, tester.shift_scale, tester.shift_privacy, tester.kind
        )
    )


@pytest.mark.parametrize("statistic", ["zhang", "conditional"])
def test_central_reject_probability_ratio_is_within_each_groups_epsilon(statistic: str) -> None:
    """Exact reject probabilities (subsampling enumerated, noise in closed form) of every
    neighbouring pair of small datasets: within e^ε of each group's own ε."""
    k = 2
    tester = central.CentralTester(
        k, eps1=1.0, eps2=0.4, shift_scale=1.0, shift_privacy=4.0, statistic=statistic
    )
    group2_sizes = central.test_epsilon(4, 6, 1.0, 0.4)
    assert group2_sizes <= 1.0 + 1e-12
    worst1 = worst2 = 0.0
    fixed2 = (0, 1, 1, 0, 1, 0)
    for d in itertools.product(range(k), repeat=4):
        base = _reject_probability(d, fixed2, k, tester)
        for n in _neighbours(d, k):
            other = _reject_probability(n, fixed2, k, tester)
            worst1 = max(worst1, base / other, (1 - base) / (1 - other))
    fixed1 = (0, 1, 0, 1)
    for d in itertools.product(range(k), repeat=6):
        base = _reject_probability(fixed1, d, k, tester)
        for n in _neighbours(d, k):
            other = _reject_probability(fixed1, n, k, tester)
            worst2 = max(worst2, base / other, (1 - base) / (1 - other))
    eps_test = central.test_epsilon(4, 6, 1.0, 0.4)
    assert worst1 <= math.exp(eps_test) * (1 + 1e-9)
    # group 2 is subsampled 4 of 6: ε2 = ln(1 + (4/6)(e^{ε_test} − 1)) ≤ 0.4
    amplified = math.log1p(4 / 6 * math.expm1(eps_test))
    assert amplified <= 0.4 + 1e-12
    assert worst2 <= math.exp(amplified) * (1 + 1e-9)


def test_shuffle_noise_gives_each_group_its_epsilon_delta() -> None:
    query = make_query("shuffle-private", k=200, eps1=1.0, eps2=0.3, delta=1e-6)
    mu_min = [noise_mu(e, 1e-6, query.accounting) for e in (1.0, 0.3)]
    for n1, n2 in [(5000, 80000), (5000, 5000), (123, 99999)]:
        used = shuffle_private.noise_levels(n1, n2, *mu_min)
        assert used[0] / n1 == pytest.approx(used[1] / n2)  # equal mixing weights
        for eps, mu in zip((1.0, 0.3), used, strict=True):
            assert poisson_histogram_delta(eps, mu) <= 1e-6


def test_shuffle_randomizer_adds_poisson_mu_noise_per_bin() -> None:
    rng = np.random.default_rng(11)
    k, mu, n = 20, 7.5, 500
    totals = np.array(
        [
            np.bincount(shuffle_private.randomize(np.zeros(n, dtype=int), k, mu, rng), minlength=k)[
                1:
            ]
            for _ in range(400)
        ]
    ).ravel()
    assert totals.mean() == pytest.approx(mu, rel=0.03)
    assert totals.var() == pytest.approx(mu, rel=0.1)  # Poisson: variance = mean


@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0, 20.0])
def test_central_noise_law_is_exactly_eps_dp_on_integer_outputs(eps: float) -> None:
    """The geometric mechanism, exactly: rational arithmetic on P(Z + N = o) ∝ a^{|o − Z|}.

    With a = e^{−ε/S} the ratio for neighbours Z, Z′ = Z + s (|s| ≤ S) is a^{|o−Z|−|o−Z′|},
    a power a^j with |j| ≤ S: the exponent, an integer, is checked exactly for every output
    o in a window around both, so the ratio never exceeds a^{−S} = e^ε (and no output has
    probability 0 under one neighbour only: the law has full support on the integers).
    """
    from fractions import Fraction

    scale = central.noise_scale(eps)
    assert scale == Fraction(central.SENSITIVITY) / Fraction(eps)  # b = S/ε exactly
    sensitivity = int(central.SENSITIVITY)
    for z in (-6, 0, 10):
        for shift in range(-sensitivity, sensitivity + 1):
            exponents = [abs(o - z) - abs(o - z - shift) for o in range(z - 50, z + 50)]
            assert max(abs(j) for j in exponents) <= sensitivity


def test_discrete_laplace_sampler_follows_its_pmf() -> None:
    import random

    from planner.validators import discrete_laplace

    eps = 1.0
    scale = central.noise_scale(eps)
    ratio = math.exp(-eps / central.SENSITIVITY)
    source = random.Random(20261126)
    draws = 40_000
    counts: dict[int, int] = {}
    for _ in range(draws):
        value = discrete_laplace.sample(scale, source)
        counts[value] = counts.get(value, 0) + 1
    for value in range(-8, 9):
        p = (1 - ratio) / (1 + ratio) * ratio ** abs(value)
        sigma = math.sqrt(draws * p * (1 - p))
        assert abs(counts.get(value, 0) - draws * p) < 5 * sigma, value
    # the two-sided tail beyond |j| > 30 has mass 2a^31/(1+a) ≈ 9e-4: it is reached
    assert any(abs(value) > 30 for value in counts)


def test_central_decision_law_matches_the_user_path_and_is_eps_dp() -> None:
    """The fast path's closed form equals the user path's rejection rate, and the reject
    probability of neighbouring Z (|Z − Z′| ≤ S) stays within e^ε both ways."""
    import random

    from planner.validators import discrete_laplace

    eps, used = 0.5, 400
    limit = central.threshold(used, eps, 1.0, 4.0)
    ratio = math.exp(-eps / central.SENSITIVITY)
    zs = np.arange(-60, 140, 2)  # Z is even
    p = central.reject_probability(zs, used, eps, 1.0, 4.0)
    for z, reject in zip(zs[:-2], p[:-2], strict=True):
        neighbour = central.reject_probability(np.array(z + 4), used, eps, 1.0, 4.0)
        # attained with equality (a^{-S} = e^ε); 1 − p loses digits near p = 1
        assert neighbour / reject <= math.exp(eps) * (1 + 1e-9)
        assert (1 - reject) / (1 - neighbour) <= math.exp(eps) * (1 + 1e-9)
    source = random.Random(7)
    z = round(limit) - 4
    draws = 20_000
    scale = central.noise_scale(eps)
    rate = sum(z + discrete_laplace.sample(scale, source) > limit for _ in range(draws)) / draws
    expected = float(discrete_laplace.upper_tail(limit - z, ratio))
    assert abs(rate - expected) < 5 * math.sqrt(expected * (1 - expected) / draws)


@pytest.mark.parametrize("hashes", [1, 3])
def test_shuffle_public_messages_per_user_count_the_noise_of_every_hash(
    hashes: int, monkeypatch
) -> None:
    """R hash runs on disjoint users each release L bins with Poisson(μ) noise, so a group
    of n users sends n + R·L·μ messages: printing 1 + L·μ/n would under-noise at R > 1."""
    from planner.constants import default_constants
    from planner.plan import plan

    table = default_constants()
    monkeypatch.setitem(table.for_setting("shuffle-public").extra, "hashes", hashes)
    query = make_query("shuffle-public", k=4096, alpha=0.1, eps1=1.0, eps2=0.5, delta=1e-6)
    result = plan(query, table, fallback=False)
    assert result.protocol == "shuffle-public" and result.compression is not None
    assert result.compression.hashes == hashes
    for group in result.groups:
        noise_messages = (group.messages_per_user - 1) * group.n_users
        assert noise_messages == pytest.approx(hashes * result.compression.L * group.noise_mu)


def test_the_conditional_statistic_refuses_sizes_outside_its_integer_range() -> None:
    """Q·Σ|X − Y| must fit an int64: above MAX_USED users per group (and at none) the
    statistic refuses instead of overflowing into a wrong decision, and a group with no
    user is refused by name rather than by a division by zero."""
    with pytest.raises(ValueError, match="outside"):
        central.conditional_statistic(np.array([1, 0]), np.array([0, 1]), central.MAX_USED + 1)
    with pytest.raises(ValueError, match="outside"):
        central.mean_absolute_difference(0, np.array([0]))
    tester = central.CentralTester(2, 1.0, 1.0)
    with pytest.raises(ValueError, match="at least one user"):
        tester.run(np.array([], dtype=int), np.array([0, 1]), np.random.default_rng(0))
    # at the largest size a plan can validate, a far alternative is still rejected
    batch = tester.simulate_fast(
        np.array([1.0, 0.0]), np.array([0.5, 0.5]), 10**15, 10**15, 3, np.random.default_rng(0)
    )
    assert batch.rejects.all() and (batch.statistics > 0).all()
