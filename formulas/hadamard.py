"""Hadamard-response block structure (Thm ``theo:ldb_l1_to_l2_mean``), with the erratum fixed."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def hadamard_order(k: Any) -> Any:
    """K = the smallest power of two ≥ k (elementwise for an array of k < 2^53).

    The paper writes K = 2^{⌊log2(k+1)⌋}, which is not that (k = 5 gives 4 < 5); see
    README.
    """
    if isinstance(k, int) or np.ndim(k) == 0:  # np.ndim of an int costs a plan ~10 µs
        if k < 1:
            raise ValueError("k must be a positive integer")
        return 1 << (int(k) - 1).bit_length()
    # frexp's exponent of a positive integer x is its bit length (exact below 2^53).
    bit_lengths = np.frexp(np.asarray(k, dtype=np.float64) - 1.0)[1]
    return np.left_shift(np.int64(1), bit_lengths.astype(np.int64))


def debias_factor(eps: float) -> float:
    """γ = (e^ε + 1)/(e^ε − 1): the local randomizer's debiasing factor; a group's estimate
    of a block's mean has variance ∝ γ²/n (the local testers' null variance per block is
    Σ_g γ_g²/(4 m_g), ``theo:ldp_private_ns``)."""
    return (math.exp(eps) + 1.0) / math.expm1(eps)
