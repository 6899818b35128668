"""Exact (ε, δ) of the correlated-noise histogram with a cancelling flood (docs/
shuffle-multi-message.md).

The mechanism, per bin, as the adversary sees it after the shuffle: the count of "+j"
messages and the count of "−j" messages,

    N⁺ = h + G1 + P,    N⁻ = G2 + P,

h the bin's count, G1, G2 geometric (P(G = g) = (1 − p)·p^g, g ≥ 0) and P Poisson(λ),
all independent and independent across bins. The analyser's estimate N⁺ − N⁻ = h +
G1 − G2 carries discrete Laplace noise of variance 2p/(1 − p)² (the flood P cancels); the
privacy has to hold for the whole pair.

The pair's law, f_h(a, b) = Σ_t Pois(t; λ)·Geo(a − h − t)·Geo(b − t), collapses: at h = 0
every term has Geo(a − t)·Geo(b − t) = (1 − p)²·p^{a+b−2t} for t ≤ min(a, b), so

    f_0(a, b) = (1 − p)²·p^{a+b}·S(min(a, b)),   S(m) = Σ_{t ≤ m} Pois(t; λ)·p^{−2t},

and f_h(a, b) = f_0(a − h, b) (0 for a < h). The privacy loss of one more count in a bin,
ln f_1/f_0 at (a, b), is −ln p when a > b and −ln p − u_a when 1 ≤ a ≤ b, where u_m =
ln S(m)/S(m − 1) ≥ 0 (u_0 = ∞: f_1 vanishes at a = 0). Summing the pmf over the other
coordinate, P_{f_0}(a = m ≤ b) = (1 − p)·p^{2m}·S(m) and P_{f_0}(m = a < b) = (1 − p)·
p^{2m+1}·S(m); the rest of the mass is closed-form: P_{f_0}(a > b) = p/(1 + p). So each
bin's loss has a one-dimensional law indexed by m = min(a, b):

* the bin the user leaves (count h + 1 under D, h under D′), view from f_1:
  −ln p with probability 1/(1 + p), and −ln p − u_{m+1} with (1 − p)·p^{2m+1}·S(m), m ≥ 0;
* the bin the user joins (h under D, h + 1 under D′), view from f_0:
  ln p with probability p/(1 + p), ln p + u_m with (1 − p)·p^{2m}·S(m), m ≥ 1, and +∞
  with (1 − p)·e^{−λ} (m = 0: no "+" message at all in that bin).

The two bins are independent, the other bins' laws are the same under D and D′, so the
privacy loss is L = L_leave + L_join and δ(ε) = E[(1 − e^{ε − L})₊] exactly, the +∞ mass
entering δ whole. Swapping the two bins' roles gives the reverse pair (D′, D) the same law,
so one direction is the answer.

Exactness. The sum over the two laws is exact (sorted values, suffix sums: O(W log W) for W
terms). Each law is summed over m ≤ M where P(min(N⁺, N⁻) > M) ≤ 2·TAIL_MASS (Poisson
Chernoff bound plus the geometric tail of min(G1, G2), ratio p²); that mass, and any term
whose weight or loss does not come out finite in floating point, is added to δ whole.
A rounding allowance (:func:`rounding_allowance`) covers the floating-point error of the
weights and losses. The result is never below the true δ.

The flood's limit. Adding the same independent Poisson to both coordinates is a
post-processing of the view, so δ(ε) does not increase with λ; as λ → ∞ only the difference
N⁺ − N⁻ stays informative and δ(ε) falls to the two-bin discrete Laplace δ,
``limit_delta(ε, p)`` = (1 − p²·e^ε)₊/(1 + p)², which no λ goes below (the difference is a
post-processing of the view). A flood meeting δ therefore exists exactly when
limit_delta(ε, p) < δ: for every δ > 0 when p ≥ e^{−ε/2} (the limit is 0; at equality only
slowly), and, when p < e^{−ε/2}, only for δ above (1 − p²e^ε)/(1 + p)².
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from planner.formulas.search import check_deadline, least_passing

DELTA_FLOOR = 1e-12
"""Smallest δ the accounting supports (the allowances are ~1e-13 to 1e-10)."""

TAIL_MASS = 1e-30
"""Bound on each of the two neglected tails of one bin's window (Poisson and geometric)."""

MAX_FLOOD = 1e5
"""The largest flood λ :func:`least_flood` looks at (2λ·k/n messages per user)."""

THETAS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
"""The shares θ of the ε spent on the geometric noise, p = e^{−θε/2}, that
:func:`flood_tradeoff` weighs (θ = 1 is the curator's noise and needs λ → ∞)."""

DEFAULT_MAX_MESSAGES = 10.0
"""The cap on expected messages per user :func:`choose_parameters` keeps to by default."""


