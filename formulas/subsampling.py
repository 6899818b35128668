"""Privacy amplification by subsampling (Lemma ``theo:subsampling``), exactly.

The central protocol runs an ε1-DP tester on n1 users of each group; group 2 (n2 ≥ n1
users) is subsampled uniformly to n1, which makes it ε2-DP with
ε2 = ln(1 + (n1/n2)(e^{ε1} − 1)). The paper's ``ε2 = (n1/n2)ε1`` is the small-ε form.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from planner.formulas.ops import NUMPY, Ops
from planner.formulas.search import least_passing_integer


def subsampled_epsilon(eps_base: Any, n_used: Any, n_total: Any, ops: Ops = NUMPY) -> Any:
    """ε of an ε_base-DP mechanism run on a uniform n_used-subset of n_total users."""
    return ops.log(1 + (n_used / n_total) * (ops.exp(eps_base) - 1))


def subsampling_population_ratio(eps_base: Any, eps_target: Any, ops: Ops = NUMPY) -> Any:
    """n_total/n_used needed to amplify ε_base down to ε_target: (e^{ε_base}−1)/(e^{ε_target}−1)."""
    return (ops.exp(eps_base) - 1) / (ops.exp(eps_target) - 1)


def subsampling_population(n_used: Any, eps_base: Any, eps_target: Any) -> Any:
    """Smallest integer n_total with ``subsampled_epsilon(eps_base, n_used, n_total) ≤ eps_target``.

    No subsampling is needed when ε_target ≥ ε_base (then n_total = n_used). Elementwise
    over arrays (exact for n below 2^53); scalars in, int out (in plain Python, the same
    steps: one plan must cost microseconds).
    """
    scalars = isinstance(n_used, int) and isinstance(eps_base, float)  # the plan's case,
    if (scalars and isinstance(eps_target, float)) or (  # without np.ndim's cost
        np.ndim(n_used) == np.ndim(eps_base) == np.ndim(eps_target) == 0
    ):
        if eps_target >= eps_base:
            return int(n_used)
        ratio = math.expm1(eps_base) / math.expm1(eps_target)
        start = math.ceil(n_used * ratio * (1 - 1e-15))
        return least_passing_integer(
            lambda n: math.log1p(n_used / n * math.expm1(eps_base)) <= eps_target, start
        )
    used, base, target = np.broadcast_arrays(
        np.asarray(n_used, dtype=np.float64), eps_base, eps_target
    )
    needed = target < base
    ratio = np.expm1(base) / np.expm1(np.where(needed, target, base))
    n_total = np.where(needed, np.ceil(used * ratio * (1 - 1e-15)), used)
    short = needed & (np.log1p(used / n_total * np.expm1(base)) > target)
    for row in np.flatnonzero(short):  # rare: the closed form's rounding fell short
        n_total[row] = subsampling_population(float(used[row]), float(base[row]), target[row])
    return int(n_total) if n_total.ndim == 0 else n_total


SUBSAMPLE_MARGIN = 1e-12
"""The relative share of ε_target :func:`subsample_size` keeps unspent (rounding)."""


def private_subsample_population(n_used: Any, eps_base: Any, eps_target: Any) -> Any:
    """:func:`subsampling_population` held to ε_target less :data:`SUBSAMPLE_MARGIN`: the
    least population from which :func:`subsample_size` draws at least n_used (the same
    float test), elementwise as that function."""
    held = np.asarray(eps_target, dtype=np.float64) * (1.0 - SUBSAMPLE_MARGIN)
    return subsampling_population(n_used, eps_base, float(held) if held.ndim == 0 else held)


def subsample_size(n_total: int, eps_base: float, eps_target: float) -> int:
    """Largest m ≤ n_total with ``subsampled_epsilon(eps_base, m, n_total) ≤ eps_target``:
    how many of n_total users an ε_base-DP release may read, drawn uniformly without
    replacement, for it to be ε_target-DP (all of them when ε_target ≥ ε_base). The
    inverse of :func:`subsampling_population`: a population of
    ``subsampling_population(m, ε_base, ε_target)`` users gives back at least m."""
    if eps_target >= eps_base:
        return n_total
    # pessimistic by a hair: log1p and expm1 round, and from n ≈ 10¹³ an m passing the
    # plain float test had an exact ε above the target by up to 4·10⁻¹⁶ of it (a review)
    target = eps_target * (1.0 - SUBSAMPLE_MARGIN)

    def private(m: int) -> bool:
        return math.log1p(m / n_total * math.expm1(eps_base)) <= target

    m = min(n_total, math.floor(n_total * math.expm1(eps_target) / math.expm1(eps_base)))
    while m > 0 and not private(m):  # the closed form's rounding went over: a step or two
        m -= 1
    while m < n_total and private(m + 1):
        m += 1
    return m
