"""A calibration run over every grid point of every setting: the points as tasks on a local
pool or a cluster (:func:`calibrate`), costliest first, and the checkpoint file that lets an
interrupted run continue where it stopped.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from planner.calibration.direct import DIRECT_AXES, DirectResult, _run_direct_point
from planner.calibration.grid import GridPoint, PointResult, _run_point, grid_points
from planner.cluster import map_in_order
from planner.constants import ConstantTable, default_constants
from planner.inputs import InputError
from planner.protocols import PROTOCOLS
from planner.statistics import code_version

POINT_SECONDS: dict[str, dict[int, float]] = {
    protocol.key: protocol.calibration.point_seconds for protocol in PROTOCOLS
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
    measured = POINT_SECONDS[point.setting]
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


def _tester_extras(table: ConstantTable, setting: str) -> dict[str, Any]:
    return table.for_setting(setting).tester_extras if table.has_setting(setting) else {}


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
        # a protocol not yet in the table (its first calibration) runs its tester's defaults
        (point, trials, seed, _tester_extras(table, setting))
        for setting in settings
        for point in grid_points(setting, own_axes.get(setting, grid))
    ]
    run = {"trials": trials, "seed": seed, "direct": direct, "code_version": code_version()}
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
