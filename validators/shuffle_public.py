"""Shuffle DP, public coin (``theo:sdp_public_ns``): hash to [L], then the Poisson mechanism.

Each hashed run adds its own Poisson noise on its L bins (its users' histogram is a
separate release), so a user sends 1 + L·μ_g·R/n_g messages on average.
"""

from __future__ import annotations

from planner.validators.compression import CompressedTester
from planner.validators.shuffle_private import ShufflePrivateTester


def shuffle_public_tester(
    k: int,
    alpha: float,
    mu1_min: float,
    mu2_min: float,
    L: int,
    hashes: int,
    threshold_fraction: float = 0.5,
    spread_slope: float = 0.0,
    hash_share: bool = False,
) -> CompressedTester:
    """The public-coin shuffle tester: R hashes onto [L], each running the Poisson mechanism
    (its threshold fraction balanced over the L hashed bins, ``ShufflePrivateTester``).

    ``hash_share``: the threshold's least mean takes the share of the signal a random hash
    keeps (``compression.hashed_mean_share``). Without it the threshold assumes the hashed
    mixture is uniform, which it is not when L is near k and the noise is small: a third
    of the bins are empty and the mean is only 1 − 1/e of that bound."""
    return CompressedTester.build(
        k,
        alpha,
        L,
        hashes,
        lambda size, distance: ShufflePrivateTester(
            size,
            distance,
            mu1_min,
            mu2_min,
            threshold_fraction,
            spread_slope,
            k if hash_share else 0,
        ),
    )
