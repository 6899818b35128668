"""Central model, a curator's noisy histogram per group, read by one ℓ2 statistic.

Randomizer (the curator's, one release a group): a trusted curator holds group g's items
and releases their histogram over [k] plus i.i.d. discrete Laplace noise per bin at ε_g
(:class:`planner.validators.curator_histogram.HistogramChannel`: sensitivity 2 under
replace-one neighbours, pure ε_g-DP for the group; ``tests/test_curator_baseline.py``
checks the likelihood ratio exactly). The two releases are separate, on disjoint users.

Analyser: the studentized closeness statistic of a channel per group
(:mod:`planner.validators.local_channels`): Z = Σ_j [(p̂_j − q̂_j)² − u1_j − u2_j], each
group's frequencies and their variance estimates unbiased through its release, so
E Z = ‖p − q‖²₂ for every pair; it rejects when Z > κ·σ̂ (κ = ``threshold_sd``). Anyone
may run it: it reads releases that are already private, so each group's privacy holds
by post-processing, and the curator is trusted by its own group only.

Where noise is small against the draw (a large ε, many users a bin) this is the ℓ2
closeness test without privacy, which the paper's central tester (one noisy statistic of
absolute differences) is not: at k = 16, α = 0.2, ε = 5.1 the bare searches needed 197
users in all here against 259 through k-ary randomized response (docs/method.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.validators.curator_histogram import HistogramChannel
from planner.validators.local_channels import ChannelsTester


@dataclass(frozen=True)
class CentralHistogramTester(ChannelsTester):
    """Closeness of p (group 1 at ε1) and q (group 2 at ε2), each group's histogram released
    by a curator with discrete Laplace noise at its ε; the channels' statistic and κ. The
    planner's ``central+histogram`` protocol."""

    @property
    def channels(self) -> tuple[HistogramChannel, HistogramChannel]:  # type: ignore[override]
        return HistogramChannel(self.bins, self.eps1), HistogramChannel(self.bins, self.eps2)


__all__ = ["CentralHistogramTester"]
