"""Local DP, k-ary randomized response with a studentized χ²-type closeness statistic.

**Randomizer.** Every user of both groups reports through one k-RR channel at the weaker
group's ε_w = min(ε1, ε2): the true value with probability e^ε_w/(e^ε_w + k − 1), else one
of the other k − 1 values uniformly (``validators.local_channels.AffineChannel``; exactly
ε_w-LDP, so ε_g-LDP for both groups). A group at a larger ε gives nothing away by this: its
extra budget is unused. The reports of both groups then follow π = a·p + b and
π′ = a·q + b with a = (e^ε_w − 1)/(e^ε_w + k − 1): one channel for both, so p = q gives
π = π′ for every p, and TV(π, π′) = a·TV(p, q) ≥ a·α.

**Statistic** (docs/method.md, "k-RR"). With X_j, Y_j the report counts of bin j in the
two groups (n1, n2 users, N = n1 + n2) and m_j = X_j + Y_j,

    T_j = [(n2·X_j − n1·Y_j)²·(N − 1)/(N − m_j) − n2²·X_j − n1²·Y_j] / m_j,

the two-sample statistic of Chan–Diakonikolas–Valiant–Valiant (2014) in Bhattacharya–
Valiant's form for unequal sizes (2015), with the finite-population factor (N − 1)/(N − m_j)
that makes it exact for fixed group sizes: under the null the N reports are exchangeable,
so given the column totals m, X_j is hypergeometric (N, m_j, n1) and E[T_j | m] = 0 for
every p, bin by bin (m_j ∈ {0, N} contribute 0). The analyser computes Z = Σ_j T_j/(n1·n2)
and its conditional null variance σ̂² = Σ_j Var(T_j | m_j)/(n1·n2)², the binomial (m_j,
n1/N) moments (a slight over-estimate of the hypergeometric's), and rejects when
Z > κ·σ̂ (κ = ``threshold_sd``): the null error is about P(N(0, 1) > κ) whatever p is,
since the normalisation by m_j keeps heavy bins from dominating (each term's null variance
is at most 2·(n1 + n2)²/(4 n1 n2) at equal sizes: the χ² scale, not the ℓ2 scale), and
smaller where few bins carry the counts (χ² with few degrees of freedom is skewed right of
its mode, so its upper tail at κ is lighter). Under an alternative E[Z] grows like
n·Σ_j (π_j − π′_j)²/(π_j + π′_j), the sample complexity n ≍ k^{2/3}/(aα)^{4/3} +
√k/(aα)² (``planner.formulas.bounds.local_krr``; a is ``bounds.krr_gain``).

Fast path: k-RR's report counts are Multinomial(n, a·p + b) exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.validators.local_channels import (
    AffineChannel,
    ChannelPairTester,
    Randomizer,
    studentized_decision,
)


def studentized_statistic(
    counts1: np.ndarray, n1: int, counts2: np.ndarray, n2: int
) -> tuple[np.ndarray, np.ndarray]:
    """(Z, σ̂) per row of the counts (module docstring): Z's null mean is exactly 0 given
    the per-bin totals, σ̂² its conditional null variance (binomial moments)."""
    if n1 < 1 or n2 < 1:
        raise ValueError(f"the statistic needs at least 1 user a group (n1={n1}, n2={n2})")
    x = np.asarray(counts1, dtype=np.float64)
    y = np.asarray(counts2, dtype=np.float64)
    total = float(n1 + n2)
    m = x + y
    used = (m > 0) & (m < total)
    safe_m = np.where(used, m, 1.0)
    spread = (n2 * x - n1 * y) ** 2 * (total - 1.0) / np.where(used, total - m, 1.0)
    terms = np.where(used, (spread - n2 * n2 * x - n1 * n1 * y) / safe_m, 0.0)
    share = n1 / total
    other = 1.0 - share
    # binomial (m, share) central moments of U = X − m·share
    mu2 = safe_m * share * other
    mu3 = mu2 * (other - share)
    mu4 = mu2 * (1.0 + 3.0 * (safe_m - 2.0) * share * other)
    linear = (n2 - n1) * total
    variance = (total**4 * (mu4 - mu2 * mu2) - 2.0 * total**2 * linear * mu3 + linear**2 * mu2) / (
        safe_m * safe_m
    )
    variance = np.where(used, np.maximum(variance, 0.0), 0.0)
    scale = float(n1) * float(n2)
    z = terms.sum(axis=-1) / scale
    sd = np.sqrt(variance.sum(axis=-1)) / scale
    return np.asarray(z), np.asarray(sd)


@dataclass(frozen=True)
class KRRTester(ChannelPairTester):
    """Closeness of p (group 1) and q (group 2), both groups through k-RR at min(ε1, ε2);
    rejects when Z > ``threshold_sd``·σ̂ (module docstring)."""

    k: int
    alpha: float
    eps1: float
    eps2: float
    threshold_sd: float = 0.7

    @property
    def channel(self) -> AffineChannel:
        """The one channel both groups report through."""
        return AffineChannel(Randomizer.K_RR, self.k, min(self.eps1, self.eps2))

    @property
    def channels(self) -> tuple[AffineChannel, AffineChannel]:
        return self.channel, self.channel

    def statistic(
        self, counts1: np.ndarray, n1: int, counts2: np.ndarray, n2: int
    ) -> tuple[np.ndarray, np.ndarray]:
        return studentized_statistic(counts1, n1, counts2, n2)

    def decide(self, z: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return studentized_decision(z, sd, self.threshold_sd)


__all__ = ["KRRTester", "studentized_statistic"]
