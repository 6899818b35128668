"""Shuffle DP, private coin: the distributed Poisson mechanism (``theo:sdp_ns``).

Randomizer (user of group g, n_g users, value x): send the message x, plus
Poisson(k·μ_g/n_g) noise messages each uniform on [k] — by Poisson splitting, exactly
Poisson(μ_g/n_g) extra messages "j" for every j, as in the paper. Shuffler: one per
group, a uniformly random permutation of all its messages. Analyzer: sees each
group's message histogram only; bin j holds Multinomial(n_g, p)_j + Poisson(μ_g).

Noise: each group's histogram needs μ_g ≥ μ_g^min (its own (ε_g, δ), README), and the
mixtures p′ = (1−γ)p + γU, q′ = (1−γ)q + γU need equal weights γ = kμ_g/N_g
(N_g = n_g + kμ_g). So the protocol sets μ_g = s·n_g with s = max_g μ_g^min/n_g,
raising one group's noise if the counts are not in the ratio μ2^min/μ1^min (README).

Statistic (unequal-sample closeness, Chan–Diakonikolas–Valiant–Valiant 2014,
Bhattacharya–Valiant 2015), on the histograms X (group 1) and Y (group 2):

    Z = Σ_{i: X_i+Y_i>0} ((N2·X_i − N1·Y_i)² − N2²·X_i − N1²·Y_i) / (X_i + Y_i).

Under Poissonisation E[(N2X − N1Y)² − N2²X − N1²Y] = N1²N2²(p′_i − q′_i)², and given
X_i + Y_i = s the numerator has conditional mean 0 when p′ = q′ (X_i | s is
Binomial(s, N1/(N1+N2))), so Z is centred under the null. For TV(p, q) ≥ α,
Cauchy–Schwarz gives E Z ≳ Σ N1²N2²(p′−q′)²/(N1p′+N2q′) ≥ 4N1²N2²(1−γ)²α²/(N1+N2), with
equality for Paninski pairs. The tester rejects when Z > c·4N1²N2²(1−γ)²α²/(N1+N2):
known quantities only, never p. The fraction c balances the two errors over the k bins
(:mod:`planner.validators.threshold`): c = c∞·2/(1 + ρ), ρ² = 1 + s/√k, with c∞ =
``threshold_fraction`` and s = ``spread_slope`` (s = 0, the default: the constant c∞).
The private-coin setting takes c∞ = 0.55 and s = 12.8, fitted at the operating point:
c = 0.36 at k = 16, 0.42 at 64, 0.47 at 256, 0.52 at 4096 (README, decisions). The
public-coin setting takes the same rule over its L hashed bins, and its least mean the
hash's share of the signal (``hashed_from``: :func:`planner.validators.compression.
hashed_mean_share`, 1 − 1/e at L = k with little noise, 1 for L ≪ k).

Fast path: X = Multinomial(n1, p) + Poisson(μ1)^k, exactly the analyzer's view.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.validators.compression import hashed_mean_share
from planner.validators.protocol import TestResult, TrialBatch, as_trial_stack
from planner.validators.threshold import balanced_fraction


def noise_levels(n1: int, n2: int, mu1_min: float, mu2_min: float) -> tuple[float, float]:
    """Per-bin noise μ_g = s·n_g, s = max(μ1^min/n1, μ2^min/n2): equal mixing weights.

    Never below a group's minimum, not even by the last bit of s·n_g's rounding (that
    group's privacy rests on it)."""
    scale = max(mu1_min / n1, mu2_min / n2)
    return max(scale * n1, mu1_min), max(scale * n2, mu2_min)


def randomize(values: np.ndarray, k: int, mu: float, rng: np.random.Generator) -> np.ndarray:
    """All messages of one group's users: each value, plus each user's noise messages."""
    values = np.asarray(values, dtype=np.int64)
    per_user_noise = rng.poisson(k * mu / values.size, size=values.size)
    noise = rng.integers(0, k, size=int(per_user_noise.sum()))
    return np.concatenate([values, noise])


def shuffle(messages: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The group's shuffler: a uniformly random permutation of its messages."""
    return rng.permutation(messages)


def closeness_statistic(
    x: np.ndarray,
    y: np.ndarray,
    total1: float,
    total2: float,
    noise: float = 0.0,
    offset: float = 0.0,
) -> np.ndarray:
    """Σ ((N2X − N1Y)² − N2²X − N1²Y)/(X + Y) over non-empty bins (last axis).

    For counts carrying extra zero-mean noise of known per-bin variance v_g beside their
    Poisson-like spread (a curator's discrete Laplace noise: :mod:`planner.validators.
    curator_histogram`; the shuffle's Poisson noise is part of the counts), ``noise`` is
    its share of E(N2X − N1Y)², N2²v1 + N1²v2, subtracted from every bin's numerator, and
    ``offset`` is added to every bin's weight, max(X + Y, 0) + offset (held ≥ 1). Both 0:
    the statistic above exactly (a bin with X + Y = 0 has numerator 0)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    both = x + y
    numerator = (total2 * x - total1 * y) ** 2 - total2**2 * x - total1**2 * y
    if noise == 0.0 and offset == 0.0:
        return np.sum(np.where(both > 0, numerator / np.maximum(both, 1.0), 0.0), axis=-1)
    weight = np.maximum(both, 0.0) + offset
    return np.sum((numerator - noise) / np.maximum(weight, 1.0), axis=-1)


@dataclass(frozen=True)
class ShufflePrivateTester:
    """Poisson-mechanism shuffle closeness tester with heterogeneous noise."""

    k: int
    alpha: float
    mu1_min: float
    mu2_min: float
    threshold_fraction: float = 0.5
    spread_slope: float = 0.0
    hashed_from: int = 0
    """The domain size before a public hash onto these k bins (0: not hashed); the least
    mean then takes the hash's share (``compression.hashed_mean_share``)."""

    @property
    def fraction(self) -> float:
        """c = c∞·2/(1 + ρ), ρ = √(1 + s/√k) (module docstring)."""
        return balanced_fraction(self.threshold_fraction, self.spread_slope, self.k)

    def threshold(self, n1: int, n2: int) -> float:
        mu1, mu2 = noise_levels(n1, n2, self.mu1_min, self.mu2_min)
        total1, total2 = n1 + self.k * mu1, n2 + self.k * mu2
        kept = n1 / total1  # 1 − γ
        share = hashed_mean_share(self.hashed_from, self.k, kept) if self.hashed_from else 1.0
        return (
            self.fraction
            * share
            * 4
            * total1**2
            * total2**2
            * kept**2
            * self.alpha**2
            / (total1 + total2)
        )

    def analyze(
        self, histogram1: np.ndarray, histogram2: np.ndarray, n1: int, n2: int
    ) -> np.ndarray:
        """Scores Z/threshold from the two groups' message histograms."""
        mu1, mu2 = noise_levels(n1, n2, self.mu1_min, self.mu2_min)
        z = closeness_statistic(histogram1, histogram2, n1 + self.k * mu1, n2 + self.k * mu2)
        return z / self.threshold(n1, n2)

    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult:
        n1, n2 = len(samples1), len(samples2)
        mu1, mu2 = noise_levels(n1, n2, self.mu1_min, self.mu2_min)
        histograms = [
            np.bincount(shuffle(randomize(samples, self.k, mu, rng), rng), minlength=self.k)
            for samples, mu in ((samples1, mu1), (samples2, mu2))
        ]
        score = float(self.analyze(histograms[0], histograms[1], n1, n2))
        return TestResult(score, score > 1.0)

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        mu1, mu2 = noise_levels(n1, n2, self.mu1_min, self.mu2_min)
        histograms = [
            rng.multinomial(n_users, as_trial_stack(pmf, trials))
            + rng.poisson(mu, size=(trials, self.k))
            for pmf, n_users, mu in ((p, n1, mu1), (q, n2, mu2))
        ]
        scores = self.analyze(histograms[0], histograms[1], n1, n2)
        return TrialBatch(scores, scores > 1.0)
