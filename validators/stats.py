"""Confidence intervals for Monte Carlo error rates."""

from __future__ import annotations

import math

Z_95 = 1.959963984540054


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95 % by default)."""
    if trials <= 0:
        return 0.0, 1.0
    phat = successes / trials
    denominator = 1 + z**2 / trials
    centre = (phat + z**2 / (2 * trials)) / denominator
    half_width = z * math.sqrt(phat * (1 - phat) / trials + z**2 / (4 * trials**2)) / denominator
    return max(0.0, centre - half_width), min(1.0, centre + half_width)


def most_errors_passing(target: float, trials: int) -> int:
    """The most errors out of ``trials`` whose Wilson upper bound is still ≤ ``target``.

    −1 when even zero errors do not pass (too few trials for this target).
    """
    passing, failing = -1, trials + 1  # the upper bound grows with the count: bisect
    while failing - passing > 1:
        middle = (passing + failing) // 2
        if wilson_interval(middle, trials)[1] <= target:
            passing = middle
        else:
            failing = middle
    return passing


def reliably_passing_error(target: float, trials: int, pass_probability: float) -> float:
    """The largest true error rate at which a ``trials``-trial check passes with probability
    at least ``pass_probability`` (a check passes when its Wilson 95 % upper bound ≤ target).

    With e errors at most passing, this solves P(Binomial(trials, rate) ≤ e) =
    pass_probability for the rate (0 when no count passes). Example: target 1/3, 400
    trials: at most 114 errors pass, and at rate 0.2581 that happens with probability 0.9.
    """
    from scipy.special import bdtri  # inverse binomial CDF in the rate; only this needs scipy

    errors = most_errors_passing(target, trials)
    if errors < 0:
        return 0.0
    if errors >= trials:
        return 1.0
    return float(bdtri(errors, trials, pass_probability))
