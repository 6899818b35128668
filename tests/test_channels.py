"""Local channels (k-RR, bit flipping) and the closeness statistic for any two of them
(``validators/local_channels.py``): exact privacy, an unbiased statistic, both paths alike."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from planner.formulas.bounds import bit_flipping_noise, krr_noise, unary_noise
from planner.validators import local_channels
from planner.validators.curator_histogram import HistogramChannel
from planner.validators.instances import build
from planner.validators.local_channels import (
    AffineChannel,
    ChannelsTester,
    Randomizer,
    TwoChannelTester,
    best_channel,
    closeness_statistic,
    studentized_statistic,
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


def test_each_channels_noise_against_hand_computed_values() -> None:
    """w = k·π(1 − π)/a² at the uniform p, computed by hand:
    k-RR, k = 1000, ε = 8: (1 − 1/1000)·(3979.958/2979.958)² = 1.78196;
    unary, k = 1000, ε = 8: q = 1/2981.958, a = 1/2 − q, π = a/1000 + q = 8.3501e-4,
    1000·π(1 − π)/a² = 3.3417; k-RR, k = 2, ε = 0.1: ½·(2.10517/0.10517)² = 200.3;
    unary, k = 2, ε = 0.1: 800.9 (binary randomized response is the better channel)."""
    assert krr_noise(1000.0, 8.0) == pytest.approx(1.78196, rel=1e-4)
    assert unary_noise(1000.0, 8.0) == pytest.approx(3.3417, rel=1e-4)
    assert krr_noise(2.0, 0.1) == pytest.approx(200.3, rel=1e-3)
    assert unary_noise(2.0, 0.1) == pytest.approx(800.9, rel=1e-3)
    assert best_channel(1000, 8.0).randomizer is Randomizer.K_RR
    assert best_channel(1000, 0.5).randomizer is Randomizer.OPTIMIZED_UNARY
    assert best_channel(2, 0.1).randomizer is Randomizer.K_RR
    # small ε, large k: about 4k/ε², Hadamard response's per-bin variance times k
    assert unary_noise(1000.0, 0.05) == pytest.approx(4 * 1000 / 0.05**2, rel=0.01)


def test_each_noise_formula_is_its_channels_per_bin_variance() -> None:
    """k·π(1 − π)/a² from each channel's own (a, b) at the uniform p equals the formula
    the planner sizes by; the noise part q(1 − q)/a² of optimized unary encoding is never
    above bit flipping's, k = 50, ε from 0.1 to 20."""
    formulas = {
        Randomizer.K_RR: krr_noise,
        Randomizer.OPTIMIZED_UNARY: unary_noise,
        Randomizer.UNARY: bit_flipping_noise,
    }
    for eps in (0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 20.0):
        for randomizer, formula in formulas.items():
            a, b = AffineChannel(randomizer, 50, eps).affine
            report = a / 50 + b
            assert 50 * report * (1 - report) / a**2 == pytest.approx(
                float(formula(50.0, eps)), rel=1e-9
            )
        noise = []
        for randomizer in (Randomizer.OPTIMIZED_UNARY, Randomizer.UNARY):
            a, b = AffineChannel(randomizer, 50, eps).affine
            noise.append(b * (1 - b) / a**2)
        assert noise[0] <= noise[1] * (1 + 1e-12)


def test_the_stable_statistic_equals_the_u_statistic_in_exact_arithmetic() -> None:
    """Z from the module's rearranged sum against the U-statistic form in fractions."""
    one = AffineChannel(Randomizer.K_RR, 3, 1.5)
    two = AffineChannel(Randomizer.OPTIMIZED_UNARY, 3, 0.4)
    x, n1, y, n2 = [5, 9, 6], 20, [11, 7, 13], 25
    (a1, b1), (a2, b2) = (
        tuple(Fraction(v) for v in one.affine),
        tuple(Fraction(v) for v in two.affine),
    )
    exact = Fraction(0)
    for xj, yj in zip(x, y, strict=True):
        first = (Fraction(xj * (xj - 1), n1 * (n1 - 1)) - 2 * b1 * Fraction(xj, n1) + b1 * b1) / (
            a1 * a1
        )
        second = (Fraction(yj * (yj - 1), n2 * (n2 - 1)) - 2 * b2 * Fraction(yj, n2) + b2 * b2) / (
            a2 * a2
        )
        cross = 2 * (Fraction(xj, n1) - b1) * (Fraction(yj, n2) - b2) / (a1 * a2)
        exact += first - cross + second
    z = float(closeness_statistic(np.array(x), n1, one, np.array(y), n2, two))
    assert z == pytest.approx(float(exact), rel=1e-10, abs=1e-12)


