"""The multi-message shuffle protocol (correlated noise with a cancelling flood, issue 40):
its exact accounting against brute-force enumeration of the adversary's view, the least
flood, the users' shares and message counts, and the tester's two simulation paths.

Statistical checks use fixed seeds; a failure is a change, not a flake. Each states its
level: sample means within Z = 5 standard errors, chi-square and two-sample tests at a
false-alarm rate of 1e-4."""

from __future__ import annotations

import itertools
import math
from typing import Any

import mpmath  # type: ignore[import-untyped]  # sympy's own dependency
import numpy as np
import pytest
import sympy
from scipy import stats

from planner.formulas.accounting import poisson_mu_exact
from planner.formulas.correlated_noise import (
    MAX_FLOOD,
    Flood,
    choose_parameters,
    correlated_noise_delta,
    expected_messages_per_user,
    flood_tradeoff,
    geometric_ratio,
    least_flood,
    limit_delta,
    log_view_pmf,
    loss_laws,
    noise_messages_per_bin,
    noise_variance,
    rounding_allowance,
    shares_for_dropout,
    survivors_variance,
    window_top,
)
from planner.validators.curator_histogram import CuratorHistogramTester
from planner.validators.shuffle_multi_message import (
    ShuffleMultiMessageTester,
    analyse,
    curator_eps,
    draw_shares,
    estimate,
    fast_view,
    randomize,
    shuffle,
    shuffle_multi_message_public_tester,
    user_counts,
)
from planner.validators.shuffle_private import closeness_statistic

Z = 5.0
"""Standard errors allowed to a sample mean."""
LEVEL = 1e-4
"""False-alarm rate of each chi-square or two-sample test."""


# ---------------------------------------------------------------------------------------
# brute force: the view's pmf by its defining sum, the hockey stick by enumeration


def geometric_pmf(p: float, size: int) -> np.ndarray:
    """P(G = g) = (1 − p)p^g, g = 0 … size − 1."""
    return (1.0 - p) * p ** np.arange(size, dtype=float)


def flood_pmf(flood: float | Flood, size: int) -> np.ndarray:
    """P(F = t), t < size, from scipy (an implementation of the laws independent of the
    module's): Poisson(λ) for a bare λ, else the flood's Poisson or NB(r, q)."""
    t = np.arange(size)
    flood = flood if isinstance(flood, Flood) else Flood(float(flood))
    if flood.ratio == 0.0:
        return np.asarray(stats.poisson.pmf(t, flood.mean))
    return np.asarray(stats.nbinom.pmf(t, flood.shape, 1.0 - flood.ratio))


def view_pmf_by_definition(
    h: int, flood: float | Flood, plus_noise: np.ndarray, minus_noise: np.ndarray, size: int
) -> np.ndarray:
    """f_h(a, b) = Σ_t P(F = t)·P(noise⁺ = a − h − t)·P(noise⁻ = b − t) on the grid
    a, b < size (any noise pmfs on 0, 1, …; the triple sum, no shortcut; a bare λ is the
    Poisson flood)."""
    a = np.arange(size)[:, None]
    b = np.arange(size)[None, :]
    weights = flood_pmf(flood, size)

    def at(pmf: np.ndarray, index: np.ndarray) -> np.ndarray:
        inside = (index >= 0) & (index < pmf.size)
        return np.where(inside, pmf[np.clip(index, 0, pmf.size - 1)], 0.0)

    view = np.zeros((size, size))
    for t in range(size):
        view += weights[t] * at(plus_noise, a - h - t) * at(minus_noise, b - t)
    return view


