"""Every sample-complexity bound of the paper, written once against an :class:`Ops`.

Each function returns the tuple of its additive (or, for the central model, maximised)
terms with the constant C = 1; :mod:`planner.formulas.registry` says how the terms combine and
which theorem each function encodes. Evaluate with ``ops=NUMPY`` (default) for numbers,
``ops=sympy_ops()`` with sympy symbols for the expression.

Notation: ``k`` domain size, ``alpha`` total-variation distance, ``eps``/``eps1``/``eps2``
privacy parameters, ``mu1``/``mu2`` the per-bin Poisson noise levels of the shuffle
protocol (README), ``delta`` the shuffle model's δ, ``L`` the compressed domain size.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from planner.formulas.ops import NUMPY, Ops

Terms = tuple[Any, ...]


def local_private(k: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Per-group users, local private-coin (``theo:ldp_ns``): k^{3/2}/(α²ε²)."""
    return (k ** ops.fraction(3, 2) / (alpha**2 * eps**2),)


def local_private_proof(K: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Per-group users with the paper's proof constants (appendix, ``theo:l2_mean_flip``).

    The proof takes m = 800·√K/(ε²α²) product samples per half, each product sample
    being one user per Hadamard block (K blocks), so 2·K·m = 1600·K^{3/2}/(ε²α²) users
    per group, K the smallest power of two ≥ k. Valid for ε ≤ 1 (it uses γ < 3/ε).
    """
    return (1600 * K ** ops.fraction(3, 2) / (alpha**2 * eps**2),)


def local_private_hadamard(k: Any, K: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Local private coin in the shape of its tester: k·√K/(α²ε²), K = power of two ≥ k.

    The same order as ``theo:ldp_ns`` (K < 2k), with the Hadamard padding kept: the
    statistic's mean is ≥ (K/k)α² and its null s.d. ∝ γ²K^{3/2}/n (the variance in the
    proof of ``theo:l2_mean_flip``), so the tester needs n ∝ k·√K·γ²/α². Calibrated
    constants multiply this form, so that k = 68 (K = 128) is not priced like k = 64.
    """
    return (k * ops.sqrt(K) / (alpha**2 * eps**2),)


def local_public(k: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Per-group users, local public-coin (``theo:ldp_public_ns``): k/(α²ε²)."""
    return (k / (alpha**2 * eps**2),)


def randomized_response_variance(eps: Any, ops: Ops = NUMPY) -> Any:
    """γ(ε)²/4 with γ = (e^ε + 1)/(e^ε − 1): the variance factor of a de-biased
    randomized-response bit, in units where it is 1/ε² as ε → 0 (γ ≈ 2/ε there).

    It is what the local testers' null variance Σ_g γ_g²/(4 m_g) scales with
    (``theo:l2_mean_flip``): 1/ε² overstates it by ≤ 1 % below ε = 0.25 and by 17 % at
    ε = 1, and above ε ≈ 1 it tends to ¼ while 1/ε² tends to 0.
    """
    gamma = (ops.exp(eps) + 1) / (ops.exp(eps) - 1)
    return gamma**2 / 4


def local_private_tester(k: Any, K: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Local private coin in the shape of its tester, for every ε: k·√K·(γ²/4)/α².

    ``local_private_hadamard`` with 1/ε² replaced by the randomized-response variance
    factor γ(ε)²/4, which it equals as ε → 0 and which stays right for ε > 1, where
    1/ε² would promise ever fewer users than the sampling variance allows.
    """
    return (k * ops.sqrt(K) * randomized_response_variance(eps, ops) / alpha**2,)


def _privacy_scale(eps: Any, ops: Ops) -> Any:
    """g(ε) = max(ε, (e^ε − 1)/(e − 1)): ε up to 1, where the paper's lower bounds hold,
    and the factor (e^ε − 1) by which a local randomizer at ε contracts the χ² distance
    between two inputs' report distributions above it (continuous at ε = 1)."""
    return ops.maximum(eps, (ops.exp(eps) - 1) / (ops.exp(1) - 1))


def local_private_lower(k: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Per-group lower bound, local DP, private coin, at every ε: the paper's
    k^{3/2}/(α²ε²) (``tab:testing:DP``, ε ≤ 1) with ε replaced by g(ε) above 1, and the
    non-private closeness terms k^{2/3}/α^{4/3} and √k/α², which no private test beats;
    the largest of the three. Below ε = 1 it is the paper's value (the private term is the
    largest there); above it, the paper's form would fall like 1/ε² under what any test
    needs without privacy."""
    scale = _privacy_scale(eps, ops)
    return (
        k ** ops.fraction(3, 2) / (alpha**2 * scale**2),
        k ** ops.fraction(2, 3) / alpha ** ops.fraction(4, 3),
        ops.sqrt(k) / alpha**2,
    )


def local_public_lower(k: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Per-group lower bound, local DP, public coin, at every ε: k/(α²ε²)
    (``tab:testing:DP``) with ε replaced by g(ε) above 1, and the non-private terms, as
    :func:`local_private_lower`."""
    scale = _privacy_scale(eps, ops)
    return (
        k / (alpha**2 * scale**2),
        k ** ops.fraction(2, 3) / alpha ** ops.fraction(4, 3),
        ops.sqrt(k) / alpha**2,
    )


def krr_gain(k: Any, eps: Any, ops: Ops = NUMPY) -> Any:
    """a = (e^ε − 1)/(e^ε + k − 1): k-ary randomized response at ε maps every pair at total
    variation α to report distributions at exactly a·α."""
    return (ops.exp(eps) - 1) / (ops.exp(eps) + k - 1)


def local_krr(k: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Per-group users, both groups through k-RR at ε (docs/method.md, "k-RR"):
    k^{2/3}/(aα)^{4/3} + √k/(aα)², a = :func:`krr_gain`.

    The reports of both groups are samples of two distributions over [k] at total
    variation a·α, so a non-private two-sample closeness tester on them needs
    k^{2/3}/(aα)^{4/3} + √k/(aα)² samples a group (Chan–Diakonikolas–Valiant–Valiant
    2014, Thm 1.1 with the distance aα; Bhattacharya–Valiant 2015 for unequal sizes).
    Valid at every ε > 0 and k ≥ 2; it is the better local bound once e^ε is of order k.
    """
    distance = krr_gain(k, eps, ops) * alpha
    return (k ** ops.fraction(2, 3) / distance ** ops.fraction(4, 3), ops.sqrt(k) / distance**2)


def krr_noise(k: Any, eps: Any, ops: Ops = NUMPY) -> Any:
    """w = k·Var/n of one bin's debiased k-RR frequency at the uniform p, per user:
    (1 − 1/k)/a², a = :func:`krr_gain` (the uniform p reports uniformly, π_j = 1/k).
    1 − 1/k without privacy (ε → ∞); about k²/ε² at small ε."""
    gain = krr_gain(k, eps, ops)
    return (1 - 1 / k) / gain**2


def unary_noise(k: Any, eps: Any, ops: Ops = NUMPY) -> Any:
    """w = k·π(1 − π)/a² for optimized unary encoding (Wang et al. 2017) at the uniform p:
    each of the k bits is 1 w.p. 1/2 at the user's value and q = 1/(e^ε + 1) elsewhere,
    so π_j = a·p_j + q with a = 1/2 − q. About 4k/ε² at small ε (Hadamard response's
    per-bin variance); 2 − 1/k without privacy (the kept bit is a coin flip)."""
    flip = 1 / (ops.exp(eps) + 1)
    gain = ops.fraction(1, 2) - flip
    report = gain / k + flip
    return k * report * (1 - report) / gain**2


def bit_flipping_noise(k: Any, eps: Any, ops: Ops = NUMPY) -> Any:
    """w = k·π(1 − π)/a² for symmetric bit flipping (RAPPOR's one-time response) at the
    uniform p: each of the k bits flipped w.p. f = 1/(e^{ε/2} + 1), a = 1 − 2f, b = f.
    Noisier than :func:`unary_noise` at small and middle ε; near no privacy it keeps every
    bit and its w tends to 1 − 1/k, where optimized unary encoding's tends to 2."""
    flip = 1 / (ops.exp(eps / 2) + 1)
    gain = 1 - 2 * flip
    report = gain / k + flip
    return k * report * (1 - report) / gain**2


def channel_noise(k: Any, eps: Any, ops: Ops = NUMPY) -> Any:
    """A group's per-user noise w at ε: the least of k-RR's, optimized unary encoding's
    and bit flipping's (:func:`krr_noise`, :func:`unary_noise`, :func:`bit_flipping_noise`):
    the channel the group runs."""
    return ops.minimum(
        ops.minimum(krr_noise(k, eps, ops), unary_noise(k, eps, ops)),
        bit_flipping_noise(k, eps, ops),
    )


CHANNEL_NOISES: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("k-rr", krr_noise),
    ("oue", unary_noise),
    ("unary", bit_flipping_noise),
)
"""Each local channel's key (``validators.local_channels.Randomizer``) and noise, in the
order a tie is broken (k-RR sends the fewest bits)."""


def channel_bits(key: str, k: int) -> int:
    """Bits of one user's report through the channel ``key`` over [k]: ⌈log₂ k⌉ for k-RR's
    one value, k for unary encoding's k bits."""
    return max(1, math.ceil(math.log2(k))) if key == "k-rr" else k


@functools.lru_cache(maxsize=4096)
def least_noise_channel(k: float, eps: float) -> str:
    """The key of the channel :func:`channel_noise` takes at (k, ε): the first of
    :data:`CHANNEL_NOISES` with the least noise."""
    noises = [float(noise(float(k), float(eps))) for _, noise in CHANNEL_NOISES]
    return CHANNEL_NOISES[noises.index(min(noises))][0]


def local_channels(k: Any, alpha: Any, eps1: Any, eps2: Any, ops: Ops = NUMPY) -> Terms:
    """Group 1's users when each group reports through its own channel (docs/method.md,
    "One channel per group"): √k·√w1·(√w1 + √w2)/α², w_g = :func:`channel_noise` at ε_g.

    Each bin's debiased frequency has variance w_g/(k·n_g) near the uniform p, so the
    statistic's null s.d. is about √(2/k)·(w1/n1 + w2/n2); against its least mean under
    the alternative, 4α²/k, that asks w1/n1 + w2/n2 ≲ α²/√k, and the fewest users in all
    meeting it are n_g ∝ √w_g (Lagrange): this. Group 2's users are the same expression
    with ε1 and ε2 exchanged. Without privacy (w → 1) it is the ℓ2 closeness order √k/α²
    a group."""
    root1 = ops.sqrt(channel_noise(k, eps1, ops))
    root2 = ops.sqrt(channel_noise(k, eps2, ops))
    return (ops.sqrt(k) * root1 * (root1 + root2) / alpha**2,)


def curator_noise_variance(eps: Any, ops: Ops = NUMPY) -> Any:
    """Variance 2r/(1 − r)² of the discrete Laplace noise, r = e^{−ε/2}, that a curator
    adds to each bin of its group's histogram for ε-DP (sensitivity 2: replacing one
    user's item moves two bins by one); about 8/ε² for small ε."""
    ratio = ops.exp(-eps / 2)
    return 2 * ratio / (1 - ratio) ** 2


def _release_noise(bins: Any, eps: Any, curator: bool, ops: Ops) -> tuple[Any, Any]:
    """A release's (w, c) over ``bins`` bins: times the bins, each bin's variance near the
    uniform pmf is w/n + c/n². A local channel: w its per-user noise
    (:func:`channel_noise`), c = 0. A curator's noisy histogram: w = 1 (sampling),
    c = bins·v (:func:`curator_noise_variance`)."""
    if curator:
        return 1, bins * curator_noise_variance(eps, ops)
    return channel_noise(bins, eps, ops), 0


def _pair_sizes(
    k: Any,
    alpha: Any,
    eps1: Any,
    eps2: Any,
    curator1: bool,
    curator2: bool,
    ops: Ops,
    buckets: Any = None,
) -> tuple[Any, Any]:
    """Both groups' users when each releases through a local channel or a curator's noisy
    histogram (docs/method.md, "Mixed pairs"): the statistic asks the two groups' per-bin
    variances, times k, to sum to at most τ = α²/√k, as for :func:`local_channels`.

    With ``buckets`` = K, a shared hash first maps [k] onto K buckets (:func:`hashed_curators`):
    the releases are over K bins, and τ = α²·√K·(1 − 1/K)/k (the hashed pair keeps
    ‖p − q‖²₂'s mean up to 1 − 1/K, and the null's spread is that of K bins).

    With a curator's c/n² term the fewest users in all have no closed form (a quartic);
    this splits τ in two closed-form passes. First by √w1 : √w2 (the split of two
    per-user noises), solving each group's w/n + c/n² = τ_g exactly,
    n = (w + √(w² + 4c·τ_g))/(2τ_g); then by the effective noises √w_g′ = √(w_g + c_g/n_g)
    at those n, solving again. Within 1 % of the fewest users in all for k from 2 to 10⁵,
    α from 0.01 and each ε from 0.05 to 20 (``tests/test_mixed_pairs.py``); with two local
    channels it is :func:`local_channels` exactly."""
    bins = k if buckets is None else buckets
    w1, c1 = _release_noise(bins, eps1, curator1, ops)
    w2, c2 = _release_noise(bins, eps2, curator2, ops)
    if buckets is None:
        tau = alpha**2 / ops.sqrt(k)
    else:
        tau = alpha**2 * ops.sqrt(buckets) * (1 - 1 / buckets) / k

    def users(w: Any, c: Any, share: Any) -> Any:
        return (w + ops.sqrt(w * w + 4 * c * share)) / (2 * share)

    root1, root2 = ops.sqrt(w1), ops.sqrt(w2)
    first1 = users(w1, c1, tau * root1 / (root1 + root2))
    first2 = users(w2, c2, tau * root2 / (root1 + root2))
    root1, root2 = ops.sqrt(w1 + c1 / first1), ops.sqrt(w2 + c2 / first2)
    return (
        users(w1, c1, tau * root1 / (root1 + root2)),
        users(w2, c2, tau * root2 / (root1 + root2)),
    )


def curator_beside_local(k: Any, alpha: Any, eps1: Any, eps2: Any, ops: Ops = NUMPY) -> Terms:
    """Group 1's users when group 1's curator releases its noisy histogram at ε1 and
    group 2 reports locally at ε2 (:func:`_pair_sizes`)."""
    return (_pair_sizes(k, alpha, eps1, eps2, True, False, ops)[0],)


def curator_beside_curator(k: Any, alpha: Any, eps1: Any, eps2: Any, ops: Ops = NUMPY) -> Terms:
    """Group 1's users when each group's curator releases its own noisy histogram, at ε1
    and ε2 (:func:`_pair_sizes`): the central model's histogram tester, which wins where
    the noise is small next to the sampling (large ε, small α)."""
    return (_pair_sizes(k, alpha, eps1, eps2, True, True, ops)[0],)


def local_beside_curator(k: Any, alpha: Any, eps1: Any, eps2: Any, ops: Ops = NUMPY) -> Terms:
    """Group 1's users when group 1 reports locally at ε1 and group 2's curator releases
    its noisy histogram at ε2 (:func:`_pair_sizes`)."""
    return (_pair_sizes(k, alpha, eps1, eps2, False, True, ops)[0],)


def hashed_curators(k: Any, K: Any, alpha: Any, eps1: Any, eps2: Any, ops: Ops = NUMPY) -> Terms:
    """Group 1's users when a shared (public-coin) hash maps [k] onto K buckets and each
    group's release is a curator's noisy histogram of its buckets, at ε1 and ε2
    (:func:`_pair_sizes` with ``buckets``; docs/shuffle-multi-message.md, "The public
    coin"). Near the uniform pmf each bucket's variance is 1/(K·n) + v/n², so the K bins'
    null spread, (1/K)·Σ_g (1/n_g + K·v_g/n_g²)·√(2K)·…, is asked to stay below the least
    mean 4α²(1 − 1/K)/k: a curator's noise costs K·v, not k·v, while the sampling's part
    grows as K falls. With K = k it is :func:`curator_beside_curator` over 1 − 1/k."""
    return (_pair_sizes(k, alpha, eps1, eps2, True, True, ops, buckets=K)[0],)


HASHED_BUCKETS_MIN = 16
"""The fewest buckets a shared hash maps [k] into (``hashed_buckets``): with fewer, one hash
merges a pair's difference too often (two buckets lose the difference of a
perturbed-uniform pair's halves about a quarter of the time), and the
ten-odd-bucket optimum the noise alone would pick at ε ≈ 2 validated worse than 16
(docs/method.md, "A shared hash, then a channel per group")."""


def hashed_channels(k: Any, K: Any, alpha: Any, eps1: Any, eps2: Any, ops: Ops = NUMPY) -> Terms:
    """Group 1's users when a shared (public-coin) hash maps [k] onto K buckets and each
    group reports its bucket through its own channel (docs/method.md, "A shared hash, then
    a channel per group"): k·√w1·(√w1 + √w2)/(√K·(1 − 1/K)·α²), w_g = :func:`channel_noise`
    at (K, ε_g).

    A uniformly random hash keeps ‖p − q‖²₂'s mean up to the factor 1 − 1/K (a pair of
    elements shares a bucket w.p. 1/K, and the differences sum to 0), so the least mean is
    4α²(1 − 1/K)/k, while the noise is that of K bins: the statistic's null s.d. is about
    √(2/K)·(w1/n1 + w2/n2). The fewest users in all are n_g ∝ √w_g, as for
    :func:`local_channels`; with K = k and no hash it is that bound over 1 − 1/k."""
    root1 = ops.sqrt(channel_noise(K, eps1, ops))
    root2 = ops.sqrt(channel_noise(K, eps2, ops))
    return (k * root1 * (root1 + root2) / (ops.sqrt(K) * (1 - 1 / K) * alpha**2),)


HASHED_BUCKETS_MAX = 2048
"""The most buckets a shared hash maps [k] into (``hashed_buckets``): the largest K its
calibration measured (k/2 at the grid's k = 4096). K near k/2 at a larger k leaves a few
hundred users over thousands of buckets, where the calibrated constant does not hold: at
k = 16,384, α = 0.95, ε = 20, K = 8,192 and 396 users a group erred 0.403 on
paninski-symmetric (docs/method.md, "A shared hash, then a channel per group")."""


def hashed_buckets(k: Any, eps1: Any, eps2: Any) -> Any:
    """The shared hash's buckets K for a pair of groups (``hashed_channels``): the power of
    2 in [``HASHED_BUCKETS_MIN``, min(k/2, ``HASHED_BUCKETS_MAX``)] with the fewest users
    in all, (√w1 + √w2)²/(√K·(1 − 1/K)); ``HASHED_BUCKETS_MIN`` where k/2 is below it, and
    never more than k. Elementwise over numpy arrays; the first such K on a tie."""
    k_arr, eps1_arr, eps2_arr = np.broadcast_arrays(
        np.asarray(k, dtype=np.float64),
        np.asarray(eps1, dtype=np.float64),
        np.asarray(eps2, dtype=np.float64),
    )

    def cost(buckets: float) -> Any:
        root1 = np.sqrt(channel_noise(buckets, eps1_arr))
        root2 = np.sqrt(channel_noise(buckets, eps2_arr))
        return (root1 + root2) ** 2 / (math.sqrt(buckets) * (1 - 1 / buckets))

    return _fewest_users_buckets(k_arr, cost)


def hashed_curator_buckets(k: Any, alpha: Any, eps1: Any, eps2: Any) -> Any:
    """The shared hash's buckets K for two curators' releases (``hashed_curators``): the
    power of 2 in [``HASHED_BUCKETS_MIN``, min(k/2, ``HASHED_BUCKETS_MAX``)] with the fewest
    users in all, as :func:`hashed_buckets` picks them. Unlike a channel's, a curator's
    noise is per bin, not per user, so the best K depends on α too (more users dilute it).
    Elementwise over numpy arrays; the first such K on a tie."""
    k_arr, alpha_arr, eps1_arr, eps2_arr = np.broadcast_arrays(
        *(np.asarray(value, dtype=np.float64) for value in (k, alpha, eps1, eps2))
    )

    def cost(buckets: float) -> Any:
        one = hashed_curators(k_arr, buckets, alpha_arr, eps1_arr, eps2_arr)[0]
        two = hashed_curators(k_arr, buckets, alpha_arr, eps2_arr, eps1_arr)[0]
        return one + two

    return _fewest_users_buckets(k_arr, cost)


def _fewest_users_buckets(k_arr: np.ndarray, cost: Callable[[float], Any]) -> Any:
    """The power of 2 K in [``HASHED_BUCKETS_MIN``, min(k/2, ``HASHED_BUCKETS_MAX``)] of the
    least ``cost(K)`` (users in all, up to a common factor), elementwise;
    ``HASHED_BUCKETS_MIN`` where k/2 is below it, never more than k; the first on a tie."""
    top = max(HASHED_BUCKETS_MIN, int(np.max(k_arr)) // 2) if k_arr.size else HASHED_BUCKETS_MIN
    top = min(top, HASHED_BUCKETS_MAX)
    best_k = np.full(k_arr.shape, float(HASHED_BUCKETS_MIN))
    best_cost = np.full(k_arr.shape, np.inf)
    buckets = HASHED_BUCKETS_MIN
    while buckets <= top:
        allowed = (buckets <= k_arr / 2) | (buckets == HASHED_BUCKETS_MIN)
        value = cost(float(buckets))
        better = allowed & (value < best_cost)
        best_k = np.where(better, float(buckets), best_k)
        best_cost = np.where(better, value, best_cost)
        buckets *= 2
    result = np.minimum(best_k, np.maximum(k_arr, 2.0)).astype(np.int64)
    return int(result) if result.ndim == 0 else result


def local_public_tester(k: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Local public coin in the shape of its tester, for every ε: k·(γ²/4)/α² (the
    ``theo:ldp_public_ns`` order k/(α²ε²) with 1/ε² replaced by γ(ε)²/4)."""
    return (k * randomized_response_variance(eps, ops) / alpha**2,)


def shuffle_private(k: Any, alpha: Any, mu1: Any, mu2: Any, ops: Ops = NUMPY) -> Terms:
    """Group-1 users, shuffle private-coin, μ-form (end of the proof of ``theo:sdp_ns``).

    n1 ≍ √k/α² + k^{3/4}√μ1/α + min(1/(α⁴μ1μ2), k^{2/3}/α^{4/3}·(μ1/μ2)^{1/3}),
    where group 1 is the group with the *smaller* noise μ1 ≤ μ2 (larger ε), and
    n2 = (μ2/μ1)·n1 (equal mixing weights, eq. ``eq:n1:n2``).
    """
    return (
        ops.sqrt(k) / alpha**2,
        k ** ops.fraction(3, 4) * ops.sqrt(mu1) / alpha,
        ops.minimum(
            1 / (alpha**4 * mu1 * mu2),
            k ** ops.fraction(2, 3)
            / alpha ** ops.fraction(4, 3)
            * (mu1 / mu2) ** ops.fraction(1, 3),
        ),
    )


def shuffle_private_eps(
    k: Any, alpha: Any, eps1: Any, eps2: Any, delta: Any, ops: Ops = NUMPY
) -> Terms:
    """ε-form of :func:`shuffle_private` as stated in ``theo:sdp_ns`` (display only).

    Equal to the μ-form at μ_g = log(1/δ)/ε_g².
    """
    log_inv_delta = ops.log(1 / delta)
    return (
        ops.sqrt(k) / alpha**2,
        k ** ops.fraction(3, 4) * ops.sqrt(log_inv_delta) / (alpha * eps1),
        ops.minimum(
            eps1**2 * eps2**2 / (alpha**4 * log_inv_delta**2),
            k ** ops.fraction(2, 3)
            / alpha ** ops.fraction(4, 3)
            * (eps2 / eps1) ** ops.fraction(2, 3),
        ),
    )


def shuffle_public_eps(k: Any, alpha: Any, eps1: Any, delta: Any, ops: Ops = NUMPY) -> Terms:
    """ε-form of the public-coin shuffle bound as stated in ``theo:sdp_public_ns`` (display)."""
    log_inv_delta = ops.log(1 / delta)
    return (
        ops.sqrt(k) / alpha**2,
        k ** ops.fraction(2, 3)
        * log_inv_delta ** ops.fraction(1, 3)
        / (alpha ** ops.fraction(4, 3) * eps1 ** ops.fraction(2, 3)),
        ops.sqrt(k) * ops.sqrt(log_inv_delta) / (alpha * eps1),
    )


def central(k: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Group-1 users, central model (``theo:central``, Zhang 2021); the terms are *maximised*.

    Group 2 (smaller ε) then needs n2 = n1·(e^{ε1}−1)/(e^{ε2}−1) (``theo:subsampling``).
    """
    return (
        ops.sqrt(k) / alpha**2,
        ops.sqrt(k) / (ops.sqrt(eps) * alpha),
        k ** ops.fraction(2, 3) / alpha ** ops.fraction(4, 3),
        k ** ops.fraction(1, 3) / (eps ** ops.fraction(2, 3) * alpha ** ops.fraction(4, 3)),
        1 / (eps * alpha),
    )


def nonprivate_closeness(k: Any, alpha: Any, ops: Ops = NUMPY) -> Terms:
    """Non-private closeness testing (Table ``tab:testing``): √k/α² + k^{2/3}/α^{4/3}."""
    return (ops.sqrt(k) / alpha**2, k ** ops.fraction(2, 3) / alpha ** ops.fraction(4, 3))


def nonprivate_identity(k: Any, alpha: Any, ops: Ops = NUMPY) -> Terms:
    """Non-private identity testing (Table ``tab:testing``): √k/α²."""
    return (ops.sqrt(k) / alpha**2,)


def lower_shuffle(k: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Shuffle identity-testing lower bound (Table ``tab:testing:DP``, BCJM'20)."""
    return (
        k ** ops.fraction(2, 3) / (alpha ** ops.fraction(4, 3) * eps ** ops.fraction(2, 3)),
        ops.sqrt(k) / alpha**2,
        1 / (alpha * eps),
    )


def lower_central(k: Any, alpha: Any, eps: Any, ops: Ops = NUMPY) -> Terms:
    """Central identity-testing lower bound (Table ``tab:testing:DP``, ASZ'18; tight).

    The project brief lists "central = the central upper bound"; but its own argument (a closeness
    tester whose other group is infinite is an identity tester for this group) gives
    the *identity* bound at ε_g, which lacks the k^{2/3}/α^{4/3} closeness term. We use
    the identity bound: it is the one that argument proves for one group alone.
    """
    return (
        ops.sqrt(k) / alpha**2,
        ops.sqrt(k) / (alpha * ops.sqrt(eps)),
        k ** ops.fraction(1, 3) / (alpha ** ops.fraction(4, 3) * eps ** ops.fraction(2, 3)),
        1 / (alpha * eps),
    )


def compressed(private_coin_bound: Callable[..., Terms]) -> Callable[..., Terms]:
    """Public-coin bound from a private-coin one by domain compression.

    Lemma ``theo:random:dct:hashing``: hashing [k] onto [L] keeps TV ≥ c·√(L/k)·TV with
    constant probability, so the private-coin tester runs on domain L at distance
    α·√(L/k). The returned function takes ``k, alpha, L`` and the private-coin bound's
    other parameters by keyword.
    """

    def public_coin_bound(k: Any, alpha: Any, L: Any, ops: Ops = NUMPY, **rest: Any) -> Terms:
        return private_coin_bound(k=L, alpha=alpha * ops.sqrt(L / k), ops=ops, **rest)

    public_coin_bound.__name__ = f"compressed_{private_coin_bound.__name__}"
    public_coin_bound.__doc__ = f"{private_coin_bound.__name__} on [L] at α·√(L/k)."
    return public_coin_bound


local_public_compressed = compressed(local_private)
shuffle_public_compressed = compressed(shuffle_private)
