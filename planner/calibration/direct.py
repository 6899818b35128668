"""Direct calibration at β < 1/3 (README, β): how far one run's C moves from the grid's
target to the operating point ``operating_error(β)`` at each of ``DIRECT_BETAS``, and the
constants entries made of those factors (``direct``, ``direct_by_node``,
``direct_small_eps``, ``direct_large_eps``, ``direct_large_alpha``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from planner.calibration.grid import (
    CALIBRATION_TARGET,
    GRID_AT_OPERATING_POINT,
    GridPoint,
    grid_points,
    point_seed,
)
from planner.calibration.search import SEARCH_RANGE, search_provenance, smallest_multiplier
from planner.formulas.repetition import PER_RUN_ERROR
from planner.protocols import PROTOCOLS
from planner.statistics import operating_error
from planner.testers import parameters_for_beta

DIRECT_REL_TOL = 0.02
"""Relative precision of each direct-calibration search on C."""

DIRECT_BETAS = (1 / 3, 0.2, 0.1, 0.05, 0.02, 0.01)
"""β values at which one run's C is calibrated directly (at ``operating_error(β)``); below
the last, majority vote. The first, β = 1/3, is the *operating factor*: how far the grid's
C (fitted at ``CALIBRATION_TARGET``) moves to reach the operating point at β = 1/3."""

DIRECT_AXES: dict[str, list[float]] = {
    "k": [16, 256],
    "alpha": [0.15, 0.5],
    "eps_strong": [0.25, 1.0],
    "eps_ratio": [0.25, 1.0],
}

DIRECT_MARGIN = 1.0
"""Multiplies the worst factor over each k's points at β < 1/3. None, for the reason
``OPERATING_MARGIN`` is none: the factor multiplies the grid's C, whose safety margin
(``SAFETY_MARGINS``) already covers points off its nodes, and it is a ratio of two C's found
with common random numbers at the same point, the worst over the points taken (1.05 until
2026-11-27: the two margins compounded to 1.1025, and hold-out plans at β = 0.1 had worst
family errors of 0.015–0.05 against an operating point of 0.077; docs/operating-point.md).
The factor moves with k, so it is kept per k and plans keep the last row above it. It is
not always falling: the local public coin's at β = 0.2 is 3.18, 3.00 and 3.56 at k = 16,
256 and 4096, so that setting has a k = 4096 row (2026-11-29: plans above k = 256 had read
the 3.00 and held β = 0.3 with errors of 0.25 – 0.285, docs/evidence.md)."""

OPERATING_MARGIN = 1.0
"""Multiplies the worst operating factor over each k's points. None: the grid's own
safety margin (``SAFETY_MARGINS``) already covers points off its nodes, and the operating
factor is a ratio of two C's found with common random numbers at the same point, which
varies by a few per cent across points (the worst is taken)."""

DIRECT_MAX_FACTOR = 20.0
"""A β whose factor exceeds this at some point is left to the majority vote."""


@dataclass(frozen=True)
class DirectResult:
    point: GridPoint
    multiplier: float | None
    """C at the calibration target (``CALIBRATION_TARGET``) at this point."""
    factors: tuple[float | None, ...]
    """C(β)/C(``CALIBRATION_TARGET``) for each of ``DIRECT_BETAS``, C(β) held to
    ``operating_error(β)``; None where no C in range meets it."""


def direct_point(
    point: GridPoint,
    trials: int,
    seed: int,
    extra: dict[str, Any],
    families: Sequence[str] | None = None,
) -> DirectResult:
    """How much one run's C must change from the calibration target to meet
    ``operating_error(β)`` at each of ``DIRECT_BETAS``, at one point (common random
    numbers: the same seed for every search). ``families`` as in :func:`calibrate_point`."""
    low, high = SEARCH_RANGE[point.setting]
    query = point.query()
    file_tester = dict(extra.get("tester", {}))  # the constants' tester extras

    def least(target: float, low: float, high: float, beta: float) -> float | None:
        # one run that must meet β by itself uses the tester constants plans use for β
        tester = parameters_for_beta(query.setting, file_tester, beta)
        return smallest_multiplier(
            query,
            trials=trials,
            seed=point_seed(seed, point),
            low=low,
            high=high,
            rel_tol=DIRECT_REL_TOL,
            target=target,
            families=families,
            **{**extra, "tester": tester},
        ).multiplier

    base = least(CALIBRATION_TARGET, low, high, PER_RUN_ERROR)
    from_plan = base is None
    if from_plan:
        base = _plan_multiplier(point)
    factors: list[float | None] = []
    for beta in DIRECT_BETAS:
        previous = factors[-1] if factors else None
        if base is None or (factors and previous is None):
            factors.append(None)
            continue
        target = operating_error(beta)
        if previous is None:  # the first β: from well below the base C up to it
            search = (base / 4, base) if target >= CALIBRATION_TARGET else (base, base * 20)
        else:  # a stricter target needs at least the previous C: search above it only
            search = (base * previous, base * DIRECT_MAX_FACTOR)
        found = least(target, *search, beta)
        if found is None and from_plan and beta >= PER_RUN_ERROR:
            found = base  # β = 1/3: the plans' own C, which the search could not beat
        factors.append(None if found is None else found / base)
    return DirectResult(point, base, tuple(factors))


def _plan_multiplier(point: GridPoint) -> float | None:
    """The C a β = 1/3 plan runs at this point (the packaged grid's, read as plans read
    it), for a point where no C in the search range holds every family to the calibration
    target: a tester whose fixed threshold leaves the null error a hair below the target
    (a channel per group at k = 256, α = 0.5, ε = (1, 1): 0.257 – 0.263 at every C from
    0.5 to 5, 1000 trials) fails it now and then at any C, so the search has no base; the
    factors at β < 1/3 (a raised threshold, no such floor) are then taken against the C
    the plans there use, which is what a plan multiplies. None without a calibrated grid."""
    from planner.constants import ConstantSource, default_constants
    from planner.plan import calibrated_multiplier, grid_position

    constant = default_constants().for_setting(point.setting)
    if constant.source is not ConstantSource.CALIBRATED:
        return None
    query = point.query()
    strong, weak = max(query.eps1, query.eps2), min(query.eps1, query.eps2)
    strong, weak, accounting = grid_position(query, strong, weak, query.accounting, constant)
    compression = constant.compression()
    return calibrated_multiplier(query, constant, strong, weak, accounting, compression)


def _run_direct_point(arguments: tuple[GridPoint, int, int, dict[str, Any]]) -> DirectResult:
    return direct_point(*arguments)


def _factor_table(
    results: Sequence[DirectResult], ks: Sequence[float]
) -> tuple[list[float], list[list[float | None]]]:
    """Per k of ``ks``: the operating factor and the factor row of ``direct_entry`` over
    ``results`` (the points at that k), with ``_vote_below_any_floor`` applied."""
    at_operating_point = results[0].point.setting in GRID_AT_OPERATING_POINT
    operating: list[float] = []
    table = []
    for k in ks:
        at_k = [r for r in results if r.point.k == int(k)]
        first = [r.factors[0] for r in at_k]
        known_first = [value for value in first if value is not None]
        moved = OPERATING_MARGIN * max(known_first) if len(known_first) == len(first) else 1.0
        moved = min(moved, 1.0)  # the operating point never asks for more than the grid
        # a grid fitted at the operating point itself is not moved; its factors are
        # C(β)/C(operating point) point by point
        operating.append(1.0 if at_operating_point else moved)
        row: list[float | None] = []
        for index in range(1, len(DIRECT_BETAS)):
            column: list[float | None] = [r.factors[index] for r in at_k]
            divisor = moved
            if at_operating_point:
                column = [ratio_of(r.factors[index], r.factors[0]) for r in at_k]
                divisor = 1.0
            known = [value for value in column if value is not None]
            usable = len(known) == len(column) and (index == 1 or row[-1] is not None)
            row.append(DIRECT_MARGIN * max(known) / divisor if usable else None)
        table.append(row)
    _vote_below_any_floor(table)
    return operating, table


def direct_entry(
    results: Sequence[DirectResult],
    *,
    trials: int,
    seed: int,
    axes: dict[str, list[float]],
    created: str,
    code_version: str,
) -> dict[str, Any]:
    """One setting's ``direct`` entry.

    ``operating_factor``: per k of the axes, ``OPERATING_MARGIN`` × the worst operating
    factor over that k's points (1 when a point has none); the grid's C is multiplied by it
    (:func:`retargeted_multipliers`). ``factor``: per k and each β < 1/3, ``DIRECT_MARGIN``
    × the worst factor over that k's points, divided by the operating factor (the plan
    multiplies the retargeted C by it); None for a β (and every smaller one) at every k
    when one point never met it (the tester's constants leave an error floor there).
    """
    setting = results[0].point.setting
    at_operating_point = setting in GRID_AT_OPERATING_POINT
    betas = DIRECT_BETAS[1:]
    operating, table = _factor_table(results, axes["k"])
    return {
        "beta": list(betas),
        "k": [int(k) for k in axes["k"]],
        "factor": table,
        "operating_factor": operating,
        "margin": DIRECT_MARGIN,
        "operating_margin": OPERATING_MARGIN,
        "targets": {f"{beta:.6g}": operating_error(beta) for beta in DIRECT_BETAS},
        "criterion": (
            (
                "one run's C at every family's observed error ≤ operating_error(β), divided "
                "by its C at operating_error(1/3) at the same point (the grid is fitted "
                "there: operating_factor 1); factor: the worst over each k's points × margin"
            )
            if at_operating_point
            else (
                "one run's C at every family's observed error ≤ operating_error(β), divided "
                f"by its C at {CALIBRATION_TARGET}; operating_factor: the worst over each "
                "k's points at β = 1/3 × operating_margin (the grid's C is multiplied by "
                "it); factor: the worst over each k's points × margin, divided by "
                "operating_factor"
            )
        ),
        **run_record(results, "--direct", trials, seed, axes, created, code_version),
    }


def direct_provenance(
    setting: str, flags: str, trials: int, seed: int, created: str, code_version: str
) -> dict[str, Any]:
    """How a direct run was made: its command (``flags`` after ``planner calibrate``),
    trials, seed, date, code version and search settings."""
    return {
        "command": f"planner calibrate {flags} --setting {setting} --trials {trials} --seed {seed}",
        "trials_per_family": trials,
        "seed": seed,
        "created": created,
        "code_version": code_version,
        **search_provenance(setting, rel_tol=DIRECT_REL_TOL, target=None),
    }


def _vote_below_any_floor(table: list[list[float | None]]) -> None:
    """A factor table (rows per k, columns per β) made None, in place, from the first β
    at which any k has none: a floor at one k leaves that β and every smaller one to
    the vote at every k."""
    for index in range(len(table[0]) if table else 0):
        if any(row[index] is None for row in table):
            for row in table:
                row[index:] = [None] * (len(row) - index)
            return


def rebuilt_direct_entry(setting: str, direct: dict[str, Any]) -> dict[str, Any]:
    """A ``direct`` entry re-derived from its own raw factors with today's margins (what
    the same ``planner calibrate --direct`` run gives: the raw factors are its only
    randomness); its provenance is kept."""
    rows, recorded = _recorded_run(setting, direct)
    return {**direct_entry(rows, **recorded), "provenance": direct["provenance"]}


def _recorded_run(setting: str, entry: dict[str, Any]) -> tuple[list[DirectResult], dict[str, Any]]:
    """A stored direct entry's raw results and the run's settings (trials, seed, axes,
    date and code version), to re-derive its tables from."""
    points = grid_points(setting, entry["axes"])
    rows = [
        DirectResult(point, None, tuple(factors))
        for point, factors in zip(points, entry["raw_factors"], strict=True)
    ]
    provenance = entry["provenance"]
    return rows, {
        "trials": int(provenance["trials_per_family"]),
        "seed": int(provenance["seed"]),
        "axes": entry["axes"],
        "created": str(provenance["created"]),
        "code_version": str(provenance["code_version"]),
    }


BELOW_ALPHA_MIN_AXES: dict[str, list[float]] = {
    "k": [16, 256],
    "alpha": [0.01, 0.05],
    "eps_strong": [0.25, 1.0],
    "eps_ratio": [0.25, 1.0],
}
"""Points of ``planner calibrate --direct --below-alpha-min``: the direct factors of a
setting with per-node tables (``DIRECT_BY_NODE_SETTINGS``), measured below the direct
points' α."""