def two_bin_hockey_stick(
    eps: float, leave: tuple[np.ndarray, np.ndarray], join: tuple[np.ndarray, np.ndarray]
) -> tuple[float, float]:
    """Σ over both bins' joint views of (P − e^ε Q)₊ and of (Q − e^ε P)₊: under D the
    leaving bin's view has pmf leave[1] (one more count) and the joining bin's join[0];
    under D′ leave[0] and join[1]. Returns (D vs D′, D′ vs D)."""
    p_leave, q_leave = leave[1].ravel(), leave[0].ravel()
    p_join, q_join = join[0].ravel(), join[1].ravel()
    forward = backward = 0.0
    scale = math.exp(eps)
    for start in range(0, p_leave.size, 256):
        p = np.outer(p_leave[start : start + 256], p_join)
        q = np.outer(q_leave[start : start + 256], q_join)
        forward += float(np.clip(p - scale * q, 0.0, None).sum())
        backward += float(np.clip(q - scale * p, 0.0, None).sum())
    return forward, backward


# ---------------------------------------------------------------------------------------
# the accounting


@pytest.mark.parametrize(("p", "lam"), [(0.5, 3.0), (0.3, 0.7), (0.8, 6.0), (0.05, 20.0)])
def test_the_prefix_sum_shortcut_is_the_defining_triple_sum(p: float, lam: float) -> None:
    size = 40
    geometric = geometric_pmf(p, size)
    a, b = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    for h in (0, 1, 2):
        by_definition = view_pmf_by_definition(h, lam, geometric, geometric, size)
        shortcut = np.exp(log_view_pmf(a, b, h, p, lam))
        assert np.all(shortcut[:h] == 0.0)
        np.testing.assert_allclose(shortcut, by_definition, rtol=1e-11, atol=1e-300)


BRUTE_CASES = [
    (1.0, 0.5, 3.0),  # 2·ln(1/p) = 1.39 > ε: the limit δ is 0.14
    (2.0, 0.4, 2.0),
    (0.5, 0.6, 4.0),
    (1.0, 0.3, 1.0),
    (3.0, 0.2, 5.0),
    (4.0, 0.1, 9.0),
]


@pytest.mark.parametrize(("eps", "p", "lam"), BRUTE_CASES)
def test_the_exact_delta_is_the_brute_force_two_bin_hockey_stick(
    eps: float, p: float, lam: float
) -> None:
    """f_0, f_1 by the triple sum on a grid holding all but < 1e-12 of their mass, the two
    changed bins' joint views enumerated in both directions."""
    size = 64
    geometric = geometric_pmf(p, size)
    views = (
        view_pmf_by_definition(0, lam, geometric, geometric, size),
        view_pmf_by_definition(1, lam, geometric, geometric, size),
    )
    missing = (1.0 - views[0].sum()) + (1.0 - views[1].sum())
    assert missing < 1e-12
    forward, backward = two_bin_hockey_stick(eps, views, views)
    assert forward == pytest.approx(backward, rel=1e-12)  # the reverse has the same law
    exact = correlated_noise_delta(eps, p, lam)
    assert exact >= max(forward, backward)  # pessimistic
    assert exact <= max(forward, backward) + missing + rounding_allowance(10**4, lam)
    assert exact == pytest.approx(max(forward, backward), rel=1e-9)


@pytest.mark.parametrize(
    ("p", "lam", "size"),
    [(0.2, 0.5, 12), (0.15, Flood(0.5, 0.1), 12)],  # a Poisson and a negative-binomial flood
)
def test_every_replace_one_neighbour_at_k_3_n_2_is_within_the_accounted_delta(
    p: float, lam: float | Flood, size: int
) -> None:
    """The whole view of every bin (k = 3: N⁺ and N⁻ of each), every histogram of n = 2
    users and every replace-one neighbour of it, on a grid holding all but < 1e-6 of each
    bin's view: the largest hockey stick is the accounted δ (unchanged bins cancel,
    and a bin's count only shifts its view)."""
    eps, k = 1.0, 3
    geometric = geometric_pmf(p, size)
    bins = [view_pmf_by_definition(h, lam, geometric, geometric, size).ravel() for h in (0, 1, 2)]
    missing_per_bin = 1.0 - bins[2].sum()  # the shifted view loses the most
    histograms = {
        tuple(np.bincount(items, minlength=k)) for items in itertools.product(range(k), repeat=2)
    }

    def joint(histogram: tuple[int, ...]) -> np.ndarray:
        view = bins[histogram[0]]
        for count in histogram[1:]:
            view = np.multiply.outer(view, bins[count]).ravel()
        return view

    worst = 0.0
    for histogram in sorted(histograms):
        likelihood = joint(histogram)
        for source, target in itertools.permutations(range(k), 2):
            if histogram[source] == 0:
                continue
            neighbour = list(histogram)
            neighbour[source] -= 1
            neighbour[target] += 1
            other = joint(tuple(neighbour))
            worst = max(worst, float(np.clip(likelihood - math.exp(eps) * other, 0, None).sum()))
    accounted = correlated_noise_delta(eps, p, lam)
    assert accounted >= worst
    assert accounted <= worst + 2 * k * missing_per_bin + 1e-12
    assert 2 * k * missing_per_bin < 1e-5 * accounted  # so they agree to 1e-5 relative


