"""Power: the error bound β, and the power 1 − β, that given user counts reach.

The post-hoc question of statsmodels, pwr and G*Power ("what power do I get with the users
I have?"), answered by :func:`planner.solve.solve` for the unknown β: the smallest β in
(0, 1/2) for which a plan fits the given n1 and n2 (every split ``--allocation fixed-n2``
weighs, each with its own way of meeting β: one run, direct calibration or a majority
vote). β bounds both error rates (a pair p = q rejected, a pair TV(p, q) ≥ α accepted):
it is the calibrated estimate of the worst instance family's error, so the power against
every pair at least α apart is at least 1 − β. α is a total-variation distance (the effect
size), not a significance level.

No plan needs fewer users at β above 1/3 than at 1/3 (the constants are calibrated at 1/3,
the error one run is held to), so the least power a plan backs is 2/3: fewer users than the
β = 1/3 plan's are reported as short, with the group that binds and how many it lacks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from planner.constants import ConstantTable
from planner.documents import power_to_dict
from planner.formulas.search import least_passing
from planner.formulas.settings import MIXED_SETTINGS
from planner.inputs import DEFAULT_BETA, InputError, Query, check_power, refuse_beta_with_power
from planner.plan import plan
from planner.solve import BETA_TOP, RELATIVE_PRECISION, Solution, Unknown, fitting_plan, solve

CURVE_PRECISION = 1e-3
"""Relative precision of β at each point of a power curve (a figure's, not a printed
value's)."""
CURVE_POINTS = 12
"""Points per setting of ``planner plot --power`` when ``--users`` is not given (five
settings: :data:`MAX_CURVE_POINTS`)."""
CURVE_RANGE = (0.5, 30.0)
"""``planner plot --power``'s default total users: these multiples of the β = 1/3 plan's
total (below 1, no plan fits: the curve starts at power 2/3)."""
MAX_CURVE_POINTS = 60
"""Points a figure of power curves may ask for, over all its settings (each is a solve for
β, up to ~0.1 s where the points are close; 60 keep ``planner plot --power`` within 10 s)."""


@dataclass(frozen=True)
class PowerAnswer:
    """``planner power``'s answer: the solve for β at the given sizes, and (``--simulate``)
    the validation of its plan."""

    query: Query
    """The query (its β is the solved one when feasible; else the default 1/3)."""
    n1: int
    n2: int
    solution: Solution
    simulation: Any = None
    """A :class:`planner.validate.ValidationReport` of the plan found, or None."""

    @property
    def beta(self) -> float | None:
        value = self.solution.value
        return None if value is None else float(value)

    @property
    def power(self) -> float | None:
        return None if self.beta is None else 1.0 - self.beta

    def validate_command(self) -> str | None:
        """The ``planner validate`` options that check the plan found (beyond the query's)."""
        found = self.solution.plan
        if found is None or self.beta is None:
            return None
        beta = "" if self.beta == DEFAULT_BETA else f" --beta {self.beta:.6g}"
        return f"{beta} --allocation fixed-n2 --n2 {found.n_users_group2}".lstrip()

    def to_dict(self) -> dict[str, Any]:
        """Schema ``planner.power/1``."""
        return power_to_dict(self)


def solve_power(
    query: Query,
    n1: object,
    n2: object,
    constants: ConstantTable | None = None,
    *,
    precision: float = RELATIVE_PRECISION,
) -> Solution:
    """The smallest β for which a plan of ``query`` fits ``n1`` and ``n2`` (the query's own
    β is ignored): :func:`planner.solve.solve` for :attr:`Unknown.BETA`."""
    return solve(query, Unknown.BETA, n1=n1, n2=n2, constants=constants, precision=precision)


@dataclass(frozen=True)
class CurvePoint:
    total: int
    n1: int
    n2: int
    beta: float | None
    """None: no plan fits these sizes (power below 2/3 is not backed)."""

    @property
    def power(self) -> float:
        return math.nan if self.beta is None else 1.0 - self.beta


def plan_share(query: Query, constants: ConstantTable | None = None) -> tuple[float, int]:
    """Group 1's share of the users of the query's plan at β = 1/3, and its total."""
    own = plan(replace(query, beta=DEFAULT_BETA), constants)
    return own.n_users_group1 / own.total_users, own.total_users


def power_curve(
    query: Query,
    totals: Sequence[float] | None = None,
    constants: ConstantTable | None = None,
    precision: float = CURVE_PRECISION,
) -> list[CurvePoint]:
    """Power against total users (the G*Power picture): at each total, split in the
    proportion of the query's own plan (at β = 1/3), the solved β. ``totals`` None: a
    geometric range over :data:`CURVE_RANGE` times that plan's total."""
    share, total = plan_share(query, constants)
    if totals is None:
        low, high = CURVE_RANGE
        step = (high / low) ** (1 / (CURVE_POINTS - 1))
        totals = [total * low * step**index for index in range(CURVE_POINTS)]
    if len(totals) > MAX_CURVE_POINTS:
        raise InputError("users", f"{len(totals)} values", f"at most {MAX_CURVE_POINTS} values")
    points: list[CurvePoint] = []
    for value in sorted({max(2, round(t)) for t in totals}):
        n1 = min(max(1, round(value * share)), value - 1)
        n2 = value - n1
        last = points[-1].beta if points else None
        if last is None and fitting_plan(replace(query, beta=BETA_TOP), n1, n2, constants) is None:
            points.append(CurvePoint(value, n1, n2, None))  # the solve's first check: short
            continue
        beta = None if last is None else _below_last(query, last, n1, n2, constants, precision)
        if beta is None:
            solved = solve_power(query, n1, n2, constants, precision=precision)
            beta = None if solved.value is None else float(solved.value)
        points.append(CurvePoint(value, n1, n2, beta))
    return points


def _below_last(
    query: Query, last: float, n1: int, n2: int, constants: ConstantTable | None, precision: float
) -> float | None:
    """The least β a plan fits ``n1`` and ``n2`` at, to ``precision``, searched down from
    ``last``, the previous (smaller) total's answer: more users never need a larger β
    (neither group has fewer here), so the answer is at most ``last``; steps down of 1.25,
    1.25², 1.25⁴ … until none fits, then bisection there. A few plans instead of the full
    range's ~20, and two where the points sit on one β (the last calibrated one, below
    which only a vote of many more users goes). None (the full solve decides) where a plan
    is extrapolated or the steps reach the search floor."""
    from planner.plan import Coverage
    from planner.solve import BETA_FLOOR

    def fits(beta: float) -> bool:
        found = fitting_plan(replace(query, beta=beta), n1, n2, constants)
        if found is not None and found.coverage is Coverage.EXTRAPOLATED:
            raise _ExtrapolatedError
        return found is not None

    try:
        if not fits(last):
            return None
        high, factor = last, 1.0 + precision
        while fits(high / factor):
            high /= factor
            factor = 1.25 if factor < 1.25 else factor * factor
            if high / factor <= BETA_FLOOR:
                return None
        return least_passing(fits, high / factor, high, precision)
    except _ExtrapolatedError:
        return None


class _ExtrapolatedError(Exception):
    """A plan of a curve's search is extrapolated: the full solve answers that point."""


def beta_spec_of_power(beta: object, power: object) -> object:
    """A sweep's β values given as powers (a value, a list or a spec string of 1 − β),
    each checked in (0.5, 1); refused with ``beta`` also given."""
    from planner.sweep import parse_values

    refuse_beta_with_power(beta, power)
    if isinstance(power, (list, tuple)):
        values = [check_power(value) for value in power]
    elif isinstance(power, str):
        values = [check_power(value) for value in parse_values("power", power)]
    else:
        values = [check_power(power)]
    betas = [1.0 - value for value in values]
    return betas[0] if len(betas) == 1 else betas


def settings_curves(
    settings: Sequence[str] | None,
    *,
    k: object,
    alpha: object,
    eps1: object,
    eps2: object,
    delta: object = None,
    accounting: object = "exact",
    users: object = None,
) -> list[tuple[Query, list[CurvePoint]]]:
    """``planner plot --power``: each setting's power curve (the shuffle settings only with
    δ, as a sweep's). ``users``: the total users, a value, list or spec string (default:
    :data:`CURVE_RANGE` times each setting's β = 1/3 plan)."""
    from planner.protocols import ASKED_PROTOCOLS, PROTOCOLS
    from planner.sweep import parse_values

    by_key = {protocol.key: protocol.setting for protocol in PROTOCOLS}
    by_key |= {setting.key: setting for setting in MIXED_SETTINGS}
    if settings:
        unknown = [key for key in settings if key not in by_key]
        if unknown:
            raise InputError("setting", unknown[0], "one of " + ", ".join(by_key))
        chosen = [by_key[key] for key in dict.fromkeys(settings)]
    else:
        chosen = [p.setting for p in ASKED_PROTOCOLS if not p.needs_delta or delta is not None]
    values = {}
    for name, spec in (("k", k), ("alpha", alpha), ("eps1", eps1), ("eps2", eps2)):
        parsed = parse_values(name, str(spec))
        if len(parsed) != 1:
            raise InputError(name, spec, "one value with --power (the x axis is total users)")
        values[name] = parsed[0]
    totals = None
    if users is not None:
        totals = parse_values("users", str(users))
        if len(totals) * len(chosen) > MAX_CURVE_POINTS:
            raise InputError(
                "users",
                users,
                f"at most {MAX_CURVE_POINTS} points in all (here {len(chosen)} settings × "
                f"{len(totals)} values; fewer values or settings)",
            )
        for value in totals:
            if not (math.isfinite(value) and 2 <= value <= 1e15):
                raise InputError("users", users, "total users in [2, 1e15]")
    curves = []
    for setting in chosen:
        query = Query.build(
            setting.models_text,
            setting.coin,
            values["k"],
            values["alpha"],
            values["eps1"],
            values["eps2"],
            delta if setting.needs_delta else None,
            DEFAULT_BETA,
            accounting,
        )
        if setting.mechanism:  # the mechanism alone, as sweep and compare plan it
            query = replace(query, setting=setting)
        curves.append((query, power_curve(query, totals)))
    return curves
