"""Poisson-mechanism noise: the lemma, the exact two-bin accounting, brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from planner.formulas.accounting import poisson_histogram_delta, poisson_mu_exact
from planner.formulas.poisson import poisson_lemma_lambda, poisson_mu_paper


def test_lemma_by_hand() -> None:
    # ε = 1, δ = 1e-6 split over two bins: λ(0.5, 5e-7, Δ = 1).
    shrink = 1 - math.exp(-0.5)
    by_hand = 16 * math.log(10 / 5e-7) / shrink**2 + 2 / shrink
    assert poisson_mu_paper(1.0, 1e-6) == pytest.approx(by_hand, rel=1e-14)
    assert by_hand == pytest.approx(1742.48, abs=0.01)
    assert poisson_lemma_lambda(2.0, 0.1, 2) == pytest.approx(
        16 * math.log(100) / (1 - math.exp(-1)) ** 2 + 4 / (1 - math.exp(-1))
    )


def brute_force_delta(eps: float, mu: float) -> float:
    """Σ over the joint output of the two changed bins of (P − e^ε Q)₊, both directions."""
    top = int(mu + 30 * math.sqrt(mu) + 40)
    x = np.arange(top + 1)
    base = stats.poisson.pmf(x, mu)
    shifted = np.concatenate(([0.0], base[:-1]))  # law of 1 + Poisson(μ)
    # dataset A: bin a ~ Poisson(μ), bin b ~ 1 + Poisson(μ); dataset B: the reverse.
    p = np.outer(base, shifted)
    q = np.outer(shifted, base)
    forward = np.clip(p - math.exp(eps) * q, 0, None).sum()
    backward = np.clip(q - math.exp(eps) * p, 0, None).sum()
    return float(max(forward, backward))


@pytest.mark.parametrize("mu", [0.3, 1.0, 4.0, 12.5, 40.0])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0])
def test_exact_delta_matches_brute_force_hockey_stick(eps: float, mu: float) -> None:
    exact = poisson_histogram_delta(eps, mu)
    brute = brute_force_delta(eps, mu)
    assert exact >= brute  # pessimistic
    assert exact == pytest.approx(brute, rel=1e-9, abs=2e-14)


def test_exact_mu_is_minimal_and_private() -> None:
    for eps, delta in [(1.0, 1e-6), (0.25, 1e-8), (0.05, 1e-5), (2.0, 1e-3)]:
        mu = poisson_mu_exact(eps, delta)
        assert poisson_histogram_delta(eps, mu) <= delta
        assert poisson_histogram_delta(eps, mu * (1 - 1e-4)) > delta


def test_exact_mu_matches_the_spec_figure() -> None:
    # the issue: "at ε = 1, δ = 1e-6, the exact two-bin μ is about 43".
    assert 42.0 < poisson_mu_exact(1.0, 1e-6) < 44.0


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 1.0, 5.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-9, 1e-6, 1e-3, 0.3])
def test_exact_never_exceeds_lemma(eps: float, delta: float) -> None:
    assert poisson_mu_exact(eps, delta) <= poisson_mu_paper(eps, delta)


def test_delta_decreases_with_noise() -> None:
    mus = np.geomspace(0.5, 5000, 60)
    deltas = [poisson_histogram_delta(0.5, mu) for mu in mus]
    assert all(later <= earlier for earlier, later in itertools.pairwise(deltas))


def analytic_gaussian_variance(eps: float, delta: float) -> float:
    """σ² of the analytic Gaussian mechanism (Balle & Wang 2018) with L2 sensitivity √2.

    δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ); solved for σ by root finding.
    """
    from scipy.optimize import brentq

    sensitivity = math.sqrt(2.0)

    def excess(sigma: float) -> float:
        a, b = sensitivity / (2 * sigma), eps * sigma / sensitivity
        return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b) - delta

    return brentq(excess, 1e-3, 1e7, xtol=1e-12, rtol=1e-14) ** 2


@pytest.mark.parametrize(("eps", "tolerance"), [(0.1, 0.005), (0.03, 5e-4), (0.01, 1e-4)])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3])
def test_exact_mu_tends_to_the_analytic_gaussian_as_eps_shrinks(eps, tolerance, delta) -> None:
    # Small ε needs large μ, where Poisson(μ) ≈ N(μ, μ): the two changed bins are then a
    # Gaussian mechanism with L2 sensitivity √2 and σ² = μ.
    ratio = poisson_mu_exact(eps, delta) / analytic_gaussian_variance(eps, delta)
    assert ratio == pytest.approx(1.0, abs=tolerance)
    assert ratio >= 1.0  # Poisson's skew costs a little more than the Gaussian


def test_dp_accounting_cross_check() -> None:
    """Google dp-accounting's two-PMF privacy-loss distribution agrees (test-only extra)."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    mu, eps = 20.0, 0.7
    top = 120
    log_base = stats.poisson.logpmf(np.arange(top), mu)
    law_p = {i: float(log_base[i]) for i in range(top)}  # log-pmf of Poisson(μ)
    law_q = {i + 1: float(log_base[i]) for i in range(top)}  # log-pmf of 1 + Poisson(μ)
    # Bin a: P = Poisson(μ) vs Q = 1 + Poisson(μ); bin b the reverse; compose the two.
    bin_a = pld.from_two_probability_mass_functions(
        law_p, law_q, value_discretization_interval=1e-5
    )
    bin_b = pld.from_two_probability_mass_functions(
        law_q, law_p, value_discretization_interval=1e-5
    )
    theirs = bin_a.compose(bin_b).get_delta_for_epsilon(eps)
    assert poisson_histogram_delta(eps, mu) == pytest.approx(theirs, rel=1e-3)