def _laws_in_50_digits(p: float, lam: float, top: int) -> tuple[list[Any], list[Any]]:
    """Both laws' (loss, ln probability) pairs in the module's order, in mpmath."""
    mp_p, mp_lam = mpmath.mpf(p), mpmath.mpf(lam)
    log_s, running = [], None
    for t in range(top + 2):
        term = -mp_lam + t * mpmath.log(mp_lam) - mpmath.loggamma(t + 1) - 2 * t * mpmath.log(mp_p)
        running = term if running is None else running + mpmath.log1p(mpmath.exp(term - running))
        log_s.append(running)
    log_p, log_q = mpmath.log(mp_p), mpmath.log(1 - mp_p)
    leave = [(-log_p, -mpmath.log(1 + mp_p))] + [
        (-log_p - (log_s[m + 1] - log_s[m]), log_q + (2 * m + 1) * log_p + log_s[m])
        for m in range(top + 1)
    ]
    join = [(log_p, log_p - mpmath.log(1 + mp_p))] + [
        (log_p + (log_s[m] - log_s[m - 1]), log_q + 2 * m * log_p + log_s[m])
        for m in range(1, top + 1)
    ]
    return leave, join


def test_the_accounting_matches_50_digit_arithmetic_within_its_allowance() -> None:
    """Every loss and log-probability of both laws, recomputed with 50 digits. With η the
    largest error, each weight is off by a factor within e^{±η} and each e^{ε − L} likewise,
    so each term w_x·w_y·(1 − e^{ε−x−y})₊ moves by at most about 3η·w_x·w_y (a term's
    bracket moves by ≤ η·e^{ε−x−y} ≤ η where it is positive) and δ by about 3η: far
    inside the rounding allowance."""
    p, lam = 0.9, 150.0
    laws = loss_laws(p, lam)
    top = window_top(p, lam)
    with mpmath.workdps(50):
        leave, join = _laws_in_50_digits(p, lam, top)
    error = 0.0
    for law, reference in ((laws.leave, leave), (laws.join, join)):
        assert law.values.size == len(reference)  # nothing left out here
        values = np.array([float(v) for v, _ in reference])
        log_weights = np.array([float(w) for _, w in reference])
        error = max(error, float(np.max(np.abs(law.values - values))))
        error = max(error, float(np.max(np.abs(np.log(law.weights) - log_weights))))
    assert 3 * error < laws.allowance / 10


def test_the_limit_is_the_difference_alones_two_bin_delta() -> None:
    """(1 − p²e^ε)₊/(1 + p)² against the hockey stick of the two bins' differences
    N⁺ − N⁻ = h + G1 − G2 (two-sided geometric), enumerated."""
    support = np.arange(-400, 401)
    for eps, p in [(1.0, 0.5), (0.5, 0.9), (2.0, 0.3), (1.0, math.exp(-0.4))]:
        two_sided = (1 - p) / (1 + p) * p ** np.abs(support)
        shifted = np.concatenate(([0.0], two_sided[:-1]))  # h = 1
        forward, _ = two_bin_hockey_stick(eps, (two_sided, shifted), (two_sided, shifted))
        assert limit_delta(eps, p) == pytest.approx(forward, rel=1e-12, abs=1e-15)


