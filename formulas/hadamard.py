"""Hadamard-response block structure (Thm ``theo:ldb_l1_to_l2_mean``), with the erratum fixed."""

from __future__ import annotations


def hadamard_order(k: int) -> int:
    """K = the smallest power of two ≥ k.

    The paper writes K = 2^{⌊log2(k+1)⌋}, which is not that (k = 5 gives 4 < 5); see
    SPEC §9.
    """
    if k < 1:
        raise ValueError("k must be a positive integer")
    return 1 << (k - 1).bit_length()
