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

* **Optimized unary encoding** (OUE; Wang, Blocki, Li & Jha, USENIX Security 2017): k bits,
  the user's own bit is 1 with probability 1/2, every other bit 1 with probability
  q = 1/(e^ε + 1); a = 1/2 − q, b = q. The likelihood ratio of any report is at most
  (1/2)/q · (1 − q)/(1/2) = e^ε. Its noise per bin, q(1 − q)/a², is below bit flipping's
  at every ε (by the factor 4e^{ε/2}/(e^{ε/2} + 1)² ≤ 1), about 4/ε² a user at small ε:
  Hadamard response's. Near no privacy bit flipping wins: it keeps every bit, while OUE
  keeps the user's own bit only half the time.

All three are exactly ε-LDP (``tests/test_channels.py`` enumerates every report at small k).

**The statistic.** With group 1's counts X (n1 users, channel (a1, b1)) and group 2's Y
(n2, (a2, b2)), unbiased estimates of π_j, π_j² (X_j(X_j − 1)/(n(n − 1)): each user's
report names bin j independently, whatever the channel does across bins) and of the
cross term give

    Z = Σ_j [ (X_j(X_j − 1)/(n1(n1 − 1)) − 2 b1 X_j/n1 + b1²)/a1²
            − 2 (X_j/n1 − b1)(Y_j/n2 − b2)/(a1 a2)
            + (Y_j(Y_j − 1)/(n2(n2 − 1)) − 2 b2 Y_j/n2 + b2²)/a2² ],

whose mean is exactly ‖p − q‖²₂ for every pair (p, q) and every two channels: 0 under the
null, at least 4α²/k when TV(p, q) ≥ α. Each group enters only through its own channel and
size, so group 1 may use k-RR while group 2 uses unary encoding. It is computed as
Σ_j [d_j² − u1_j − u2_j] with d_j = p̂_j − q̂_j the difference of the debiased frequencies
and u_g,j = π̂(1 − π̂)/((n − 1)·a²) each group's unbiased variance estimate (the same sum,
rearranged): the terms are of the order of the noise, not of 1/a², so nothing cancels
catastrophically when a is small.

:class:`TwoChannelTester` rejects when Z > ``threshold_fraction`` × 4α²/k (a fixed
threshold).

**χ² weights.** :class:`ChannelsTester`, the planner's ``local-private+channels``, reads a
weighted form of the same sum, Z_χ = Σ_j [d_j² − u1_j − u2_j]/v_j, where v_j is the null
variance of d_j at p̃_j, the two groups' estimates of bin j pooled by their precision,
lowered by two standard errors and floored at 1/k (:func:`studentized_statistic`), and
rejects when Z_χ > κ·σ̂, σ̂ its plug-in null standard deviation. Unweighted, the null
spread grows with ‖p‖₂: one bin holding half the mass set it, and a difference among the
light bins went unseen at low noise (plans of this tester erred 0.6 – 0.85 on such a
pair at ε = 6 – 8; the family ``heavy-null-light-difference``). Weighted, a bin surely
heavier than uniform counts in proportion to its spread, and every other bin as a
uniform one: where no bin is heavy, or the channels' noise dominates, Z_χ is the ℓ2
statistic scaled (docs/method.md, "Why χ² weights"). The weights share the heavy bins'
noise, so Z_χ's null mean is not exactly 0 there; the calibration's null families
measure what is left.

Fast path: k-RR's counts are Multinomial(n, π) exactly; unary encoding's are, given the
true counts N ~ Multinomial(n, p), Binomial(N_j, a + b) + Binomial(n − N_j, b),
independent across bins: O(k) per trial either way.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import numpy as np

from planner.formulas.bounds import channel_bits, least_noise_channel
from planner.validators.protocol import TestResult, TrialBatch, as_trial_stack


class Randomizer(StrEnum):
    K_RR = "k-rr"
    UNARY = "unary"
    """Symmetric bit flipping (RAPPOR), each bit at ε/2."""
    OPTIMIZED_UNARY = "oue"
    """Optimized unary encoding: the own bit kept w.p. 1/2, the others set w.p. 1/(e^ε + 1)."""


HEAVY_MARGIN_SE = 2.0
"""A bin weighs by its own spread only by the part of its pooled frequency estimate that
lies this many standard errors above 1/k (:func:`studentized_statistic`): a bin named by a
few reports of a sparse group keeps the uniform bin's weight."""

UNARY_CHUNK_CELLS = 1 << 22
"""User-level unary reports are drawn this many bits at a time (32 MiB of booleans
a chunk): memory stays bounded whatever n·k is."""


