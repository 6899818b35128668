"""Calibration: interpolation by hand, determinism across executors, the hold-out check."""

from __future__ import annotations

import numpy as np
import pytest

from planner.calibrate import (
    calibrate,
    constants_document,
    grid_points,
    point_seed,
)
from planner.constants import GRID_AXES, log_multilinear, parse_constant_table
from planner.plan import plan
from planner.validate import validate

QUICK_AXES = {"k": [16, 64], "alpha": [0.3], "eps_strong": [1.0], "eps_ratio": [0.5]}


def test_log_multilinear_by_hand() -> None:
    axis = [1.0, 100.0]
    values = np.array([2.0, 8.0])
    assert log_multilinear([axis], values, [10.0]) == pytest.approx(4.0)  # geometric middle
    assert log_multilinear([axis], values, [1e4]) == pytest.approx(8.0)  # clamped
    assert log_multilinear([axis], values, [0.01]) == pytest.approx(2.0)
    grid = np.array([[1.0, 4.0], [16.0, 64.0]])
    assert log_multilinear([axis, [1.0, 4.0]], grid, [10.0, 2.0]) == pytest.approx(8.0)
    assert log_multilinear([[5.0], axis], np.array([[3.0, 12.0]]), [7.0, 10.0]) == pytest.approx(
        6.0
    )


def test_grid_seeds_depend_on_the_point_not_on_the_order() -> None:
    points = grid_points("central", QUICK_AXES)
    seeds = [point_seed(3, point) for point in points]
    assert seeds == [point_seed(3, point) for point in reversed(points)][::-1]
    assert len(set(seeds)) == len(seeds)


def test_one_worker_and_two_workers_give_identical_constants() -> None:
    settings = ["central", "shuffle-private"]
    serial = calibrate(settings, trials=60, seed=5, axes=QUICK_AXES, workers=1)
    parallel = calibrate(settings, trials=60, seed=5, axes=QUICK_AXES, workers=2)
    assert serial == parallel
    document = constants_document(
        serial, trials=60, seed=5, axes=QUICK_AXES, created="2026-01-01", code_version="test"
    )
    again = constants_document(
        parallel, trials=60, seed=5, axes=QUICK_AXES, created="2026-01-01", code_version="test"
    )
    assert document == again
    table = parse_constant_table(document)
    entry = table.for_setting("central")
    grid = entry.extra["grid"]
    assert list(grid["axes"]) == list(GRID_AXES)
    at_grid_point = entry.multiplier_at(16, 0.3, 1.0, 0.5)
    assert at_grid_point == pytest.approx(grid["safety_margin"] * grid["multipliers"][0])
    assert plan(grid_points("central", QUICK_AXES)[0].query(), table).constant_source.value == (
        "calibrated"
    )


@pytest.mark.slow
def test_hold_out_points_pass_validation_with_the_shipped_constants() -> None:
    """20 random points inside the calibrated range, off the grid: every family passes."""
    from formulas.settings import ALL_SETTINGS, Model, Setting
    from planner.inputs import Query

    rng = np.random.default_rng(20261125)
    failures = []
    for index in range(20):
        setting: Setting = ALL_SETTINGS[index % len(ALL_SETTINGS)]
        k = int(np.exp(rng.uniform(np.log(20), np.log(3000))))
        alpha = float(np.exp(rng.uniform(np.log(0.06), np.log(0.45))))
        eps1 = float(np.exp(rng.uniform(np.log(0.3), np.log(1.0))))
        eps2 = float(eps1 * np.exp(rng.uniform(np.log(0.3), 0.0)))
        delta = float(np.exp(rng.uniform(np.log(1e-9), np.log(1e-4))))
        query = Query(
            setting, k, alpha, eps1, eps2, delta if setting.model is Model.SHUFFLE else None
        )
        report = validate(query, trials=400, seed=1000 + index)
        if not report.passed:
            failures.append((setting.key, k, alpha, eps1, eps2, report.verification))
    assert not failures, failures
