"""Find the smallest constant C at which the real tester meets the error target.

n(C) is the plan with multiplier C on the setting's bound (C = 1: the ``order`` form),
so the search goes through :func:`planner.plan.plan` itself: what is calibrated is
exactly what is printed. A multiplier *passes* a point when the tester's error is at
most the target on every instance family; the smallest passing C is found by bisection
on log C with common random numbers (the same seed at every C).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from planner.cluster import map_in_order
from planner.constants import (
    TESTER_EXTRAS,
    ConstantSource,
    ConstantTable,
    SettingConstant,
    default_constants,
)
from planner.formulas.repetition import PER_RUN_ERROR
from planner.formulas.search import least_passing
from planner.formulas.settings import Model, Setting
from planner.inputs import Accounting, InputError, Query
from planner.plan import noise_mu, strong_order_size
from planner.testers import parameters_for_beta
from planner.validate import AUTO, trial_schedule, validate
from planner.validators.engine import DEFAULT_CONFIDENCE, Verification
from planner.validators.instances import FAMILIES
from planner.validators.stats import sequentially_passing_error


def table_with(
    setting_key: str, multiplier: float, base: ConstantTable | None = None, **extra: Any
) -> ConstantTable:
    """A copy of the constants with this setting's C (order form) and tester extras.

    A calibrated grid is dropped: the multiplier given here is the one used everywhere; a
    bound override that gives the tester's shape (not the proof's constants) is kept, so
    that calibration and plans multiply the same expression.
    """
    table = base or default_constants()
    entry = table.for_setting(setting_key)
    merged = {name: value for name, value in {**entry.extra, **extra}.items() if name != "grid"}
    shape = None if entry.source is ConstantSource.PROOF else entry.bound  # keep a shape
    changed = SettingConstant(ConstantSource.ORDER, multiplier, shape, entry.note, merged)
    return replace(table, settings={**table.settings, setting_key: changed})


def error_at(
    query: Query,
    table: ConstantTable,
    *,
    trials: int,
    seed: int,
    families: Sequence[str] | None = None,
    target: float | None = None,
    stop_early: bool = False,
) -> Verification:
    """The setting's own protocol (no public→private fallback) checked at ``table``'s C."""
    return validate(
        query,
        trials=trials,
        seed=seed,
        families=families,
        constants=table,
        target=target,
        fallback=False,
        stop_early=stop_early,
    ).verification


def passes(verification: Verification) -> bool:
    """Every family's observed error rate is at most the target (calibration and --exact
    pick targets below β, the operating point, so that ``planner validate --trials auto``
    then certifies the plan)."""
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
    low: float = 1e-3,
    high: float = 1e3,
    rel_tol: float = 0.02,
    families: Sequence[str] | None = None,
    target: float | None = None,
    base: ConstantTable | None = None,
    **extra: Any,
) -> MultiplierSearch:
    """Bisection on log C for the smallest C that passes the query's point.

    ``target`` is the error every family must meet (default: the query's β); the sizes
    come from the query as given (its β also sets majority-vote runs).
    """
    key = query.setting.key

    def check(multiplier: float, stop_early: bool = True) -> Verification:
        return error_at(
            query,
            table_with(key, multiplier, base, **extra),
            trials=trials,
            seed=seed,
            families=families,
            target=target,
            stop_early=stop_early,
        )

    top = check(high, stop_early=False)
    if not passes(top):
        return MultiplierSearch(None, top)
    if passes(check(low)):
        return MultiplierSearch(low, check(low, stop_early=False))
    found = least_passing(lambda multiplier: passes(check(multiplier)), low, high, rel_tol)
    # the winner's full report (a search check may have stopped at a failing family)
    return MultiplierSearch(found, top if found == high else check(found, stop_early=False))


# --- the calibration grid -------------------------------------------------------------

DEFAULT_AXES: dict[str, list[float]] = {
    "k": [16, 256, 4096],
    "alpha": [0.01, 0.05, 0.15, 0.5, 0.95],
    "eps_strong": [0.25, 0.5, 1.0],
    "eps_ratio": [0.25, 0.5, 1.0],
}
"""Grid axes (see ``planner.constants.GRID_AXES``); δ is fixed at ``GRID_DELTA``."""

SMALL_EPS_AXES: dict[str, list[float]] = {
    **DEFAULT_AXES,
    "eps_strong": [0.01, 0.03, 0.1, 0.25, 0.5, 1.0, 3.0, 10.0, 20.0],
}
"""The shuffle grids: down to ε_strong = 0.01, where their constants rise (public coin: by
up to 1.5× below 0.25, private coin: up to 1.3×), and up to 20, the accepted top, where
the tester adds little noise and its constant rises again (docs/coverage.md)."""
SETTING_AXES: dict[str, dict[str, list[float]]] = {
    "shuffle-public": SMALL_EPS_AXES,
    "shuffle-private": SMALL_EPS_AXES,
    "central": {
        "k": [4, 16, 256, 4096],
        "alpha": [0.01, 0.05, 0.15, 0.5, 0.95],
        "eps_strong": [0.01, 0.03, 0.1, 0.25, 1.0, 3.0],
        "eps_ratio": [1.0],
    },
}
"""Each setting's grid, where it differs from ``DEFAULT_AXES``. Central's tester runs at
the larger ε on n1 users of each group whatever ε_weak is, so its grid has one ratio."""


def default_axes(setting: str) -> dict[str, list[float]]:
    """The grid ``planner calibrate`` fits for a setting."""
    return SETTING_AXES.get(setting, DEFAULT_AXES)


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
GRID_AT_OPERATING_POINT = frozenset({"local-public", "shuffle-public", "central"})
"""Settings whose grid is fitted at the operating point ``operating_error(1/3)`` itself,
not at ``CALIBRATION_TARGET`` times the operating factor. The operating factor is the
*worst* of each k's eight direct points; where it spreads widely across points, as for the
public-coin testers (local 0.67–0.89, shuffle 0.77–0.95: one hash makes C noisy), the worst
point's factor oversizes most nodes, and a node-by-node fit is both cheaper and tighter
(their grids take minutes to half an hour). Central's threshold (C1 = 0.7) leaves a null
floor near 0.21 that a fit at 0.26 would sit too close to. Their direct factors are taken
relative to C at the operating point, point by point (``direct_entry``)."""


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


SEARCH_RANGE: dict[str, tuple[float, float]] = {
    "local-private": (0.2, 200.0),
    "local-public": (1.0, 2000.0),
    "shuffle-private": (0.02, 100.0),
    "shuffle-public": (0.02, 100.0),
    "central": (0.05, 100.0),
}


GRID_REL_TOL = 0.03
"""Relative precision of the grid's bisection on C."""
DIRECT_REL_TOL = 0.02
"""Relative precision of each direct-calibration search on C."""


def search_provenance(setting: str, *, rel_tol: float, target: float | None) -> dict[str, Any]:
    """What a calibration's numbers depend on besides trials and seed: the instance
    families, the search's range, precision and target, the simulation path, the commit."""
    return {
        "families": list(FAMILIES),
        "search_range": list(SEARCH_RANGE[setting]),
        "rel_tol": rel_tol,
        "target": target if target is not None else "operating_error(β) per β, see targets",
        "simulation_path": "fast (exact sufficient statistics)",
        "common_random_numbers": "the same seed at every C of a search",
        "git_commit": git_commit(),
    }


def git_commit() -> str:
    """The checkout's commit (with ``+dirty`` when it has uncommitted changes), or
    "unknown" outside a git checkout."""
    import subprocess

    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


@dataclass(frozen=True)
class GridPoint:
    setting: str
    k: int
    alpha: float
    eps_strong: float
    eps_ratio: float

    def query(self) -> Query:

        setting = Setting.from_key(self.setting)
        delta = GRID_DELTA if setting.model is Model.SHUFFLE else None
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
    entry's ``provenance.families`` reproduces a fit made before a family was added."""
    low, high = SEARCH_RANGE[point.setting]
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
    if search.multiplier is None or search.verification is None:
        return PointResult(point, None, None, None, None)
    worst = max(
        (o for o in search.verification.outcomes if o.applicable), key=lambda o: o.error_rate
    )
    return PointResult(
        point, search.multiplier, worst.family, search.verification.n1, search.verification.n2
    )


def _run_point(arguments: tuple[GridPoint, int, int, dict[str, Any]]) -> PointResult:
    return calibrate_point(*arguments)


POINT_SECONDS: dict[str, dict[int, float]] = {
    "central": {16: 1.0, 64: 3.4, 256: 9.9, 4096: 120.0},
    "shuffle-private": {16: 0.48, 64: 2.5, 256: 9.4, 4096: 120.0},
    "local-private": {16: 0.92, 64: 1.4, 256: 4.4, 4096: 60.0},
    "shuffle-public": {16: 0.42, 64: 1.2, 256: 2.4, 4096: 16.0},
    "local-public": {16: 0.24, 64: 0.5, 256: 0.9, 4096: 8.0},
}
"""CPU seconds of one grid point's search at 1000 trials, by setting and domain size k:
measured one point at a time on an idle core at α = 0.25, ε_strong = 1, ratio 0.5 (k ≤ 256)
and from the full calibration's timings (k = 4096, README, Running on a cluster). The fast
path's trial costs about k^0.6 to k^1 depending on the tester, plus a part that does not
grow with k. Used only to start the costliest points first (:func:`point_cost`); no result
depends on it."""


def point_cost(point: GridPoint, trials: int) -> float:
    """A grid point's expected CPU seconds for its search at ``trials`` trials: the
    setting's :data:`POINT_SECONDS` interpolated log-log in k (extrapolated from the
    nearest two sizes), times trials / 1000. Rough (the other axes are ignored): it orders
    tasks, it is not a promise."""
    measured = POINT_SECONDS.get(point.setting, POINT_SECONDS["central"])
    sizes = sorted(measured)
    upper = next((i for i, size in enumerate(sizes) if size >= point.k), len(sizes) - 1)
    upper = min(max(upper, 1), len(sizes) - 1)
    low, high = sizes[upper - 1], sizes[upper]
    slope = math.log(measured[high] / measured[low]) / math.log(high / low)
    seconds = measured[low] * (max(point.k, 1) / low) ** slope
    return seconds * trials / 1000


def task_cost(arguments: tuple[GridPoint, int, int, dict[str, Any]]) -> float:
    """A calibration task's expected CPU seconds (:func:`point_cost` of its point and
    trials): the order :func:`planner.cluster.map_in_order` starts the tasks in."""
    return point_cost(arguments[0], arguments[1])


def calibrate(
    settings: Sequence[str],
    *,
    trials: int = 500,
    seed: int = 0,
    axes: dict[str, list[float]] | None = None,
    axes_by_setting: dict[str, dict[str, list[float]]] | None = None,
    executor: Any = None,
    workers: int = 1,
    base: ConstantTable | None = None,
    progress: Any = None,
    direct: bool = False,
    checkpoint: Path | None = None,
) -> list[Any]:
    """Every grid point of every setting, in grid order (independent of the executor):
    its C (``PointResult``), or with ``direct`` its direct-calibration factors at
    ``DIRECT_BETAS`` (``DirectResult``, on ``DIRECT_AXES`` by default).

    ``executor`` is any ``concurrent.futures.Executor`` (e.g. a Dask client's); by default
    a local process pool with ``workers`` processes (or in-process when workers = 1).
    ``checkpoint``: a JSON-lines file that each finished point is appended to; points it
    already holds for the same run (trials, seed, mode, code version) are not run again,
    so an interrupted run continues where it stopped with the same result.
    ``axes_by_setting``: a setting's own axes, in place of ``axes`` for that setting.
    """
    table = base or default_constants()
    grid = axes or (DIRECT_AXES if direct else None)
    own_axes = axes_by_setting or {}
    tasks = [
        (point, trials, seed, table.for_setting(setting).tester_extras)
        for setting in settings
        for point in grid_points(setting, own_axes.get(setting, grid))
    ]
    run = {"trials": trials, "seed": seed, "direct": direct, "code_version": _code_version()}
    finished: dict[GridPoint, Any] = {}
    if checkpoint is not None:
        finished = read_checkpoint(checkpoint, run)
        _end_cut_line(checkpoint)
    todo = [task for task in tasks if task[0] not in finished]
    if progress is not None:
        for task in tasks:
            if task[0] in finished:
                progress(finished[task[0]])

    def on_result(result: Any) -> None:
        if checkpoint is not None:
            _append_checkpoint(checkpoint, run, result)
        if progress is not None:
            progress(result)

    fresh = iter(
        map_in_order(
            _run_direct_point if direct else _run_point,
            todo,
            executor=executor,
            workers=workers,
            progress=on_result,
            cost=task_cost,
        )
    )
    return [finished[task[0]] if task[0] in finished else next(fresh) for task in tasks]


def _code_version() -> str:
    from planner.validate import code_version

    return code_version()


CHECKPOINT_BYTES_MAX = 64 * 2**20
"""A checkpoint holds one line of about 500 bytes per point: 64 MiB is 10⁵ runs' worth."""


def read_checkpoint(path: Path, run: dict[str, Any]) -> dict[GridPoint, Any]:
    """The results a checkpoint holds for this run, by grid point (none when the file is
    missing, is of another run, or a line is cut short by an interruption)."""
    if not path.exists():
        return {}
    if not path.is_file() or path.stat().st_size > CHECKPOINT_BYTES_MAX:
        why = "not a regular file" if not path.is_file() else "larger than 64 MiB"
        raise InputError("checkpoint", str(path), f"a run's own partial file, or none ({why})")
    results: dict[GridPoint, Any] = {}
    # bytes that are not UTF-8 (a foreign file) spoil their line only, which is run again
    for line in path.read_bytes().decode("utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:  # the last line of a killed run
            continue
        if not isinstance(record, dict) or record.get("run") != run:
            continue
        try:
            point = GridPoint(**record["point"])
            fields = record["result"]
            if "factors" in fields:
                result: Any = DirectResult(point, fields["multiplier"], tuple(fields["factors"]))
            else:
                result = PointResult(
                    point, fields["multiplier"], fields["worst_family"], fields["n1"], fields["n2"]
                )
        except (KeyError, TypeError):  # not a record this code wrote: run the point again
            continue
        results[point] = result
    return results


def _end_cut_line(path: Path) -> None:
    """End a line that an interruption cut short, so that the next record starts anew."""
    if path.exists() and path.stat().st_size > 0:
        with path.open("rb+") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")


def _append_checkpoint(path: Path, run: dict[str, Any], result: Any) -> None:
    fields = {name: value for name, value in asdict(result).items() if name != "point"}
    record = {"run": run, "point": asdict(result.point), "result": fields}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


# --- direct calibration at β < 1/3 (README, β) --------------------------------------

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
The factor falls as k grows, so it is kept per k and plans keep the last row above it."""
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
        factors.append(None if found is None else found / base)
    return DirectResult(point, base, tuple(factors))


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
DIRECT_BY_NODE_SETTINGS = ("shuffle-private", "shuffle-public", "central")
"""The settings whose direct factors are tabled per node (α, ε_strong), ``direct_by_node``:
the shuffle testers, whose factor grows as α falls, and central, whose factor moves with
ε_strong both ways (``docs/coverage.md``, β below 1/3)."""
DIRECT_SMALL_EPS: dict[str, list[float]] = {
    "shuffle-private": [0.05],
    "central": [0.01, 0.05],
}
"""The ε_strong values ``planner calibrate --direct --small-eps`` measures per setting,
below the direct points' 0.25: the shuffle private coin's factor falls there (the public
coin's does not move with ε, so it has none); central's falls to about 0.05, then rises
again towards 0.01 (its noise's Laplace tail), the bottom of its covered region."""
DIRECT_SMALL_EPS_SETTINGS = tuple(DIRECT_SMALL_EPS)
EPS_NODE_OWN_POINTS = frozenset({"central"})
"""Settings whose ``direct_by_node`` table at an ε_strong node is the worst over the points
at that node alone: central's factor is lowest between ε_strong = 0.05 and 0.25 and rises
both ways (k = 16, α = 0.5, β = 0.01: 7.3 at ε_strong = 0.01, 4.8 at 0.25, 4.7 at 1), so
pooling smaller ε nodes would carry the 0.01 points' factor to every ε. The others' node
takes the worst over its ε node and every smaller one, as their factor rises with ε."""


DIRECT_BEYOND: dict[str, dict[str, list[float]]] = {
    "eps_strong": {"local-private": [5.0, 20.0]},
    "alpha": {"local-private": [0.75, 0.95]},
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


def with_direct(setting: str, entry: dict[str, Any], direct: dict[str, Any]) -> dict[str, Any]:
    """A setting's constants entry with a new ``direct`` entry, its grid retargeted and
    its ``direct_by_node``, ``direct_large_eps`` and ``direct_large_alpha`` entries (made
    with the direct table and its points) rebuilt; those measured at other k rows than
    the new entry's (under ``--quick``) are left out, as they cannot be read beside it."""
    changed = {**entry, "direct": direct}
    ks = [int(k) for k in direct["k"]]
    for name in (*BEYOND_ENTRY.values(), "direct_by_node", "direct_small_eps"):
        if name in entry and [int(k) for k in entry[name]["axes"]["k"]] != ks:
            del changed[name]  # measured at other k rows (a --quick run): not carried over
    for axis, name in BEYOND_ENTRY.items():
        if name in changed:
            changed[name] = rebuilt_beyond_entry(setting, entry[name], direct, axis)
    if "direct_by_node" in changed:
        changed["direct_by_node"] = rebuilt_by_node_entry(
            setting, entry["direct_by_node"], direct, changed.get("direct_small_eps")
        )
    if "grid" in entry:
        multipliers = retargeted_multipliers(setting, changed)
        margin = float(entry["grid"]["safety_margin"])
        changed["grid"] = {**entry["grid"], "multipliers": multipliers}
        changed["multiplier"] = margin * max(multipliers)
    return changed


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
    the shuffle model it is taken constant along ε_weak/ε_strong. The
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
    delta = GRID_DELTA if protocol.model is Model.SHUFFLE else None
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
    if protocol.model is Model.SHUFFLE:
        for index in itertools.product(*(range(size) for size in shape)):
            eps_s, ratio = axes["eps_strong"][index[2]], axes["eps_ratio"][index[3]]
            mu_strong = noise_mu(float(eps_s), GRID_DELTA, Accounting.EXACT)
            mu_weak = noise_mu(float(eps_s * ratio), GRID_DELTA, Accounting.EXACT)
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
        users = total / total_per_strong
        users = np.maximum.accumulate(users, axis=3)  # ε_w/ε_s increasing
        if np.allclose(users, before, rtol=1e-12, atol=0.0):
            break
    return [float(value) for value in (users / order).ravel()]


def constants_document(
    results: Sequence[PointResult],
    *,
    trials: int,
    seed: int,
    axes: dict[str, list[float]] | None = None,
    base: ConstantTable | None = None,
    created: str,
    code_version: str,
) -> dict[str, Any]:
    """The constants file: per calibrated setting a grid of C, with provenance (``axes``:
    the grid of every setting; default each setting's own, ``default_axes``)."""

    document = (
        json.loads(resources.files("planner").joinpath("data/constants.json").read_text("utf-8"))
        if base is None
        else None
    )
    settings = dict(document["settings"]) if document else {}
    by_setting: dict[str, list[PointResult]] = {}
    for result in results:
        by_setting.setdefault(result.point.setting, []).append(result)
    for setting, points in by_setting.items():
        setting_axes = axes or default_axes(setting)
        previous = dict(settings.get(setting, {}))
        failed = [p for p in points if p.multiplier is None]
        high = SEARCH_RANGE[setting][1]
        raw = [p.multiplier if p.multiplier is not None else high for p in points]
        # at the operating point: each node's C times the direct entry's operating factor
        multipliers = retargeted_multipliers(
            setting,
            {
                **{
                    name: previous[name]
                    for name in ("L", "hashes", "bound", "direct")
                    if name in previous
                },
                "grid": {
                    "axes": setting_axes,
                    "raw_multipliers": raw,
                    "target": grid_target(setting),
                },
            },
        )
        kept = {
            name: previous[name]
            for name in (
                "bound",
                *TESTER_EXTRAS,
                "direct",
                "direct_alpha_min",
                "direct_by_node",
                "direct_small_eps",
            )
            if name in previous
        }
        # The covered region is a claim about evidence (docs/coverage.md), partly argued
        # beyond the grid: a refit on a grid that spans every earlier node keeps it; any
        # other grid (a --quick run) is covered by its own extent only.
        earlier_axes = previous.get("grid", {}).get("axes", {})
        if all(set(values) <= set(setting_axes[name]) for name, values in earlier_axes.items()):
            kept.update(
                {name: previous[name] for name in ("covered", "covered_note") if name in previous}
            )
        settings[setting] = {
            "source": "calibrated",
            "multiplier": safety_margin(setting) * max(multipliers),
            **kept,
            "note": (
                (
                    "Monte Carlo calibration: smallest C with every family's observed error "
                    f"≤ {grid_target(setting):.4g} (the operating point at β = 1/3) at each "
                    "grid point"
                )
                if setting in GRID_AT_OPERATING_POINT
                else (
                    "Monte Carlo calibration: smallest C with every family's observed error "
                    f"≤ {CALIBRATION_TARGET} at each grid point, times the direct entry's "
                    "operating factor (the operating point at β = 1/3)"
                )
            )
            + f"; plans use the log-space interpolation × {safety_margin(setting)}",
            "provenance": {
                "command": f"planner calibrate --setting {setting} --trials {trials} --seed {seed}",
                "trials_per_family": trials,
                "seed": seed,
                "created": created,
                "code_version": code_version,
                **search_provenance(setting, rel_tol=GRID_REL_TOL, target=grid_target(setting)),
            },
            "grid": {
                "axes": {name: list(values) for name, values in setting_axes.items()},
                "target": grid_target(setting),
                "multipliers": multipliers,
                "raw_multipliers": raw,
                "safety_margin": safety_margin(setting),
                "worst_families": [p.worst_family for p in points],
                "never_passed": [repr(p.point) for p in failed],
            },
        }
    # a run of some settings merged into a file that holds others: the file's provenance is
    # each setting's own (the document-level one would describe only this run)
    partial = set(by_setting) != set(settings)
    # and its history of per-setting refits (provenance.notes) stays with it
    history = (document or {}).get("provenance", {}).get("notes") if partial else None
    command = (
        "per setting: see each setting's provenance.command"
        if partial
        else f"planner calibrate --trials {trials} --seed {seed}"
    )
    return {
        "format": 1,
        "version": content_version(created, settings),
        "created": created,
        "description": (
            "Multipliers C applied to the bound with C = 1 (formulas.registry). "
            "source = calibrated: fitted by Monte Carlo on the real testers; "
            "proof: the paper's proof constants; order: C = 1, not a guarantee."
        ),
        "provenance": {
            "command": command,
            "trials_per_family": "per setting" if partial else trials,
            "seed": seed,
            "criterion": (
                f"observed error ≤ {CALIBRATION_TARGET} on every instance family (a grid "
                "whose target says so: ≤ operating_error(1/3))"
            ),
            "grid_delta": GRID_DELTA,
            "safety_margins": {
                key: safety_margin(key)
                for key, entry in settings.items()
                if entry.get("source") == "calibrated"
            },
            "code_version": code_version,
            "simulation_path": "fast (exact sufficient statistics)",
            **({"notes": history} if history else {}),
        },
        "settings": settings,
        # what else the file says (e.g. tester_tuning: how the testers' free constants
        # were chosen) is kept as it was
        **{
            name: value
            for name, value in (document or {}).items()
            if name not in {"format", "version", "created", "description", "provenance", "settings"}
        },
    }


def content_version(created: str, settings: dict[str, Any]) -> str:
    """A constants file's version: its date and a digest of every setting's entry, so that
    any change to any number (a grid run, a direct run) gives a new version."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8")).hexdigest()
    return f"calibrated-{created}-{digest[:8]}"


OPERATING_TRIALS = 3_200
"""The operating point is set so that ``planner validate --trials auto`` certifies a plan by
this many trials per family (its fifth look) with probability ``OPERATING_PASS_PROBABILITY``.
A later look lets the error sit closer to β (6,400 trials: 0.307 at β = 1/3, about 10 % fewer
users on the local testers) at twice the verification cost; an earlier one costs users
(1,600 trials: 0.281). docs/operating-point.md has the table."""
OPERATING_PASS_PROBABILITY = 0.9


@functools.lru_cache(maxsize=64)
def operating_error(beta: float) -> float:
    """The operating point: the true error every family is held to for a target β.

    It is the largest error at which ``planner validate --trials auto`` (Clopper–Pearson
    bounds at its union-bound level over 8 looks × 12 families) passes by
    ``OPERATING_TRIALS`` trials with probability ``OPERATING_PASS_PROBABILITY``: 0.296 at
    β = 1/3, 0.169 at 0.2, 0.077 at 0.1, 0.034 at 0.05, 0.010 at 0.02, 0.003 at 0.01.
    ``--exact``, the direct factors and the retargeted grid hold the tester to it.
    """
    looks = len(trial_schedule(AUTO, 1, len(FAMILIES)))
    tail = (1 - DEFAULT_CONFIDENCE) / (looks * len(FAMILIES))
    return sequentially_passing_error(beta, OPERATING_TRIALS, tail, OPERATING_PASS_PROBABILITY)


def exact_search(
    query: Query, *, trials: int = 1000, seed: int = 0, base: ConstantTable | None = None
) -> MultiplierSearch:
    """Per-query search: the smallest C (order bound) whose plan passes reliably.

    The tester runs once (no majority vote: for β < 1/3 this is direct calibration at β)
    and every family's observed error must be at most ``operating_error(β)`` — the
    operating point of the grid and the direct factors, at this very query (common random
    numbers across C).
    """
    table = base or default_constants()
    entry = table.for_setting(query.setting.key)
    extra = dict(entry.tester_extras)
    # the one run is held to β: its tester takes the constants plans use for β
    extra["tester"] = parameters_for_beta(query.setting, dict(extra.get("tester", {})), query.beta)
    low, high = SEARCH_RANGE[query.setting.key]
    sizing = replace(query, beta=1 / 3)
    return smallest_multiplier(
        sizing,
        trials=trials,
        seed=seed,
        low=low / 4,
        high=high * 4,
        rel_tol=0.02,
        target=operating_error(query.beta),
        base=table,
        **extra,
    )