@dataclass(frozen=True)
class AffineChannel:
    """One group's local randomizer at ε over [k]: per-bin report frequency a·p_j + b."""

    randomizer: Randomizer
    k: int
    eps: float
    counts_reports = True
    """Its per-bin counts are users' reports (each naming the bin or not): σ̂ weighs a
    bin by how many reports name it (:func:`studentized_statistic`)."""

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
        if self.randomizer is Randomizer.OPTIMIZED_UNARY:
            other = 1.0 / (math.exp(self.eps) + 1.0)
            return 0.5 - other, other
        return 1.0 - 2.0 * self.flip, self.flip

    @property
    def bits_per_user(self) -> int:
        """Each user's report, in bits (``formulas.bounds.channel_bits``)."""
        return channel_bits(self.randomizer.value, self.k)

    def report_probabilities(self, value: int) -> dict[tuple[int, ...], float]:
        """Every report a user holding ``value`` can send, with its probability (for the
        exact privacy check; bit flipping enumerates 2^k reports, so small k only)."""
        if self.randomizer is Randomizer.K_RR:
            keep = math.exp(self.eps) / (math.expm1(self.eps) + self.k)
            other = 1.0 / (math.expm1(self.eps) + self.k)
            return {(j,): keep if j == value else other for j in range(self.k)}
        if self.k > 16:
            raise ValueError("unary reports are enumerated for k ≤ 16 only")
        a, b = self.affine
        reports = {}
        for bits in itertools.product((0, 1), repeat=self.k):
            probability = 1.0
            for j, bit in enumerate(bits):
                one = a + b if j == value else b  # P(bit j = 1)
                probability *= one if bit else 1.0 - one
            reports[bits] = probability
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
        a, b = self.affine
        counts = np.zeros(self.k, dtype=np.int64)
        chunk = max(1, UNARY_CHUNK_CELLS // self.k)
        for start in range(0, values.size, chunk):
            part = values[start : start + chunk]
            # bit j of a user is 1 w.p. a + b at its own value, b elsewhere
            chance = np.full((part.size, self.k), b)
            chance[np.arange(part.size), part] = a + b
            counts += (rng.random((part.size, self.k)) < chance).sum(axis=0)
        return counts

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
        a, b = self.affine
        true_counts = rng.multinomial(n_users, stack / stack.sum(axis=1, keepdims=True))
        return rng.binomial(true_counts, a + b) + rng.binomial(n_users - true_counts, b)

    def debiased(self, counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(p̂, u): each bin's debiased frequency (c/n − b)/a and the unbiased estimate
        π̂(1 − π̂)/((n − 1)·a²) of its variance."""
        a, b = self.affine
        share = np.asarray(counts, dtype=np.float64) / n
        return (share - b) / a, share * (1.0 - share) / ((n - 1) * a * a)

    def null_variance(self, pmf: np.ndarray, n: int) -> np.ndarray:
        """Var p̂_j = π_j(1 − π_j)/(n·a²), π = a·p + b, where the group's frequencies are
        ``pmf`` (elementwise: the χ² weights of :func:`studentized_statistic`)."""
        a, b = self.affine
        share = a * np.asarray(pmf, dtype=np.float64) + b
        return share * (1.0 - share) / (n * a * a)

    def noise_fourth_cumulant(self, n: int) -> float:
        """A local channel adds no noise of its own beside its reports' spread: 0
        (``Channel.noise_fourth_cumulant``)."""
        return 0.0

    def used(self, n: int) -> int:
        """Every user reports: n (``Channel.used``)."""
        return n


class Channel(Protocol):
    """What the closeness statistic needs of one group's release over k bins: per-bin
    counts (user by user, or drawn with their exact distribution) and, from them, each
    bin's unbiased frequency estimate with an unbiased estimate of its variance, and that
    variance where the group's frequencies are a given pmf (the statistic's weights). An
    :class:`AffineChannel` (a local randomizer) is one; so is a trusted curator's noisy
    histogram (``planner.validators.curator_histogram.HistogramChannel``)."""

    @property
    def k(self) -> int: ...

    @property
    def eps(self) -> float: ...

    @property
    def counts_reports(self) -> bool: ...

    def randomize(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...

    def fast_counts(
        self, pmf: np.ndarray, n_users: int, trials: int, rng: np.random.Generator
    ) -> np.ndarray: ...

    def debiased(self, counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]: ...

    def null_variance(self, pmf: np.ndarray, n: int) -> np.ndarray: ...

    def noise_fourth_cumulant(self, n: int) -> float:
        """The fourth cumulant of the noise the release adds to each bin's frequency
        estimate (0: none). A squared difference of heavy-tailed noise spreads more than a
        Gaussian's 2σ⁴ by exactly this, so the statistic's σ̂ adds it."""
        ...

    def used(self, n: int) -> int:
        """The users of a group of n whose data the release reads (fewer where a curator
        reads a subsample)."""
        ...


def _checked_sizes(n1: int, n2: int) -> None:
    if n1 < 2 or n2 < 2:
        raise ValueError(f"the statistic needs at least 2 users a group (n1={n1}, n2={n2})")


def studentized_statistic(
    counts1: np.ndarray,
    n1: int,
    channel1: Channel,
    counts2: np.ndarray,
    n2: int,
    channel2: Channel,
) -> tuple[np.ndarray, np.ndarray]:
    """(Z, σ̂) per row of the counts: the χ²-weighted statistic of the module docstring,
    Z = Σ_j [d_j² − u1_j − u2_j]/v_j with s_j = (u1_j + u2_j)/v_j, and
    σ̂² = 2·Σ_j s_j²·(1 − 1/m_j)⁺ + 2·max_j s_j², the plug-in estimate of its null variance
    (bins taken as independent), m_j the reports naming bin j in both groups when both
    channels count reports (else the factor is 1). With one channel, equal sizes and a
    bin's weight at its pooled frequency, its term is ((X − Y)² − X − Y)/(X + Y) up to
    O(m/n), whose variance given m = X + Y is exactly 2(1 − 1/m): a bin named once has a
    term of 0 whatever the data, and counting it as 2 had made σ̂ too large where reports
    are sparse (k = 1,024, α = 0.5, ε = (20, 20), 193 users a group: Paninski's pair
    missed 0.55, against 0.26 unweighted). The last term, one more bin's worth, guards
    the other side: where only a few bins are named twice Z takes a few values, and one
    bin named twice in one group had Z/σ̂ = 1 > κ by itself (k = 128, ε = (20, 20), 13
    users a group: uniform null 0.33; 0.14 with it).

    v_j is the null variance of d_j where both groups' frequencies are p̃_j: the groups'
    estimates pooled by their precisions at the bin's own level (found by a first pooling
    at the uniform pmf's precisions; pooled at those alone, a moderately heavy bin leaned
    on one group's noise when the channels or sizes differ, and its term's null mean was
    near +1: few-heavy-many-light 0.30 at k = 1,024, ε = (20, 5), 104 + 566 users),
    lowered by ``HEAVY_MARGIN_SE`` of its standard errors and clipped to [1/k, 1]. A bin surely
    heavier than the uniform pmf's is weighed down by its own spread, so a heavy bin no
    longer drowns a difference among light ones; every other bin keeps the uniform bin's
    weight, so where no bin is heavy Z is the unweighted sum over v(1/k) (docs/method.md,
    "Why χ² weights"). Without the floor a bin seen by neither group, whose term is
    (b2/a2 − b1/a1)² > 0 when the channels differ, was divided by a near-zero weight and
    sparse nulls were rejected almost always (k-RR at ε = 12 and 8, k = 1000, 1,069 +
    1,419 users: point-mass-heavy 1.0); without the margin a bin named by one report of a
    sparse group counted as heavy, and at k = 1,024, ε = (20, 5), 107 + 585 users the
    mirrored pair was missed 0.89 of the time (0.32 with it)."""
    _checked_sizes(n1, n2)
    estimate1, spread1 = channel1.debiased(counts1, n1)
    estimate2, spread2 = channel2.debiased(counts2, n2)
    k = np.shape(counts1)[-1]
    uniform = np.full(1, 1.0 / k)
    first1 = 1.0 / float(channel1.null_variance(uniform, n1)[0])
    first2 = 1.0 / float(channel2.null_variance(uniform, n2)[0])
    at = np.clip((first1 * estimate1 + first2 * estimate2) / (first1 + first2), 1.0 / k, 1.0)
    # each bin pooled again by the groups' precisions at its own level: at the uniform
    # pmf's they misweigh a heavy bin, and its weight then leans on one group's noise
    variance1, variance2 = channel1.null_variance(at, n1), channel2.null_variance(at, n2)
    total = variance1 + variance2
    pooled = (variance2 * estimate1 + variance1 * estimate2) / total
    pooled_variance = variance1 * variance2 / total
    surely = np.clip(pooled - HEAVY_MARGIN_SE * np.sqrt(pooled_variance), 1.0 / k, 1.0)
    weight = channel1.null_variance(surely, n1) + channel2.null_variance(surely, n2)
    safe = np.where(weight > 0, weight, 1.0)
    spread = spread1 + spread2
    terms = np.where(weight > 0, ((estimate1 - estimate2) ** 2 - spread) / safe, 0.0)
    scaled = np.where(weight > 0, spread / safe, 0.0)
    counted = scaled
    if channel1.counts_reports and channel2.counts_reports:
        reports = np.asarray(counts1, dtype=np.float64) + np.asarray(counts2, dtype=np.float64)
        counted = scaled * np.sqrt(
            np.where(reports > 1.0, 1.0 - 1.0 / np.maximum(reports, 1.0), 0.0)
        )
    z = terms.sum(axis=-1)
    # one more bin's worth, the largest: where a few bins carry Z it takes a few values
    # only, and one bin named twice in one group alone was Z/σ̂ = 1 > κ
    variance = 2.0 * ((counted * counted).sum(axis=-1) + (scaled * scaled).max(axis=-1))
    # a curator's discrete Laplace noise: Var(d²) = 2σ⁴ + κ4, κ4 ≈ 3·(its variance)² where
    # it dominates (without it a noise-dominated null erred 0.31 at κ = 0.7)
    excess = channel1.noise_fourth_cumulant(n1) + channel2.noise_fourth_cumulant(n2)
    if excess > 0.0:
        variance = variance + excess * np.where(weight > 0, 1.0 / (safe * safe), 0.0).sum(axis=-1)
    sd = np.sqrt(variance)
    return np.asarray(z), np.asarray(sd)


def closeness_statistic(
    counts1: np.ndarray,
    n1: int,
    channel1: Channel,
    counts2: np.ndarray,
    n2: int,
    channel2: Channel,
) -> np.ndarray:
    """The unweighted Z = Σ_j [d_j² − u1_j − u2_j], the unbiased estimate of ‖p − q‖²₂
    (module docstring), per row of the counts."""
    _checked_sizes(n1, n2)
    estimate1, variance1 = channel1.debiased(counts1, n1)
    estimate2, variance2 = channel2.debiased(counts2, n2)
    return np.asarray(((estimate1 - estimate2) ** 2 - variance1 - variance2).sum(axis=-1))


def paired_statistic(
    counts1: np.ndarray,
    n1: int,
    channel1: Channel,
    counts2: np.ndarray,
    n2: int,
    channel2: Channel,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`studentized_statistic` as a tester reads it: with fewer than 2 users read in
    a group nothing can be estimated (the variance estimate needs two), so Z = σ̂ = 0 and
    the tester does not reject (``planner validate --n1 1`` measures that, and fails; a
    curator's subsample of fewer than 2 had divided by zero, a review)."""
    if channel1.used(n1) < 2 or channel2.used(n2) < 2:
        shape = np.shape(counts1)[:-1]
        return np.zeros(shape), np.zeros(shape)
    return studentized_statistic(counts1, n1, channel1, counts2, n2, channel2)