DIRECT_BY_NODE_SETTINGS = tuple(p.key for p in PROTOCOLS if p.calibration.direct_by_node)
"""The settings whose direct factors are tabled per node (α, ε_strong), ``direct_by_node``:
the shuffle testers, whose factor grows as α falls, and central, whose factor moves with
ε_strong both ways (``docs/coverage.md``, β below 1/3)."""

DIRECT_SMALL_EPS: dict[str, list[float]] = {
    p.key: list(p.calibration.direct_small_eps) for p in PROTOCOLS if p.calibration.direct_small_eps
}
"""The ε_strong values ``planner calibrate --direct --small-eps`` measures per setting,
below the direct points' 0.25: the shuffle private coin's factor falls there (the public
coin's does not move with ε, so it has none); central's falls to about 0.05, then rises
again towards 0.01 (its noise's Laplace tail), and is measured down to 0.0004, whose
ratio-1/4 point sits at the input floor (below it, that node's tables)."""

DIRECT_SMALL_EPS_SETTINGS = tuple(DIRECT_SMALL_EPS)

EPS_NODE_OWN_POINTS = frozenset(p.key for p in PROTOCOLS if p.calibration.eps_node_own_points)
"""Settings whose ``direct_by_node`` table at an ε_strong node is the worst over the points
at that node alone: central's factor is lowest between ε_strong = 0.05 and 0.25 and rises
both ways (k = 16, α = 0.5, β = 0.01: 7.3 at ε_strong = 0.01, 4.8 at 0.25, 4.7 at 1), so
pooling smaller ε nodes would carry the 0.01 points' factor to every ε. The others' node
takes the worst over its ε node and every smaller one, as their factor rises with ε."""


