"""Shuffle DP, multi-message: correlated noise with a cancelling flood (issue 40; after
Ghazi, Kumar, Manurangsi & Pagh, "Private counting from anonymous messages", ICML 2020;
the construction, its proof and its trust assumptions: docs/shuffle-multi-message.md).

Messages are typed "+j" and "−j" for the k bins j; here "+j" is the integer j and "−j" is
k + j.

Randomizer (user i of a group of n, item x_i, ratio p, flood λ, shares drawn for
``planned`` = n_min ≤ n users, n_min = n without dropout): one "+x_i", and for every bin
j, A_ij "+j" and B_ij "−j" with A_ij, B_ij ~ NB(1/n_min, p) (numpy's
``negative_binomial(1/n_min, 1 − p)``: failures, each of probability p, before 1/n_min
successes; mean p/(n_min(1 − p))), plus C_ij copies of both "+j" and "−j", C_ij the
user's share of the flood F (:class:`~planner.formulas.correlated_noise.Flood`:
NB(r/n_min, q), or Poisson(λ/n_min)) — all independent. n_min such shares add up to a
geometric count, P(G = g) = (1 − p)·p^g, and to the flood F.

Shuffler: one per group, a uniformly random permutation of all its messages
(:func:`planner.validators.shuffle_private.shuffle`).

Analyser: counts each message type: N⁺_j = h_j + G1_j + F_j, N⁻_j = G2_j + F_j, and takes
X_j = N⁺_j − N⁻_j = h_j + G1_j − G2_j: the flood cancels exactly and the noise is discrete
Laplace of ratio p, mean 0, variance v = 2p/(1 − p)², the noise of a trusted curator's
histogram at ε_c = 2·ln(1/p) (:mod:`planner.validators.curator_histogram`, whose noise
ratio is e^{−ε_c/2} = p). The closeness test on (X, Y) is therefore exactly the curator's
(:class:`~planner.validators.curator_histogram.CuratorHistogramTester` at ε_c1, ε_c2):
this module composes it and adds no statistic of its own. Both groups carry mean-0 noise,
so no equal-mixing constraint ties the groups' noise together (unlike the Poisson
protocol of :mod:`planner.validators.shuffle_private`); each group takes its own (p_g,
λ_g) from its own (ε_g, δ) (:func:`planner.formulas.correlated_noise.choose_parameters`).

Fast path: X = Multinomial(n, p) + (G1 − G2), the law of the analyser's estimate (the
flood, which cancels, is not drawn); :func:`fast_view` draws the analyser's whole view
(N⁺, N⁻) when one wants it.

Public coin: the shared seed hashes [k] onto [L] and R disjoint user subsets each run
this protocol on [L] (:func:`shuffle_multi_message_public_tester`, the same
:class:`~planner.validators.compression.CompressedTester` as the Poisson protocol's public
coin); p and λ do not depend on the number of bins, and each user then sends
1 + L·(2p/(1 − p) + 2λ)·R/n messages on average.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from planner.formulas.correlated_noise import (
    Flood,
    FloodLike,
    as_flood,
    best_flood,
    expected_messages_per_user,
    flood_option,
    geometric_ratio,
    noise_variance,
)
from planner.validators.compression import CompressedTester
from planner.validators.curator_histogram import (
    OFFSET_FLOOR,
    CuratorHistogramTester,
    HistogramChannel,
    sample_noise,
)
from planner.validators.local_channels import ChannelsTester
from planner.validators.local_hashed import HashedChannelsTester
from planner.validators.protocol import TestResult, TrialBatch, as_trial_stack
from planner.validators.shuffle_private import shuffle

DEFAULT_THETA = 0.8
"""θ of :meth:`ShuffleMultiMessageTester.for_privacy` when none is given: p = e^{−0.8ε/2},
a variance about 1/0.8² ≈ 1.56× the curator's at small ε with a moderate flood (the
planner is to choose θ per query: ``correlated_noise.choose_parameters``)."""

_CHUNK_CELLS = 2**20
"""Users × bins drawn at once by :func:`draw_shares` (bounded memory for large groups)."""


def curator_eps(p: float) -> float:
    """ε_c = 2·ln(1/p): the curator ε whose discrete Laplace noise is this protocol's."""
    return -2.0 * math.log(p)