@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0])
def test_exact_epsilon_inverts_exact_mu(eps: float) -> None:
    from planner.formulas.accounting import poisson_epsilon_exact

    mu = poisson_mu_exact(eps, 1e-6)
    assert poisson_epsilon_exact(mu, 1e-6) == pytest.approx(eps, rel=1e-4)


def test_exact_epsilon_at_the_noise_floor_and_below_it() -> None:
    from planner.formulas.accounting import poisson_epsilon_exact

    # at ε = 4, δ = 1e-6 the exact μ sits at its floor e^{-μ} = δ, where δ(ε; μ) is flat in
    # ε: a smaller ε already suffices, so the inverse is at most 4 and achieves δ
    mu = poisson_mu_exact(4.0, 1e-6)
    inverse = poisson_epsilon_exact(mu, 1e-6)
    assert inverse <= 4.0 and poisson_histogram_delta(inverse, mu) <= 1e-6
    assert poisson_epsilon_exact(0.5, 1e-6) == math.inf  # e^{-0.5} > δ: no ε is enough


def _plain_mu_search(eps: float, delta: float) -> tuple[float, int]:
    """``poisson_mu_exact``'s search with every question evaluated: (μ, sums)."""
    from planner.formulas.accounting import _ROUNDING_ALLOWANCE, _bracket_around
    from planner.formulas.search import least_passing

    sums = 0

    def passes(mu: float) -> bool:
        nonlocal sums
        sums += 1
        return poisson_histogram_delta(eps, mu) <= delta

    high = float(poisson_mu_paper(eps, delta))
    guess = _plain_gaussian_mu(eps, delta - _ROUNDING_ALLOWANCE, high)
    low, high = _bracket_around(passes, guess, 1e-9, high)
    return least_passing(passes, low, high, 1e-6), sums


def _plain_gaussian_mu(eps: float, delta: float, high: float) -> float:
    """The analytic Gaussian μ by bisection on ``gaussian_histogram_delta`` itself."""
    from planner.formulas.accounting import gaussian_histogram_delta
    from planner.formulas.search import least_passing

    return least_passing(lambda mu: gaussian_histogram_delta(eps, mu) <= delta, 1e-9, high, 1e-9)


def test_gaussian_mu_is_the_plain_bisection_bit_for_bit() -> None:
    """``_gaussian_mu`` inlines the Gaussian δ's arithmetic (e^ε once): the same μ to the
    last bit as bisecting on :func:`gaussian_histogram_delta`, which seeds and brackets the
    exact search (so every exact μ depends on these bits)."""
    from planner.formulas.accounting import _gaussian_mu

    rng = np.random.default_rng(20261129)
    for _ in range(500):
        eps = math.exp(rng.uniform(math.log(1e-3), math.log(20)))
        delta = 10 ** rng.uniform(-12, -0.3)
        high = float(poisson_mu_paper(eps, delta))
        assert _gaussian_mu(eps, delta, high) == _plain_gaussian_mu(eps, delta, high), (
            eps,
            delta,
        )


