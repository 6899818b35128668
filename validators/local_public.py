"""Local DP, public coin (``theo:ldp_public_ns``): hash to [L], then Hadamard response.

Randomizer, shuffler-free analyzer and fast path are those of
:mod:`planner.validators.local_private` on the hashed values; the public hashes and the
combination of R runs are in :mod:`planner.validators.compression`.
"""

from __future__ import annotations

from planner.validators.compression import CompressedTester
from planner.validators.local_private import LocalPrivateTester


def local_public_tester(
    k: int,
    alpha: float,
    eps1: float,
    eps2: float,
    L: int,
    hashes: int,
    threshold_fraction: float = 0.5,
) -> CompressedTester:
    """The public-coin local tester: R hashes onto [L], each running ``LocalPrivateTester``."""
    return CompressedTester.build(
        k,
        alpha,
        L,
        hashes,
        lambda size, distance: LocalPrivateTester(size, distance, eps1, eps2, threshold_fraction),
    )
