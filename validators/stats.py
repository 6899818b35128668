"""Confidence intervals for Monte Carlo error rates."""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum

from planner.formulas.search import least_passing_integer

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


def most_errors_passing(
    target: float, trials: int, upper: Callable[[int, int], float] | None = None
) -> int:
    """The most errors out of ``trials`` whose upper bound is still ≤ ``target``.

    ``upper(errors, trials)`` is the check's upper confidence bound (default: the Wilson
    95 % bound). −1 when even zero errors do not pass (too few trials for this target).
    """
    bound = upper or (lambda errors, total: wilson_interval(errors, total)[1])
    passing, failing = -1, trials + 1  # the upper bound grows with the count: bisect
    while failing - passing > 1:
        middle = (passing + failing) // 2
        if bound(middle, trials) <= target:
            passing = middle
        else:
            failing = middle
    return passing


def reliably_passing_error(
    target: float,
    trials: int,
    pass_probability: float,
    upper: Callable[[int, int], float] | None = None,
) -> float:
    """The largest true error rate at which a ``trials``-trial check passes with probability
    at least ``pass_probability`` (a check passes when its upper bound ≤ target; default
    the Wilson 95 % bound, see :func:`most_errors_passing`).

    With e errors at most passing, this solves P(Binomial(trials, rate) ≤ e) =
    pass_probability for the rate (0 when no count passes). Example: target 1/3, 400
    trials, Wilson: at most 114 errors pass, and at rate 0.2581 that happens with
    probability 0.9.
    """
    from scipy.special import bdtri  # inverse binomial CDF in the rate; only this needs scipy

    errors = most_errors_passing(target, trials, upper)
    if errors < 0:
        return 0.0
    if errors >= trials:
        return 1.0
    return float(bdtri(errors, trials, pass_probability))


def sequentially_passing_error(
    target: float, trials: int, tail: float, pass_probability: float
) -> float:
    """The largest true error at which a sequential check passes by ``trials`` trials with
    probability at least ``pass_probability``: its Clopper–Pearson upper bound at one-sided
    level ``tail`` (the union-bound level of ``--trials auto``) must be ≤ target there.

    Example: β = 1/3, 3,200 trials, tail 0.05/96: at most 979 errors pass (observed
    0.306), and at rate 0.2957 that happens with probability 0.9.
    """
    return reliably_passing_error(
        target,
        trials,
        pass_probability,
        lambda errors, total: clopper_pearson_bounds(errors, total, tail)[1],
    )


# --- verdicts that stay valid when the run stops as soon as it is decided ---------------


class Verdict(StrEnum):
    PASS = "pass"
    """The error is certified ≤ the target (its upper confidence bound is)."""
    FAIL = "fail"
    """The error is shown > the target (its lower confidence bound is)."""
    INCONCLUSIVE = "inconclusive"
    """Neither, at the stated confidence: more trials would decide."""


def clopper_pearson_bounds(errors: int, trials: int, tail: float) -> tuple[float, float]:
    """Exact binomial (Clopper–Pearson) bounds, each one-sided at level 1 − ``tail``.

    P(upper < e) ≤ tail and P(lower > e) ≤ tail for every true rate e. No trials: (0, 1).
    """
    from scipy.special import betaincinv  # the beta quantile; only the verdict needs it

    if trials <= 0:
        return 0.0, 1.0
    low = 0.0 if errors <= 0 else float(betaincinv(errors, trials - errors + 1, tail))
    high = 1.0 if errors >= trials else float(betaincinv(errors + 1, trials - errors, 1 - tail))
    return low, high


def verdict_of(low: float, high: float, target: float) -> Verdict:
    """pass when the upper bound is within the target, fail when the lower bound is above."""
    if high <= target:
        return Verdict.PASS
    if low > target:
        return Verdict.FAIL
    return Verdict.INCONCLUSIVE


def trials_to_decide(errors: int, trials: int, target: float, tail: float) -> int | None:
    """Roughly how many trials in all would decide a family now at ``errors``/``trials``.

    The fewest N ≥ ``trials`` at which the same observed rate e (round(e·N) errors) gets
    exact Clopper–Pearson bounds at ``tail`` that decide (upper ≤ target or lower above
    it): steps of 1, 2, 4, … then bisection. None when e sits on the target, or when no N
    up to 10¹² decides.
    """
    if trials <= 0:
        return None
    rate = errors / trials
    if abs(target - rate) < 1e-9:
        return None

    def decides(count: int) -> bool:
        low, high = clopper_pearson_bounds(round(rate * count), count, tail)
        return verdict_of(low, high, target) is not Verdict.INCONCLUSIVE

    return least_passing_integer(decides, trials, most=10**12)