def test_exact_mu_is_the_same_whatever_the_searches_before_it() -> None:
    """Each search is seeded by the crossings found before it (the nearest ε's ratio to the
    Gaussian μ): in any order, after any history, every μ is the plain search's, bit for
    bit, and close ε (a sweep's) take fewer sums than with the Gaussian seed alone."""
    from planner.formulas import accounting, search

    evaluations = 0
    original = search.SeededTest._evaluate

    def counted(self: search.SeededTest, x: float) -> tuple[bool, float]:
        nonlocal evaluations
        evaluations += 1
        return original(self, x)

    rng = np.random.default_rng(29)
    close = [float(e) for e in np.geomspace(0.05, 1.0, 150)]  # 2 % apart
    scattered = [float(math.exp(rng.uniform(math.log(0.02), math.log(20)))) for _ in range(20)]
    asked = [(eps, 1e-6) for eps in close] + [(eps, 1e-9) for eps in scattered]
    expected = {pair: _plain_mu_search(*pair)[0] for pair in asked}
    search.SeededTest._evaluate = counted  # type: ignore[method-assign]
    try:
        sums_by_order = []
        for order in (asked, asked[::-1], [asked[i] for i in rng.permutation(len(asked))]):
            accounting._CROSSINGS = accounting._Crossings()
            evaluations = 0
            for eps, delta in order:
                assert poisson_mu_exact.__wrapped__(eps, delta) == expected[eps, delta]
            sums_by_order.append(evaluations)
        accounting._CROSSINGS = accounting._Crossings()
        accounting._CROSSINGS.ratio_near = lambda eps, delta: 1.0  # type: ignore[method-assign]
        evaluations = 0  # the Gaussian seed alone
        for eps, delta in asked:
            assert poisson_mu_exact.__wrapped__(eps, delta) == expected[eps, delta]
        assert sums_by_order[0] < 0.85 * evaluations  # in a sweep's order (ascending)
    finally:
        search.SeededTest._evaluate = original  # type: ignore[method-assign]
        accounting._CROSSINGS = accounting._Crossings()


def test_seeded_mu_search_returns_the_plain_search_bit_for_bit() -> None:
    """The seeded test answers the search's questions from points it evaluated near the
    crossing; the result is the plain search's to the last bit, after fewer sums."""
    from planner.formulas import search

    evaluations = []
    original = search.SeededTest._evaluate

    def counted(self: search.SeededTest, x: float) -> tuple[bool, float]:
        evaluations.append(x)
        return original(self, x)

    rng = np.random.default_rng(20261126)
    plain_sums = 0
    search.SeededTest._evaluate = counted  # type: ignore[method-assign]
    try:
        for _ in range(40):
            eps = math.exp(rng.uniform(math.log(0.02), math.log(20)))
            delta = 10 ** rng.uniform(-12, -0.5)
            expected, sums = _plain_mu_search(eps, delta)
            plain_sums += sums
            assert poisson_mu_exact.__wrapped__(eps, delta) == expected, (eps, delta)
    finally:
        search.SeededTest._evaluate = original  # type: ignore[method-assign]
    assert len(evaluations) < plain_sums / 2


def test_computed_delta_moves_more_over_the_seed_margin_than_its_rounding() -> None:
    """SeededTest's premise at the crossing: a relative step of its margin in μ moves the
    computed δ by far more than the computed δ's own jitter (steps of 1e-14 in μ)."""
    from planner.formulas.search import SeededTest

    rng = np.random.default_rng(7)
    margin = SeededTest.margin
    for _ in range(12):
        eps = math.exp(rng.uniform(math.log(0.02), math.log(20)))
        delta = 10 ** rng.uniform(-12, -0.5)
        mu = poisson_mu_exact(eps, delta)
        here = poisson_histogram_delta(eps, mu)
        jitter = max(
            abs(poisson_histogram_delta(eps, mu * (1 + j * 1e-14)) - here) for j in range(1, 9)
        )
        step = poisson_histogram_delta(eps, mu * (1 - margin)) - poisson_histogram_delta(
            eps, mu * (1 + margin)
        )
        assert step > 100 * max(jitter, 1e-300 * here), (eps, delta, step, jitter)


def test_seeded_test_on_a_known_monotone_function_asks_less_and_answers_alike() -> None:
    from planner.formulas.search import SeededTest, least_passing

    def value(x: float) -> float:
        return 1.0 / x**3

    for level in (1e-9, 0.37, 5.0):
        plain = least_passing(lambda x, level=level: value(x) <= level, 1e-6, 1e6, 1e-9)
        seeded = SeededTest(value, level)
        seeded.seed(0.8 * level ** (-1 / 3))
        assert least_passing(seeded, 1e-6, 1e6, 1e-9) == plain
        assert seeded.evaluations < 20


def test_seeded_epsilon_search_returns_the_plain_search_bit_for_bit() -> None:
    """The exact ε a noise level buys: seeded at the Gaussian ε, the same ε to the last bit."""
    from planner.formulas.accounting import poisson_epsilon_exact
    from planner.formulas.search import least_passing

    rng = np.random.default_rng(11)
    for _ in range(40):
        mu = math.exp(rng.uniform(math.log(0.5), math.log(9e5)))
        delta = 10 ** rng.uniform(-12, -0.3)
        rel_tol = 1e-3 if rng.random() < 0.5 else 1e-6
        if math.exp(-mu) + 1e-14 > delta:
            continue
        plain = least_passing(
            lambda eps, mu=mu, delta=delta: poisson_histogram_delta(eps, mu) <= delta,
            1e-9,
            1.0,
            rel_tol,
            grow=True,
        )
        assert poisson_epsilon_exact.__wrapped__(mu, delta, rel_tol) == plain, (mu, delta)


