"""A trusted curator's noisy histograms: the baseline for histogram-based shuffle protocols.

Every shuffle protocol whose analyser reads each group's message histogram (the Poisson
mechanism of :mod:`planner.validators.shuffle_private`, and its hashed public-coin form)
releases, in effect, a noisy histogram per group. The best such release a trusted
curator could make is the histogram itself plus independent per-bin noise calibrated
to the histogram's sensitivity, with no δ at all. This module is that release and the
same closeness test run on it: a benchmark that no histogram-based shuffle protocol is
expected to beat, not a protocol the planner sizes.

Release (group g, ε_g): the curator holds the counts H over the k bins and publishes
H + N with N_j i.i.d. discrete Laplace, P(N_j = m) = (1 − r)/(1 + r)·r^{|m|},
r = e^{−ε_g/Δ}. Replacing one user's item moves two bins by one each, so ‖H − H′‖₁ ≤ Δ = 2
and for every output o the likelihood ratio is Π_j r^{|o_j − H_j| − |o_j − H′_j|} ≤ r^{−2}
= e^{ε_g}: pure ε_g-DP for group g (the two groups are separate releases on disjoint
users). N_j is the difference of two i.i.d. geometric counts of ratio r, of variance
v_g = 2r/(1 − r)², about 8/ε_g² for small ε_g.

Analyser: the unequal-sample closeness statistic of the shuffle tester
(:func:`planner.validators.shuffle_private.closeness_statistic`) on X = H1 + N1,
Y = H2 + N2 with totals n1, n2 (the noise adds no mass: it has mean 0), and the known
noise variances: the numerator subtracts n2²v1 + n1²v2 as well as n2²X + n1²Y (the
counts' own Poisson-like spread), so each bin's numerator has mean n1²n2²(p_i − q_i)²
after Poissonisation. Each bin is weighted by 1/(max(X + Y, 0) + w) with
w = (n2/n1)v1 + (n1/n2)v2, the noise's part of the bin's null spread up to a common
factor, but never below ``OFFSET_FLOOR``·√k when there is noise:

Why the floor. Without noise, given X + Y the numerator is centred (X is binomial given
the total), so weighting by the total costs nothing. The noise breaks that: the weight
and the numerator share the noise, whose third cumulant is 0 where a Poisson count's
equals its variance, so Cov(numerator, X + Y) = −(n2²v1 + n1²v2) and the weighted sum
gains a null bias of about that over (E weight)² per bin. Summed over k bins it is
about √k/(√2·w) null standard deviations when the noise dominates a bin's spread: at
w of a few units (sparse bins, one group at a large ε) it rejected Zipf and heavy-element
nulls 35–70 % of the time (k = 3,106, ε = (7.43, 0.74)). A floor of 4√k keeps it below
about 0.2 standard deviations; on the first ten queries of the benchmark's default seed it
needed no more users than floors of 1 or 2 anywhere, up to 29 % fewer (8 was within
±12 %).

For TV(p, q) ≥ α, Cauchy–Schwarz gives E Z ≳ 4n1²n2²α²/(n1 + n2 + k·w), the least
mean; the tester rejects when Z exceeds a fraction c of it, c by the shuffle tester's
rule (:func:`planner.validators.threshold.balanced_fraction`, c∞ and the slope from the
constants file), so the two testers differ only in their noise and its weighting. On
hashed bins (a public coin, ``hashed_from``) the least mean takes the hash's share as the
shuffle tester's does, with kept = (n1 + n2)/(n1 + n2 + L·w).

Fast path: X = Multinomial(n1, p) + N1, the analyser's exact view (the noise from
numpy's geometric sampler; the real release, :func:`release`, draws it exactly from
uniform integers, :mod:`planner.validators.discrete_laplace`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from planner.formulas.bounds import curator_noise_variance
from planner.formulas.subsampling import subsample_size
from planner.validators import discrete_laplace
from planner.validators.compression import hashed_mean_share
from planner.validators.protocol import TestResult, TrialBatch, as_trial_stack
from planner.validators.shuffle_private import closeness_statistic
from planner.validators.threshold import balanced_fraction

SENSITIVITY = 2
"""L1 sensitivity of a histogram under replace-one neighbours: two bins move by one."""
OFFSET_FLOOR = 4.0
"""The least weight offset when there is noise, in units of √k (module docstring)."""


def noise_ratio(eps: float) -> float:
    """r = e^{−ε/Δ}: P(N = m) ∝ r^{|m|}."""
    return math.exp(-eps / SENSITIVITY)


def noise_variance(eps: float) -> float:
    """Var N = 2r/(1 − r)² per bin (``formulas.bounds.curator_noise_variance``, which the
    mixed pairs' bound reads too)."""
    return float(curator_noise_variance(eps))


def noise_fourth_cumulant(eps: float) -> float:
    """κ4 N = 2r(1 + 4r + r²)/(1 − r)⁴ per bin: N is the difference of two i.i.d.
    geometric counts, whose even cumulants add (each r(1 + 4r + r²)/(1 − r)⁴); about
    3·(Var N)², the continuous Laplace's, for small ε."""
    ratio = noise_ratio(eps)
    return 2.0 * ratio * (1.0 + 4.0 * ratio + ratio * ratio) / (1.0 - ratio) ** 4


def sample_noise(eps: float, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Discrete Laplace draws of ratio r = e^{−ε/Δ}: the difference of two i.i.d. geometric
    counts of ratio r (numpy's sampler: for simulation, not for a real release)."""
    success = 1.0 - noise_ratio(eps)
    return rng.geometric(success, size) - rng.geometric(success, size)


def noise_log_pmf(noise: np.ndarray, eps: float) -> np.ndarray:
    """log P(N = m) = log((1 − r)/(1 + r)) + |m|·log r, elementwise."""
    ratio = noise_ratio(eps)
    return math.log((1.0 - ratio) / (1.0 + ratio)) + np.abs(noise) * (-eps / SENSITIVITY)


def release_log_likelihood(output: np.ndarray, histogram: np.ndarray, eps: float) -> float:
    """log P(H + N = output) for the release of ``histogram`` at ε."""
    difference = np.asarray(output, dtype=np.int64) - np.asarray(histogram, dtype=np.int64)
    return float(np.sum(noise_log_pmf(difference, eps)))


def release(histogram: np.ndarray, eps: float, source: random.Random) -> np.ndarray:
    """The curator's release H + N, each N_j drawn exactly (scale Δ/ε as a rational)."""
    scale = Fraction(SENSITIVITY) / Fraction(eps)
    counts = np.asarray(histogram, dtype=np.int64)
    noise = [discrete_laplace.sample(scale, source) for _ in range(counts.size)]
    return counts + np.array(noise, dtype=np.int64).reshape(counts.shape)


@dataclass(frozen=True)
class HistogramChannel:
    """A trusted curator's release of one group's histogram at ε: H + N, N_j i.i.d.
    discrete Laplace (module docstring), as a channel of the closeness statistic for any
    pair of channels (``planner.validators.local_channels.Channel``): the group's data
    reach the analyser through it. Pure ε-DP for the group whatever the other group does
    (a separate release on disjoint users; anything computed from it after is
    post-processing).

    Unbiased per bin, with s = v/n² the noise's variance in frequency units: p̂_j = Y_j/n
    (the noise has mean 0), Var p̂_j = p_j(1 − p_j)/n + s, and
    u_j = (p̂_j − p̂_j² + s)/(n − 1) + s has mean exactly that: E[p̂ − p̂²] =
    p(1 − p)(1 − 1/n) − s.

    With ``release_eps`` above ε, the curator releases at ``release_eps`` the histogram of
    a uniform random subset of m of its n users, drawn without replacement and kept secret
    (:func:`planner.formulas.subsampling.subsample_size`: the largest m for which that is
    ε-DP under replace-one neighbours, Lemma ``theo:subsampling``); everything above then
    reads m for n. The m users are i.i.d. draws from the group's pmf like all n, so the
    statistic is the one of a release at ``release_eps`` on m users, exactly."""

    k: int
    eps: float
    release_eps: float | None = field(default=None, kw_only=True)
    """The ε the curator's noise is drawn at, from a subsample (None: ε, all users);
    keyword-only, so that a subclass's own fields follow ε (``MessagesChannel``)."""
    counts_reports = False
    """Its counts carry noise, not users' reports alone (``local_channels.Channel``)."""

    def __post_init__(self) -> None:
        if self.k < 2 or not (self.eps > 0 and math.isfinite(self.eps)):
            raise ValueError(f"a release needs k ≥ 2 and a finite ε > 0 (k={self.k}, ε={self.eps})")
        if self.release_eps is not None and not (
            math.isfinite(self.release_eps) and self.release_eps >= self.eps
        ):
            raise ValueError(
                f"a subsampled release needs a finite release ε ≥ ε (ε={self.eps}, "
                f"release ε={self.release_eps})"
            )

    @property
    def noise_eps(self) -> float:
        """The ε the noise is drawn at."""
        return self.eps if self.release_eps is None else self.release_eps

    def used(self, n: int) -> int:
        """The users whose items the release counts, of the group's n."""
        if self.release_eps is None:
            return n
        return subsample_size(n, self.release_eps, self.eps)

    def randomize(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The release of these users' items: the histogram of the subset read (all of
        them unless subsampled, :meth:`used`) plus exact discrete Laplace noise
        (:func:`release`, seeded from ``rng``)."""
        values = np.asarray(values, dtype=np.int64)
        if self.release_eps is not None:
            values = values[rng.choice(values.size, self.used(values.size), replace=False)]
        histogram = np.bincount(values, minlength=self.k)
        return release(histogram, self.noise_eps, random.Random(int(rng.integers(2**63))))

    def fast_counts(
        self, pmf: np.ndarray, n_users: int, trials: int, rng: np.random.Generator
    ) -> np.ndarray:
        """(trials, k) releases with the distribution of :meth:`randomize` on n_users items
        drawn from ``pmf`` (a uniform subset of i.i.d. draws is i.i.d. draws; numpy's
        geometric sampler for the noise)."""
        stack = as_trial_stack(pmf, trials)
        counts = rng.multinomial(self.used(n_users), stack / stack.sum(axis=1, keepdims=True))
        return counts + sample_noise(self.noise_eps, counts.shape, rng)

    def debiased(self, counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(p̂, u) of the class docstring."""
        n = self.used(n)
        share = np.asarray(counts, dtype=np.float64) / n
        noise = noise_variance(self.noise_eps) / (n * n)
        return share, (share - share * share + noise) / (n - 1) + noise

    def null_variance(self, pmf: np.ndarray, n: int) -> np.ndarray:
        """Var p̂_j = p_j(1 − p_j)/n + v/n² where the group's frequencies are ``pmf``."""
        n = self.used(n)
        share = np.asarray(pmf, dtype=np.float64)
        return share * (1.0 - share) / n + noise_variance(self.noise_eps) / (n * n)

    def noise_fourth_cumulant(self, n: int) -> float:
        """κ4 of the noise in frequency units, :func:`noise_fourth_cumulant`/n⁴
        (``Channel.noise_fourth_cumulant``)."""
        return noise_fourth_cumulant(self.noise_eps) / float(self.used(n)) ** 4


@dataclass(frozen=True)
class CuratorHistogramTester:
    """The closeness test on two discrete-Laplace histograms, each group at its own ε."""

    k: int
    alpha: float
    eps1: float
    eps2: float
    threshold_fraction: float = 0.5
    spread_slope: float = 0.0
    hashed_from: int = 0
    """The domain size before a public hash onto these k bins (0: not hashed)."""
    offset_floor: float = OFFSET_FLOOR
    """The least weight offset when there is noise, in units of √k (:meth:`offset`)."""

    @property
    def fraction(self) -> float:
        """c = c∞·2/(1 + ρ), ρ = √(1 + s/√k), as the shuffle tester's."""
        return balanced_fraction(self.threshold_fraction, self.spread_slope, self.k)

    @property
    def variances(self) -> tuple[float, float]:
        return noise_variance(self.eps1), noise_variance(self.eps2)

    def offset(self, n1: int, n2: int) -> float:
        """Each bin's weight offset: w = (n2/n1)v1 + (n1/n2)v2, the noise's part of its null
        spread, at least ``offset_floor``·√k when there is noise."""
        v1, v2 = self.variances
        spread = n2 / n1 * v1 + n1 / n2 * v2
        return max(spread, self.offset_floor * math.sqrt(self.k)) if spread > 0 else 0.0

    def threshold(self, n1: int, n2: int) -> float:
        """c × the least mean 4n1²n2²α²/(n1 + n2 + k·w) (× the hash's share)."""
        spread = n1 + n2 + self.k * self.offset(n1, n2)
        share = 1.0
        if self.hashed_from:
            share = hashed_mean_share(self.hashed_from, self.k, (n1 + n2) / spread)
        return self.fraction * share * 4.0 * n1**2 * n2**2 * self.alpha**2 / spread

    def statistic(
        self, histogram1: np.ndarray, histogram2: np.ndarray, n1: int, n2: int
    ) -> np.ndarray:
        """Z on the two released histograms (last axis)."""
        v1, v2 = self.variances
        noise = n2**2 * v1 + n1**2 * v2
        return closeness_statistic(histogram1, histogram2, n1, n2, noise, self.offset(n1, n2))

    def analyze(
        self, histogram1: np.ndarray, histogram2: np.ndarray, n1: int, n2: int
    ) -> np.ndarray:
        """Scores Z/threshold from the two released histograms."""
        return self.statistic(histogram1, histogram2, n1, n2) / self.threshold(n1, n2)

    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult:
        n1, n2 = len(samples1), len(samples2)
        source = random.Random(int(rng.integers(2**63)))  # exact integer draws, seeded
        released = [
            release(np.bincount(samples, minlength=self.k), eps, source)
            for samples, eps in ((samples1, self.eps1), (samples2, self.eps2))
        ]
        score = float(self.analyze(released[0], released[1], n1, n2))
        return TestResult(score, score > 1.0)

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        histograms = [
            rng.multinomial(n_users, as_trial_stack(pmf, trials))
            + sample_noise(eps, (trials, self.k), rng)
            for pmf, n_users, eps in ((p, n1, self.eps1), (q, n2, self.eps2))
        ]
        scores = self.analyze(histograms[0], histograms[1], n1, n2)
        return TrialBatch(scores, scores > 1.0)
