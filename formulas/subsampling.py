"""Privacy amplification by subsampling (Lemma ``theo:subsampling``), exactly.

The central protocol runs an ε1-DP tester on n1 users of each group; group 2 (n2 ≥ n1
users) is subsampled uniformly to n1, which makes it ε2-DP with
ε2 = ln(1 + (n1/n2)(e^{ε1} − 1)). The paper's ``ε2 = (n1/n2)ε1`` is the small-ε form.
"""

from __future__ import annotations

import math
from typing import Any

from formulas.ops import NUMPY, Ops


def subsampled_epsilon(eps_base: Any, n_used: Any, n_total: Any, ops: Ops = NUMPY) -> Any:
    """ε of an ε_base-DP mechanism run on a uniform n_used-subset of n_total users."""
    return ops.log(1 + (n_used / n_total) * (ops.exp(eps_base) - 1))


def subsampling_population_ratio(eps_base: Any, eps_target: Any, ops: Ops = NUMPY) -> Any:
    """n_total/n_used needed to amplify ε_base down to ε_target: (e^{ε_base}−1)/(e^{ε_target}−1)."""
    return (ops.exp(eps_base) - 1) / (ops.exp(eps_target) - 1)


def subsampling_population(n_used: int, eps_base: float, eps_target: float) -> int:
    """Smallest integer n_total with ``subsampled_epsilon(eps_base, n_used, n_total) ≤ eps_target``.

    No subsampling is needed when ε_target ≥ ε_base (then n_total = n_used).
    """
    if eps_target >= eps_base:
        return n_used
    ratio = math.expm1(eps_base) / math.expm1(eps_target)
    n_total = math.ceil(n_used * ratio * (1 - 1e-15))
    while math.log1p(n_used / n_total * math.expm1(eps_base)) > eps_target:
        n_total += 1
    return n_total