def test_the_statistic_keeps_its_precision_at_vast_sizes_and_tiny_gains() -> None:
    """k = 1024 at ε = 0.004 (a ≈ 0.001) with 10¹³ users a group, null: the studentized
    statistic's mean over 500 trials is within 0.3 of 0 (its s.d. is about 1) and its
    rejection rate below 0.32 (expanded, the terms are 10⁶ times the noise and float64
    loses it)."""
    tester = ChannelsTester(1024, 0.03, 0.004, 0.004)
    rng = np.random.default_rng(11)
    p = np.linspace(1.0, 2.0, 1024)
    p /= p.sum()
    one, two = tester.channels
    n = 10**13
    z, sd = studentized_statistic(
        one.fast_counts(p, n, 500, rng), n, one, two.fast_counts(p, n, 500, rng), n, two
    )
    assert abs(float((z / sd).mean())) < 0.3
    assert float((z > 0.7 * sd).mean()) < 0.32


def test_per_group_channels_null_error_stays_near_the_normal_tail() -> None:
    """Group 1 through k-RR (ε = 8), group 2 through unary encoding (ε = 0.5), k = 64, a
    skewed p, n = (300, 20,000) and (3,000, 200,000): over 3,000 trials each the false
    rejection rate is below 0.30 (the normal tail at κ = 0.7 is 0.242; 0.30 is 7 standard
    errors above it)."""
    tester = ChannelsTester(64, 0.1, 8.0, 0.5)
    assert [c.randomizer for c in tester.channels] == [
        Randomizer.K_RR,
        Randomizer.OPTIMIZED_UNARY,
    ]
    p = np.linspace(1.0, 5.0, 64) ** 2
    p /= p.sum()
    rng = np.random.default_rng(5)
    for n1, n2 in ((300, 20_000), (3000, 200_000)):
        rate = float(tester.simulate_fast(p, p, n1, n2, 3000, rng).rejects.mean())
        assert 0.1 < rate < 0.30


def test_per_group_channels_user_level_and_fast_paths_agree() -> None:
    """1,000 trials each way, k-RR against unary encoding, at a point rejecting about half
    the time: the rates differ by less than 4 standard errors of their difference."""
    k = 8
    p, q = _pair(k, 0.2)
    tester = ChannelsTester(k, 0.2, 6.0, 0.3)
    assert {c.randomizer for c in tester.channels} == {
        Randomizer.K_RR,
        Randomizer.OPTIMIZED_UNARY,
    }
    rng = np.random.default_rng(8)
    rates = [
        simulate(tester, p, q, 60, 1500, 1000, rng, path).rejects.mean()
        for path in (SimulationPath.USER, SimulationPath.FAST)
    ]
    pooled = sum(rates) / 2
    assert 0.1 < pooled < 0.9
    assert abs(rates[0] - rates[1]) < 4 * math.sqrt(2 * pooled * (1 - pooled) / 1000)


def test_unary_reports_are_drawn_in_bounded_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """With chunks of 64 bits (8 users at k = 8) the counts of 800 users still average
    n·π per bin: within 5 standard errors over 100 repetitions."""
    monkeypatch.setattr(local_channels, "UNARY_CHUNK_CELLS", 64)
    channel = AffineChannel(Randomizer.OPTIMIZED_UNARY, 8, 1.0)
    a, b = channel.affine
    rng = np.random.default_rng(2)
    values = rng.integers(0, 8, 800)
    expected = a * np.bincount(values, minlength=8) + b * values.size
    counts = np.array([channel.randomize(values, rng) for _ in range(100)])
    spread = np.sqrt(values.size * 0.25 / 100)
    assert np.all(np.abs(counts.mean(axis=0) - expected) < 5 * spread)