def test_the_flood_lowers_delta_towards_the_limit_and_never_below() -> None:
    """δ does not increase in λ (a bigger flood is a post-processing of a smaller one) and
    tends to the difference's δ, also where that limit is 0 (p = e^{−ε/2}, slowly). Where
    the true δ falls below the rounding allowance (which grows with λ) the computed δ is
    the allowance: the check stops there."""
    for eps, p, floods in [
        (1.0, math.exp(-0.55), (3.0, 30.0, 300.0, 3000.0)),
        (1.0, math.exp(-0.5), (3.0, 30.0, 300.0, 3000.0)),
        (2.0, 0.5, (3.0, 10.0, 30.0, 100.0)),
    ]:
        deltas = [correlated_noise_delta(eps, p, lam) for lam in floods]
        assert all(later < earlier for earlier, later in itertools.pairwise(deltas))
        assert all(d >= limit_delta(eps, p) for d in deltas)
    assert correlated_noise_delta(1.0, math.exp(-0.55), 1e4) == pytest.approx(
        limit_delta(1.0, math.exp(-0.55)), rel=1e-6
    )


def test_a_flood_exists_exactly_when_the_limit_is_below_delta() -> None:
    eps, p = 1.0, math.exp(-0.51)  # 2·ln(1/p) = 1.02 > ε
    limit = limit_delta(eps, p)
    assert 0.007 < limit < 0.008
    lam = least_flood(eps, 2 * limit, p)
    assert correlated_noise_delta(eps, p, lam) <= 2 * limit
    with pytest.raises(ValueError, match="no flood"):
        least_flood(eps, limit, p)
    with pytest.raises(ValueError, match="no flood"):
        least_flood(eps, 0.5 * limit, p)
    # below the threshold p the limit is 0 and every δ has a flood (up to MAX_FLOOD)
    assert limit_delta(eps, math.exp(-0.499)) == 0.0
    assert least_flood(eps, 1e-6, math.exp(-0.45)) < MAX_FLOOD


@pytest.mark.parametrize(
    ("eps", "theta"), [(0.5, 0.5), (1.0, 0.8), (2.0, 0.9), (5.0, 0.6), (10.0, 0.9)]
)
def test_the_least_flood_meets_delta_and_a_tenth_less_does_not(eps: float, theta: float) -> None:
    delta, p = 1e-6, geometric_ratio(eps, theta)
    lam = least_flood(eps, delta, p)
    assert correlated_noise_delta(eps, p, lam) <= delta
    assert correlated_noise_delta(eps, p, 0.9 * lam) > delta
    assert correlated_noise_delta(eps, p, lam * (1 - 1e-4)) > delta  # and it is the least
    # the join bin's empty "+" count alone is (1 − p)e^{−λ}: a floor the flood must beat
    assert lam >= math.log((1 - p) / delta)


def test_the_tradeoff_and_the_choice() -> None:
    eps, delta = 1.0, 1e-6
    options = flood_tradeoff(eps, delta)
    assert len(options) >= 5
    for before, after in itertools.pairwise(options):
        assert after.theta > before.theta
        assert after.variance < before.variance and after.lam > before.lam
    for option in options:
        assert option.variance == pytest.approx(2 * option.p / (1 - option.p) ** 2)
        assert 2 * math.log(1 / option.p) == pytest.approx(option.theta * eps)
    n, k = 10_000, 256
    chosen = choose_parameters(eps, delta, n, k, max_messages=10.0)
    within = [o for o in options if o.messages_per_user(n, k) <= 10.0]
    assert chosen.messages_per_user(n, k) <= 10.0
    assert chosen.variance == min(o.variance for o in within)
    fewest = choose_parameters(eps, delta, n, 10**6, max_messages=10.0)  # none fits
    assert fewest.noise_messages_per_bin == min(o.noise_messages_per_bin for o in options)