DIRECT_BEYOND: dict[str, dict[str, list[float]]] = {
    axis: {
        p.key: p.calibration.direct_beyond[axis]
        for p in PROTOCOLS
        if axis in p.calibration.direct_beyond
    }
    for axis in ("eps_strong", "alpha")
}
"""The points ``planner calibrate --direct --large-eps`` (ε_strong) and ``--large-alpha`` (α)
measure per setting beyond the direct points' tops (ε_strong 1, α 0.5), so that a plan up
to the covered ε of 20 or α of 0.95 runs one directly calibrated run at the asked value,
not the vote (23 runs at β = 0.05) or a tester capped at ε = 1 or α = 0.5 (at α = 0.95,
(0.95/0.5)² = 3.6× the users). The local private coin's statistic sums every user's
randomized report at any ε and α, and its factors at ε_strong = 5 and 20 and at α = 0.75
and 0.95 are those of the direct points within the search's noise (docs/coverage.md, β
below 1/3). The shuffle testers add little noise above ε = 1 and their error's tail falls
more slowly there (a hold-out query at ε = (1.87, 6.31), β = 0.012 needed 8.6× the direct
plan): they keep the vote or the tester at ε = 1 and α = 0.5."""

BEYOND_ENTRY = {"eps_strong": "direct_large_eps", "alpha": "direct_large_alpha"}
"""The constants entry of each axis's points beyond the direct points."""

