"""Central DP (``theo:central``): Zhang's (2021) private closeness tester plus subsampling.

The curator holds both groups. It uses m = min(n1, n2) users of each group — a
uniformly random m-subset of the larger group (Lemma ``theo:subsampling``) — splits each
group's m users into two halves and forms histograms X, X′ (group 1) and Y, Y′ (group 2):

    Z = Σ_i |X_i − Y_i| + |X′_i − Y′_i| − |X_i − X′_i| − |Y_i − Y′_i|.

Under the null the four histograms are exchangeable, so E Z = 0; when TV ≥ α, E Z
grows like α²m^{3/2}/√k (dense) or its sparse analogue (Diakonikolas et al. 2021).

Sensitivity: a count appears in two absolute terms, so changing it by one moves Z by
≤ 2; *replacing* a user (the paper's neighbour relation) changes two counts: Z moves by
≤ 4 = S, not 2 as the paper says (that holds for add/remove only; README).

Decision: the geometric (discrete Laplace) mechanism on Z, then a threshold — reject iff
Z + N > C1·√m + C2/ε with N ~ DLap(S/ε), P(N = j) ∝ e^{−ε|j|/S}
(:mod:`planner.validators.discrete_laplace`, sampled exactly from uniform integers). Z is an
integer of sensitivity S, so the noisy Z is *exactly* ε-DP for the m used users (no δ: a
floating-point Laplace sampler has bounded support, which costs a δ of ~1e-16) and the
decision is post-processing; subsampling makes group g
(ε_g ≥ ln(1 + (m/n_g)(e^{ε}−1))). The tester runs at the largest ε both groups allow:
ε = min_g ln(1 + (n_g/m)(e^{ε_g} − 1)). (Zhang's logistic decision, reject with
probability σ(ε(Z − t)/S), is thresholding Z plus *logistic* noise of the same scale:
its tail P(L > u) ≈ e^{−uε/S} is twice Laplace's ½e^{−uε/S}, so between an error-1/3
null and alternative it needs a gap of 2 ln 2 ≈ 1.39 noise scales against Laplace's
2 ln 1.5 ≈ 0.81 — measured: fewer users wherever privacy dominates.)

Why the calibrated constants still hold: the discrete noise has the continuous one's
ratio a = e^{−ε/S} per unit, and its tail P(N > x) = a^{⌊x⌋+1}/(1 + a) is the
continuous ½a^x times a factor in [2a/(1+a), 2/(1+a)] — within ±12 % at ε = 1, ±3 % at
ε = 0.25 — that averages to 1 within 0.5 % over the position of x between integers
(ε ≤ 1), and Z, an even integer, falls at every such position as m and the threshold vary.
So the decision's error rates move by a few per cent of themselves at most, inside the
calibration's margin (the hold-out validations in the test suite re-check them).

Only ``reject`` may be released. :attr:`TestResult.statistic` of this tester is the raw,
noise-free Z, kept for diagnostics (mean statistics in validation reports): publishing it
is not private.

Fast path: a uniform m-subset of n i.i.d. users is m i.i.d. users, so the halves are
Multinomial(⌊m/2⌋, ·) and Multinomial(⌈m/2⌉, ·): O(k) per trial.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np

from planner.validators import discrete_laplace
from planner.validators.protocol import TestResult, TrialBatch, as_trial_stack

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


def threshold(used: int, eps: float, shift_scale: float, shift_privacy: float) -> float:
    """t = C1·√m + C2/ε: the non-private part in units of √m, the private one of 1/ε."""
    return shift_scale * math.sqrt(used) + shift_privacy / eps


def shifts_for_error(
    shift_scale: float, shift_privacy: float, base_error: float, error: float
) -> tuple[float, float]:
    """(C1, C2) for one run held to ``error`` instead of ``base_error`` (``error`` smaller).

    The null's rejection rate has two limits that do not fall as n grows, one per part of
    the threshold t = C1·√m + C2/ε. Where the noise dominates (small m), it tends to the
    noise's tail beyond C2/ε: ½e^{−C2/S}. Where the statistic dominates (large m), Z/√m
    is close to a centred normal of spread σ ≈ 0.8–1.07 (measured on the null families
    at k = 16, 256 and m from 200 to 20,000), and the rate tends to about Φ̄(C1). Fixed
    constants tuned for one error therefore leave a floor: with C1 = 0.9, C2 = 4 the null
    is rejected about 16–18 % of the time however many users there are, so a smaller β
    could only be met by a majority vote of many runs.

    Each limit is scaled by error/base_error: C2 grows by S·ln(base_error/error) and C1
    becomes the normal quantile of Φ̄(C1)·error/base_error. The users needed for the
    alternative then grow with the threshold (the direct factors measure by how much).
    """
    if not 0 < error <= base_error < 1:
        raise ValueError(f"error must be in (0, base_error]; got {error}, {base_error}")
    scale = error / base_error
    normal = NormalDist()
    non_private_tail = (1.0 - normal.cdf(shift_scale)) * scale
    return (
        normal.inv_cdf(1.0 - non_private_tail),
        shift_privacy + SENSITIVITY * math.log(1.0 / scale),
    )


def noise_scale(eps: float) -> Fraction:
    """b = S/ε of the discrete Laplace noise, as the exact rational value of the floats."""
    return Fraction(SENSITIVITY) / Fraction(eps)


def reject_probability(
    statistic: np.ndarray, used: int, eps: float, shift_scale: float, shift_privacy: float
) -> np.ndarray:
    """P(Z + N > t) for N ~ DLap(S/ε), in closed form (the fast path's decision law)."""
    limit = threshold(used, eps, shift_scale, shift_privacy)
    distance = limit - np.asarray(statistic, dtype=float)
    return discrete_laplace.upper_tail(distance, math.exp(-eps / SENSITIVITY))


@dataclass(frozen=True)
class CentralTester:
    """Zhang's tester with sensitivity 4 and exact subsampling amplification."""

    k: int
    eps1: float
    eps2: float
    shift_scale: float = 1.0
    """C1: the non-private part of the threshold, in units of √m."""
    shift_privacy: float = 4.0
    """C2: the privacy part, in units of 1/ε (½e^{−C2/S} is the null's rejection floor)."""

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
        statistic = int(zhang_statistic(x, x_prime, y, y_prime))
        source = random.Random(int(rng.integers(2**63)))  # exact integer draws, seeded
        noisy = statistic + discrete_laplace.sample(noise_scale(eps), source)
        limit = threshold(used, eps, self.shift_scale, self.shift_privacy)
        # only the decision may be released; the statistic is the raw Z (diagnostics)
        return TestResult(float(statistic), bool(noisy > limit))

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
