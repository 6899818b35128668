"""Public-coin testers by domain compression (Lemma ``theo:random:dct:hashing``).

The public seed draws R independent uniformly random hashes h_r : [k] → [L]; users are
split by index into R disjoint subsets, subset r maps its values through h_r and runs
the private-coin protocol on [L] (each user takes part once: privacy is unchanged).
For a random hash, E‖p_h − q_h‖²₂ = (1 − 1/L)·‖p − q‖²₂, so the private-coin tester's
threshold is taken at the compressed distance α_L = α·√(L/k)·√(1 − 1/L). The R runs
are combined by the mean of their scores (statistic/threshold): reject iff it exceeds
1. One hash (R = 1) reaches error 1/3 only when L is large enough that ‖p_h − q_h‖
concentrates; a few heavy elements cancel with probability ~1/L per hash, which is
what R > 1 buys back.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.validators.protocol import TestResult, TrialBatch, as_trial_stack


def draw_hashes(k: int, L: int, hashes: int, rng: np.random.Generator) -> np.ndarray:
    """R uniformly random functions [k] → [L] (the public coin), shape (R, k)."""
    return rng.integers(0, L, size=(hashes, k))


def compress(pmf: np.ndarray, hash_function: np.ndarray, L: int) -> np.ndarray:
    """p_h(i) = p(h⁻¹(i)), for a pmf stack (T, k) and hash stack (T, k).

    A bin that takes the whole pmf can sum to 1 + 1e-16 in floating point; it is held at 1
    (a probability the samplers accept).
    """
    trials = pmf.shape[0]
    offsets = hash_function + L * np.arange(trials)[:, None]
    sums = np.bincount(offsets.ravel(), weights=pmf.ravel(), minlength=trials * L)
    return np.minimum(sums, 1.0).reshape(trials, L)


def compressed_alpha(alpha: float, k: int, L: int) -> float:
    """α_L = α·√(L/k)·√(1 − 1/L): the ℓ2-matched distance after hashing."""
    return alpha * math.sqrt(L / k) * math.sqrt(1 - 1 / L)


def hashed_mean_share(k: int, L: int, kept: float) -> float:
    """E(hashed least mean) / (the unhashed least mean at α_L): what a random hash [k] → [L]
    leaves of a Paninski pair's quadratic signal under the shuffle statistic.

    The statistic's mean is Σ_b δ_b²/w_b (up to the groups' weights), δ_b the difference a
    bin b collects and w_b its mixture mass (1 − γ)·m_b/k + γ/L, m_b ~ Binomial(k, 1/L) the
    elements hashed to it and γ = 1 − ``kept`` the noise share. A Paninski pair's
    differences ±2α/k (a pair hashed together cancels) give E δ_b² ≈ (1 − 1/L)·m_b·(2α/k)²
    (the two members taken as independent signs: within 5 % of random hashes, erring low;
    tests/test_validators.py), so the mean is (1 − γ)²·(1 − 1/L)·(2α/k)²·L·E[m/w(m)], and
    the threshold's bound (Cauchy–Schwarz at α_L, tight for a uniform mixture) is
    4α²(L/k)(1 − 1/L)(1 − γ)². Their ratio,

        E_m[m / ((1 − γ)·m + γ·k/L)]  ≤ 1 (Jensen: m/(a·m + b) is concave),

    is 1 when the noise dominates (γ → 1: every w_b = 1/L) and near 1 for L ≪ k (m
    concentrates); with no noise it is P(m ≥ 1) = 1 − (1 − 1/L)^k, ≈ 1 − 1/e at L = k: a
    third of the bins are empty and the rest merge elements. Public quantities only.
    """
    from scipy.stats import binom

    rate = 1.0 / L
    mean = k * rate
    spread = math.sqrt(mean * (1 - rate))
    low = max(1, math.floor(mean - 12 * spread))
    high = min(k, math.ceil(mean + 12 * spread) + 1)
    m = np.arange(low, high + 1, dtype=float)
    weights = binom.pmf(m, k, rate)
    return float(np.sum(weights * m / (kept * m + (1 - kept) * k / L)))


def split_sizes(n_users: int, parts: int) -> list[int]:
    """Sizes of the R user subsets (user i goes to subset i mod R)."""
    return [(n_users - part + parts - 1) // parts for part in range(parts)]


@dataclass(frozen=True)
class CompressedTester:
    """A private-coin threshold tester run on hashed values, R hashes on disjoint users."""

    k: int
    L: int
    hashes: int
    base: Any
    """The private-coin tester on [L] (its ``alpha`` is the compressed α_L)."""

    @classmethod
    def build(
        cls, k: int, alpha: float, L: int, hashes: int, make_base: Callable[[int, float], Any]
    ) -> CompressedTester:
        return cls(k, L, hashes, make_base(L, compressed_alpha(alpha, k, L)))

    def run(
        self,
        samples1: np.ndarray,
        samples2: np.ndarray,
        rng: np.random.Generator,
        public_seed: int | None = None,
    ) -> TestResult:
        """One execution; ``public_seed`` is the public coin (drawn from ``rng`` if None).

        Every party derives the same hashes from the public seed; the users' own
        randomness (randomized response, noise) always comes from ``rng``.
        """
        coin = rng if public_seed is None else np.random.default_rng(public_seed)
        table = draw_hashes(self.k, self.L, self.hashes, coin)
        scores = [
            self.base.run(
                table[r][samples1[r :: self.hashes]], table[r][samples2[r :: self.hashes]], rng
            ).statistic
            for r in range(self.hashes)
        ]
        score = float(np.mean(scores))
        return TestResult(score, score > 1.0)

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        sizes1, sizes2 = split_sizes(n1, self.hashes), split_sizes(n2, self.hashes)
        p_stack, q_stack = as_trial_stack(p, trials), as_trial_stack(q, trials)
        total = np.zeros(trials)
        for r in range(self.hashes):
            table = rng.integers(0, self.L, size=(trials, self.k))
            batch = self.base.simulate_fast(
                compress(p_stack, table, self.L),
                compress(q_stack, table, self.L),
                sizes1[r],
                sizes2[r],
                trials,
                rng,
            )
            total += batch.statistics
        scores = total / self.hashes
        return TrialBatch(scores, scores > 1.0)