BEYOND_OPTION = {"eps_strong": "large-eps", "alpha": "large-alpha"}
"""The ``planner calibrate --direct`` option that measures them."""

BEYOND_SYMBOL = {"eps_strong": "ε_strong", "alpha": "α"}


def beyond_settings(axis: str) -> tuple[str, ...]:
    """The settings with points beyond the direct points' top on ``axis``."""
    return tuple(DIRECT_BEYOND[axis])


def beyond_axes(setting: str, axis: str) -> dict[str, list[float]]:
    """Points of ``planner calibrate --direct --large-eps`` (``axis`` ε_strong) or
    ``--large-alpha`` (α) for a setting: the direct points' other axes at its
    ``DIRECT_BEYOND`` values."""
    return {**DIRECT_AXES, axis: list(DIRECT_BEYOND[axis][setting])}


def beyond_entry(
    results: Sequence[DirectResult],
    direct: dict[str, Any],
    *,
    axis: str,
    trials: int,
    seed: int,
    axes: dict[str, list[float]],
    created: str,
    code_version: str,
) -> dict[str, Any]:
    """A setting's ``direct_large_eps`` (``axis`` ε_strong) or ``direct_large_alpha`` (α)
    entry: its points' raw factors, how they were made, and the factor table a plan beyond
    the direct points' top on that axis reads: per k and β, the worst over these points
    **and** the direct points (× ``DIRECT_MARGIN``), relative to the direct entry's operating
    factor, which retargets the grid (a larger operating factor among these points raises
    the table by the ratio). So beyond the top no factor is below the one within it."""
    setting = results[0].point.setting
    measured, _ = _recorded_run(setting, direct)
    operating, table = _factor_table([*measured, *results], direct["k"])
    grid_moved = direct.get("operating_factor", [1.0] * len(direct["k"]))
    rescaled = [
        [None if factor is None else factor * moved / used for factor in row]
        for row, moved, used in zip(table, operating, grid_moved, strict=True)
    ]
    option = f"--direct --{BEYOND_OPTION[axis]}"
    return {
        "beta": list(DIRECT_BETAS[1:]),
        "k": [int(k) for k in direct["k"]],
        "factor": rescaled,
        "margin": DIRECT_MARGIN,
        "criterion": (
            "per k: the worst over these points and the direct entry's of one run's C at "
            "every family's observed error ≤ operating_error(β), over its C where the grid is "
            f"retargeted (the direct entry's operating factor) × margin; read above the direct "
            f"points' {BEYOND_SYMBOL[axis]}, up to these points' largest"
        ),
        **run_record(results, option, trials, seed, axes, created, code_version),
    }


