"""Central model, a curator's noisy histogram per group (bound ``central-histogram``).

A trusted curator releases each group's histogram with discrete Laplace noise at that
group's ε, and one studentized ℓ2 statistic reads the two releases, each through its own
unbiased estimates (``validators/central_histogram.py``; docs/method.md, "A curator's
histogram per group"). Where the noise is small against the draw (a large ε) it is the
ℓ2 closeness test without privacy, which the paper's central tester is not: a central
query runs it where it needs fewer users in all (``Plan.protocol`` then reads
``central+histogram``). Each group g needs about √k·(1 + √(1 + 2α²v_g√k))/α² users, v_g
the noise's variance at ε_g.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Accounting, Query
from planner.protocols.base import AllocationFamily, CalibrationDesign, Protocol, RunSizes
from planner.protocols.local_channels import paired_sizes, paired_sizes_arrays
from planner.protocols.local_krr import MIN_USERS, thresholds_for_beta

BOUND_KEY = "central-histogram"


def histogram_sizes(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
) -> RunSizes:
    """Each group C·bound(its ε) users, at least ``MIN_USERS``."""
    shared = (("k", query.k), ("alpha", query.alpha))
    return paired_sizes(BOUND_KEY, shared, eps_strong, eps_weak, multiplier)


def histogram_sizes_arrays(
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
    """:func:`histogram_sizes` elementwise (``Protocol.size_run_arrays``)."""
    shared = {"k": k, "alpha": alpha}
    return paired_sizes_arrays(BOUND_KEY, shared, eps_s, eps_w, multiplier, unit_strong)


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.central_histogram import CentralHistogramTester

    return CentralHistogramTester(query.k, query.alpha, query.eps1, query.eps2, **parameters)


def _bins(k: int) -> int:
    return k


def _mechanism(query: Query, bins: int) -> str:
    bits = max(1, math.ceil(math.log2(query.k)))
    return (
        f"each user gives its item ({bits} bit{'s' if bits > 1 else ''}) to a trusted "
        f"curator, who releases each group's histogram with discrete Laplace noise at its "
        f"ε ({query.eps1:g} and {query.eps2:g})"
    )


PROTOCOL = Protocol(
    setting=Setting(Model.CENTRAL, Coin.PRIVATE, "histogram"),
    title="central, a noisy histogram per group",
    colour="#66c2a4",
    upper_bound_key=BOUND_KEY,
    display_bound_key=BOUND_KEY,
    lower_bound_key="lower-central",
    allocation_family=AllocationFamily.FIXED,
    # not ``sizes_fall_with_eps``: its grid's least C per cell runs from 0.45 (ε_strong ≥ 5)
    # to 5 (ε_strong ≤ 1), so its least users at a lower point can be below the row's own
    coupled_groups=True,
    min_users=MIN_USERS,
    thresholds_for_beta=thresholds_for_beta,
    size_run=histogram_sizes,
    size_run_arrays=histogram_sizes_arrays,
    build_tester=_tester,
    mechanism=_mechanism,
    simulated_bins=_bins,
    calibration=CalibrationDesign(
        search_range=(0.05, 5.0),
        point_seconds={16: 5.0, 128: 10.0, 1024: 40.0},
        grid_axes={
            # k from 16 to 1024, as a channel per group (the ℓ2 statistic on two bins misses
            # at α = 0.95 and large ε; k-RR answers small k); a k = 4096 node took 2.5
            # CPU-minutes (α = 0.01, ε_strong = 1/8, ratio 1/32: 10⁸ users in group 2)
            "k": [16, 128, 1024],
            "alpha": [0.01, 0.03, 0.2, 0.5, 0.95],
            # it wins where the noise is small against the draw: ε from 1 up
            "eps_strong": [0.125, 1.0, 5.0, 20.0],
            "eps_ratio": [1 / 32, 0.25, 1.0],
        },
        grid_at_operating_point=True,
    ),
)
