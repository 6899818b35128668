"""Local DP, private coin: Hadamard response with randomized response (``alg:local``).

Randomizer (user of group g with value x, public block assignment by user index):
users alternate between two halves (X and X′) and, within a half, cycle through the
K − 1 informative Hadamard blocks j = 1..K−1 (K = smallest power of two ≥ k, SPEC §2),
so block sizes differ by at most one. The user sends b = 1{x ∈ C_j}, flipped with
probability 1/(e^{ε_g}+1): randomized response, exactly ε_g-LDP (``fact:RR``).

Analyzer: with γ_g = (e^{ε_g}+1)/(e^{ε_g}−1) and b_g = 1/(e^{ε_g}+1), each block's
γ_g·(mean bit − b_g) is unbiased for p(C_j) (resp. q(C_j)), and

    Z2 = Σ_j (γ1(X̂_j − b1) − γ2(Ŷ_j − b2)) · (γ1(X̂′_j − b1) − γ2(Ŷ′_j − b2))

has mean Σ_j (p(C_j) − q(C_j))² = (K/4)‖p − q‖²₂ (eq. ``eq:z2``): 0 under the null,
≥ (K/k)α² when TV(p, q) ≥ α. It rejects when Z2 > c·(K/k)α², c = ``threshold_fraction``
(the paper uses α²/2, i.e. c = k/(2K) ≤ 1/2; we default to the sharper c = 1/2, the
midpoint of the two means). A block with no user in some half is skipped.

Fast path: a block's count of 1-bits is Binomial(m, γ_g⁻¹·p(C_j) + b_g) exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from formulas.hadamard import hadamard_order
from validators.hadamard import block_probabilities, in_block_set
from validators.protocol import TestResult, TrialBatch


def flip_probability(eps: float) -> float:
    """Randomized response flip probability 1/(e^ε + 1)."""
    return 1.0 / (math.exp(eps) + 1.0)


def debias_factor(eps: float) -> float:
    """γ = (e^ε + 1)/(e^ε − 1)."""
    return (math.exp(eps) + 1.0) / math.expm1(eps)


def assignment(n_users: int, order: int) -> tuple[np.ndarray, np.ndarray]:
    """(half, block) of users 0..n−1: half = i mod 2, block = (i div 2) mod (K−1) + 1."""
    index = np.arange(n_users)
    return index % 2, (index // 2) % (order - 1) + 1


def block_sizes(n_users: int, order: int) -> np.ndarray:
    """Users per (half, block), shape (2, K−1), matching :func:`assignment`."""
    sizes = np.zeros((2, order - 1), dtype=np.int64)
    for half in (0, 1):
        in_half = (n_users - half + 1) // 2
        sizes[half] = in_half // (order - 1)
        sizes[half, : in_half % (order - 1)] += 1
    return sizes


@dataclass(frozen=True)
class LocalMessages:
    """What the analyzer receives from one group: each user's half, block and bit."""

    half: np.ndarray
    block: np.ndarray
    bit: np.ndarray


def randomize(
    values: np.ndarray, eps: float, order: int, rng: np.random.Generator
) -> LocalMessages:
    """Every user's one-bit message (Hadamard response + randomized response)."""
    values = np.asarray(values, dtype=np.int64)
    half, block = assignment(values.size, order)
    truthful = in_block_set(values, block)
    flips = rng.random(values.size) < flip_probability(eps)
    return LocalMessages(half, block, (truthful ^ flips).astype(np.int8))


def count_ones(messages: LocalMessages, order: int) -> np.ndarray:
    """1-bits per (half, block), shape (2, K−1)."""
    flat = messages.half * (order - 1) + (messages.block - 1)
    return np.bincount(flat, weights=messages.bit, minlength=2 * (order - 1)).reshape(2, order - 1)


@dataclass(frozen=True)
class LocalPrivateTester:
    """The heterogeneous-ε Hadamard-response closeness tester (``theo:ldp_ns``)."""

    k: int
    alpha: float
    eps1: float
    eps2: float
    threshold_fraction: float = 0.5

    @property
    def order(self) -> int:
        return hadamard_order(self.k)

    @property
    def threshold(self) -> float:
        """c·(K/k)·α²: a fraction of the least mean of Z2 when TV ≥ α."""
        return self.threshold_fraction * self.order / self.k * self.alpha**2

    def statistic(
        self, ones1: np.ndarray, sizes1: np.ndarray, ones2: np.ndarray, sizes2: np.ndarray
    ) -> np.ndarray:
        """Z2 from 1-bit counts (shape (..., 2, K−1)) and block sizes (2, K−1)."""
        usable = np.all((sizes1 > 0) & (sizes2 > 0), axis=0)
        safe1, safe2 = np.maximum(sizes1, 1), np.maximum(sizes2, 1)
        estimate1 = debias_factor(self.eps1) * (ones1 / safe1 - flip_probability(self.eps1))
        estimate2 = debias_factor(self.eps2) * (ones2 / safe2 - flip_probability(self.eps2))
        difference = estimate1 - estimate2
        return np.sum(difference[..., 0, :] * difference[..., 1, :] * usable, axis=-1)

    def analyze(self, messages1: LocalMessages, messages2: LocalMessages) -> TestResult:
        order = self.order
        z2 = self.statistic(
            count_ones(messages1, order),
            block_sizes(messages1.bit.size, order),
            count_ones(messages2, order),
            block_sizes(messages2.bit.size, order),
        )
        score = float(z2) / self.threshold
        return TestResult(score, score > 1.0)

    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult:
        return self.analyze(
            randomize(samples1, self.eps1, self.order, rng),
            randomize(samples2, self.eps2, self.order, rng),
        )

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        order = self.order
        ones = []
        sizes = []
        for pmf, n_users, eps in ((p, n1, self.eps1), (q, n2, self.eps2)):
            # one transform for a fixed pmf, one per trial for a per-trial stack (hashing)
            per_block = np.broadcast_to(block_probabilities(pmf), (trials, order - 1))
            prob_one = per_block / debias_factor(eps) + flip_probability(eps)
            size = block_sizes(n_users, order)
            ones.append(rng.binomial(size[None, :, :], prob_one[:, None, :]))
            sizes.append(size)
        scores = self.statistic(ones[0], sizes[0], ones[1], sizes[1]) / self.threshold
        return TrialBatch(scores, scores > 1.0)