def studentized_decision(
    z: np.ndarray, sd: np.ndarray, threshold_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """(the statistic over its threshold κ·σ̂, 1 at it; reject Z > κ·σ̂): a studentized
    tester's decision, 0 and no rejection where σ̂ = 0 (nothing seen twice)."""
    threshold = threshold_sd * sd
    rejects = (z > threshold) & (sd > 0)
    ratio = np.where(sd > 0, z / np.where(threshold > 0, threshold, 1.0), 0.0)
    return ratio, rejects


@functools.lru_cache(maxsize=4096)
def best_channel(k: int, eps: float) -> AffineChannel:
    """The channel a group at ε runs: k-RR, optimized unary encoding or bit flipping,
    whichever has the least per-user noise (``formulas.bounds.channel_noise``); on a tie
    the first of those (k-RR sends the fewest bits)."""
    return AffineChannel(Randomizer(least_noise_channel(k, eps)), k, eps)


class ChannelPairTester:
    """A tester whose groups report through a pair of channels (``channels``) and whose
    analyser reads only the two groups' per-bin counts: ``statistic`` maps them to
    (Z, σ̂), ``decide`` to (Z over its threshold, rejects). Both simulation paths in one
    place; each group's reports are drawn in the same order on both (group 1, then 2)."""

    @property
    def channels(self) -> tuple[Channel, Channel]:
        raise NotImplementedError

    def statistic(
        self, counts1: np.ndarray, n1: int, counts2: np.ndarray, n2: int
    ) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def decide(self, z: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def reported_values(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """The values each group's channel randomizes, user by user: their own items (a
        shared hash maps them to buckets first)."""
        return samples1, samples2

    def reported_pmfs(
        self, p: np.ndarray, q: np.ndarray, trials: int, rng: np.random.Generator
    ) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
        """(group 1's pmf, group 2's, trials) per block of trials over what the channels
        see: here one block of the pmfs themselves (a shared hash yields hashed ones)."""
        yield p, q, trials

    def run(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> TestResult:
        values1, values2 = self.reported_values(samples1, samples2, rng)
        one, two = self.channels
        counts1 = one.randomize(values1, rng)
        counts2 = two.randomize(values2, rng)
        z, sd = self.statistic(counts1, len(samples1), counts2, len(samples2))
        ratio, rejects = self.decide(z, sd)
        return TestResult(float(ratio), bool(rejects))

    def simulate_fast(
        self, p: np.ndarray, q: np.ndarray, n1: int, n2: int, trials: int, rng: np.random.Generator
    ) -> TrialBatch:
        one, two = self.channels
        ratios, rejects = [], []
        for p_block, q_block, block in self.reported_pmfs(p, q, trials, rng):
            counts1 = one.fast_counts(p_block, n1, block, rng)
            counts2 = two.fast_counts(q_block, n2, block, rng)
            z, sd = self.statistic(counts1, n1, counts2, n2)
            ratio, reject = self.decide(z, sd)
            ratios.append(np.atleast_1d(ratio))
            rejects.append(np.atleast_1d(reject))
        return TrialBatch(np.concatenate(ratios), np.concatenate(rejects))


@dataclass(frozen=True)
class TwoChannelTester(ChannelPairTester):
    """Closeness of p (group 1, ``channel1``) and q (group 2, ``channel2``): reject when
    the unweighted Z > ``threshold_fraction`` · 4α²/k, the least mean of Z when
    TV(p, q) ≥ α (a baseline for tests and benchmarks; the planner runs
    :class:`ChannelsTester`)."""

    k: int
    alpha: float
    channel1: AffineChannel
    channel2: AffineChannel
    threshold_fraction: float = 0.5

    @property
    def threshold(self) -> float:
        return self.threshold_fraction * 4.0 * self.alpha**2 / self.k

    @property
    def channels(self) -> tuple[AffineChannel, AffineChannel]:
        return self.channel1, self.channel2

    def statistic(
        self, counts1: np.ndarray, n1: int, counts2: np.ndarray, n2: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(the unweighted Z, 0): its fixed threshold is on ‖p − q‖²₂'s scale (Z = 0
        below 2 users a group, as :func:`paired_statistic`)."""
        if n1 < 2 or n2 < 2:
            z = np.zeros(np.shape(counts1)[:-1])
        else:
            z = closeness_statistic(counts1, n1, self.channel1, counts2, n2, self.channel2)
        return z, np.zeros_like(z)

    def decide(self, z: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return z / self.threshold, z > self.threshold


@dataclass(frozen=True)
class ChannelsTester(ChannelPairTester):
    """Closeness of p (group 1) and q (group 2), each group through its own best channel
    at its own ε (:func:`best_channel`); rejects when the χ²-weighted statistic exceeds
    ``threshold_sd``·σ̂ (module docstring). The planner's ``local-private+channels``
    protocol."""

    k: int
    alpha: float
    eps1: float
    eps2: float
    threshold_sd: float = 0.7

    @property
    def bins(self) -> int:
        """The values each group's channel reports over: the domain's k."""
        return self.k

    @property
    def channels(self) -> tuple[AffineChannel, AffineChannel]:
        return best_channel(self.bins, self.eps1), best_channel(self.bins, self.eps2)

    def statistic(
        self, counts1: np.ndarray, n1: int, counts2: np.ndarray, n2: int
    ) -> tuple[np.ndarray, np.ndarray]:
        one, two = self.channels
        return paired_statistic(counts1, n1, one, counts2, n2, two)

    def decide(self, z: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return studentized_decision(z, sd, self.threshold_sd)


__all__ = [
    "HEAVY_MARGIN_SE",
    "AffineChannel",
    "Channel",
    "ChannelPairTester",
    "ChannelsTester",
    "Randomizer",
    "TwoChannelTester",
    "best_channel",
    "closeness_statistic",
    "paired_statistic",
    "studentized_decision",
    "studentized_statistic",
]
