"""A shared hash, then a channel per group: the local public-coin tester for ε above 1.

The public coin is a seed both groups and the analyser share. From it every run draws one
hash h: [k] → [K], uniform and independent per element. Each user maps its item x to the
bucket h(x) and reports that bucket through its own group's channel over K bins
(:func:`planner.validators.local_channels.best_channel` at (K, ε_g): k-RR or optimized
unary encoding). The analyser reads each group's per-bucket counts and runs the two-channel
statistic of :mod:`planner.validators.local_channels` on them, χ²-weighted and
studentized (Z_χ > κ·σ̂).

Privacy: h is public and fixed before any user reports, and the channel is ε_g-LDP over
its K inputs, so a user's report distribution given x is the channel's at h(x): for any
two items the likelihood ratio of every report is at most e^ε_g (1 where h(x) = h(x′)).
The hash is pre-processing of each user's own item, not of anyone else's.

Why it needs fewer users (docs/method.md, "A shared hash, then a channel per group"):
the hashed pair's ‖H(p − q)‖²₂ has mean (1 − 1/K)·‖p − q‖²₂ over the hash, while each
channel's noise is that of K bins, not k. The statistic is the two-channel statistic of
the hashed pair, so under the null its law is that of a null over K bins whatever the
hash: the error under the null depends on the hash only through the hashed pmf's shape,
which the null families cover; under the alternative one hash may merge a pair's
difference, which K ≥ 16 buckets keep rare (``formulas.bounds.HASHED_BUCKETS_MIN``) and
the calibration's families measure.

Fast path: a trial draws its own hash, pushes each pmf through it (per-bucket sums), and
draws each group's counts from its channel exactly as the user path does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from planner.formulas.bounds import HASHED_BUCKETS_MIN
from planner.validators.local_channels import ChannelsTester
from planner.validators.protocol import as_trial_stack

HASH_CHUNK_CELLS = 1 << 22
"""Trials × k cells one block of hashed pmfs holds (the fast path hashes trials in blocks)."""


def hashed_pmfs(pmf: np.ndarray, hashes: np.ndarray, buckets: int) -> np.ndarray:
    """(trials, K): each trial's pmf (one pmf, or one per trial) summed per bucket of its
    hash (``hashes``: (trials, k) bucket numbers)."""
    trials = hashes.shape[0]
    stack = as_trial_stack(pmf, trials)
    offsets = (np.arange(trials, dtype=np.int64) * buckets)[:, None]
    flat = np.bincount(
        (hashes + offsets).ravel(),
        weights=np.ascontiguousarray(stack).ravel(),
        minlength=trials * buckets,
    )
    return flat.reshape(trials, buckets)


@dataclass(frozen=True)
class HashedChannelsTester(ChannelsTester):
    """Closeness of p (group 1) and q (group 2) over [k]: a hash onto ``buckets`` drawn
    from the shared seed (the run's ``rng``), then :class:`ChannelsTester` on the buckets:
    each group through its own best channel over them at its own ε; rejects when
    Z_χ > ``threshold_sd``·σ̂ (χ² weights). The planner's ``local-public+hashed`` protocol."""

    buckets: int = field(default=HASHED_BUCKETS_MIN, kw_only=True)

    def __post_init__(self) -> None:
        if not 2 <= self.buckets <= self.k:
            raise ValueError(f"buckets must be in [2, k] (buckets={self.buckets}, k={self.k})")

    @property
    def bins(self) -> int:
        """Each group's channel reports a bucket."""
        return self.buckets

    def draw_hash(self, rng: np.random.Generator, trials: int = 1) -> np.ndarray:
        """(trials, k) bucket numbers: one uniform hash per run, from the shared seed."""
        return rng.integers(0, self.buckets, size=(trials, self.k))

    def reported_values(
        self, samples1: np.ndarray, samples2: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        hash_ = self.draw_hash(rng)[0]  # the public coin, before any user reports
        return (
            hash_[np.asarray(samples1, dtype=np.int64)],
            hash_[np.asarray(samples2, dtype=np.int64)],
        )

    def reported_pmfs(
        self, p: np.ndarray, q: np.ndarray, trials: int, rng: np.random.Generator
    ) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
        """Blocks of trials, each trial with its own hash and the pmfs summed per bucket
        (blocks of at most ``HASH_CHUNK_CELLS`` trial × item cells)."""
        block = max(1, HASH_CHUNK_CELLS // self.k)
        p_stack, q_stack = as_trial_stack(p, trials), as_trial_stack(q, trials)
        for start in range(0, trials, block):
            stop = min(trials, start + block)
            hashes = self.draw_hash(rng, stop - start)
            yield (
                hashed_pmfs(p_stack[start:stop], hashes, self.buckets),
                hashed_pmfs(q_stack[start:stop], hashes, self.buckets),
                stop - start,
            )


__all__ = ["HASH_CHUNK_CELLS", "HashedChannelsTester", "hashed_pmfs"]
