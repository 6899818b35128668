"""Exact (ε, δ) of the correlated-noise histogram with a cancelling flood (docs/
shuffle-multi-message.md).

The mechanism, per bin, as the adversary sees it after the shuffle: the count of "+j"
messages and the count of "−j" messages,

    N⁺ = h + G1 + P,    N⁻ = G2 + P,

h the bin's count, G1, G2 geometric (P(G = g) = (1 − p)·p^g, g ≥ 0) and P the flood, here
Poisson(λ) — or negative binomial (:class:`Flood`): everything below holds with its pmf in
place of Pois(t; λ), and its P(F = 0) in place of e^{−λ} —, all independent and
independent across bins. The analyser's estimate N⁺ − N⁻ = h +
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
A rounding allowance covers the floating-point error of the weights and losses: η
(:func:`rounding_allowance`) bounds each one's absolute error, and δ takes 6η times the
mass where the loss exceeds ε − 2η (``_rounding``), plus 10⁻¹³. The result is never below
the true δ.

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

from planner.formulas.search import check_deadline, least_below

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


@dataclass(frozen=True)
class Flood:
    """The flood's law in one bin: the count F added to both the "+j" and the "−j"
    messages. ``ratio`` 0: Poisson(``mean``). ``ratio`` q in (0, 1): negative binomial
    NB(r, q) of that mean, r = mean·(1 − q)/q (failures, each of probability q, before r
    successes; P(F = t) = Γ(t + r)/(Γ(r)·t!)·q^t·(1 − q)^r). Both are infinitely
    divisible: each of n users sends Poisson(mean/n), or NB(r/n, q), copies of both signs.

    Why the negative binomial: the flood must make an empty "+" count rarer than δ, and
    hide the geometric noise's shape. A Poisson flood does the second only when its mean
    is about ln(1/δ)/ε′², ε′ the ε left to it; a negative binomial with 1 − q of order ε′
    and r of order ln(1/δ) does both at a mean of order ln(1/δ)/ε′ (docs/shuffle-multi-
    message.md). The Poisson is its limit q → 0 at a fixed mean."""

    mean: float
    ratio: float = 0.0

    def __post_init__(self) -> None:
        if not (self.mean > 0.0 and math.isfinite(self.mean) and 0.0 <= self.ratio < 1.0):
            raise ValueError(f"a flood needs a finite mean > 0 and 0 ≤ q < 1 ({self})")

    @property
    def shape(self) -> float:
        """r = mean·(1 − q)/q (∞ for the Poisson)."""
        return math.inf if self.ratio == 0.0 else self.mean * (1.0 - self.ratio) / self.ratio

    @property
    def variance(self) -> float:
        """Var F: the mean, or mean/(1 − q)."""
        return self.mean / (1.0 - self.ratio)

    def log_pmf(self, t: np.ndarray) -> np.ndarray:
        """ln P(F = t) at integers t ≥ 0 (``math.lgamma`` term by term: a plan's flood
        search imports no scipy)."""
        t = np.asarray(t, dtype=float)
        if self.ratio == 0.0:
            lam = self.mean
            return np.asarray(-lam + t * math.log(lam) - _lgamma(t + 1.0))
        r, q = self.shape, self.ratio
        return np.asarray(
            _lgamma(t + r) - math.lgamma(r) - _lgamma(t + 1.0) + t * math.log(q)
            + r * math.log1p(-q)
        )  # fmt: skip

    def log_empty(self) -> float:
        """ln P(F = 0): −mean, or r·ln(1 − q)."""
        return -self.mean if self.ratio == 0.0 else self.shape * math.log1p(-self.ratio)

    def tail_top(self, tail: float) -> float:
        """x with P(F ≥ x) ≤ ``tail``: for the Poisson, P(F ≥ λ + t) ≤ exp(−t²/(2(λ + t)));
        for NB(r, q), Chernoff at e^s = q^{−c}, P(F ≥ x) ≤ ((1 − q)/(1 − q^{1−c}))^r·q^{cx},
        the least x over a few c."""
        c = -math.log(tail)
        if self.ratio == 0.0:
            return self.mean + c + math.sqrt(c * c + 2.0 * c * self.mean)
        r, q = self.shape, self.ratio
        return min(
            (r * (math.log1p(-q) - math.log1p(-(q ** (1.0 - share)))) + c) / (share * -math.log(q))
            for share in (0.25, 0.5, 0.75, 0.9, 0.97, 0.99)
        )

    def log_scale(self, top: int) -> float:
        """A bound on |ln P(F = t)| for t ≤ ``top`` and on the sums built from it, for
        the rounding allowance: λ·(2 + |ln λ|) for the Poisson (its terms' size near the
        mode), and the sum of the absolute parts of the NB's log-pmf at ``top``."""
        if self.ratio == 0.0:
            lam = self.mean
            return lam * (2.0 + abs(math.log(lam)))
        r, q = self.shape, self.ratio
        return (
            abs(math.lgamma(top + r)) + abs(math.lgamma(r)) + math.lgamma(top + 1.0)
            + top * -math.log(q) + r * -math.log1p(-q)
        )  # fmt: skip