def flood_shares(
    flood: FloodLike, planned: int, shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    """Each of ``planned`` users' share of the flood F, per cell of ``shape``: Poisson(λ/
    planned), or NB(r/planned, q) (numpy's ``negative_binomial(r/planned, 1 − q)``);
    ``planned`` of them add up to F."""
    flood = as_flood(flood)
    if flood.ratio == 0.0:
        return rng.poisson(flood.mean / planned, size=shape)
    return rng.negative_binomial(flood.shape / planned, 1.0 - flood.ratio, size=shape)


def draw_shares(
    n_users: int, k: int, p: float, flood: FloodLike, planned: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, C), each (n_users, k): the users' "+j" noise counts NB(1/planned, p), their
    "−j" noise counts, and their flood counts (:func:`flood_shares`, sent as both signs)."""
    shape = (n_users, k)
    plus = rng.negative_binomial(1.0 / planned, 1.0 - p, size=shape)
    minus = rng.negative_binomial(1.0 / planned, 1.0 - p, size=shape)
    return plus, minus, flood_shares(flood, planned, shape, rng)


def user_counts(
    values: np.ndarray,
    k: int,
    p: float,
    lam: FloodLike,
    rng: np.random.Generator,
    planned: int | None = None,
) -> np.ndarray:
    """(n, 2k): how many messages of each type each user sends (columns j: "+j", k + j:
    "−j"); ``planned`` is n_min, the number of users each share is drawn for (default n)."""
    values = np.asarray(values, dtype=np.int64)
    n = values.size
    a, b, c = draw_shares(n, k, p, lam, planned or n, rng)
    counts = np.concatenate((a + c, b + c), axis=1)
    counts[np.arange(n), values] += 1
    return counts


def randomize(
    values: np.ndarray,
    k: int,
    p: float,
    lam: FloodLike,
    rng: np.random.Generator,
    planned: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """All messages of one group's users, user after user, and each user's message count.
    Drawn in blocks of users (:data:`_CHUNK_CELLS` cells at a time)."""
    values = np.asarray(values, dtype=np.int64)
    planned = planned or values.size
    block = max(1, _CHUNK_CELLS // (2 * k))
    types = np.arange(2 * k)
    messages, per_user = [], []
    for start in range(0, values.size, block):
        counts = user_counts(values[start : start + block], k, p, lam, rng, planned)
        messages.append(np.repeat(np.tile(types, counts.shape[0]), counts.ravel()))
        per_user.append(counts.sum(axis=1))
    if not messages:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(messages), np.concatenate(per_user)


def analyse(messages: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The analyser's view: the count of each "+j" and each "−j" message (N⁺, N⁻)."""
    counts = np.bincount(np.asarray(messages, dtype=np.int64), minlength=2 * k)
    return counts[:k], counts[k:]


def estimate(messages: np.ndarray, k: int) -> np.ndarray:
    """X = N⁺ − N⁻: the histogram plus discrete Laplace noise of ratio p."""
    plus, minus = analyse(messages, k)
    return plus - minus


def fast_view(
    pmf: np.ndarray, n_users: int, p: float, lam: FloodLike, trials: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(trials, k) draws of the view (N⁺, N⁻) of n_users items from ``pmf``: Multinomial +
    G1 + F and G2 + F (numpy's geometric counts from 1, hence the − 1)."""
    stack = as_trial_stack(pmf, trials)
    histogram = rng.multinomial(n_users, stack)
    shape = histogram.shape
    flood = flood_shares(lam, 1, shape, rng)
    plus = histogram + rng.geometric(1.0 - p, size=shape) - 1 + flood
    minus = rng.geometric(1.0 - p, size=shape) - 1 + flood
    return plus, minus


@dataclass(frozen=True)
class ShuffleMultiMessageTester:
    """The closeness tester on the two groups' estimates X = N⁺ − N⁻, group g at ratio p_g
    and flood λ_g: the curator's tester at ε_cg = 2·ln(1/p_g) (module docstring)."""

    k: int
    alpha: float
    p1: float
    lam1: FloodLike
    p2: float
    lam2: FloodLike
    threshold_fraction: float = 0.5
    spread_slope: float = 0.0
    hashed_from: int = 0
    """The domain size before a public hash onto these k bins (0: not hashed)."""
    offset_floor: float = OFFSET_FLOOR

    def __post_init__(self) -> None:
        for p, lam in ((self.p1, self.lam1), (self.p2, self.lam2)):
            if not (0.0 < p < 1.0 and (isinstance(lam, Flood) or lam >= 0.0)):
                raise ValueError(f"each group needs 0 < p < 1 and λ ≥ 0 (p={p}, λ={lam})")

    @classmethod
    def for_privacy(
        cls,
        k: int,
        alpha: float,
        eps1: float,
        eps2: float,
        delta: float,
        theta: float = DEFAULT_THETA,
        threshold_fraction: float = 0.5,
        spread_slope: float = 0.0,
        hashed_from: int = 0,
    ) -> ShuffleMultiMessageTester:
        """Each group at p_g = e^{−θε_g/2} and its least flood for (ε_g, δ)
        (:func:`planner.formulas.correlated_noise.best_flood`)."""
        p1, p2 = geometric_ratio(eps1, theta), geometric_ratio(eps2, theta)
        lam1, lam2 = best_flood(eps1, delta, p1), best_flood(eps2, delta, p2)
        return cls(k, alpha, p1, lam1, p2, lam2, threshold_fraction, spread_slope, hashed_from)

    @property
    def analyser(self) -> CuratorHistogramTester:
        """The curator's tester whose noise is this protocol's estimate's noise."""
        return CuratorHistogramTester(
            self.k,
            self.alpha,
            curator_eps(self.p1),
            curator_eps(self.p2),
            self.threshold_fraction,
            self.spread_slope,
            self.hashed_from,
            self.offset_floor,
        )

    @property
    def variances(self) -> tuple[float, float]:
        """Each group's per-bin noise variance 2p_g/(1 − p_g)²."""
        return float(noise_variance(self.p1)), float(noise_variance(self.p2))

    def messages_per_user(self, n1: int, n2: int) -> tuple[float, float]:
        """Each group's expected messages per user, 1 + k(2p/(1 − p) + 2λ)/n."""
        return (
            float(expected_messages_per_user(n1, self.k, self.p1, as_flood(self.lam1).mean)),
            float(expected_messages_per_user(n2, self.k, self.p2, as_flood(self.lam2).mean)),
        )

    def threshold(self, n1: int, n2: int) -> float:
        return self.analyser.threshold(n1, n2)

    def analyze(self, estimate1: np.ndarray, estimate2: np.ndarray, n1: int, n2: int) -> np.ndarray:
        """Scores Z/threshold from the two groups' estimates X, Y (last axis)."""
        return self.analyser.analyze(estimate1, estimate2, n1, n2)

    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult:
        """One execution: every user's messages, each group's shuffle, the analyser's
        counts of each message type."""
        estimates = [
            estimate(shuffle(randomize(samples, self.k, p, lam, rng)[0], rng), self.k)
            for samples, p, lam in ((samples1, self.p1, self.lam1), (samples2, self.p2, self.lam2))
        ]
        score = float(self.analyze(estimates[0], estimates[1], len(samples1), len(samples2)))
        return TestResult(score, score > 1.0)

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        estimates = [
            rng.multinomial(n_users, as_trial_stack(pmf, trials))
            + sample_noise(curator_eps(ratio), (trials, self.k), rng)
            for pmf, n_users, ratio in ((p, n1, self.p1), (q, n2, self.p2))
        ]
        scores = self.analyze(estimates[0], estimates[1], n1, n2)
        return TrialBatch(scores, scores > 1.0)


@dataclass(frozen=True)
class MessagesChannel(HistogramChannel):
    """One group's release through this protocol, as a channel of the closeness statistic
    for any pair of channels (``planner.validators.local_channels.Channel``): ``eps`` is
    the curator ε ε_c = 2·ln(1/p) whose discrete Laplace noise the estimate carries, and
    ``flood`` the group's flood. :meth:`randomize` runs the protocol itself, every user's
    messages, the shuffle and the analyser's counts; the fast path and the statistic's
    terms are the curator's (:class:`HistogramChannel`), whose release has exactly the
    estimate's law."""

    flood: Flood = field(default_factory=lambda: Flood(1.0))

    @property
    def p(self) -> float:
        """The geometric noise's ratio, e^{−ε_c/2}."""
        return math.exp(-self.eps / 2.0)

    def randomize(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """X = N⁺ − N⁻ from every user's messages after the group's shuffle."""
        messages, _ = randomize(values, self.k, self.p, self.flood, rng)
        return estimate(shuffle(messages, rng), self.k)

    def messages_per_user(self, n: int) -> float:
        """Expected messages per user of a group of n: 1 + k·(2p/(1 − p) + 2·E F)/n."""
        return float(expected_messages_per_user(n, self.k, self.p, self.flood.mean))


def messages_channel(k: int, eps: float, delta: float, theta: float) -> MessagesChannel:
    """A group at (ε, δ): p = e^{−θε/2} (the curator's noise at θε) and its least flood
    (:func:`planner.formulas.correlated_noise.best_flood`)."""
    option = flood_option(eps, delta, theta)
    return MessagesChannel(k, curator_eps(option.p), option.flood)


@dataclass(frozen=True)
class MultiMessageChannelsTester(ChannelsTester):
    """The planner's multi-message shuffle tester (``shuffle-private+messages``): each
    group g sends its messages at p_g = e^{−θε_g/2} with its least flood for (ε_g, δ),
    and the analyser runs the χ²-weighted studentized statistic of
    :mod:`planner.validators.local_channels` on the two estimates X = N⁺ − N⁻. The
    estimates have exactly the law of a curator's releases at θε_g, so this is the
    ``central+channels`` tester at (θε1, θε2) with the curator replaced by the users'
    messages and a shuffler."""

    delta: float = 1e-6
    theta: float = DEFAULT_THETA

    @property
    def channels(self) -> tuple[MessagesChannel, MessagesChannel]:  # type: ignore[override]
        return (
            messages_channel(self.k, self.eps1, self.delta, self.theta),
            messages_channel(self.k, self.eps2, self.delta, self.theta),
        )

    def messages_per_user(self, n1: int, n2: int) -> tuple[float, float]:
        """Each group's expected messages per user."""
        one, two = self.channels
        return one.messages_per_user(n1), two.messages_per_user(n2)


@dataclass(frozen=True)
class HashedMultiMessageTester(HashedChannelsTester, MultiMessageChannelsTester):
    """The public coin's multi-message tester (``shuffle-public+messages``): a hash from
    the shared seed maps [k] onto ``buckets`` (one per run, drawn before any user
    reports, as :class:`~planner.validators.local_hashed.HashedChannelsTester` draws it),
    and each user runs :class:`MultiMessageChannelsTester`'s protocol on its bucket: its
    bucket as "+h(x)" and its shares of every bucket's geometric noise and flood. The
    analyser's estimates are a curator's releases of the two hashed histograms at
    (θε1, θε2), read by the χ²-weighted statistic over the buckets. The privacy is the
    private-coin protocol's over K bins: the hash is public and applied to each user's own
    item, so neighbouring inputs are neighbouring bucket histograms."""

    @property
    def channels(self) -> tuple[MessagesChannel, MessagesChannel]:  # type: ignore[override]
        return (
            messages_channel(self.bins, self.eps1, self.delta, self.theta),
            messages_channel(self.bins, self.eps2, self.delta, self.theta),
        )


def shuffle_multi_message_public_tester(
    k: int,
    alpha: float,
    p1: float,
    lam1: FloodLike,
    p2: float,
    lam2: FloodLike,
    L: int,
    hashes: int,
    threshold_fraction: float = 0.5,
    spread_slope: float = 0.0,
    hash_share: bool = False,
) -> CompressedTester:
    """The public-coin form: R hashes onto [L] on disjoint users, each run this protocol
    on [L] at the same (p_g, λ_g) (per-bin accounting does not depend on the bins);
    ``hash_share``: the threshold takes the share of the signal a random hash keeps."""
    return CompressedTester.build(
        k,
        alpha,
        L,
        hashes,
        lambda size, distance: ShuffleMultiMessageTester(
            size,
            distance,
            p1,
            lam1,
            p2,
            lam2,
            threshold_fraction,
            spread_slope,
            k if hash_share else 0,
        ),
    )
