"""The calibration grid: its axes and points, the target and safety margin its C is fitted
at, one point's search (:func:`calibrate_point`), and the grid's C moved to the operating
point and made monotone (:func:`retargeted_multipliers`, :func:`monotone_envelope`).
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.calibration.search import SEARCH_RANGE, smallest_multiplier
from planner.formulas.repetition import PER_RUN_ERROR
from planner.formulas.settings import Setting
from planner.inputs import Accounting, InputError, Query
from planner.plan import run_sizes, strong_order_size
from planner.protocols import PROTOCOLS, protocol_for
from planner.protocols.base import DEFAULT_GRID_AXES
from planner.statistics import operating_error

DEFAULT_AXES = DEFAULT_GRID_AXES
"""Grid axes (see ``planner.constants.GRID_AXES``); δ is fixed at ``GRID_DELTA``."""

SETTING_AXES: dict[str, dict[str, list[float]]] = {
    protocol.key: protocol.calibration.grid_axes for protocol in PROTOCOLS
}
"""Each protocol's grid (``CalibrationDesign.grid_axes``)."""


def default_axes(setting: str) -> dict[str, list[float]]:
    """The grid ``planner calibrate`` fits for a setting."""
    return SETTING_AXES[setting]


GRID_DELTA = 1e-6

CALIBRATION_TARGET = 0.26
"""Observed worst-family error the grid's C is fitted at (the operating point of earlier
versions). Plans do not use it as it is: ``planner calibrate --direct`` measures, with
common random numbers at the same points, how far C moves from it to the operating point
``operating_error(1/3)`` = 0.296 (the *operating factor*, ``direct_entry``), and the grid's
node values are multiplied by that (``retargeted_multipliers``). Where that factor is
nearly the same at every point, refitting every node at the operating point itself would
take the grid's hours again for the same result; the settings where it is not are fitted
there (``GRID_AT_OPERATING_POINT``)."""

GRID_AT_OPERATING_POINT = frozenset(
    protocol.key for protocol in PROTOCOLS if protocol.calibration.grid_at_operating_point
)
"""Settings whose grid is fitted at the operating point ``operating_error(1/3)`` itself,
not at ``CALIBRATION_TARGET`` times the operating factor
(``CalibrationDesign.grid_at_operating_point``). The operating factor is the *worst* of
each k's eight direct points; where it spreads widely across points the worst point's
factor oversizes most nodes, and a node-by-node fit is both cheaper and tighter. Their
direct factors are taken relative to C at the operating point, point by point
(``direct_entry``)."""


def grid_target(setting: str) -> float:
    """The observed worst-family error a setting's grid nodes are fitted at."""
    if setting in GRID_AT_OPERATING_POINT:
        return operating_error(PER_RUN_ERROR)
    return CALIBRATION_TARGET


SAFETY_MARGINS: dict[str, float] = {}

DEFAULT_SAFETY_MARGIN = 1.05
"""Multiplies the interpolated n: covers interpolation and Monte Carlo noise. Chosen on
random off-grid points (validate, 400 trials, fresh seeds). Shuffle and central: 120
points, all passed at 1.05; central (81-point grid, Laplace decision) passed all 120 at
1.0 (median worst error 0.22), so it takes none. Local (pooled statistic) took 1.10 while
plans were held to 0.26 (at 1.05, 3 of 40 points reached 0.29–0.30). Since the grid is
retargeted to 0.296 by the *worst* point's operating factor (local: 0.850–0.888, against
0.67–0.89 over the 16 points), the 56 local plans of the covered hold-outs reached at most
0.81 β (0.27) with 1.10, and the local testers take 1.05 like the shuffle testers. Central
(conditional statistic, grid fitted at the operating point itself) takes 1.05 too: with
no worst-point factor left above its nodes, the margin is all that covers their noise."""


def safety_margin(setting: str) -> float:
    return SAFETY_MARGINS.get(setting, DEFAULT_SAFETY_MARGIN)


GRID_REL_TOL = 0.03
"""Relative precision of the grid's bisection on C."""


@dataclass(frozen=True)
class GridPoint:
    setting: str
    k: int
    alpha: float
    eps_strong: float
    eps_ratio: float

    def query(self) -> Query:

        setting = Setting.from_key(self.setting)
        delta = GRID_DELTA if protocol_for(setting).needs_delta else None
        return Query(
            setting, self.k, self.alpha, self.eps_strong, self.eps_strong * self.eps_ratio, delta
        )


@dataclass(frozen=True)
class PointResult:
    point: GridPoint
    multiplier: float | None
    worst_family: str | None
    n1: int | None
    n2: int | None


def grid_points(setting: str, axes: dict[str, list[float]] | None = None) -> list[GridPoint]:

    axes = axes or default_axes(setting)
    return [
        GridPoint(setting, int(k), float(a), float(e), float(r))
        for k, a, e, r in itertools.product(
            axes["k"], axes["alpha"], axes["eps_strong"], axes["eps_ratio"]
        )
    ]