def rebuilt_beyond_entry(
    setting: str, entry: dict[str, Any], direct: dict[str, Any], axis: str
) -> dict[str, Any]:
    """A ``direct_large_eps`` or ``direct_large_alpha`` entry re-derived from its own raw
    factors, the direct entry's and today's margin; its provenance is kept."""
    rows, recorded = _recorded_run(setting, entry)
    rebuilt = beyond_entry(rows, direct, axis=axis, **recorded)
    return {**rebuilt, "provenance": entry["provenance"]}


def small_eps_axes(setting: str) -> dict[str, list[float]]:
    """Points of ``planner calibrate --direct --small-eps`` for a setting: k of the direct
    points, every α node of its ``direct_by_node`` tables, its ``DIRECT_SMALL_EPS`` values
    and the direct points' ratios."""
    return {
        "k": list(DIRECT_AXES["k"]),
        "alpha": [*BELOW_ALPHA_MIN_AXES["alpha"], *DIRECT_AXES["alpha"]],
        "eps_strong": list(DIRECT_SMALL_EPS[setting]),
        "eps_ratio": list(DIRECT_AXES["eps_ratio"]),
    }


def by_node_entry(
    results: Sequence[DirectResult],
    direct: dict[str, Any],
    *,
    trials: int,
    seed: int,
    axes: dict[str, list[float]],
    created: str,
    code_version: str,
    small_eps: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A setting's ``direct_by_node`` entry: a factor table like ``direct``'s (per k and
    β < 1/3) per node (α, ε_strong), over this run's points (``axes``, below the
    ``direct`` points' α), the ``direct`` points and those of a ``direct_small_eps``
    entry (``small_eps``, where the setting has one) together. The α nodes are this run's
    followed by the ``direct`` points', the ε nodes those of any of them.

    The table at (α, ε) is the worst over the points at α or any larger α node and at ε or
    any smaller ε node, so the tables never rise with α and never fall with ε, the ways
    the measured shuffle factor goes (``docs/coverage.md``, β below 1/3); for a setting in
    ``EPS_NODE_OWN_POINTS`` (central, whose factor at k = 16 rises both ways from its least near
    ε_strong = 0.05) the points at ε itself instead of ε and below; a query's factor is
    interpolated log-log between the nodes around it (``SettingConstant.direct_factor``).
    At the last ε node and the ``direct`` points' first α node it is the ``direct`` table
    (pooling smaller ε nodes; with the own node's points only, a part of it).

    Each value is ``DIRECT_MARGIN`` × the worst raw factor ÷ the ``direct`` entry's
    operating factor at that k (the grid's C is retargeted by that one, not by these
    points'); for a grid fitted at the operating point, the points' own ratios, as in
    ``direct_entry``. None wherever the ``direct`` table is None (this entry never adds a
    β the ``direct`` points leave to the vote), and for a β (and every smaller one) where
    a point has none, at every k.
    """
    setting = results[0].point.setting
    if [int(k) for k in axes["k"]] != [int(k) for k in direct["k"]]:
        raise ValueError("the points' k must be the direct entry's k rows")
    below = sorted(float(value) for value in axes["alpha"])
    above = sorted(float(value) for value in direct["axes"]["alpha"])
    if below[-1] >= above[0]:
        raise ValueError("the points' α must be below the direct entry's")
    direct_results, _ = _recorded_run(setting, direct)
    small_eps_results = _recorded_run(setting, small_eps)[0] if small_eps else []
    if {r.point.alpha for r in small_eps_results} - set(below + above):
        raise ValueError("the small-ε points' α must be the entry's α nodes")
    pooled = [*direct_results, *results, *small_eps_results]
    eps_nodes = sorted({float(result.point.eps_strong) for result in pooled})
    tables = [
        [_node_table(pooled, direct, alpha, eps_strong) for eps_strong in eps_nodes]
        for alpha in below + above
    ]
    return {
        "alpha": below + above,
        "eps_strong": eps_nodes,
        "beta": list(direct["beta"]),
        "k": [int(k) for k in axes["k"]],
        "factor": tables,
        "margin": DIRECT_MARGIN,
        "criterion": (
            "per node (α, ε_strong): the worst over the points at that α or a larger node "
            + (
                "and at that ε_strong node"
                if setting in EPS_NODE_OWN_POINTS
                else "and that ε_strong or a smaller node"
            )
            + " of one run's C at every family's observed error ≤ operating_error(β), "
            "divided by "
            + (
                "its C at operating_error(1/3) at the same point"
                if setting in GRID_AT_OPERATING_POINT
                else f"its C at {CALIBRATION_TARGET} and by the direct entry's operating factor"
            )
            + ", × margin; none where the direct entry has none; interpolated log-log "
            "between nodes"
        ),
        **run_record(
            results, "--direct --below-alpha-min", trials, seed, axes, created, code_version
        ),
    }


def _node_table(
    results: Sequence[DirectResult], direct: dict[str, Any], alpha: float, eps_strong: float
) -> list[list[float | None]]:
    """One node's factor table for ``by_node_entry``: over the points at α and above and
    at ε_strong and below (at ε_strong itself for ``EPS_NODE_OWN_POINTS``), rescaled to
    the ``direct`` entry's operating factor; None where the ``direct`` table is None."""
    own_eps_only = results[0].point.setting in EPS_NODE_OWN_POINTS
    chosen = [
        result
        for result in results
        if result.point.alpha >= alpha
        and (
            result.point.eps_strong == eps_strong
            if own_eps_only
            else result.point.eps_strong <= eps_strong
        )
    ]
    own_factors, own_table = _factor_table(chosen, direct["k"])
    table = []
    for own, kept, row, above in zip(
        own_factors, direct["operating_factor"], own_table, direct["factor"], strict=True
    ):
        # the same scale (the node over every direct point): that table, to the last bit
        rescaled = row if own == kept else [None if v is None else v * own / kept for v in row]
        table.append(
            [
                None if value is None or floor is None else value
                for value, floor in zip(rescaled, above, strict=True)
            ]
        )
    _vote_below_any_floor(table)
    return table


def rebuilt_by_node_entry(
    setting: str,
    band: dict[str, Any],
    direct: dict[str, Any],
    small_eps: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``direct_by_node`` entry re-derived from its own raw factors, the ``direct``
    entry's, the ``direct_small_eps`` entry's (if any) and today's margins; its
    provenance is kept."""
    rows, recorded = _recorded_run(setting, band)
    rebuilt = by_node_entry(rows, direct, **recorded, small_eps=small_eps)
    return {**rebuilt, "provenance": band["provenance"]}


def small_eps_entry(
    results: Sequence[DirectResult],
    *,
    trials: int,
    seed: int,
    axes: dict[str, list[float]],
    created: str,
    code_version: str,
) -> dict[str, Any]:
    """A setting's ``direct_small_eps`` entry: the raw factors of ``planner calibrate
    --direct --small-eps`` (``small_eps_axes``) and how they were made; the
    ``direct_by_node`` tables take them in as their smallest ε_strong node."""
    return run_record(results, "--direct --small-eps", trials, seed, axes, created, code_version)


def run_record(
    results: Sequence[DirectResult],
    flags: str,
    trials: int,
    seed: int,
    axes: dict[str, list[float]],
    created: str,
    code_version: str,
) -> dict[str, Any]:
    """What a direct run keeps in its entry to be re-derived from (``_recorded_run``):
    its axes, β values, raw factors in grid order and provenance (``flags`` after
    ``planner calibrate``)."""
    return {
        "axes": {name: list(values) for name, values in axes.items()},
        "raw_betas": list(DIRECT_BETAS),
        "raw_factors": [list(result.factors) for result in results],
        "provenance": direct_provenance(
            results[0].point.setting, flags, trials, seed, created, code_version
        ),
    }


def ratio_of(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator, None when either is unknown."""
    if numerator is None or denominator is None:
        return None
    return numerator / denominator
