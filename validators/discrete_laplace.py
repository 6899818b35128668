"""The discrete Laplace distribution, sampled exactly (Canonne, Kamath & Steinke 2020).

``DLap(b)`` on the integers has P(N = j) = (1 − a)/(1 + a) · a^{|j|} with a = e^{−1/b}.
Added to an integer statistic of sensitivity S with b = S/ε it is the geometric
mechanism: for neighbouring statistics z, z′ (|z − z′| ≤ S) and every integer output o,
P(z + N = o)/P(z′ + N = o) = a^{|o−z| − |o−z′|} ≤ a^{−S} = e^ε, i.e. pure ε-DP with no δ.

Floating-point samplers cannot promise that: numpy's Laplace (and geometric) sampler maps
a 53-bit uniform through a logarithm, so its support is bounded and some outputs have
probability 0 under one neighbour but not the other (a δ of ~1e-16). Here every random
choice is a uniform *integer* (``random.Random.randrange``, exact for any size) and every
probability a rational: the scale b = S/ε is the exact rational value of the floats S and ε
(Algorithms 1–2 of CKS, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020).
Expected cost O(1) draws per sample.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np


def bernoulli(p: Fraction, source: random.Random) -> bool:
    """True with probability p ∈ [0, 1], exactly."""
    return source.randrange(p.denominator) < p.numerator


def bernoulli_exp(gamma: Fraction, source: random.Random) -> bool:
    """True with probability e^{−γ} (γ ≥ 0 rational), exactly (CKS Algorithm 1)."""
    while gamma > 1:
        if not bernoulli_exp(Fraction(1), source):
            return False
        gamma -= 1
    index = 1
    while bernoulli(gamma / index, source):
        index += 1
    return index % 2 == 1


def sample(scale: Fraction, source: random.Random) -> int:
    """One draw of DLap(scale): P(N = j) ∝ e^{−|j|/scale} (CKS Algorithm 2)."""
    if scale <= 0:
        raise ValueError(f"scale must be positive, not {scale}")
    # X = U + t·V is geometric with P(X = x) ∝ e^{−x/t}; Y = ⌊X/s⌋ has ratio e^{−s/t}.
    t, s = scale.numerator, scale.denominator
    while True:
        u = source.randrange(t)
        if not bernoulli_exp(Fraction(u, t), source):
            continue
        v = 0
        while bernoulli_exp(Fraction(1), source):
            v += 1
        magnitude = (u + t * v) // s
        negative = bernoulli(Fraction(1, 2), source)
        if negative and magnitude == 0:
            continue  # 0 would otherwise be drawn twice as often
        return -magnitude if negative else magnitude


def upper_tail(distance: np.ndarray | float, ratio: float) -> np.ndarray:
    """P(N > x) for N ~ DLap with a = ``ratio``, elementwise: with d = ⌊x⌋ + 1,
    a^d/(1 + a) for d ≥ 1 and 1 − a^{1−d}/(1 + a) below."""
    d = np.floor(np.asarray(distance, dtype=float)) + 1.0
    above = ratio ** np.maximum(d, 1.0) / (1.0 + ratio)
    below = 1.0 - ratio ** np.maximum(1.0 - d, 1.0) / (1.0 + ratio)
    return np.where(d >= 1, above, below)