def noise_variance(p: Any) -> Any:
    """Var(G1 − G2) = 2p/(1 − p)² per bin: the estimate's noise (numpy, float or sympy)."""
    return 2 * p / (1 - p) ** 2


def noise_messages_per_bin(p: Any, lam: Any) -> Any:
    """Expected noise messages of one bin from the whole group: E(G1 + G2 + 2P) =
    2p/(1 − p) + 2λ (numpy, float or sympy)."""
    return 2 * p / (1 - p) + 2 * lam


def expected_messages_per_user(n: Any, k: Any, p: Any, lam: Any) -> Any:
    """1 + k·(2p/(1 − p) + 2λ)/n: the user's item, and its share of every bin's noise
    (NB(1/n, p) has mean p/(n(1 − p)); numpy, float or sympy)."""
    return 1 + k * noise_messages_per_bin(p, lam) / n


def geometric_ratio(eps: float, theta: float) -> float:
    """p = e^{−θε/2}: the geometric noise spends θ·ε of the ε (2·ln(1/p) = θ·ε)."""
    return math.exp(-theta * eps / 2.0)


def limit_delta(eps: float, p: float) -> float:
    """The two-bin discrete Laplace δ(ε) of ratio p: (1 − p²e^ε)₊/(1 + p)², the δ of the
    difference N⁺ − N⁻ alone and the limit of the view's δ as λ → ∞.

    Each changed bin's loss is ±ln(1/p), + with probability 1/(1 + p), independently; the
    total 2·ln(1/p) has probability 1/(1 + p)² and is the only one above ε ≥ 0 (when
    2·ln(1/p) > ε), contributing (1 − e^{ε − 2 ln(1/p)})/(1 + p)²."""
    return max(0.0, 1.0 - p * p * math.exp(eps)) / (1.0 + p) ** 2


def window_top(p: float, lam: float, tail: float = TAIL_MASS) -> int:
    """M with P(min(N⁺, N⁻) > M) ≤ 2·``tail`` for one bin: min(N⁺, N⁻) = P + min(G1, G2),
    P(P ≥ λ + t) ≤ exp(−t²/(2(λ + t))) and P(min(G1, G2) ≥ g) = p^{2g}."""
    c = -math.log(tail)
    t = c + math.sqrt(c * c + 2.0 * c * lam)
    g = c / (-2.0 * math.log(p))
    return math.ceil(lam + t + g)


def _log_terms(p: float, lam: float, top: int) -> np.ndarray:
    """ln(Pois(t; λ)·p^{−2t}) for t = 0 … ``top``."""
    from scipy.special import gammaln

    t = np.arange(top + 1, dtype=float)
    return np.asarray(-lam + t * math.log(lam) - gammaln(t + 1.0) - 2.0 * t * math.log(p))


def log_prefix_sums(p: float, lam: float, top: int) -> np.ndarray:
    """ln S(m) for m = 0 … ``top``, S(m) = Σ_{t ≤ m} Pois(t; λ)·p^{−2t} (λ > 0)."""
    return np.asarray(np.logaddexp.accumulate(_log_terms(p, lam, top)))


def log_view_pmf(a: np.ndarray, b: np.ndarray, h: int, p: float, lam: float) -> np.ndarray:
    """ln f_h(a, b) = 2·ln(1 − p) + (a − h + b)·ln p + ln S(min(a − h, b)), −∞ where a < h
    (elementwise over integer arrays a, b ≥ 0)."""
    a = np.asarray(a, dtype=np.int64) - h
    b = np.asarray(b, dtype=np.int64)
    low = np.minimum(a, b)
    log_s = log_prefix_sums(p, lam, max(int(low.max(initial=0)), 0))
    inside = low >= 0
    values = 2.0 * math.log1p(-p) + (a + b) * math.log(p) + log_s[np.where(inside, low, 0)]
    return np.where(inside, values, -np.inf)


@dataclass(frozen=True)
class LossLaw:
    """One bin's privacy-loss law over a window: finite losses (in the window's order:
    the closed-form atom, then m = 0, 1, …) and their
    probabilities, the mass at +∞ and the mass left out (outside the window, or not finite
    in floating point), which the accounting adds to δ whole."""

    values: np.ndarray
    weights: np.ndarray
    infinite: float
    left_out: float


@dataclass(frozen=True)
class LossLaws:
    """The two changed bins' loss laws under D (module docstring)."""

    leave: LossLaw
    """The bin the user's item leaves: ln f_1/f_0 at a view from f_1."""
    join: LossLaw
    """The bin the user's item joins: ln f_0/f_1 at a view from f_0."""
    allowance: float
    """Rounding allowance of a δ computed from these laws (:func:`rounding_allowance`)."""


