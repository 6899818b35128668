"""Find the smallest constant C at which the real tester meets the error target.

n(C) is the plan with multiplier C on the setting's bound (C = 1: the ``order`` form),
so the search goes through :func:`planner.plan.plan` itself: what is calibrated is
exactly what is printed. A multiplier *passes* a point when the tester's error is at
most the target on every instance family; the smallest passing C is found by bisection
on log C with common random numbers (the same seed at every C).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from planner.constants import ConstantSource, ConstantTable, SettingConstant, default_constants
from planner.inputs import Query
from planner.validate import validate
from validators.engine import Verification


class Criterion(StrEnum):
    POINT = "point"
    """Every family's observed error rate ≤ target (a measurement)."""
    WILSON = "wilson"
    """Every family's 95 % Wilson upper bound ≤ target (a guarantee with confidence)."""


def table_with(
    setting_key: str, multiplier: float, base: ConstantTable | None = None, **extra: Any
) -> ConstantTable:
    """A copy of the constants with this setting's C (order form) and tester extras."""
    table = base or default_constants()
    entry = table.for_setting(setting_key)
    merged = {**entry.extra, **extra}
    changed = SettingConstant(ConstantSource.ORDER, multiplier, None, entry.note, merged)
    return replace(table, settings={**table.settings, setting_key: changed})


def error_at(
    query: Query,
    table: ConstantTable,
    *,
    trials: int,
    seed: int,
    families: Sequence[str] | None = None,
) -> Verification:
    return validate(
        query, trials=trials, seed=seed, families=families, constants=table
    ).verification


def passes(verification: Verification, criterion: Criterion) -> bool:
    if criterion is Criterion.WILSON:
        return verification.passed
    return verification.worst_error_rate <= verification.target


@dataclass(frozen=True)
class MultiplierSearch:
    multiplier: float | None
    """Smallest passing C (to the relative tolerance); None if even ``high`` fails."""
    verification: Verification | None
    """The check at that C."""


def smallest_multiplier(
    query: Query,
    *,
    trials: int = 400,
    seed: int = 0,
    criterion: Criterion = Criterion.POINT,
    low: float = 1e-3,
    high: float = 1e3,
    rel_tol: float = 0.02,
    families: Sequence[str] | None = None,
    base: ConstantTable | None = None,
    **extra: Any,
) -> MultiplierSearch:
    """Bisection on log C for the smallest C that passes the query's point."""
    key = query.setting.key

    def check(multiplier: float) -> Verification:
        return error_at(
            query,
            table_with(key, multiplier, base, **extra),
            trials=trials,
            seed=seed,
            families=families,
        )

    top = check(high)
    if not passes(top, criterion):
        return MultiplierSearch(None, top)
    best = top
    bottom = check(low)
    if passes(bottom, criterion):
        return MultiplierSearch(low, bottom)
    while high / low > 1 + rel_tol:
        middle = math.sqrt(low * high)
        outcome = check(middle)
        if passes(outcome, criterion):
            high, best = middle, outcome
        else:
            low = middle
    return MultiplierSearch(high, best)
