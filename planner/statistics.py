"""Small pure helpers that modules low and high share: the validation's trial schedule,
the operating point ``operating_error(β)`` and the package's code version.

Kept low in the import graph (it imports :mod:`planner.inputs` only, and the validators'
statistics inside :func:`operating_error`), so that ``plan``, ``testers``, ``validate``,
``cluster`` and calibration all take them from here rather than from each other.
"""

from __future__ import annotations

import functools

from planner.inputs import InputError, check_integer

AUTO = "auto"
FIRST_LOOK_TRIALS = 200
"""``--trials auto``: trials per family at the first look; each later look doubles it."""
MAX_AUTO_TRIALS = 25_600
"""``--trials auto``: default cap on trials per family (the eighth look)."""
VALIDATION_CELL_BUDGET = 500_000_000
"""``--trials auto`` stops doubling where trials × k × families would pass this (a fast-path
trial costs O(k)): a few minutes at most on one core."""


def check_trials(value: object, most: int = 10**7) -> int | str:
    """``--trials``: ``auto`` or a count in [1, most], refused in one line naming both."""
    if value == AUTO:
        return AUTO
    try:
        return check_integer("trials", value, 1, most)
    except InputError:
        raise InputError("trials", value, f"auto or an integer in [1, {most:,}]") from None


def trial_schedule(
    trials: int | str, k: int, families: int, max_trials: int = MAX_AUTO_TRIALS
) -> tuple[int, ...]:
    """The looks of a validation: a fixed count, or ``auto``'s doubling schedule.

    ``auto``: 200, 400, 800, … up to ``max_trials`` per family, fewer where the cost
    trials × k × families (a majority vote is checked through one run) would exceed
    :data:`VALIDATION_CELL_BUDGET` (at least one look).
    """
    if trials != AUTO:
        return (int(check_trials(trials)),)
    cap = check_integer("max-trials", max_trials, FIRST_LOOK_TRIALS, 10**7)
    affordable = VALIDATION_CELL_BUDGET // max(k * max(families, 1), 1)
    looks = [FIRST_LOOK_TRIALS]
    while looks[-1] * 2 <= min(cap, affordable):
        looks.append(looks[-1] * 2)
    return tuple(looks)


OPERATING_TRIALS = 3_200
"""The operating point is set so that ``planner validate --trials auto`` certifies a plan by
this many trials per family (its fifth look) with probability ``OPERATING_PASS_PROBABILITY``.
A later look lets the error sit closer to β (6,400 trials: 0.307 at β = 1/3, about 10 % fewer
users on the local testers) at twice the verification cost; an earlier one costs users
(1,600 trials: 0.281). docs/operating-point.md has the table."""
OPERATING_PASS_PROBABILITY = 0.9
OPERATING_FAMILIES = 12
"""The families the operating point's union bound was set over: the 12 of 2026-11-28.
The 13th (``heavy-null-light-difference``, 2026-11-29) would lower it by at most 0.0004
(0.2957 → 0.2954 at β = 1/3; 0.1685 → 0.1682 at 0.2; 0.0769 → 0.0766 at 0.1; unchanged
at 0.05 and below) and with it every calibration's target; kept, so the point is where
every setting was fitted. ``planner validate`` itself bounds over all the families it
runs, so its verdicts stay sound: only its chance of certifying a plan at exactly the
operating error by the fifth look falls, from 0.900 to 0.893 at β = 1/3 (0.892 at 0.2,
0.888 at 0.1; tests/test_exact.py)."""


@functools.lru_cache(maxsize=64)
def operating_error(beta: float) -> float:
    """The operating point: the true error every family is held to for a target β.

    It is the largest error at which ``planner validate --trials auto`` (Clopper–Pearson
    bounds at its union-bound level over 8 looks × ``OPERATING_FAMILIES`` families) passes by
    ``OPERATING_TRIALS`` trials with probability ``OPERATING_PASS_PROBABILITY``: 0.296 at
    β = 1/3, 0.169 at 0.2, 0.077 at 0.1, 0.034 at 0.05, 0.010 at 0.02, 0.003 at 0.01.
    ``--exact``, the direct factors and the retargeted grid hold the tester to it.
    """
    # the validators' statistics: only when a plan, a tester or a search needs the point
    from planner.validators.engine import DEFAULT_CONFIDENCE
    from planner.validators.stats import sequentially_passing_error

    looks = len(trial_schedule(AUTO, 1, OPERATING_FAMILIES))
    tail = (1 - DEFAULT_CONFIDENCE) / (looks * OPERATING_FAMILIES)
    return sequentially_passing_error(beta, OPERATING_TRIALS, tail, OPERATING_PASS_PROBABILITY)


def code_version() -> str:
    from importlib import metadata  # not on `planner plan`'s path

    try:
        return metadata.version("hetero-closeness-planner")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
        return "unknown"