def point_seed(seed: int, point: GridPoint) -> int:
    """The grid point's seed, from the run seed and the point alone (not the worker)."""

    key = zlib.crc32(repr(point).encode("utf-8"))
    return int(np.random.SeedSequence(seed, spawn_key=(key,)).generate_state(1)[0])


def calibrate_point(
    point: GridPoint,
    trials: int,
    seed: int,
    extra: dict[str, Any],
    families: Sequence[str] | None = None,
) -> PointResult:
    """The smallest passing C at one grid point (a top-level function: picklable).

    ``families``: the instance families every check runs (default all built-in ones); an
    entry's ``provenance.families`` reproduces a fit made before a family was added.

    A node whose search reaches more users than the simulation takes
    (``planner.limits.SIMULATION_N_MAX`` a group) did not pass: it is stored as
    ``never_passed``, with the search's upper end for its C, as a node where no C up to it
    passed. (k-ary randomized response at k = 4096, α = 0.03, ε = 1/32 needs about 10¹⁵
    users a group; a query there runs the Hadamard response, which needs about 10⁻³ of
    that.)"""
    low, high = SEARCH_RANGE[point.setting]
    try:
        search = smallest_multiplier(
            point.query(),
            trials=trials,
            seed=point_seed(seed, point),
            low=low,
            high=high,
            rel_tol=GRID_REL_TOL,
            target=grid_target(point.setting),
            families=families,
            **extra,
        )
    except InputError as error:
        if error.parameter not in ("n1", "n2"):
            raise
        return PointResult(point, None, None, None, None)
    if search.multiplier is None or search.verification is None:
        return PointResult(point, None, None, None, None)
    worst = max(
        (o for o in search.verification.outcomes if o.applicable), key=lambda o: o.error_rate
    )
    multiplier = floor_aware_multiplier(point.query(), search.multiplier, low, high, extra)
    return PointResult(
        point, multiplier, worst.family, search.verification.n1, search.verification.n2
    )


def floor_aware_multiplier(
    query: Query, multiplier: float, low: float, high: float, extra: dict[str, Any]
) -> float:
    """A node's C as stored: the smallest passing C, or where the sizes do not move with C
    (a protocol's least users a group, ``Protocol.min_users``, set them: the search's
    lowest C, or 3 % less, runs the very same sizes), the largest C that runs them.

    Storing the smallest C there would pull the interpolated C of every point near the
    node far below what its neighbours need: k-RR at k = 2, α = 0.95, ε = 8 passed at
    C = 0.31 with its floor of 10 users, so a plan at α = 0.29 between it and the α = 0.15
    node interpolated C ≈ 0.7 and ran 20 users a group, where its tester erred 0.35 (a
    hold-out, 2026-11-28); the channels' k = 16, α = 0.95, ε = 5 node passed at the search's
    lowest C, 0.05, and runs the same 10 users up to C = 0.98. Pure arithmetic: no trial."""
    from planner.calibration.search import table_with
    from planner.plan import plan

    def sizes(value: float) -> tuple[int, int]:
        made = plan(query, table_with(query.setting.key, value, **extra), fallback=False)
        return made.n_users_group1, made.n_users_group2

    ran = sizes(multiplier)
    below = max(low, multiplier * (1.0 - GRID_REL_TOL))
    if multiplier > low and sizes(below) != ran:
        return multiplier  # C decides the sizes here: the search's answer stands
    if sizes(high) == ran:
        return high
    low = multiplier
    for _ in range(60):  # bisection in log C to a relative 1e-12 or so
        middle = math.sqrt(low * high)
        if sizes(middle) == ran:
            low = middle
        else:
            high = middle
    return low


def _run_point(arguments: tuple[GridPoint, int, int, dict[str, Any]]) -> PointResult:
    return calibrate_point(*arguments)


def operating_factor_at(direct: dict[str, Any] | None, k: float) -> float:
    """The direct entry's operating factor at domain size k: log-log between its k rows,
    the nearest row's outside them; 1 without an entry (or an entry without one)."""
    if not direct or "operating_factor" not in direct:
        return 1.0
    rows_k = np.log(np.asarray(direct["k"], dtype=float))
    rows = np.log(np.asarray(direct["operating_factor"], dtype=float))
    return float(np.exp(np.interp(math.log(k), rows_k, rows)))


def retargeted_multipliers(setting: str, entry: dict[str, Any]) -> list[float]:
    """A setting's grid C at the operating point: each node's raw C (fitted at
    ``CALIBRATION_TARGET``) times the operating factor at its k, made monotone
    (:func:`monotone_envelope`). A grid whose ``target`` says it was fitted at the
    operating point (``GRID_AT_OPERATING_POINT``) is only made monotone."""
    grid = entry["grid"]
    axes = grid["axes"]
    # a grid fitted at the operating point itself (``grid_target``) is not moved
    fitted_at = float(grid.get("target", CALIBRATION_TARGET))
    direct = entry.get("direct") if fitted_at == CALIBRATION_TARGET else None
    nodes = itertools.product(axes["k"], axes["alpha"], axes["eps_strong"], axes["eps_ratio"])
    moved = [
        raw * operating_factor_at(direct, float(k))
        for raw, (k, *_) in zip(grid["raw_multipliers"], nodes, strict=True)
    ]
    compression = (int(entry.get("L", 2)), int(entry.get("hashes", 1)))
    return monotone_envelope(setting, axes, moved, compression, entry.get("bound"))


