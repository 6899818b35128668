"""Monotone searches shared by the accounting inverses and the planner's solver."""

from __future__ import annotations

import math
from collections.abc import Callable


def least_passing(
    passes: Callable[[float], bool], low: float, high: float, rel_tol: float, *, grow: bool = False
) -> float:
    """Smallest x > 0 with ``passes(x)`` to relative tolerance, rounded up (the passing side).

    ``passes`` is monotone (false, then true); ``low`` fails and ``high`` passes, or with
    ``grow`` ``high`` is doubled (and ``low`` follows) until it passes. Bisection on log x.
    """
    if grow:
        while not passes(high):
            low, high = high, 2 * high
    while high / low > 1.0 + rel_tol:
        middle = math.sqrt(low * high)
        if passes(middle):
            high = middle
        else:
            low = middle
    return high
