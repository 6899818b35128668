"""Local model, k-ary randomized response in both groups (bound ``local-krr``).

Every user of both groups reports its value through k-RR at the weaker group's ε, one
message of ⌈log₂ k⌉ bits; the analyser runs a studentized χ²-type two-sample statistic on
the report counts (``validators/local_krr.py``; docs/method.md, "k-RR"). It needs about
k^{2/3}/(aα)^{4/3} + √k/(aα)² users a group, a = (e^ε − 1)/(e^ε + k − 1): far fewer than
the one-bit Hadamard response once e^ε is of order k (low privacy), and at small k. The
plan of a local query runs it when it needs fewer users in all (``Plan.protocol`` then
reads ``local-private+k-rr``); it uses no shared randomness, so it answers both coins.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from planner.formulas.registry import BOUNDS
from planner.formulas.repetition import PER_RUN_ERROR
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Accounting, Query
from planner.protocols.base import (
    AllocationFamily,
    CalibrationDesign,
    Protocol,
    RunSizes,
    bound_value,
)

BOUND_KEY = "local-krr"

MIN_USERS = 10
"""Each group's users in one run are at least this many. Below about ten users the error
is a step function of n (a user more or less moves it by 0.1), which interpolating the
grid between its nodes cannot follow: at k = 3, α = 0.61, ε = 6.7 the interpolated plan
had 4 users a group and its tester erred 0.36 on ``paninski-symmetric`` (0.25 at 5, at
most 0.27 from 5 to 13 users; 20,000 trials). The nodes where so few users suffice are
those at α = 0.95 and ε ≥ 2 with k ≤ 64."""


def krr_sizes(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
) -> RunSizes:
    """Both groups C·bound(k, α, ε_weak) users, at least :data:`MIN_USERS`: they report
    through one channel."""
    point = (("k", query.k), ("alpha", query.alpha), ("eps", eps_weak))
    order = bound_value(BOUND_KEY, point)
    n = max(MIN_USERS, math.ceil(multiplier * order))
    return RunSizes(
        n_strong=n,
        n_weak=n,
        order_strong=order,
        order_weak=order,
        bound=BOUNDS[BOUND_KEY],
        bound_values=dict(point),
    )


def krr_sizes_arrays(
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
    """:func:`krr_sizes` elementwise (``Protocol.size_run_arrays``)."""
    unit = (
        unit_strong
        if unit_strong is not None
        else BOUNDS[BOUND_KEY].evaluate(k=k, alpha=alpha, eps=eps_w)
    )
    if multiplier is None:
        return unit
    n = np.maximum(MIN_USERS, np.ceil(multiplier * unit))
    return n, n.copy()


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.local_krr import KRRTester

    return KRRTester(query.k, query.alpha, query.eps1, query.eps2, **parameters)


NULL_TAIL_PER_BETA = 0.73
"""A run held to error β ≥ 1/3 rejects above the normal (1 − 0.73·β) quantile of its
studentized statistic: at β = 1/3, κ = 0.70 (the constants file's), leaving the misses the
rest of β."""
NULL_SHARE_BELOW_THIRD = 0.5
"""A run held to β < 1/3 rejects above the normal (1 − 0.5·e) quantile, e the error it is
held to (``operating_error(β)``): the null's normal tail takes half of it. The rule above
would leave the null almost all of e (0.073 of 0.077 at β = 0.1), and these statistics'
null tails are heavier than the normal's at a few reports a bin: k-RR's direct search
then found no C up to 20× its own that held the nulls to e below β = 0.2."""


def thresholds_for_beta(parameters: dict[str, Any], beta: float) -> dict[str, Any]:
    """κ raised for a run held to β < 1/3: the statistic's null error is about
    P(N(0, 1) > κ) whatever n is, so only a larger κ lowers it."""
    if beta < PER_RUN_ERROR:
        from planner.statistics import operating_error  # scipy: only when a run needs it

        tail = NULL_SHARE_BELOW_THIRD * operating_error(beta)
    else:
        tail = NULL_TAIL_PER_BETA * beta
    kappa = NormalDist().inv_cdf(1.0 - tail)
    current = float(parameters.get("threshold_sd", kappa))
    return {**parameters, "threshold_sd": max(current, kappa)}


def _bins(k: int) -> int:
    return k


def _mechanism(query: Query, bins: int) -> str:
    bits = max(1, math.ceil(math.log2(query.k)))
    return (
        f"k-ary randomized response at ε = {min(query.eps1, query.eps2):g} in both groups: "
        f"each user sends one report of {bits} bit{'s' if bits > 1 else ''}"
    )


PROTOCOL = Protocol(
    setting=Setting(Model.LOCAL, Coin.PRIVATE, "k-rr"),
    title="local, k-ary randomized response",
    colour="#7b3294",
    upper_bound_key=BOUND_KEY,
    display_bound_key=BOUND_KEY,
    lower_bound_key="lower-local-private",
    allocation_family=AllocationFamily.EQUAL,
    sizes_fall_with_eps=True,
    min_users=MIN_USERS,
    largest_alpha_c_below_k=8,
    weak_eps_only=True,
    noise_matched_above_grid=True,
    thresholds_for_beta=thresholds_for_beta,
    size_run=krr_sizes,
    size_run_arrays=krr_sizes_arrays,
    build_tester=_tester,
    mechanism=_mechanism,
    simulated_bins=_bins,
    calibration=CalibrationDesign(
        search_range=(0.05, 5.0),
        point_seconds={2: 1.0, 8: 1.5, 64: 3.0, 512: 20.0, 4096: 150.0},
        grid_axes={
            # down to k = 2 (a yes/no question: binary randomized response)
            "k": [2, 8, 64, 512, 4096],
            # down to the paper protocols' α = 0.01: without that node a query at α < 0.03
            # and large ε ran the Hadamard response (k = 66,080, α = 0.021, ε = (13.2, 14.2):
            # 1.0·10¹¹ users where central needs 1.3·10⁶). Nodes whose users pass the
            # simulation's 10¹⁵ a group are stored as never passed, C = 5 (k = 4096, α = 0.03,
            # ε = 1/32: 1.2·10¹⁵ at C = 1), where the Hadamard response needs about 10⁻³ of
            # the users
            # 0.5: between 0.15 and 0.95 C falls from 0.47 to 0.17 (k = 4096, ε = 20), and
            # the log-α interpolation fell short in between (a hunt for failing plans: at
            # α = 0.5 its 223 users a group erred 0.337 on ``paninski``, 200,000 trials)
            "alpha": [0.01, 0.03, 0.15, 0.5, 0.95],
            # the tester sees ε_weak only (``weak_eps_only``): no ratio axis
            # 1/32: below 1/8 a small domain had run the Hadamard response on 16 bins, up to
            # 49× the users (k = 2, α = 0.2, ε = 0.1); below 1/32 the node's C is read (C
            # settles as a report turns uniform: the search at ε = 0.01 and 0.001 found the
            # same C within its resolution, docs/evidence.md)
            # 4, 6 and 12: where e^ε passes k (ln k = 4.2 – 8.3 for k = 64 – 4096) C falls from
            # about 0.9 to 0.3, and the log-ε interpolation between 2 and 8 fell short (a
            # hold-out at k = 4025, α = 0.87, ε = 5.6: 13,467 a group where 19,000 are needed)
            "eps_strong": [0.03125, 0.125, 0.5, 2.0, 4.0, 6.0, 8.0, 12.0, 20.0],
            "eps_ratio": [1.0],
        },
        grid_at_operating_point=True,
        # it runs where ε is large: its factors at ε_strong 5 and 20 too (direct_large_eps)
        direct_beyond={"eps_strong": [5.0, 20.0]},
    ),
)