_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)
"""The Stirling series' coefficients of x⁻¹, x⁻³, …, x⁻⁹ in ln Γ(x)."""
STIRLING_FROM = 20.0
"""Above this x the series (truncated after x⁻⁹, error < 691/(360360·x¹¹) < 10⁻¹⁷) gives
ln Γ(x); below it ``math.lgamma``."""


def _lgamma(values: np.ndarray) -> np.ndarray:
    """ln Γ elementwise: the Stirling series in numpy for x ≥ :data:`STIRLING_FROM` (a
    window of 10⁵ terms in milliseconds), ``math.lgamma`` below (no scipy: a plan's flood
    search imports none)."""
    x = np.asarray(values, dtype=float)
    out = np.empty_like(x)
    large = x >= STIRLING_FROM
    y = x[large]
    inverse, square = 1.0 / y, 1.0 / (y * y)
    series = np.zeros_like(y)
    for coefficient in reversed(_STIRLING):
        series = series * square + coefficient
    out[large] = (y - 0.5) * np.log(y) - y + 0.5 * math.log(2.0 * math.pi) + series * inverse
    small = ~large
    out[small] = [math.lgamma(value) for value in x[small].tolist()]
    return out


FloodLike = Flood | float
"""A :class:`Flood`, or a bare λ > 0: the Poisson flood of that mean."""


def as_flood(flood: FloodLike) -> Flood:
    """A bare λ as the Poisson flood Flood(λ)."""
    return flood if isinstance(flood, Flood) else Flood(float(flood))


def window_top(p: float, flood: FloodLike, tail: float = TAIL_MASS) -> int:
    """M with P(min(N⁺, N⁻) > M) ≤ 2·``tail`` for one bin: min(N⁺, N⁻) = F + min(G1, G2),
    the flood's tail (:meth:`Flood.tail_top`) and P(min(G1, G2) ≥ g) = p^{2g}."""
    g = -math.log(tail) / (-2.0 * math.log(p))
    return math.ceil(as_flood(flood).tail_top(tail) + g)


def _log_terms(p: float, flood: FloodLike, top: int) -> np.ndarray:
    """ln(P(F = t)·p^{−2t}) for t = 0 … ``top``."""
    t = np.arange(top + 1, dtype=float)
    return np.asarray(as_flood(flood).log_pmf(t) - 2.0 * t * math.log(p))


def log_prefix_sums(p: float, flood: FloodLike, top: int) -> np.ndarray:
    """ln S(m) for m = 0 … ``top``, S(m) = Σ_{t ≤ m} P(F = t)·p^{−2t}."""
    return np.asarray(np.logaddexp.accumulate(_log_terms(p, flood, top)))


def log_view_pmf(a: np.ndarray, b: np.ndarray, h: int, p: float, flood: FloodLike) -> np.ndarray:
    """ln f_h(a, b) = 2·ln(1 − p) + (a − h + b)·ln p + ln S(min(a − h, b)), −∞ where a < h
    (elementwise over integer arrays a, b ≥ 0)."""
    a = np.asarray(a, dtype=np.int64) - h
    b = np.asarray(b, dtype=np.int64)
    low = np.minimum(a, b)
    log_s = log_prefix_sums(p, flood, max(int(low.max(initial=0)), 0))
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