@pytest.mark.parametrize(
    "channel",
    [*(AffineChannel(r, 6, 1.2) for r in Randomizer), HistogramChannel(6, 0.8)],
    ids=lambda c: getattr(c, "randomizer", "curator"),
)
def test_null_variance_is_the_variance_of_the_debiased_estimate(channel) -> None:
    """``null_variance(p, n)``, the χ² weights' formula, against the sample variance of
    p̂ over 100,000 fast trials: within 3 % in every bin (the sample variance's own
    relative error is about √(2/10⁵) ≈ 0.45 %)."""
    pmf = np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])
    n = 500
    counts = channel.fast_counts(pmf, n, 100_000, np.random.default_rng(17))
    estimate, _ = channel.debiased(counts, n)
    assert np.allclose(estimate.var(axis=0), channel.null_variance(pmf, n), rtol=0.03)


def _unweighted_rejects(tester: ChannelsTester, counts1, n1, counts2, n2) -> np.ndarray:
    """The statistic before χ² weights: Z = Σ [d² − u1 − u2] over its plug-in s.d."""
    one, two = tester.channels
    (e1, u1), (e2, u2) = one.debiased(counts1, n1), two.debiased(counts2, n2)
    z = ((e1 - e2) ** 2 - u1 - u2).sum(axis=-1)
    return z > tester.threshold_sd * np.sqrt(2.0 * ((u1 + u2) ** 2).sum(axis=-1))


def test_chi_square_weights_see_a_light_difference_beside_a_heavy_bin() -> None:
    """The plan the unweighted statistic had at k = 1000, α = 0.2, ε = (8, 8), 1,619 users
    a group, on the heavy-null pair (1/2 on one bin, the difference spread over the light
    rest): 400 trials, the weighted tester rejects at least 3/4 of them (0.92 when
    measured; at a true rate of 2/3 this fails with probability below 10⁻⁴), the
    unweighted one at most 1/3 (0.15 when measured)."""
    k, alpha, n = 1000, 0.2, 1619
    tester = ChannelsTester(k, alpha, 8.0, 8.0)
    pair = build("heavy-null-light-difference", k, alpha)
    one, two = tester.channels
    rng = np.random.default_rng(23)
    counts1 = one.fast_counts(pair.p, n, 400, rng)
    counts2 = two.fast_counts(pair.q, n, 400, rng)
    z, sd = studentized_statistic(counts1, n, one, counts2, n, two)
    assert float((z > tester.threshold_sd * sd).mean()) >= 0.75
    assert float(_unweighted_rejects(tester, counts1, n, counts2, n).mean()) <= 1 / 3


def test_a_heavy_bin_is_weighed_by_its_spread_and_light_bins_as_uniform_ones() -> None:
    """One bin with half the mass, k-RR at ε = 8 in both groups (little noise), 4,000
    users a group, 20,000 null trials. Weighted, the heavy bin's term has variance within
    15 % of 2 (its own spread divides it: its estimate lowered by two standard errors,
    0.0112, is still 0.489), and every light bin (p = 1/126, below the floor 1/64) is
    divided by the uniform bin's variance, so their terms' variances agree with each other
    within 15 %; unweighted, the heavy term's variance is over 100× a light one's. The
    statistic is the sum of those terms."""
    k, n = 64, 4000
    pmf = build("one-heavy", k, 0.1).p
    channel = AffineChannel(Randomizer.K_RR, k, 8.0)
    rng = np.random.default_rng(29)
    counts1 = channel.fast_counts(pmf, n, 20_000, rng)
    counts2 = channel.fast_counts(pmf, n, 20_000, rng)
    (e1, u1), (e2, u2) = channel.debiased(counts1, n), channel.debiased(counts2, n)
    unweighted = (e1 - e2) ** 2 - u1 - u2
    # equal sizes and channels: equal precisions, the pooled estimate is the mean and its
    # variance half a group's
    pooled = (e1 + e2) / 2
    spread = np.sqrt(channel.null_variance(np.clip(pooled, 1 / k, 1), n) / 2)
    surely = np.clip(pooled - 2 * spread, 1 / k, 1)
    weighted = unweighted / (2 * channel.null_variance(surely, n))
    variances = weighted.var(axis=0)
    assert abs(variances[0] - 2) < 0.3
    assert variances[1:].max() < 1.15 * variances[1:].min()
    raw = unweighted.var(axis=0)
    assert raw[0] > 100 * raw[1:].max()
    z, _ = studentized_statistic(counts1, n, channel, counts2, n, channel)
    assert np.allclose(z, weighted.sum(axis=1))