def test_computed_delta_moves_more_over_the_seed_margin_in_epsilon_than_its_rounding() -> None:
    from planner.formulas.accounting import poisson_epsilon_exact
    from planner.formulas.search import SeededTest

    rng = np.random.default_rng(8)
    margin = SeededTest.margin
    for _ in range(12):
        mu = math.exp(rng.uniform(math.log(2.0), math.log(9e5)))
        delta = 10 ** rng.uniform(-12, -0.5)
        if not poisson_histogram_delta(1e-9, mu) > delta:
            continue  # every ε passes: no crossing (the search returns its floor)
        eps = poisson_epsilon_exact(mu, delta, 1e-9)
        if not math.isfinite(eps):
            continue
        here = poisson_histogram_delta(eps, mu)
        jitter = max(
            abs(poisson_histogram_delta(eps * (1 + j * 1e-14), mu) - here) for j in range(1, 9)
        )
        step = poisson_histogram_delta(eps * (1 - margin), mu) - poisson_histogram_delta(
            eps * (1 + margin), mu
        )
        assert step > 100 * max(jitter, 1e-300 * here), (mu, delta, step, jitter)


@pytest.mark.parametrize(("eps", "delta"), [(0.001, 1e-6), (0.002, 1e-10), (0.003, 1e-3)])
def test_the_gaussian_shortcut_is_private_and_within_its_rise_of_the_least_mu(
    eps: float, delta: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a Gaussian μ of 10⁶ up, the exact μ is the Gaussian μ raised by 10⁻⁴ when one
    exact sum says that is private: never below the least μ the full search finds, at most
    about 10⁻⁴ above it, and the exact δ there within δ."""
    from planner.formulas import accounting

    threshold = accounting.GAUSSIAN_SHORTCUT_MU
    shortcut = accounting.poisson_mu_exact.__wrapped__(eps, delta)
    monkeypatch.setattr(accounting, "GAUSSIAN_SHORTCUT_MU", math.inf)
    searched = accounting.poisson_mu_exact.__wrapped__(eps, delta)
    assert accounting.poisson_histogram_delta(eps, shortcut) <= delta
    if searched >= threshold:
        assert searched < shortcut <= searched * (1 + 1.2e-4)
    else:  # below the threshold the shortcut is not taken
        assert shortcut == searched


@pytest.mark.parametrize(("eps", "mu"), [(0.004, 1.2e6), (0.001, 1.19e7), (0.0005, 5e7)])
def test_the_shortcut_s_narrower_window_moves_delta_by_less_than_its_allowance(
    eps: float, mu: float
) -> None:
    """Nine standard deviations each side leave less than 1e-17 of Poisson mass out
    (Chernoff), inside the sum's 1e-14 allowance: δ moves by less than that."""
    from planner.formulas import accounting

    wide = accounting.poisson_histogram_delta(eps, mu)
    narrow = accounting.poisson_histogram_delta(eps, mu, accounting.NARROW_WINDOW_SIGMAS)
    assert abs(wide - narrow) < 1e-15
    assert 1e-14 < wide < 1.0  # a δ the comparison is about, not the allowance alone


@pytest.mark.parametrize("factor", [1e-3, 0.05, 2.2, 50.0, 1e3])
def test_exact_mu_is_the_same_from_a_far_seed(factor: float) -> None:
    """A neighbour's crossing ratio far from this ε's (here planted) seeds the search far off:
    the secant step is clamped before it can overflow, a flat pair of values ends the
    seeding, and the μ is the plain search's (a review found a ZeroDivisionError at 2.2×
    the true ratio, δ = 1e-12)."""
    from planner.formulas import accounting

    eps, delta = 4.747862516566117, 1e-12
    expected, _ = _plain_mu_search(eps, delta)
    try:
        accounting._CROSSINGS = accounting._Crossings()
        accounting.poisson_mu_exact.__wrapped__(eps, delta)
        (true_ratio,) = accounting._CROSSINGS._by_delta[delta][1]
        accounting._CROSSINGS = accounting._Crossings()
        accounting._CROSSINGS.add(eps * 1.1, delta, factor * true_ratio)
        assert poisson_mu_exact.__wrapped__(eps, delta) == expected
    finally:
        accounting._CROSSINGS = accounting._Crossings()