def rounding_allowance(terms: int, scale: float) -> float:
    """What floating point may cost a δ computed over ``terms`` window terms whose
    log-terms have magnitude up to ``scale`` (:meth:`Flood.log_scale`).

    The losses and log-weights come from sums of logarithms of magnitude up to about
    scale + W (ln P(F = t) and the prefix sums), each with relative rounding of a few
    units of 2⁻⁵³, and the δ sum adds W terms of at most 1: 2⁻⁴⁶ (64 units) per unit of
    that magnitude, plus 10⁻¹³. Checked against 50-digit arithmetic in the tests.
    """
    return 1e-13 + 2.0**-46 * (terms + scale)


@lru_cache(maxsize=8)
def loss_laws(p: float, flood: FloodLike, tail: float = TAIL_MASS) -> LossLaws:
    """Both changed bins' loss laws at ratio p and this flood (0 < p < 1; a bare λ > 0 is
    the Poisson flood)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"the laws need 0 < p < 1 (p={p})")
    flood = as_flood(flood)
    top = window_top(p, flood, tail)
    terms = _log_terms(p, flood, top + 1)
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
        infinite=math.exp(log_q + flood.log_empty()),
        tail=2.0 * tail,
    )
    # the log-terms' size: the flood's log-pmf and the −2t·ln p of S(m)'s terms
    scale = flood.log_scale(top + 1) + 2.0 * (top + 1) * -log_p
    return LossLaws(leave, join, rounding_allowance(2 * (top + 2), scale))


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
    extra = join.infinite + leave.infinite + join.left_out + leave.left_out
    return min(1.0, main + extra + _rounding(eps, laws, values, mass))


def _rounding(eps: float, laws: LossLaws, values: np.ndarray, mass: np.ndarray) -> float:
    """What floating point may have cost ``main``: with η = ``laws.allowance`` bounding
    each loss's and log-weight's absolute error, a term w_x·w_y·(1 − e^{ε−x−y})₊ moves by
    at most about 4η·w_x·w_y, and only where x + y > ε − 2η (elsewhere both the computed
    and the exact bracket are 0); the suffix sums' own rounding is W·2⁻⁵² relative to
    the same tail mass, below η. So 6η·P(L > ε − 2η) (that mass read from the same sums,
    each weight up to e^{2η} high), plus 10⁻¹³. Where η is not small, η itself."""
    eta = laws.allowance
    if eta >= 1e-3:
        return eta
    join = laws.join
    wide = np.searchsorted(values, eps - 2.0 * eta - join.values, side="right")
    tail = float(np.dot(join.weights, mass[wide])) * math.exp(2.0 * eta)
    return 1e-13 + 6.0 * eta * min(1.0, tail)


def correlated_noise_delta(eps: float, p: float, flood: FloodLike) -> float:
    """δ(ε) of the flooded correlated-noise histogram at ratio p and this flood (a bare λ:
    Poisson), under replace-one neighbours, for an adversary that sees every message
    type's count: never below the true δ (module docstring). 1 when a bare λ ≤ 0."""
    if not isinstance(flood, Flood) and flood <= 0.0:
        return 1.0
    return delta_from_laws(eps, loss_laws(p, flood))


def _check_flood_query(eps: float, delta: float, p: float) -> None:
    """ValueError unless a flood can meet (ε, δ) at ratio p (:func:`limit_delta`)."""
    if not delta >= DELTA_FLOOR:
        raise ValueError(f"exact accounting needs delta ≥ {DELTA_FLOOR:g}")
    if not (0.0 < p < 1.0 and eps > 0.0):
        raise ValueError(f"a flood needs 0 < p < 1 and ε > 0 (p={p}, ε={eps})")
    if limit_delta(eps, p) + 1e-13 >= delta:
        raise ValueError(
            f"no flood reaches δ = {delta:g} at ε = {eps:g} with p = {p:g}: the difference "
            f"alone has δ = {limit_delta(eps, p):.3g} (needs 2·ln(1/p) ≲ ε)"
        )


