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
) -> CompressedTester:
    """The public-coin shuffle tester: R hashes onto [L], each running the Poisson mechanism
    (its threshold fraction balanced over the L hashed bins, ``ShufflePrivateTester``)."""
    return CompressedTester.build(
        k,
        alpha,
        L,
        hashes,
        lambda size, distance: ShufflePrivateTester(
            size, distance, mu1_min, mu2_min, threshold_fraction, spread_slope
        ),
    )
