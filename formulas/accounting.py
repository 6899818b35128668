"""Exact (ε, δ) of the Poisson-noised histogram under replace-one neighbours (README).

Replacing one user's value moves one unit from bin a to bin b; every bin carries
independent Poisson(μ) noise. Write X1, X2 for the noise of the two changed bins
(i.i.d. Poisson(μ)). Under the first dataset, the output of bin a is X1 + c and that of
bin b is X2 + d + 1; the likelihood ratio of the two datasets is

    P/Q = (μ/X1) · ((X2 + 1)/μ) = (X2 + 1)/X1     (= ∞ when X1 = 0),

so the privacy loss log((X2+1)/X1) does not depend on μ except through the law of
X1, X2, and the reverse direction has the same law (swap a and b). The hockey-stick
divergence is therefore, exactly,

    δ(ε; μ) = E[(1 − e^ε·X1/(X2+1))₊]
            = Σ_{x2 ≥ 0} p(x2)·[F(t) − e^ε·μ·F(t−1)/(x2+1)],   t = ⌈(x2+1)e^{−ε}⌉ − 1,

using x·p(x) = μ·p(x−1), with p, F the Poisson(μ) pmf and cdf. We sum x2 over
μ ± (14√μ + 60) (the mass outside is < 1e-40) and add 1e-14 for rounding, so the
reported δ is never below the true one; the minimal μ is found by
bisection and the upper end of the final bracket is returned (pessimistic).

The composition of the two changed bins is exact here (no ε/2, δ/2 split), which is
why this μ is ~40× smaller than Lemma ``lemma:poisson_mech`` with basic composition.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from planner.formulas.poisson import poisson_mu_paper
from planner.formulas.search import SeededTest, check_deadline, least_passing

DELTA_FLOOR = 1e-12
"""Smallest δ the exact computation supports (float rounding of the sum is ~1e-15)."""

_ROUNDING_ALLOWANCE = 1e-14


WINDOW_SIGMAS = 14.0
"""Half-width of :func:`_poisson_window` in standard deviations √μ (plus 60): the mass
outside is below 1e-40."""
NARROW_WINDOW_SIGMAS = 9.0
"""The narrower window of the Gaussian shortcut's one check (μ ≥ 10⁶): by the Chernoff
bounds P(X ≥ μ + t) ≤ exp(−t²/(2(μ + t))) and P(X ≤ μ − t) ≤ exp(−t²/(2μ)) at t = 9√μ,
the mass outside is below 1e-17, far inside the sum's rounding allowance (1e-14), with
36 % fewer terms."""


def _poisson_window(mu: float, sigmas: float = WINDOW_SIGMAS) -> tuple[int, np.ndarray]:
    """Support window [lo, hi] of Poisson(μ) holding all but < 1e-40 of its mass (with
    ``sigmas`` = 14; 1e-17 with 9 and μ ≥ 10⁶), and its pmf.

    log p is anchored with lgamma at ``lo`` and extended by a short cumulative sum of
    log(μ/x); the result is renormalised over the window, because lgamma's absolute
    rounding (~1e-16·μ log μ) would otherwise leave a mass error of ~1e-9 at μ ~ 10^6.
    """
    spread = sigmas * math.sqrt(mu) + 60.0
    lo = max(0, math.floor(mu - spread))
    hi = math.ceil(mu + spread)
    log_p_lo = -mu + lo * math.log(mu) - math.lgamma(lo + 1)
    log_pmf = np.empty(hi - lo + 1)
    log_pmf[0] = 0.0
    (math.log(mu) - _log_integers(lo + 1, hi + 1)).cumsum(out=log_pmf[1:])
    log_pmf += log_p_lo
    log_pmf -= log_pmf.max()
    pmf = np.exp(log_pmf, out=log_pmf)
    pmf /= pmf.sum()
    return lo, pmf


_LOG_INTEGERS = np.zeros(0)
"""log n for n = 1, 2, …: ``_LOG_INTEGERS[n - 1]`` (grown on demand, never shrunk). np.log
is elementwise, so a slice of the table is bit for bit the log of a fresh range."""


_LOG_TABLE_MAX = 2**20
"""The table stops here (8 MiB); windows beyond it (μ ≳ 10^6) take their logs afresh."""


def _log_integers(start: int, stop: int) -> np.ndarray:
    """``np.log(np.arange(start, stop, dtype=float))`` for 1 ≤ start, from a table up to
    :data:`_LOG_TABLE_MAX`."""
    global _LOG_INTEGERS
    if stop - 1 > _LOG_TABLE_MAX:
        return np.log(np.arange(start, stop, dtype=float))
    table = _LOG_INTEGERS
    if stop - 1 > table.size:
        size = min(max(stop - 1, 2 * table.size, 4096), _LOG_TABLE_MAX)
        table = np.log(np.arange(1, size + 1, dtype=float))
        _LOG_INTEGERS = table
    return table[start - 1 : stop - 1]


_DOT_BLOCK = 10_000
"""OpenBLAS's ddot runs on one thread up to this length and splits longer vectors over
the available cores, so its last bit would depend on the machine (and it took ~10 ms
instead of ~10 µs for 20,000 terms on a loaded 2-core machine): longer sums are added in
single-threaded blocks of this length, in order."""


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """x · y: one ddot up to :data:`_DOT_BLOCK` terms, else blocks of it summed in order."""
    if x.size <= _DOT_BLOCK:
        return float(np.dot(x, y))
    total = 0.0
    for start in range(0, x.size, _DOT_BLOCK):
        total += float(np.dot(x[start : start + _DOT_BLOCK], y[start : start + _DOT_BLOCK]))
    return total


def poisson_histogram_delta(eps: float, mu: float, sigmas: float = WINDOW_SIGMAS) -> float:
    """Exact δ(ε) of the replace-one Poisson(μ) histogram mechanism (upper-rounded), over
    a window of ``sigmas`` standard deviations (:func:`_poisson_window`)."""
    if mu <= 0:
        return 1.0
    lo, pmf = _poisson_window(mu, sigmas)
    size = pmf.size
    # cdf[i] = F(lo + i - 1): a 0 in front for every t below the window, F(hi) beyond it
    # (the mass outside the window, < 1e-40 or 1e-17, is within the allowance)
    cdf = np.empty(size + 1)
    cdf[0] = 0.0
    pmf.cumsum(out=cdf[1:])
    x2_plus_1 = np.arange(lo + 1, lo + size + 1, dtype=float)
    # t = ⌈(x2+1)e^{−ε}⌉ − 1; F(t) is cdf[t − lo + 1] and F(t − 1) is cdf[t − lo]
    index = np.ceil(x2_plus_1 * math.exp(-eps)).astype(np.int64)
    index -= lo
    f_t = cdf.take(index, mode="clip")
    index -= 1
    f_t_minus_1 = cdf.take(index, mode="clip")
    f_t_minus_1 *= math.exp(eps) * mu
    f_t_minus_1 /= x2_plus_1
    bracket = np.subtract(f_t, f_t_minus_1, out=f_t)
    np.maximum(bracket, 0.0, out=bracket)  # np.clip to [0, 1], without its wrapper
    np.minimum(bracket, 1.0, out=bracket)
    return _dot(pmf, bracket) + _ROUNDING_ALLOWANCE


GAUSSIAN_SHORTCUT_MU = 1e6
"""From this analytic Gaussian μ up, :func:`poisson_mu_exact` first tries that μ raised by
:data:`GAUSSIAN_SHORTCUT_RISE`, checked by one exact sum."""
GAUSSIAN_SHORTCUT_RISE = 1e-4
"""The Gaussian μ's rise in the shortcut: the exact μ is within 2·10⁻⁵ of the Gaussian one
from μ ≈ 2·10⁵ (ε = 0.01, δ = 10⁻⁶; 6·10⁻⁷ at ε = 0.001), so the rise passes, and the
answer is at most about 10⁻⁴ above the least μ."""


@lru_cache(maxsize=4096)
def poisson_mu_exact(eps: float, delta: float, rel_tol: float = 1e-6) -> float:
    """Smallest per-bin μ with δ(ε; μ) ≤ δ, to relative tolerance (rounded up).

    Bisection on log μ inside a bracket found outwards from the analytic Gaussian μ
    (:func:`_bracket_around`), capped by the lemma's μ (which is always private, so the
    exact μ never exceeds it).

    Where the Gaussian μ is at least :data:`GAUSSIAN_SHORTCUT_MU` (ε below about 0.004 at
    δ = 10⁻⁶), that μ raised by :data:`GAUSSIAN_SHORTCUT_RISE` is the answer when one
    exact sum says it is private (δ(ε; μ) does not increase in μ, so it is never below the
    least μ): one sum of ~10⁵ terms instead of the search's five or six. A solve over
    small ε sizes thousands of noise levels (4,225 searches, 10 s, for one solve at
    k = 1000, δ = 10⁻⁶); the plans there grow by at most 10⁻⁴ of their noise.
    """
    if not delta >= DELTA_FLOOR:
        raise ValueError(f"exact accounting needs delta ≥ {DELTA_FLOOR:g}")
    high = float(poisson_mu_paper(eps, delta))
    guess = _gaussian_mu(eps, delta - _ROUNDING_ALLOWANCE, high)  # the sum adds the allowance
    if guess >= GAUSSIAN_SHORTCUT_MU:
        risen = min(guess * (1.0 + GAUSSIAN_SHORTCUT_RISE), high)
        check_deadline()
        if poisson_histogram_delta(eps, risen, NARROW_WINDOW_SIGMAS) <= delta:
            return risen

    # δ(ε; μ) does not increase in μ (more noise is post-processing), and its computed
    # value is smooth to ~1e-12 relative; a step of 1e-8 in μ moves it by ≥ ~1e-9 relative
    # (measured: see SeededTest), so the seeded test answers every question of the search
    # below as evaluating would, and the search returns the same μ after ~7 sums, not ~27.
    passes = SeededTest(lambda mu: poisson_histogram_delta(eps, mu), delta)
    seed = guess * _CROSSINGS.ratio_near(eps, delta)
    passes.seed(min(max(seed, 1e-9), high))
    low, high = _bracket_around(passes, guess, 1e-9, high)
    found = least_passing(passes, low, high, rel_tol)
    if guess > 0 and math.isfinite(passes.passing):
        _CROSSINGS.add(eps, delta, passes.passing / guess)
    return found


class _Crossings:
    """Where earlier searches found δ(ε; μ) crossing δ, as the ratio of that μ to the
    analytic Gaussian μ, per δ and sorted by ε.

    The ratio of the nearest ε met (within 20 %) seeds the next search closer than the
    Gaussian μ alone: 4.3 sums a search instead of 6.1 over a sweep's 2,000 close ε
    (``benchmarks/bench_planner.py``'s first runs pay these). It is a seed only: the
    search returns the same μ from any seed (:class:`SeededTest`; tested), so an entry
    lost, dropped or raced by another thread costs time, never a bit of the answer.
    At most ``limit`` ε per δ and ``deltas`` δ are kept (beyond, that memory starts anew).
    """

    def __init__(self, limit: int = 1 << 14, deltas: int = 16) -> None:
        self.limit = limit
        self.deltas = deltas
        self._lock = threading.Lock()
        self._by_delta: dict[float, tuple[list[float], list[float]]] = {}

    def add(self, eps: float, delta: float, ratio: float) -> None:
        with self._lock:
            if delta not in self._by_delta and len(self._by_delta) >= self.deltas:
                self._by_delta.clear()
            epsilons, ratios = self._by_delta.setdefault(delta, ([], []))
            if len(epsilons) >= self.limit:
                epsilons.clear()
                ratios.clear()
            index = bisect.bisect_left(epsilons, eps)
            if index == len(epsilons) or epsilons[index] != eps:
                epsilons.insert(index, eps)
                ratios.insert(index, ratio)

    def ratio_near(self, eps: float, delta: float) -> float:
        """The ratio at the nearest ε met within 20 % of ``eps`` (1 without one)."""
        if not (eps > 0 and math.isfinite(eps)):
            return 1.0
        with self._lock:
            epsilons, ratios = self._by_delta.get(delta, ([], []))
            index = bisect.bisect_left(epsilons, eps)
            near = [i for i in (index - 1, index) if 0 <= i < len(epsilons)]
            if not near:
                return 1.0
            nearest = min(near, key=lambda i: abs(math.log(epsilons[i] / eps)))
            if abs(math.log(epsilons[nearest] / eps)) > 0.2:
                return 1.0
            return ratios[nearest]


_CROSSINGS = _Crossings()


def _bracket_around(
    passes: Callable[[float], bool], guess: float, floor: float, ceiling: float
) -> tuple[float, float]:
    """A bracket (failing low, passing high) of ``passes`` found outwards from ``guess``.

    The analytic Gaussian mechanism's μ is within 1e-5 of the exact one for μ ≳ 10^6,
    1e-3 for μ ≳ 10^4 and a factor 2 below, so starting there (1e-5 wide, the width
    squared on every miss) keeps every sum of :func:`poisson_histogram_delta` near the
    answer's length, and few: the lemma's μ, the old upper end, is ~40× larger and its
    sums ~6× longer. ε = 1e-4 took seconds (27 sums of up to 10^7 terms), now ~6 sums of
    ~10^6.
    """
    guess = min(max(guess, floor), ceiling)
    factor = 1.0 + 1e-5
    if passes(guess):
        high, low = guess, guess / factor
        while low > floor and passes(low):
            high, low, factor = low, low / factor, factor * factor
        return max(low, floor), high
    low, high = guess, guess * factor
    while high < ceiling and not passes(high):
        low, high, factor = high, high * factor, factor * factor
    return low, min(high, ceiling)


def _gaussian_mu(eps: float, delta: float, high: float) -> float:
    """Smallest μ at which the analytic Gaussian mechanism (σ² = μ) is (ε, δ)-DP.

    The bisection asks about 35 questions; each is :func:`gaussian_histogram_delta`'s
    arithmetic, operation for operation (the same bits), with e^ε taken once.
    """
    root_two = math.sqrt(2.0)
    e_eps = math.exp(eps)
    erfc, sqrt = math.erfc, math.sqrt

    def passes(mu: float) -> bool:
        sigma = sqrt(mu)
        a, b = root_two / (2 * sigma), eps * sigma / root_two
        return 0.5 * erfc(-(a - b) / root_two) - e_eps * (0.5 * erfc(-(-a - b) / root_two)) <= delta

    return least_passing(passes, 1e-9, high, 1e-9)


@lru_cache(maxsize=4096)
def poisson_epsilon_exact(mu: float, delta: float, rel_tol: float = 1e-6) -> float:
    """Smallest ε with δ(ε; μ) ≤ δ: the exact privacy a given noise level μ buys.

    The inverse of :func:`poisson_mu_exact` in ε (δ(ε; μ) decreases in ε). Infinite when
    even ε → ∞ fails, i.e. when P(X1 = 0) = e^{−μ} exceeds δ.
    """
    if not delta >= DELTA_FLOOR:
        raise ValueError(f"exact accounting needs delta ≥ {DELTA_FLOOR:g}")
    if math.exp(-mu) + _ROUNDING_ALLOWANCE > delta:
        return math.inf
    # δ(ε; μ) does not increase in ε either: seeded at the analytic Gaussian ε, the test
    # answers the search's questions as evaluating would (see poisson_mu_exact)
    passes = SeededTest(lambda eps: poisson_histogram_delta(eps, mu), delta)
    guess = _gaussian_epsilon(mu, delta - _ROUNDING_ALLOWANCE)
    if guess is not None:
        passes.seed(guess)
    return least_passing(passes, 1e-9, 1.0, rel_tol, grow=True)


def _gaussian_epsilon(mu: float, delta: float) -> float | None:
    """Smallest ε at which the analytic Gaussian mechanism (σ² = μ) is (ε, δ)-DP, if ≤ 50."""
    if not (delta > 0 and gaussian_histogram_delta(50.0, mu) <= delta):
        return None
    return least_passing(lambda eps: gaussian_histogram_delta(eps, mu) <= delta, 1e-12, 50.0, 1e-9)


GAUSSIAN_REGIME_MU = 1e6
"""Above this μ, Poisson(μ) noise on two bins is the Gaussian mechanism (σ² = μ, L2
sensitivity √2) to within 1e-4 relative in μ (tested against the exact accounting)."""


def gaussian_histogram_delta(eps: float, mu: float) -> float:
    """δ(ε) of the analytic Gaussian mechanism (Balle & Wang 2018), σ² = μ, sensitivity √2."""
    sigma, sensitivity = math.sqrt(mu), math.sqrt(2.0)
    a, b = sensitivity / (2 * sigma), eps * sigma / sensitivity

    def normal_cdf(x: float) -> float:
        return 0.5 * math.erfc(-x / math.sqrt(2.0))

    return normal_cdf(a - b) - math.exp(eps) * normal_cdf(-a - b)


def epsilon_for_noise(mu: float, delta: float, rel_tol: float = 1e-3) -> float:
    """The privacy ε that noise μ buys at δ: exact below ``GAUSSIAN_REGIME_MU``, Gaussian above.

    For locating a point on the calibration grid (not for guarantees: use
    :func:`poisson_epsilon_exact` for those).
    """
    if mu < GAUSSIAN_REGIME_MU:
        return poisson_epsilon_exact(mu, delta, rel_tol)
    return least_passing(
        lambda eps: gaussian_histogram_delta(eps, mu) <= delta, 1e-12, 1.0, rel_tol, grow=True
    )