def least_mean(eps: float, delta: float, p: float, ratio: float, rel_tol: float = 1e-6) -> float:
    """The least mean of a flood of this ``ratio`` (0: Poisson) with δ(ε) ≤ ``delta`` at
    ratio p (to relative tolerance, rounded up: the returned mean passes).

    At a fixed q, δ does not increase with the mean: NB(r₁, q) + NB(r₂, q) = NB(r₁ + r₂,
    q) (Poisson likewise), so a larger flood is a smaller one plus the same independent
    count on both coordinates, a post-processing. At least (1 − p)·P(F = 0) of δ is the
    join bin's empty "+" count, so the search starts where that alone is δ. ValueError
    past :data:`MAX_FLOOD`, or where :func:`limit_delta` leaves no room."""
    found = _least_mean_bracket(eps, delta, p, ratio, rel_tol)
    assert found is not None  # it gives up only below a finite ``give_up``
    return found[1]


_Bracket = tuple[float, float, float, float]
"""(a failing mean, a passing mean, δ at each): a search's last bracket, which a finer
search of the same flood starts from (:func:`best_flood`)."""


def _least_mean_bracket(
    eps: float,
    delta: float,
    p: float,
    ratio: float,
    rel_tol: float,
    start: _Bracket | None = None,
    give_up: float = math.inf,
) -> _Bracket | None:
    """:func:`least_mean`'s bracket, from ``start`` where given (a coarser search's):
    doubling from the lower limit until a mean passes, then false position
    (``formulas.search.least_below``). A lower limit that passes is returned as both
    ends. None once a failing mean is above ``give_up``: the least mean is larger still
    (:func:`best_flood` weighs no candidate that far above its best)."""
    _check_flood_query(eps, delta, p)

    def delta_at(mean: float) -> float:
        check_deadline()
        return correlated_noise_delta(eps, p, Flood(mean, ratio))

    if start is not None:
        low, high, low_value, high_value = start
        return least_below(
            delta_at, delta, low, high, rel_tol, low_value=low_value, high_value=high_value
        )
    need = math.log((1.0 - p) / delta)  # −ln P(F = 0) at least this
    if ratio == 0.0:
        low = max(need, 1e-6)
    else:
        low = max(need * ratio / ((1.0 - ratio) * -math.log1p(-ratio)), 1e-6)
    low_value = delta_at(low)
    if low_value <= delta:
        return low, low, low_value, low_value
    if low > give_up:
        return None
    high = 2.0 * low
    high_value = delta_at(high)
    while high_value > delta:
        if high >= MAX_FLOOD:
            raise ValueError(
                f"no flood of mean up to {MAX_FLOOD:g} (q = {ratio:g}) reaches δ = {delta:g} "
                f"at ε = {eps:g} with p = {p:g}"
            )
        low, low_value = high, high_value
        if low > give_up:
            return None
        high = min(2.0 * high, MAX_FLOOD)
        high_value = delta_at(high)
    return least_below(
        delta_at, delta, low, high, rel_tol, low_value=low_value, high_value=high_value
    )


@lru_cache(maxsize=4096)
def least_flood(eps: float, delta: float, p: float, rel_tol: float = 1e-6) -> float:
    """The least Poisson flood λ with ``correlated_noise_delta(eps, p, λ) ≤ delta``
    (:func:`least_mean` at q = 0). ValueError when none does: when ``limit_delta(eps, p)``
    (the difference's own δ, which no flood removes) is not below δ less the
    accounting's allowances, or when the least λ would exceed :data:`MAX_FLOOD`."""
    return least_mean(eps, delta, p, 0.0, rel_tol)


FLOOD_RATIOS: tuple[float, ...] = (0.0, *(1.0 - 2.0 ** (-j / 2.0) for j in range(1, 27)))
"""The flood ratios q :func:`best_flood` weighs: the Poisson, and 1 − q = 2^{−j/2} for
j = 1 … 26 (0.71 down to 1.2·10⁻⁴; the best 1 − q is of order the ε left to the flood)."""

LEAST_MEAN_RATIO = 0.6
"""Where the least mean's 1 − q lies: about 0.6·(1 − θ)·ε, θ = 2·ln(1/p)/ε (measured at
δ = 10⁻⁶ over ε 0.1 – 10 and θ 0.5 – 0.9 by a search over all of :data:`FLOOD_RATIOS`:
the best 1 − q was 0.5 – 0.7 times (1 − θ)·ε; docs/shuffle-multi-message.md)."""