def rounding_allowance(terms: int, lam: float) -> float:
    """What floating point may cost a δ computed over ``terms`` window terms at flood λ.

    The losses and log-weights come from sums of logarithms of magnitude up to about
    λ·(2 + |ln λ|) + W (ln Pois(t; λ) and the prefix sums), each with relative rounding
    of a few units of 2⁻⁵³, and the δ sum adds W terms of at most 1: 2⁻⁴⁶ (64 units) per
    unit of that magnitude, plus 10⁻¹³. Checked against 50-digit arithmetic in the tests.
    """
    scale = terms + lam * (2.0 + abs(math.log(lam)))
    return 1e-13 + 2.0**-46 * scale


@lru_cache(maxsize=8)
def loss_laws(p: float, lam: float, tail: float = TAIL_MASS) -> LossLaws:
    """Both changed bins' loss laws at ratio p and flood λ (0 < p < 1, λ > 0)."""
    if not (0.0 < p < 1.0 and lam > 0.0 and math.isfinite(lam)):
        raise ValueError(f"the laws need 0 < p < 1 and a finite λ > 0 (p={p}, λ={lam})")
    top = window_top(p, lam, tail)
    terms = _log_terms(p, lam, top + 1)
    log_s = np.logaddexp.accumulate(terms)
    log_p, log_q = math.log(p), math.log1p(-p)
    m = np.arange(top + 1, dtype=float)
    # u_m = ln S(m)/S(m − 1) = ln(1 + term_m/S(m − 1)) for m = 1 … top + 1 (u_{i+1} at i)
    increment = np.logaddexp(0.0, terms[1:] - log_s[:-1])
    # the bin the item leaves: −ln p − u_{m+1} with (1 − p)p^{2m+1}S(m), m = 0 … top
    leave = _law(
        np.concatenate(([-log_p], -log_p - increment)),
        np.concatenate(([-math.log1p(p)], log_q + (2.0 * m + 1.0) * log_p + log_s[:-1])),
        infinite=0.0,
        tail=2.0 * tail,
    )
    # the bin the item joins: ln p + u_m with (1 − p)p^{2m}S(m), m = 1 … top; +∞ at m = 0
    join = _law(
        np.concatenate(([log_p], log_p + increment[:-1])),
        np.concatenate(([log_p - math.log1p(p)], log_q + 2.0 * m[1:] * log_p + log_s[1:-1])),
        infinite=math.exp(log_q - lam),
        tail=2.0 * tail,
    )
    return LossLaws(leave, join, rounding_allowance(2 * (top + 2), lam))


def _law(values: np.ndarray, log_weights: np.ndarray, infinite: float, tail: float) -> LossLaw:
    """A :class:`LossLaw` of these losses and log-probabilities (in their order); terms
    whose loss or weight is not finite go to ``left_out`` (their weight, bounded by 1 if it
    is not finite either)."""
    weights = np.exp(log_weights)
    usable = np.isfinite(values) & np.isfinite(weights) & (weights > 0.0)
    dropped = weights[~usable]
    left_out = tail + float(np.sum(np.where(np.isfinite(dropped), dropped, 1.0)))
    return LossLaw(values[usable], weights[usable], infinite, left_out)


def delta_from_laws(eps: float, laws: LossLaws) -> float:
    """δ(ε) = E[(1 − e^{ε − L_leave − L_join})₊] + the infinite and left-out masses + the
    rounding allowance (the two bins independent)."""
    leave, join = laws.leave, laws.join
    # suffix sums over the leaving bin's sorted losses x: F = Σ w, G = Σ w·e^{−x}
    order = np.argsort(leave.values, kind="stable")
    values, weights = leave.values[order], leave.weights[order]
    mass = np.concatenate((np.cumsum(weights[::-1])[::-1], [0.0]))
    tilted = np.exp(np.log(weights) - values)
    tilted_mass = np.concatenate((np.cumsum(tilted[::-1])[::-1], [0.0]))
    index = np.searchsorted(values, eps - join.values, side="right")
    above = index < values.size
    scale = np.exp(np.where(above, eps - join.values, 0.0))
    bracket = np.where(above, mass[index] - scale * tilted_mass[index], 0.0)
    np.clip(bracket, 0.0, 1.0, out=bracket)
    main = float(np.dot(join.weights, bracket))
    extra = join.infinite + leave.infinite + join.left_out + leave.left_out + laws.allowance
    return min(1.0, main + extra)


def correlated_noise_delta(eps: float, p: float, lam: float) -> float:
    """δ(ε) of the flooded correlated-noise histogram at ratio p and flood λ, under
    replace-one neighbours, for an adversary that sees every message type's count: never
    below the true δ (module docstring). 1 when λ ≤ 0."""
    if lam <= 0.0:
        return 1.0
    return delta_from_laws(eps, loss_laws(p, lam))


