"""Central DP (``theo:central``): Zhang's (2021) private closeness tester plus subsampling.

The curator holds both groups. It uses m = min(n1, n2) users of each group — a
uniformly random m-subset of the larger group (Lemma ``theo:subsampling``) — splits each
group's m users into two halves and forms histograms X, X′ (group 1) and Y, Y′ (group 2):

    Z = Σ_i |X_i − Y_i| + |X′_i − Y′_i| − |X_i − X′_i| − |Y_i − Y′_i|.

Under the null the four histograms are exchangeable, so E Z = 0; when TV ≥ α, E Z
grows like α²m^{3/2}/√k (dense) or its sparse analogue (Diakonikolas et al. 2021).

Sensitivity: a count appears in two absolute terms, so changing it by one moves Z by
≤ 2; *replacing* a user (the paper's neighbour relation) changes two counts: Z moves by
≤ 4 = S, not 2 as the paper says (that holds for add/remove only; SPEC §5, §9).

Decision: Z′ = (Z − C1·√m − C2/ε)/S and reject with probability σ(ε·Z′) (logistic).
Since σ(x + γ)/σ(x) ≤ e^{|γ|} and (1 − σ(x + γ))/(1 − σ(x)) ≤ e^{|γ|}, and ε·Z′ moves by
≤ ε under replacement, the output is ε-DP for the m used users; subsampling makes
group g (ε_g ≥ ln(1 + (m/n_g)(e^{ε}−1))). The tester runs at the largest ε both groups
allow: ε = min_g ln(1 + (n_g/m)(e^{ε_g} − 1)).

Fast path: a uniform m-subset of n i.i.d. users is m i.i.d. users, so the halves are
Multinomial(⌊m/2⌋, ·) and Multinomial(⌈m/2⌉, ·): O(k) per trial.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from validators.protocol import TestResult, TrialBatch, as_trial_stack

SENSITIVITY = 4.0
"""Sensitivity of Z under replace-one neighbours."""


def zhang_statistic(
    x: np.ndarray, x_prime: np.ndarray, y: np.ndarray, y_prime: np.ndarray
) -> np.ndarray:
    """Z over the last axis of four histograms."""
    return np.sum(
        np.abs(x - y) + np.abs(x_prime - y_prime) - np.abs(x - x_prime) - np.abs(y - y_prime),
        axis=-1,
    )


def test_epsilon(n1: int, n2: int, eps1: float, eps2: float) -> float:
    """The largest ε for the m = min(n1, n2)-user tester that keeps group g ε_g-DP."""
    used = min(n1, n2)
    return min(math.log1p(n / used * math.expm1(eps)) for n, eps in ((n1, eps1), (n2, eps2)))


def reject_probability(
    statistic: np.ndarray, used: int, eps: float, shift_scale: float, shift_privacy: float
) -> np.ndarray:
    """σ(ε·(Z − C1√m − C2/ε)/S)."""
    shifted = (statistic - shift_scale * math.sqrt(used) - shift_privacy / eps) / SENSITIVITY
    return 0.5 * (1.0 + np.tanh(eps * shifted / 2.0))  # σ(x) without overflow


@dataclass(frozen=True)
class CentralTester:
    """Zhang's tester with sensitivity 4 and exact subsampling amplification."""

    k: int
    eps1: float
    eps2: float
    shift_scale: float = 1.0
    """C1: the non-private part of the threshold, in units of √m."""
    shift_privacy: float = 4.0
    """C2: the privacy part, in units of 1/ε (σ(−C2/S) is the null's rejection floor)."""

    def histograms(self, samples: np.ndarray, used: int, rng: np.random.Generator) -> list:
        chosen = rng.choice(samples, size=used, replace=False) if used < len(samples) else samples
        half = used // 2
        return [np.bincount(part, minlength=self.k) for part in (chosen[:half], chosen[half:])]

    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult:
        n1, n2 = len(samples1), len(samples2)
        used = min(n1, n2)
        eps = test_epsilon(n1, n2, self.eps1, self.eps2)
        x, x_prime = self.histograms(np.asarray(samples1), used, rng)
        y, y_prime = self.histograms(np.asarray(samples2), used, rng)
        statistic = float(zhang_statistic(x, x_prime, y, y_prime))
        probability = reject_probability(
            np.array(statistic), used, eps, self.shift_scale, self.shift_privacy
        )
        return TestResult(statistic, bool(rng.random() < probability))

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        used = min(n1, n2)
        eps = test_epsilon(n1, n2, self.eps1, self.eps2)
        half = used // 2
        p_stack, q_stack = as_trial_stack(p, trials), as_trial_stack(q, trials)
        x, x_prime = rng.multinomial(half, p_stack), rng.multinomial(used - half, p_stack)
        y, y_prime = rng.multinomial(half, q_stack), rng.multinomial(used - half, q_stack)
        statistics = zhang_statistic(x, x_prime, y, y_prime).astype(float)
        probability = reject_probability(
            statistics, used, eps, self.shift_scale, self.shift_privacy
        )
        return TrialBatch(statistics, rng.random(trials) < probability)