def test_the_formulas_sympy_twins_and_the_per_user_mean() -> None:
    n, k, p, lam = sympy.symbols("n k p lam", positive=True)
    messages = expected_messages_per_user(n, k, p, lam)
    assert sympy.simplify(messages - (1 + k * (2 * p / (1 - p) + 2 * lam) / n)) == 0
    assert sympy.simplify(noise_variance(p) - 2 * p / (1 - p) ** 2) == 0
    point = {n: 1234, k: 77, p: sympy.Rational(3, 5), lam: sympy.Rational(41, 2)}
    assert float(messages.subs(point)) == pytest.approx(
        expected_messages_per_user(1234, 77, 0.6, 20.5), rel=1e-14
    )
    # numpy's negative_binomial(r, 1 − p) counts failures (probability p) before r
    # successes: mean r·p/(1 − p), variance r·p/(1 − p)²
    draws = np.random.default_rng(5).negative_binomial(1 / 40, 1 - 0.6, size=400_000)
    mean, variance = 0.6 / 0.4 / 40, 0.6 / 0.4**2 / 40
    assert abs(draws.mean() - mean) <= Z * math.sqrt(variance / draws.size)


# ---------------------------------------------------------------------------------------
# the protocol


def _chi_square_p_value(draws: np.ndarray, pmf: np.ndarray) -> float:
    """Chi-square goodness of fit of integer draws against pmf on 0 … len − 2 and a tail
    cell (cells of expected count < 5 merged into the tail)."""
    expected = pmf * draws.size
    cells = int(np.argmax(expected < 5)) if np.any(expected < 5) else pmf.size
    observed = np.bincount(np.minimum(draws, cells), minlength=cells + 1)[: cells + 1]
    expected_cells = np.append(expected[:cells], draws.size - expected[:cells].sum())
    return float(stats.chisquare(observed, expected_cells).pvalue)


@pytest.mark.parametrize("p", [0.6, 0.95])
def test_the_users_shares_add_up_to_a_geometric_count_and_a_poisson_flood(p: float) -> None:
    """n = 25 users, 20,000 bins (independent group sums): each side's noise is geometric
    (1 − p)p^g and the flood Poisson(λ), by chi-square at LEVEL; with shares drawn for
    n_min = 20 (dropout 1/5), any 20 users give exactly those laws and all 25 give
    NB(25/20, p), more noise, and Poisson(1.25λ), more flood."""
    n, k, lam = 25, 20_000, 3.0
    rng = np.random.default_rng(17)
    plus, minus, flood = draw_shares(n, k, p, lam, n, rng)
    support = np.arange(400)
    for side in (plus, minus):
        assert _chi_square_p_value(side.sum(axis=0), geometric_pmf(p, 400)) > LEVEL
    assert _chi_square_p_value(flood.sum(axis=0), stats.poisson.pmf(support, lam)) > LEVEL

    planned = shares_for_dropout(n, 0.2)
    assert planned == 20
    plus, _, flood = draw_shares(n, k, p, lam, planned, rng)
    survivors = rng.permutation(n)[:planned]
    assert _chi_square_p_value(plus[survivors].sum(axis=0), geometric_pmf(p, 400)) > LEVEL
    assert (
        _chi_square_p_value(flood[survivors].sum(axis=0), stats.poisson.pmf(support, lam)) > LEVEL
    )
    everyone = stats.nbinom.pmf(support, n / planned, 1 - p)
    assert _chi_square_p_value(plus.sum(axis=0), everyone) > LEVEL
    full_flood = stats.poisson.pmf(support, lam * n / planned)
    assert _chi_square_p_value(flood.sum(axis=0), full_flood) > LEVEL


def test_more_noise_than_planned_is_a_post_processing_of_the_accounted_view() -> None:
    """The view when more users than n_min send shares: each side's noise NB(r, p), r > 1
    (a geometric plus independent extra noise), and a larger flood. Its two-bin hockey
    stick, by brute force, is within the accounted δ at (p, λ)."""
    eps, p, lam, size, r = 1.0, 0.4, 2.0, 64, 1.5
    extra = stats.nbinom.pmf(np.arange(size), r, 1 - p)
    views = (
        view_pmf_by_definition(0, lam * r, extra, extra, size),
        view_pmf_by_definition(1, lam * r, extra, extra, size),
    )
    assert (1.0 - views[1].sum()) < 1e-12
    forward, backward = two_bin_hockey_stick(eps, views, views)
    accounted = correlated_noise_delta(eps, p, lam)
    assert max(forward, backward) <= accounted
    assert max(forward, backward) < 0.9 * accounted  # strictly more private here
    assert survivors_variance(p, 25, 20) == pytest.approx(1.25 * noise_variance(p))