@lru_cache(maxsize=4096)
def best_flood(eps: float, delta: float, p: float) -> Flood:
    """The flood of least mean among the Poisson and the :data:`FLOOD_RATIOS` around
    1 − q = :data:`LEAST_MEAN_RATIO`·(1 − θ)·ε, with δ(ε) ≤ ``delta`` at ratio p: each
    candidate's least mean to 5 %, then those within :data:`COARSE_REACH` of the least
    to 10⁻⁶, each from its own bracket (about half the accountings of a search afresh).
    Whatever it returns passes δ exactly (a mean whose δ was computed and passed); only
    how near the least mean it lands rests on where the candidates are (the tests check
    its neighbours need no less). ValueError as :func:`least_mean` where no candidate
    has a flood."""
    _check_flood_query(eps, delta, p)
    spare = max(eps - 2.0 * math.log(1.0 / p), 1e-12)  # (1 − θ)·ε, the flood's share
    centre = round(-2.0 * math.log2(min(LEAST_MEAN_RATIO * spare, 0.7)))
    candidates = sorted(
        {0, *(j for j in (centre - 1, centre, centre + 1) if 1 <= j < len(FLOOD_RATIOS))}
    )
    coarse: dict[int, _Bracket] = {}
    # the ratios nearest the centre first, the Poisson last: a candidate whose search
    # passes a failing mean above COARSE_REACH × the least so far is given up (it could be
    # neither the least nor refined; the choice is the same, in fewer accountings)
    for index in sorted(candidates, key=lambda j: (j == 0, abs(j - centre))):
        reach = COARSE_REACH * min((found[1] for found in coarse.values()), default=math.inf)
        try:
            bracket = _least_mean_bracket(eps, delta, p, FLOOD_RATIOS[index], 0.05, give_up=reach)
        except ValueError:
            continue
        if bracket is not None:
            coarse[index] = bracket
    if not coarse:
        raise ValueError(
            f"no flood of mean up to {MAX_FLOOD:g} reaches δ = {delta:g} at ε = {eps:g} "
            f"with p = {p:g}"
        )
    # each candidate within COARSE_REACH of the least coarse mean is refined from its own
    # bracket (not searched afresh): two within 5 % could swap places at 10⁻⁶
    least = min(bracket[1] for bracket in coarse.values())
    refined = {}
    for index in sorted(coarse):
        if coarse[index][1] <= COARSE_REACH * least:
            found = _least_mean_bracket(eps, delta, p, FLOOD_RATIOS[index], 1e-6, coarse[index])
            assert found is not None  # from a bracket it never gives up
            refined[index] = found[1]
    best = min(refined, key=refined.__getitem__)
    return Flood(refined[best], FLOOD_RATIOS[best])


COARSE_REACH = 1.1
"""A candidate flood whose coarse least mean (to 5 %) is within this factor of the least
is refined too (:func:`best_flood`): each coarse mean lies up to 5 % above its own least."""


@dataclass(frozen=True)
class FloodOption:
    """One (p, flood) meeting (ε, δ): θ = 2·ln(1/p)/ε, the estimate's per-bin variance and
    the group's expected noise messages per bin."""

    theta: float
    p: float
    flood: Flood
    variance: float
    noise_messages_per_bin: float

    @property
    def lam(self) -> float:
        """The flood's mean."""
        return self.flood.mean

    def messages_per_user(self, n: int, k: int) -> float:
        """Expected messages per user in a group of n users over k bins."""
        return float(expected_messages_per_user(n, k, self.p, self.flood.mean))


def flood_option(eps: float, delta: float, theta: float) -> FloodOption:
    """θ's option: p = e^{−θε/2} and its :func:`best_flood` (ValueError where none)."""
    p = geometric_ratio(eps, theta)
    flood = best_flood(eps, delta, p)
    return FloodOption(
        theta,
        p,
        flood,
        float(noise_variance(p)),
        float(noise_messages_per_bin(p, flood.mean)),
    )


@lru_cache(maxsize=1024)
def flood_tradeoff(
    eps: float, delta: float, thetas: tuple[float, ...] = THETAS
) -> tuple[FloodOption, ...]:
    """Every θ of ``thetas`` at which a flood exists, with p = e^{−θε/2} and its least
    flood (:func:`best_flood`): variance falls and messages grow as θ rises (a tuple:
    ``thetas`` must be hashable)."""
    options = []
    for theta in thetas:
        try:
            options.append(flood_option(eps, delta, theta))
        except ValueError:
            continue
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