def test_a_bin_named_once_adds_nothing_to_the_spread() -> None:
    """One channel, 20 users a group, k = 64, ε = 30 (b ≈ 10⁻¹³: reports are the items).
    A bin named by one report has a term of exactly 0 and adds 0 to σ̂² (its variance
    given m = 1). A bin named once in each group is no surely heavy bin (1/20 less two
    standard errors is below 1/64), so its weight is a uniform bin's, v = 2·(1/64)(63/64)/20,
    its term −s/v with s = 2·(1/20)(19/20)/19 = 1/200, and it adds 2·(s/v)²·(1 − 1/2) =
    (s/v)² to σ̂²; being the largest s/v it also sets σ̂²'s last term, 2·(s/v)², where the
    bins named once (s/v halved) had set it. The full bin, 19 reports in each group, is
    surely heavy: pooled 0.95, lowered by 2·√(0.95·0.05/40) to 0.88108, its term
    −(1/200)/(2·0.88108·0.11892/20)."""
    k, n = 64, 20
    channel = AffineChannel(Randomizer.K_RR, k, 30.0)
    first, apart, together = np.zeros(k), np.zeros(k), np.zeros(k)
    first[0] = apart[1] = together[0] = 1
    first[-1] = apart[-1] = together[-1] = n - 1
    z_once, sd_once = studentized_statistic(first, n, channel, apart, n, channel)
    z_twice, sd_twice = studentized_statistic(first, n, channel, together, n, channel)
    ratio = (1 / 200) / (2 * (1 / 64) * (63 / 64) / 20)
    assert z_twice - z_once == pytest.approx(-ratio, rel=1e-9)
    assert sd_twice**2 - sd_once**2 == pytest.approx(ratio**2 + 2 * (ratio**2 - (ratio / 2) ** 2))
    lowered = 0.95 - 2 * math.sqrt(0.95 * 0.05 / 40)
    assert z_once == pytest.approx(-(1 / 200) / (2 * lowered * (1 - lowered) / 20), rel=1e-9)


@pytest.mark.parametrize(
    ("k", "eps", "sizes"),
    [
        (931, (11.5, 7.8), (222, 304)),  # two k-RR channels, sparse: a review's point
        (1000, (12.0, 8.0), (1069, 1419)),
    ],
)
def test_two_different_channels_keep_sparse_nulls_near_the_normal_tail(
    k: int, eps: tuple[float, float], sizes: tuple[int, int]
) -> None:
    """Two k-RR channels at different ε differ in b: a bin seen by neither group has the
    term (b2/a2 − b1/a1)² > 0. Divided by a near-zero weight (the pooled estimate clipped
    at 0) it had rejected these nulls 0.5 – 1.0 of the time; with the weight floored at a
    uniform bin's, 1,000 trials of point-mass-heavy and uniform each err at most 0.30
    (measured 0.14 – 0.27; the normal tail at κ = 0.7 is 0.24)."""
    tester = ChannelsTester(k, 0.3, *eps)
    rng = np.random.default_rng(31)
    for family in ("point-mass-heavy", "uniform"):
        pair = build(family, k, 0.3)
        rate = float(tester.simulate_fast(pair.p, pair.q, *sizes, 1000, rng).rejects.mean())
        assert rate <= 0.30, (family, rate)
