"""Hadamard response building blocks: sets C_j and their probabilities (``theo:ldb_l1_to_l2_mean``).

With the Sylvester Hadamard matrix H of order K (a power of two),
H[x, j] = (−1)^{popcount(x AND j)}, and C_j = {x : H[x, j] = +1}. Column 0 is all +1
and carries no information, so the protocol uses the K − 1 blocks j = 1..K−1.
"""

from __future__ import annotations

import numpy as np

from planner.formulas.hadamard import hadamard_order


def in_block_set(values: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """1{x ∈ C_j} for paired arrays of values x and block indices j."""
    parity = np.bitwise_count(np.bitwise_and(values, blocks)) & 1
    return parity == 0


def walsh_hadamard(vectors: np.ndarray) -> np.ndarray:
    """Unnormalised fast Walsh–Hadamard transform along the last axis (length a power of 2)."""
    result = np.array(vectors, dtype=float, copy=True)
    size = result.shape[-1]
    step = 1
    while step < size:
        shaped = result.reshape(*result.shape[:-1], size // (2 * step), 2, step)
        left, right = shaped[..., 0, :].copy(), shaped[..., 1, :].copy()
        shaped[..., 0, :] = left + right
        shaped[..., 1, :] = left - right
        step *= 2
    return result


def block_probabilities(pmf: np.ndarray) -> np.ndarray:
    """p(C_j) for j = 1..K−1 (last axis), for one pmf or a stack of pmfs over [k]."""
    pmf = np.asarray(pmf, dtype=float)
    k = pmf.shape[-1]
    order = hadamard_order(max(k, 2))
    padded = np.zeros((*pmf.shape[:-1], order))
    padded[..., :k] = pmf
    transformed = walsh_hadamard(padded)  # Σ_x p(x) H[x, j] = 2 p(C_j) − 1
    return (1.0 + transformed[..., 1:]) / 2.0