@lru_cache(maxsize=4096)
def least_flood(eps: float, delta: float, p: float, rel_tol: float = 1e-6) -> float:
    """The least flood λ with ``correlated_noise_delta(eps, p, λ) ≤ delta`` (to relative
    tolerance, rounded up: the returned λ passes).

    ValueError when no λ does: when ``limit_delta(eps, p)`` (the difference's own δ, which
    no flood removes) is not below δ less the accounting's allowances, or when the least
    λ would exceed :data:`MAX_FLOOD`. δ does not increase in λ (a larger flood is the
    smaller one plus the same Poisson on both coordinates), and at least (1 − p)e^{−λ}
    of it is the join bin's empty "+" count, so the search starts at λ = ln((1 − p)/δ).
    """
    if not delta >= DELTA_FLOOR:
        raise ValueError(f"exact accounting needs delta ≥ {DELTA_FLOOR:g}")
    if not (0.0 < p < 1.0 and eps > 0.0):
        raise ValueError(f"a flood needs 0 < p < 1 and ε > 0 (p={p}, ε={eps})")
    if limit_delta(eps, p) + 1e-13 >= delta:
        raise ValueError(
            f"no flood reaches δ = {delta:g} at ε = {eps:g} with p = {p:g}: the difference "
            f"alone has δ = {limit_delta(eps, p):.3g} (needs 2·ln(1/p) ≲ ε)"
        )

    def passes(lam: float) -> bool:
        check_deadline()
        return correlated_noise_delta(eps, p, lam) <= delta

    low = max(math.log((1.0 - p) / delta), 1e-6)
    if passes(low):  # only when δ ≥ 1 − p, nearly: any flood at all
        return low
    high = 2.0 * low
    while not passes(high):
        if high >= MAX_FLOOD:
            raise ValueError(
                f"no flood up to λ = {MAX_FLOOD:g} reaches δ = {delta:g} at ε = {eps:g} "
                f"with p = {p:g}"
            )
        low, high = high, min(2.0 * high, MAX_FLOOD)
    return least_passing(passes, low, high, rel_tol)


@dataclass(frozen=True)
class FloodOption:
    """One (p, λ) meeting (ε, δ): θ = 2·ln(1/p)/ε, the estimate's per-bin variance and the
    group's expected noise messages per bin."""

    theta: float
    p: float
    lam: float
    variance: float
    noise_messages_per_bin: float

    def messages_per_user(self, n: int, k: int) -> float:
        """Expected messages per user in a group of n users over k bins."""
        return float(expected_messages_per_user(n, k, self.p, self.lam))


@lru_cache(maxsize=1024)
def flood_tradeoff(
    eps: float, delta: float, thetas: tuple[float, ...] = THETAS
) -> tuple[FloodOption, ...]:
    """Every θ of ``thetas`` at which a flood exists, with p = e^{−θε/2} and λ the least
    flood: variance falls and messages grow as θ rises (a tuple: ``thetas`` must be
    hashable)."""
    options = []
    for theta in thetas:
        p = geometric_ratio(eps, theta)
        try:
            lam = least_flood(eps, delta, p)
        except ValueError:
            continue
        options.append(
            FloodOption(
                theta, p, lam, float(noise_variance(p)), float(noise_messages_per_bin(p, lam))
            )
        )
    return tuple(options)


def choose_parameters(
    eps: float,
    delta: float,
    n: int,
    k: int,
    max_messages: float = DEFAULT_MAX_MESSAGES,
    thetas: Sequence[float] = THETAS,
) -> FloodOption:
    """(p, λ) for a group of n users over k bins at (ε, δ): of :func:`flood_tradeoff`'s
    options, the least variance whose expected messages per user stay within
    ``max_messages``; when none does, the one with the fewest messages (the caller reads
    ``messages_per_user`` to know)."""
    options = flood_tradeoff(eps, delta, tuple(thetas))
    if not options:
        raise ValueError(f"no θ of {tuple(thetas)} has a flood at ε = {eps:g}, δ = {delta:g}")
    within = [o for o in options if o.messages_per_user(n, k) <= max_messages]
    if within:
        return min(within, key=lambda o: o.variance)
    return min(options, key=lambda o: o.noise_messages_per_bin)


def shares_for_dropout(n: int, dropout: float) -> int:
    """n_min = n − ⌊f·n⌋: the users each share is drawn for (NB(1/n_min, p) and
    Poisson(λ/n_min) per bin), so that any n_min of the n users left after up to ⌊f·n⌋
    drop out (or collude) still carry the full noise and flood."""
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"the dropout fraction must be in [0, 1), not {dropout}")
    return n - math.floor(dropout * n)


def survivors_variance(p: float, survivors: int, planned: int) -> float:
    """The estimate's per-bin variance when ``survivors`` users send shares drawn for
    ``planned``: each side's noise is NB(survivors/planned, p), of variance
    (survivors/planned)·p/(1 − p)²."""
    return survivors / planned * float(noise_variance(p))
