"""The share of a quadratic statistic's least alternative mean at which a tester rejects.

Both quadratic testers (the Hadamard blocks of the local model, the message histogram of
the shuffle model) reject when their statistic exceeds c × the least mean it has when
TV(p, q) ≥ α. If the statistic is roughly normal with null s.d. σ0 and s.d. σ1 = ρ·σ0
under the alternative, the two errors are equal at c = 1/(1 + ρ). Under a Paninski-type
alternative the extra variance is 4·Σ_j Δ_j²·v_j (Δ_j a cell's difference, v_j the
variance of its estimate) against σ0² = 2·Σ_j v_j²; at a plan the mean is a fixed number
of σ0, so ρ² − 1 falls as one over the square root of the number of cells m:
ρ² = 1 + s/√m. With c∞ the fraction as m grows, c = c∞·2/(1 + ρ). The argument gives the
shape only: the threshold is a share of the *least* mean (other alternatives have more)
and the statistic is not exactly normal, so c∞ and s are fitted per setting by the
calibration's own criterion (the constants file's ``tester_tuning``).
"""

from __future__ import annotations

import math


def balanced_fraction(limit: float, spread_slope: float, cells: int) -> float:
    """c = c∞·2/(1 + ρ), ρ = √(1 + s/√m): c∞ = ``limit``, s = ``spread_slope`` (0: the
    constant fraction c∞), m = ``cells`` (the statistic's number of terms, ≥ 1)."""
    spread = math.sqrt(1.0 + spread_slope / math.sqrt(cells))
    return limit * 2.0 / (1.0 + spread)