def test_each_users_message_count_and_what_the_analyser_receives() -> None:
    """Each user's messages: mean 1 + k(2p/(1 − p) + 2λ)/n within Z standard errors; the
    group's messages, shuffled, are all the analyser counts; each user sends its item."""
    n, k, p, lam = 2000, 32, 0.7, 40.0
    rng = np.random.default_rng(23)
    values = rng.integers(0, k, size=n)
    counts = user_counts(values, k, p, lam, rng)
    per_user = counts.sum(axis=1)
    formula = expected_messages_per_user(n, k, p, lam)
    assert abs(per_user.mean() - formula) <= Z * per_user.std() / math.sqrt(n)
    # the "+" count of a user's own bin is at least 1: the item is always sent
    assert np.all(counts[np.arange(n), values] >= 1)

    messages, sent = randomize(values, k, p, lam, rng)
    assert sent.size == n and int(sent.sum()) == messages.size
    shuffled = shuffle(messages, rng)
    assert np.array_equal(np.sort(shuffled), np.sort(messages))
    plus, minus = analyse(shuffled, k)
    assert int(plus.sum() + minus.sum()) == messages.size
    # the "+" excess over "−" is the n items plus mean-0 noise over k bins
    excess = int(plus.sum() - minus.sum()) - n
    assert abs(excess) <= Z * math.sqrt(k * noise_variance(p))


def test_the_estimate_carries_the_stated_noise_and_the_flood_cancels() -> None:
    """User level: X − h has mean 0 and variance 2p/(1 − p)² per bin; N⁻ has mean
    p/(1 − p) + λ (the flood is there, and cancels); the fast view agrees."""
    n, k, p, lam, runs = 60, 16, 0.8, 25.0, 250
    rng = np.random.default_rng(29)
    residuals, minus_counts = [], []
    for _ in range(runs):
        values = rng.integers(0, k, size=n)
        messages, _ = randomize(values, k, p, lam, rng)
        shuffled = shuffle(messages, rng)
        residuals.append(estimate(shuffled, k) - np.bincount(values, minlength=k))
        minus_counts.append(analyse(shuffled, k)[1])
    residual = np.concatenate(residuals).astype(float)
    variance = noise_variance(p)
    assert abs(residual.mean()) <= Z * math.sqrt(variance / residual.size)
    # Var of the sample variance: (μ4 − σ⁴)/m, μ4 of the two-sided geometric from its pmf
    support = np.arange(-2000, 2001)
    two_sided = (1 - p) / (1 + p) * p ** np.abs(support)
    fourth = float(np.sum(support.astype(float) ** 4 * two_sided))
    assert abs(residual.var() - variance) <= Z * math.sqrt((fourth - variance**2) / residual.size)
    minus = np.concatenate(minus_counts).astype(float)
    minus_mean, minus_variance = p / (1 - p) + lam, p / (1 - p) ** 2 + lam
    assert abs(minus.mean() - minus_mean) <= Z * math.sqrt(minus_variance / minus.size)
    _, fast_minus = fast_view(np.full(k, 1 / k), n, p, lam, runs, rng)
    assert stats.ks_2samp(minus, fast_minus.ravel()).pvalue > LEVEL


def _tester() -> ShuffleMultiMessageTester:
    return ShuffleMultiMessageTester.for_privacy(8, 0.4, 2.0, 1.0, 1e-6, theta=0.6)


