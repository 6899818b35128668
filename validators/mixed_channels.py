"""Two groups under different trust models: each group's data reach the analyser through
its own channel, and one closeness statistic reads any two of them.

A group under the **local** model reports through the best local randomizer at its ε
(:func:`planner.validators.local_channels.best_channel`: k-ary randomized response,
optimized unary encoding or bit flipping). A group under the **central** model hands its
items to a trusted curator, which releases the group's histogram with discrete Laplace
noise at its ε (:class:`planner.validators.curator_histogram.HistogramChannel`; pure
ε-DP, sensitivity 2 under replace-one neighbours). The analyser — the curator itself, or
anyone: what it reads is already private — computes the statistic of
:mod:`planner.validators.local_channels` from the two releases: the terms
(p̂_j − q̂_j)² − u1_j − u2_j, each group's (p̂, u) unbiased through its own channel, so
their sum has mean ‖p − q‖²₂ for every pair and every two channels; weighed by each
bin's null variance (χ² weights) and studentized, it rejects when Z_χ > κ·σ̂.

Privacy per group is its own model's guarantee: the local group's reports are ε1-LDP
(``tests/test_channels.py`` enumerates them), the curator's release is ε2-DP
(``tests/test_curator_baseline.py`` checks the likelihood ratio exactly); neither needs δ.
The curator is trusted by its own group only; the local group trusts nobody.

This is the tester of a mixed pair's protocol (``planner/protocols/mixed_channels.py``,
calibrated per orientation); ``benchmarks/bench_mixed_trust.py`` measures by bare
simulation what it saves against putting both groups under the local model. The
statistic's σ̂ counts the curator's noise's fourth cumulant
(``HistogramChannel.noise_fourth_cumulant``): without it a null where that noise
dominates was rejected about 0.31 of the time at κ = 0.7.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.validators.curator_histogram import HistogramChannel
from planner.validators.local_channels import Channel, ChannelsTester, best_channel

MODELS = ("local", "central")
"""The trust models a group of a mixed pair may be under here."""


def group_channel(model: str, k: int, eps: float, release_eps: float | None = None) -> Channel:
    """The channel a group under ``model`` at ε reports through over k bins; a curator's
    with ``release_eps`` above ε releases at it from a uniform subsample of its users
    (``HistogramChannel``)."""
    if model == "local":
        return best_channel(k, eps)
    if model == "central":
        released = release_eps if release_eps is not None and release_eps > eps else None
        return HistogramChannel(k, eps, release_eps=released)
    raise ValueError(f"model must be one of {', '.join(MODELS)}, not {model!r}")


@dataclass(frozen=True)
class MixedChannelsTester(ChannelsTester):
    """Closeness of p (group 1, under ``model1`` at ε1) and q (group 2, ``model2`` at ε2):
    the local channels' tester (its statistic and κ = ``threshold_sd``), each group
    through its own model's channel."""

    model1: str = "local"
    model2: str = "central"
    curator_ratio_floor: float = 0.0
    """A curator's group whose ε is below this share of the other group's releases at that
    share of the other's ε, from a uniform subsample of its users small enough to keep it
    ε-DP (``HistogramChannel.release_eps``): the release the planner calibrated, read by a
    population (0: every curator releases at its own ε from all its users)."""

    def release_eps(self, eps: float, other_eps: float) -> float | None:
        """The ε a curator's group at ``eps`` beside a group at ``other_eps`` releases at
        (None: its own)."""
        floor = self.curator_ratio_floor * other_eps
        return floor if eps < floor else None

    @property
    def channels(self) -> tuple[Channel, Channel]:  # type: ignore[override]
        return (
            group_channel(self.model1, self.k, self.eps1, self.release_eps(self.eps1, self.eps2)),
            group_channel(self.model2, self.k, self.eps2, self.release_eps(self.eps2, self.eps1)),
        )


__all__ = ["MODELS", "MixedChannelsTester", "group_channel"]
