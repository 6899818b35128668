"""Central model: a trusted curator adds noise to one bounded-sensitivity statistic
(Thm ``theo:central``); the weaker group is subsampled so that both groups' privacy
holds with one tester (the subsampling lemma, ``formulas/subsampling.py``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from planner.formulas.registry import BOUNDS
from planner.formulas.repetition import PER_RUN_ERROR
from planner.formulas.settings import Coin, Model, Setting
from planner.formulas.subsampling import subsampling_population, subsampling_population_ratio
from planner.inputs import Accounting, Query
from planner.protocols.base import (
    AllocationFamily,
    CalibrationDesign,
    Protocol,
    RunSizes,
    bound_value,
)

BOUND_KEY = "central"


def central_sizes(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
) -> RunSizes:
    """Per-group sizes (``Protocol.size_run``): the bound at ε_strong, and the weaker group
    the population whose subsample of the strong group's size is ε_weak-private."""
    bound = BOUNDS[BOUND_KEY]
    values = {"k": query.k, "alpha": query.alpha, "eps": eps_strong}
    order_strong = bound_value(BOUND_KEY, tuple(values.items()))
    n_strong = math.ceil(multiplier * order_strong)
    ratio = float(subsampling_population_ratio(eps_strong, eps_weak))
    return RunSizes(
        n_strong=n_strong,
        n_weak=subsampling_population(n_strong, eps_strong, eps_weak),
        order_strong=order_strong,
        order_weak=order_strong * ratio,
        bound=bound,
        bound_values=values,
    )


def central_sizes_arrays(
    k: np.ndarray,
    alpha: np.ndarray,
    delta: np.ndarray,
    eps_s: np.ndarray,
    eps_w: np.ndarray,
    multiplier: np.ndarray | None,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
    unit_strong: np.ndarray | None = None,
) -> Any:
    """:func:`central_sizes` elementwise (``Protocol.size_run_arrays``)."""
    if unit_strong is None:
        unit_strong = BOUNDS[BOUND_KEY].evaluate(k=k, alpha=alpha, eps=eps_s)
    if multiplier is None:
        return unit_strong
    n_strong = np.ceil(multiplier * unit_strong)
    return n_strong, subsampling_population(n_strong, eps_s, eps_w)


def thresholds_for_beta(parameters: dict[str, Any], beta: float) -> dict[str, Any]:
    """The file's tester constants (tuned at β = 1/3) for one run that must meet ``beta``.

    Central's threshold constants leave a null error floor (``shifts_for_error``): below
    1/3 they are raised so that the floor falls with the operating error of β.
    """
    if beta >= PER_RUN_ERROR:
        return parameters
    from planner.statistics import operating_error  # scipy: only when validating
    from planner.validators.central import CentralTester, shifts_for_error

    shift_scale, shift_privacy = shifts_for_error(  # the file's, else the class defaults
        float(parameters.get("shift_scale", CentralTester.shift_scale)),
        float(parameters.get("shift_privacy", CentralTester.shift_privacy)),
        operating_error(PER_RUN_ERROR),
        operating_error(beta),
    )
    return {**parameters, "shift_scale": shift_scale, "shift_privacy": shift_privacy}


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.central import CentralTester

    return CentralTester(query.k, query.eps1, query.eps2, **parameters)


def _simulated_bins(k: int) -> int:
    return k


def _mechanism(query: Query, bins: int) -> str:
    bits = max(1, math.ceil(math.log2(query.k)))
    return (
        f"each user gives its item ({bits} bit{'s' if bits > 1 else ''}) to a trusted "
        "curator, who releases one noisy statistic"
    )


PROTOCOL = Protocol(
    setting=Setting(Model.CENTRAL, Coin.PRIVATE),
    title="central",
    colour="#1e8449",
    upper_bound_key=BOUND_KEY,
    display_bound_key=BOUND_KEY,
    lower_bound_key="lower-central",
    allocation_family=AllocationFamily.SUBSAMPLING,
    size_run=central_sizes,
    size_run_arrays=central_sizes_arrays,
    build_tester=_tester,
    mechanism=_mechanism,
    simulated_bins=_simulated_bins,
    thresholds_for_beta=thresholds_for_beta,
    calibration=CalibrationDesign(
        search_range=(0.05, 100.0),
        point_seconds={16: 1.0, 64: 3.4, 256: 9.9, 4096: 120.0},
        # the tester runs at the larger ε on n1 users of each group whatever ε_weak is:
        # one ratio
        grid_axes={
            "k": [4, 16, 256, 4096],
            "alpha": [0.01, 0.05, 0.15, 0.5, 0.95],
            "eps_strong": [0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 1.0, 3.0],
            "eps_ratio": [1.0],
        },
        # its threshold (C1 = 0.7) leaves a null floor near 0.21, too close to 0.26
        grid_at_operating_point=True,
        direct_by_node=True,
        # its factor falls to about ε = 0.05, then rises towards 0.01 (Laplace tail); the
        # nodes below 0.01 follow it (0.0004: its ratio 1/4 is the input floor)
        direct_small_eps=(0.0004, 0.001, 0.01, 0.05),
        eps_node_own_points=True,
        # above the direct points' α = 0.5 a plan at β < 1/3 ran its tester at α = 0.5
        # (at α = 0.95, 3× the users of a run at 0.95): its factors there are measured
        direct_beyond={"alpha": [0.75, 0.95]},
    ),
)