def monotone_envelope(
    setting: str,
    axes: dict[str, list[float]],
    multipliers: Sequence[float],
    compression: tuple[int, int],
    bound_key: str | None = None,
) -> list[float]:
    """The least change to the grid's C that makes n = C·bound monotone across the nodes.

    n never decreases towards harder nodes: larger k, smaller α, smaller ε_strong, larger
    ε_weak/ε_strong (the directions in which the paper's group 1 needs more users); outside
    the shuffle model it is taken constant along ε_weak/ε_strong, except for a protocol
    whose groups' sizes each depend on both ε (``Protocol.coupled_groups``, a channel per
    group), where the total users never fall towards smaller ε_weak/ε_strong. The
    running maximum is taken on n at the nodes and turned back into C; between nodes the
    plan interpolates log n (``planner.plan.calibrated_multiplier``), so it stays monotone.

    In the shuffle model, n2 = (μ_weak/μ_strong)·n1, and that ratio falls as both ε grow at
    a fixed ε_weak/ε_strong (μ ∝ 1/ε² flattens above ε ≈ 1): group 1's share of the users
    grows with ε, so n1 alone may rise along ε_strong while the total falls. Along
    ε_strong the running maximum is therefore taken on the total n1·(1 + μ_weak/μ_strong)
    — a smaller ε never needs fewer users in all — and the steps are repeated until
    neither changes a node.
    """

    protocol = Setting.from_key(setting)
    record = protocol_for(protocol)
    delta = GRID_DELTA if record.needs_delta else None
    shape = [len(axes[name]) for name in axes]
    order = np.empty(shape)
    for index in itertools.product(*(range(size) for size in shape)):
        k, alpha, eps_s, ratio = (axes[name][i] for name, i in zip(axes, index, strict=True))
        order[index] = strong_order_size(
            protocol,
            int(k),
            float(alpha),
            float(eps_s),
            float(eps_s * ratio),
            delta,
            Accounting.EXACT,
            compression,
            bound_key,
        )
    users = np.asarray(multipliers, dtype=float).reshape(shape) * order
    total_per_strong = np.ones(shape)  # n_total / n1 at each node
    both_eps = record.coupled_groups
    if both_eps:
        # each group's size depends on both ε (a channel per group): the total is what must
        # not fall towards harder nodes, and a smaller ε_weak/ε_strong is the harder one
        for index in itertools.product(*(range(size) for size in shape)):
            k, alpha, eps_s, ratio = (axes[name][i] for name, i in zip(axes, index, strict=True))
            point = Query(protocol, int(k), float(alpha), float(eps_s), float(eps_s * ratio), delta)
            sizes = run_sizes(
                point, float(eps_s), float(eps_s * ratio), 1.0, bound_key, Accounting.EXACT
            )
            total_per_strong[index] = 1.0 + sizes.order_weak / sizes.order_strong
    elif record.noise_mu is not None:
        for index in itertools.product(*(range(size) for size in shape)):
            eps_s, ratio = axes["eps_strong"][index[2]], axes["eps_ratio"][index[3]]
            mu_strong = record.noise_mu(float(eps_s), GRID_DELTA, Accounting.EXACT)
            mu_weak = record.noise_mu(float(eps_s * ratio), GRID_DELTA, Accounting.EXACT)
            total_per_strong[index] = 1.0 + mu_weak / mu_strong
    else:
        # local groups are independent and central subsampling is exact: the stronger
        # group's need does not depend on ε_weak, so one value across the ratio axis
        users = np.broadcast_to(users.max(axis=3, keepdims=True), users.shape).copy()
    for _ in range(100):  # each pass only raises nodes; a few passes settle
        before = users
        users = np.maximum.accumulate(users, axis=0)  # k increasing
        users = np.flip(np.maximum.accumulate(np.flip(users, axis=1), axis=1), axis=1)  # α ↓
        total = users * total_per_strong
        total = np.flip(np.maximum.accumulate(np.flip(total, axis=2), axis=2), axis=2)  # ε_s ↓
        if both_eps:  # ε_w/ε_s decreasing, on the total
            total = np.flip(np.maximum.accumulate(np.flip(total, axis=3), axis=3), axis=3)
            users = total / total_per_strong
        else:
            users = total / total_per_strong
            users = np.maximum.accumulate(users, axis=3)  # ε_w/ε_s increasing
        if np.allclose(users, before, rtol=1e-12, atol=0.0):
            break
    return [float(value) for value in (users / order).ravel()]