def test_the_user_level_and_fast_paths_agree() -> None:
    """The scores of 300 user-level executions (real messages, real shuffles) and 3,000
    fast ones, under the null and under an alternative: two-sample KS at LEVEL, and
    matched means within Z standard errors."""
    tester = _tester()
    k, n1, n2 = tester.k, 300, 200
    p = np.full(k, 1 / k)
    q = p * (1 + 0.6 * np.array([1, -1] * (k // 2)))
    rng = np.random.default_rng(31)
    for second in (p, q):
        user = np.array(
            [
                tester.run(rng.choice(k, n1, p=p), rng.choice(k, n2, p=second), rng).statistic
                for _ in range(300)
            ]
        )
        fast = tester.simulate_fast(p, second, n1, n2, 3000, rng).statistics
        assert stats.ks_2samp(user, fast).pvalue > LEVEL
        spread = math.sqrt(user.var() / user.size + fast.var() / fast.size)
        assert abs(user.mean() - fast.mean()) <= Z * spread
    assert fast.mean() > 1.0  # the alternative is rejected on average


def test_the_null_statistic_is_centred() -> None:
    """p = q: the raw statistic Z has mean within 0.05 of its s.d. and within Z standard
    errors of 0 (4,000 trials; the weight offset's own bias is smaller still)."""
    k, n1, n2 = 64, 3000, 2000
    tester = ShuffleMultiMessageTester.for_privacy(k, 0.2, 1.0, 0.5, 1e-6)
    rng = np.random.default_rng(37)
    pmf = np.random.default_rng(1).dirichlet(np.ones(k))
    scores = tester.simulate_fast(pmf, pmf, n1, n2, 4000, rng).statistics
    z = scores * tester.threshold(n1, n2)
    assert abs(z.mean()) <= 0.05 * z.std()
    assert abs(z.mean()) <= Z * z.std() / math.sqrt(z.size)


def test_the_analyser_is_the_curators_statistic_with_this_noise() -> None:
    tester = _tester()
    analyser = tester.analyser
    assert isinstance(analyser, CuratorHistogramTester)
    np.testing.assert_allclose(analyser.variances, tester.variances, rtol=1e-12)
    assert curator_eps(tester.p1) == pytest.approx(0.6 * 2.0)  # θ·ε
    rng = np.random.default_rng(41)
    x, y = rng.integers(-20, 300, size=(2, tester.k))
    n1, n2 = 2500, 1400
    v1, v2 = tester.variances
    offset = max(n2 / n1 * v1 + n1 / n2 * v2, 4.0 * math.sqrt(tester.k))
    by_hand = closeness_statistic(x, y, n1, n2, n2**2 * v1 + n1**2 * v2, offset)
    assert float(tester.analyze(x, y, n1, n2)) == pytest.approx(
        by_hand / tester.threshold(n1, n2), rel=1e-12
    )


def test_the_public_coin_runs_each_hashed_group_on_its_own_bins() -> None:
    base = _tester()
    public = shuffle_multi_message_public_tester(
        64, 0.4, base.p1, base.lam1, base.p2, base.lam2, L=8, hashes=2, hash_share=True
    )
    assert public.base.k == 8 and public.base.hashed_from == 64
    assert (public.base.p1, public.base.lam1) == (base.p1, base.lam1)
    rng = np.random.default_rng(43)
    pmf = np.full(64, 1 / 64)
    result = public.run(rng.integers(0, 64, 400), rng.integers(0, 64, 300), rng)
    assert math.isfinite(result.statistic)
    batch = public.simulate_fast(pmf, pmf, 400, 300, 200, rng)
    assert batch.statistics.shape == (200,) and batch.rejects.mean() < 0.5


def test_the_noise_is_far_below_the_poisson_protocols_at_moderate_eps() -> None:
    """The point of the protocol: at ε = 1, δ = 1e-6 the estimate's variance at θ = 0.8 is
    under a third of the Poisson protocol's per-bin variance μ (a flood of a few hundred
    messages per bin, spread over the group, buys it)."""
    p = geometric_ratio(1.0, 0.8)
    lam = least_flood(1.0, 1e-6, p)
    assert noise_variance(p) < poisson_mu_exact(1.0, 1e-6) / 3
    assert 100 < noise_messages_per_bin(p, lam) < 1000
