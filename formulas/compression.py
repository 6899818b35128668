"""Choice of the compressed domain size L for public-coin protocols (SPEC §1).

Three answers are reported side by side, for the public-coin shuffle bound
n1(L) = a·L^{-1/2} + b·L^{1/4} + min(c·L^{-2}, d) with a = k/α², b = √(kμ1)/α,
c = k²/(α⁴μ1μ2), d = k^{2/3}(μ1/μ2)^{1/3}/α^{4/3}:

* ``paper_L`` — the paper's choice in the proof of ``theo:sdp_public_ns``, the L that
  *balances* the first two terms: min(k, max(2, k^{2/3}/(α^{4/3}μ1^{2/3}))).
* ``closed_form_L`` — the stationary point, in closed form. On the min's first branch,
  d n1/dL = 0 ⇔ (multiplying by 4L³, u = L^{3/4}) b·u³ − 2a·u² − 8c = 0, a cubic with
  exactly one positive root (one sign change) and a non-negative discriminant, so
  Cardano's formula gives it with real cube roots. On the constant branch the cubic
  loses its last term and u = 2a/b, i.e. L = 2^{4/3}·(paper's L). At an interior
  optimum the first branch is always the active one (there T3/T2 = 1/(8μ2) and the
  branches cross only where μ2 < 2^{-4}), which is why the paper's two-term balance is
  off by the factor 2^{4/3} and a few percent of users.
* ``integer_argmin`` — the exact integer minimiser over [2, k] of the full bound.

Closed form and integer argmin agree to within rounding (the function is unimodal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from formulas.ops import NUMPY, Ops


def paper_L(k: Any, alpha: Any, mu1: Any, ops: Ops = NUMPY) -> Any:
    """The paper's L (balance point of the first two terms), clipped to [2, k]."""
    balance = k ** ops.fraction(2, 3) / (alpha ** ops.fraction(4, 3) * mu1 ** ops.fraction(2, 3))
    return ops.minimum(k, ops.maximum(2, balance))


def closed_form_L(k: float, alpha: float, mu1: float, mu2: float) -> float:
    """Stationary point of the public-coin shuffle bound, by Cardano (see module doc)."""
    a = k / alpha**2
    b = np.sqrt(k * mu1) / alpha
    c = k**2 / (alpha**4 * mu1 * mu2)
    d = k ** (2 / 3) * (mu1 / mu2) ** (1 / 3) / alpha ** (4 / 3)
    # u³ + p2·u² + p0 = 0 with u = L^{3/4}; depressed by u = t − p2/3.
    p2, p0 = -2 * a / b, -8 * c / b
    depressed_p = -(p2**2) / 3
    depressed_q = 2 * p2**3 / 27 + p0
    discriminant = max(0.0, (depressed_q / 2) ** 2 + (depressed_p / 3) ** 3)
    root = np.cbrt(-depressed_q / 2 + np.sqrt(discriminant)) + np.cbrt(
        -depressed_q / 2 - np.sqrt(discriminant)
    )
    stationary = float(root - p2 / 3) ** (4 / 3)
    if c / stationary**2 > d:  # constant branch active there: the two-term stationary point
        stationary = (2 * a / b) ** (4 / 3)
    return float(min(k, max(2.0, stationary)))


def integer_argmin(cost: Callable[[np.ndarray], np.ndarray], lower: int, upper: int) -> int:
    """Exact minimiser over the integers of [lower, upper] of a unimodal ``cost``.

    ``cost`` is vectorised (takes an integer array). Windows of ≤ 4096 integers are
    searched exhaustively; wider ones are sampled on a geometric grid of 512 points
    and the search recurses between the best grid point's neighbours, which bracket the
    minimiser of a unimodal function. The public-coin shuffle bound is unimodal in L:
    its derivative is L^{-3/4}·(b/4 − a/2·L^{-3/4} − 2c·L^{-9/4}·1[min on its first
    branch]) with a bracket increasing in L, so it changes sign at most once. Ties go to
    the smaller L (fewer bins, less noise in total).
    """
    while upper - lower > 4096:
        grid = np.unique(np.geomspace(lower, upper, 512).round().astype(np.int64))
        best = int(np.argmin(cost(grid)))
        lower, upper = int(grid[max(best - 1, 0)]), int(grid[min(best + 1, grid.size - 1)])
    candidates = np.arange(lower, upper + 1, dtype=np.int64)
    return int(candidates[int(np.argmin(cost(candidates)))])
