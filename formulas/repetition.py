"""Majority vote over independent runs on disjoint users (README, β), computed exactly.

Each user takes part in one run only, so the privacy guarantee is unchanged.
"""

from __future__ import annotations

import math
from functools import lru_cache

PER_RUN_ERROR = 1 / 3
"""The error every theorem's bound is stated for (β = 1/3)."""


def majority_vote_error(runs: int, per_run_error: float) -> float:
    """P(Binomial(runs, per_run_error) ≥ runs/2) for odd ``runs``: the vote is wrong.

    Summed exactly in log space (no normal or Hoeffding approximation).
    """
    if runs < 1 or runs % 2 == 0:
        raise ValueError("runs must be a positive odd integer")
    if per_run_error <= 0.0:
        return 0.0
    if per_run_error >= 1.0:  # every run errs (a confidence bound may reach 1)
        return 1.0
    log_p, log_q = math.log(per_run_error), math.log1p(-per_run_error)
    log_terms = [
        math.lgamma(runs + 1)
        - math.lgamma(i + 1)
        - math.lgamma(runs - i + 1)
        + i * log_p
        + (runs - i) * log_q
        for i in range((runs + 1) // 2, runs + 1)
    ]
    top = max(log_terms)
    # a probability: rounding in the sum may not carry it past 1 (near p = 1)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in log_terms))


@lru_cache(maxsize=4096)
def majority_vote_runs(beta: float, per_run_error: float = 1 / 3) -> int:
    """Smallest odd r whose majority vote errs with probability ≤ β.

    The error is decreasing in odd r for ``per_run_error < 1/2``, so a doubling search
    followed by bisection over odd r finds the exact minimum.
    """
    if not 0.0 < per_run_error < 0.5:
        raise ValueError("per_run_error must lie in (0, 1/2)")
    if per_run_error <= beta:
        return 1
    upper = 1
    while majority_vote_error(upper, per_run_error) > beta:
        upper = 2 * upper + 1
    lower = 1  # the vote over `lower` runs errs with probability > beta
    while upper - lower > 2:
        middle = (lower + upper) // 2
        middle += 1 - middle % 2  # odd, strictly between lower and upper
        if majority_vote_error(middle, per_run_error) > beta:
            lower = middle
        else:
            upper = middle
    return upper


def majority_vote_run_target(runs: int, beta: float) -> float:
    """The largest per-run error p whose ``runs``-run majority vote errs with probability
    ≤ β: certifying every run's error ≤ p certifies the vote's ≤ β.

    The vote's error is increasing in p (a run that errs more often can only make more of
    the r independent runs wrong), so a bisection on [0, 1/2] finds it; the value
    returned is the bisection's lower end, never above the exact threshold (pessimistic).
    """
    if runs < 1 or runs % 2 == 0:
        raise ValueError("runs must be a positive odd integer")
    if not 0.0 < beta < 0.5:
        raise ValueError("beta must lie in (0, 1/2)")
    if runs == 1:
        return beta
    low, high = 0.0, 0.5  # the vote errs ≤ β at low, > β at high (exactly 1/2 at p = 1/2)
    for _ in range(60):
        middle = (low + high) / 2
        if majority_vote_error(runs, middle) <= beta:
            low = middle
        else:
            high = middle
    return low
