"""Local randomizers whose reports give every bin an affine frequency, and one closeness
statistic for any two of them (docs/method.md, "Channels").

A *channel* is one group's local randomizer together with what its analyser reads: per bin
j, the count c_j of reports that name j, with E[c_j] = n·π_j and π_j = a·p_j + b for a
channel's own (a, b). Two randomizers have this form:

* **k-ary randomized response** (k-RR; Warner 1965, Kairouz–Oh–Viswanath 2014): a user
  reports its item with probability e^ε/(e^ε + k − 1), else one of the k − 1 others
  uniformly; a = (e^ε − 1)/(e^ε + k − 1), b = 1/(e^ε + k − 1). One message of
  ⌈log₂ k⌉ bits. Near the non-private tester once e^ε ≳ k.
* **Unary encoding / bit flipping** (RAPPOR's basic one-time response, Erlingsson–Pihur–
  Korolova 2014): a user sends k bits, bit j = 1{x = j}, each flipped independently with
  probability f = 1/(e^{ε/2} + 1); a = 1 − 2f, b = f. Two inputs differ in two bits, so
  the likelihood ratio of any report is at most (e^{ε/2})² = e^ε.

Both are exactly ε-LDP (``tests/test_channels.py`` enumerates every report at small k).

**The statistic.** With group 1's counts X (n1 users, channel (a1, b1)) and group 2's Y
(n2, (a2, b2)), unbiased estimates of π_j, π_j² (X_j(X_j − 1)/(n(n − 1)): each user's
report names bin j independently, whatever the channel does across bins) and of the
cross term give

    Z = Σ_j [ (X_j(X_j − 1)/(n1(n1 − 1)) − 2 b1 X_j/n1 + b1²)/a1²
            − 2 (X_j/n1 − b1)(Y_j/n2 − b2)/(a1 a2)
            + (Y_j(Y_j − 1)/(n2(n2 − 1)) − 2 b2 Y_j/n2 + b2²)/a2² ],

whose mean is exactly ‖p − q‖²₂ for every pair (p, q) and every two channels: 0 under the
null, at least 4α²/k when TV(p, q) ≥ α. The tester rejects when Z exceeds
``threshold_fraction`` × 4α²/k. Each group enters only through its own channel and size,
so group 1 may use k-RR while group 2 uses bit flipping.

Fast path: k-RR's counts are Multinomial(n, π) exactly; bit flipping's are, given the
true counts N ~ Multinomial(n, p), Binomial(N_j, 1 − f) + Binomial(n − N_j, f),
independent across bins: O(k) per trial either way.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from planner.validators.protocol import TestResult, TrialBatch, as_trial_stack


class Randomizer(StrEnum):
    K_RR = "k-rr"
    UNARY = "unary"


@dataclass(frozen=True)
class AffineChannel:
    """One group's local randomizer at ε over [k]: per-bin report frequency a·p_j + b."""

    randomizer: Randomizer
    k: int
    eps: float

    def __post_init__(self) -> None:
        if self.k < 2 or not (self.eps > 0 and math.isfinite(self.eps)):
            raise ValueError(f"a channel needs k ≥ 2 and a finite ε > 0 (k={self.k}, ε={self.eps})")

    @property
    def flip(self) -> float:
        """Bit flipping's per-bit flip probability 1/(e^{ε/2} + 1)."""
        return 1.0 / (math.exp(self.eps / 2) + 1.0)

    @property
    def affine(self) -> tuple[float, float]:
        """(a, b) with π_j = a·p_j + b."""
        if self.randomizer is Randomizer.K_RR:
            denominator = math.expm1(self.eps) + self.k  # e^ε + k − 1
            return math.expm1(self.eps) / denominator, 1.0 / denominator
        return 1.0 - 2.0 * self.flip, self.flip

    @property
    def bits_per_user(self) -> int:
        """Each user's report, in bits."""
        if self.randomizer is Randomizer.K_RR:
            return max(1, math.ceil(math.log2(self.k)))
        return self.k

    def report_probabilities(self, value: int) -> dict[tuple[int, ...], float]:
        """Every report a user holding ``value`` can send, with its probability (for the
        exact privacy check; bit flipping enumerates 2^k reports, so small k only)."""
        if self.randomizer is Randomizer.K_RR:
            keep = math.exp(self.eps) / (math.expm1(self.eps) + self.k)
            other = 1.0 / (math.expm1(self.eps) + self.k)
            return {(j,): keep if j == value else other for j in range(self.k)}
        if self.k > 16:
            raise ValueError("bit flipping's reports are enumerated for k ≤ 16 only")
        flip = self.flip
        reports = {}
        for bits in itertools.product((0, 1), repeat=self.k):
            flips = sum(bit != (j == value) for j, bit in enumerate(bits))
            reports[bits] = flip**flips * (1 - flip) ** (self.k - flips)
        return reports

    def randomize(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Every user's report, as the analyser's per-bin counts (shape (k,)): k-RR sends
        one value each; bit flipping k bits each, summed per bin."""
        values = np.asarray(values, dtype=np.int64)
        if self.randomizer is Randomizer.K_RR:
            a, _ = self.affine
            keep = rng.random(values.size) < a + 1.0 / (math.expm1(self.eps) + self.k)
            shift = rng.integers(1, self.k, size=values.size)  # a uniform other value
            reports = np.where(keep, values, (values + shift) % self.k)
            return np.bincount(reports, minlength=self.k)
        truthful = np.zeros((values.size, self.k), dtype=bool)
        truthful[np.arange(values.size), values] = True
        flips = rng.random((values.size, self.k)) < self.flip
        return (truthful ^ flips).sum(axis=0)

    def fast_counts(
        self, pmf: np.ndarray, n_users: int, trials: int, rng: np.random.Generator
    ) -> np.ndarray:
        """(trials, k) per-bin counts with exactly the distribution of :meth:`randomize`
        on n_users values drawn from ``pmf`` (one pmf, or one per trial)."""
        stack = as_trial_stack(pmf, trials)
        if self.randomizer is Randomizer.K_RR:
            a, b = self.affine
            frequencies = a * stack + b
            frequencies /= frequencies.sum(axis=1, keepdims=True)  # rounding only
            return rng.multinomial(n_users, frequencies)
        true_counts = rng.multinomial(n_users, stack / stack.sum(axis=1, keepdims=True))
        return rng.binomial(true_counts, 1.0 - self.flip) + rng.binomial(
            n_users - true_counts, self.flip
        )


def closeness_statistic(
    counts1: np.ndarray,
    n1: int,
    channel1: AffineChannel,
    counts2: np.ndarray,
    n2: int,
    channel2: AffineChannel,
) -> np.ndarray:
    """Z, the unbiased estimate of ‖p − q‖²₂ (module docstring), per row of the counts."""
    if n1 < 2 or n2 < 2:
        raise ValueError(f"the statistic needs at least 2 users a group (n1={n1}, n2={n2})")
    x, y = np.asarray(counts1, dtype=np.float64), np.asarray(counts2, dtype=np.float64)
    (a1, b1), (a2, b2) = channel1.affine, channel2.affine
    first = (x * (x - 1) / (n1 * (n1 - 1)) - 2 * b1 * x / n1 + b1 * b1) / (a1 * a1)
    second = (y * (y - 1) / (n2 * (n2 - 1)) - 2 * b2 * y / n2 + b2 * b2) / (a2 * a2)
    cross = 2 * (x / n1 - b1) * (y / n2 - b2) / (a1 * a2)
    return np.asarray((first - cross + second).sum(axis=-1))


@dataclass(frozen=True)
class TwoChannelTester:
    """Closeness of p (group 1, ``channel1``) and q (group 2, ``channel2``): reject when
    Z > ``threshold_fraction`` · 4α²/k, the least mean of Z when TV(p, q) ≥ α."""

    k: int
    alpha: float
    channel1: AffineChannel
    channel2: AffineChannel
    threshold_fraction: float = 0.5

    @property
    def threshold(self) -> float:
        return self.threshold_fraction * 4.0 * self.alpha**2 / self.k

    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult:
        counts1 = self.channel1.randomize(samples1, rng)
        counts2 = self.channel2.randomize(samples2, rng)
        z = float(
            closeness_statistic(
                counts1, len(samples1), self.channel1, counts2, len(samples2), self.channel2
            )
        )
        return TestResult(z / self.threshold, z > self.threshold)

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        counts1 = self.channel1.fast_counts(p, n1, trials, rng)
        counts2 = self.channel2.fast_counts(q, n2, trials, rng)
        z = closeness_statistic(counts1, n1, self.channel1, counts2, n2, self.channel2)
        return TrialBatch(z / self.threshold, z > self.threshold)


__all__ = [
    "AffineChannel",
    "Randomizer",
    "TwoChannelTester",
    "closeness_statistic",
]
