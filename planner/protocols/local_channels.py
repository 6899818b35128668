"""Local model, each group through its own channel (bound ``local-channels``).

Each group reports through the randomizer that suits its own ε: k-ary randomized response
where e^ε is large against k, optimized unary encoding (k bits, Hadamard response's
variance) where it is not (``validators/local_channels.py``, ``best_channel``). The
analyser debiases each group's report counts through its own channel and runs one
studentized statistic on the difference, each bin weighed by its null variance (χ²
weights: a heavy bin's spread does not hide a difference among light ones), whatever the
two channels are (docs/method.md, "One channel per group"). So group 1 at
ε = 8 answers through k-RR while group 2 at ε = 0.5 answers through unary encoding: the
heterogeneity is in the mechanism as well as the sizes. Each group g needs about
√k·√w_g·(√w1 + √w2)/α² users, w_g its channel's per-user noise. It uses no shared
randomness, so it answers both coins.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from planner.formulas.bounds import channel_bits, least_noise_channel
from planner.formulas.registry import BOUNDS
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Accounting, Query
from planner.protocols.base import (
    AllocationFamily,
    CalibrationDesign,
    Protocol,
    RunSizes,
    bound_value,
)
from planner.protocols.local_krr import MIN_USERS, thresholds_for_beta

BOUND_KEY = "local-channels"


def paired_sizes(
    bound_key: str,
    shared: tuple[tuple[str, Any], ...],
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    weak_bound_key: str | None = None,
) -> RunSizes:
    """Each group C·bound(its ε, the other's) users, at least ``MIN_USERS``: a protocol
    whose bound gives group 1's users at (ε1, ε2) with the ``shared`` parameters (k, α,
    …), and group 2's with the two ε exchanged (a channel per group, a shared hash); the
    weaker group's by ``weak_bound_key`` where its release differs (a mixed pair)."""
    strong = (*shared, ("eps1", eps_strong), ("eps2", eps_weak))
    weak = (*shared, ("eps1", eps_weak), ("eps2", eps_strong))
    order_strong = bound_value(bound_key, strong)
    order_weak = bound_value(weak_bound_key or bound_key, weak)
    return RunSizes(
        n_strong=max(MIN_USERS, math.ceil(multiplier * order_strong)),
        n_weak=max(MIN_USERS, math.ceil(multiplier * order_weak)),
        order_strong=order_strong,
        order_weak=order_weak,
        bound=BOUNDS[bound_key],
        bound_values=dict(strong),
    )


def paired_sizes_arrays(
    bound_key: str,
    shared: dict[str, Any],
    eps_s: np.ndarray,
    eps_w: np.ndarray,
    multiplier: np.ndarray | None,
    unit_strong: np.ndarray | None = None,
    weak_bound_key: str | None = None,
) -> Any:
    """:func:`paired_sizes` elementwise: the strong group's C = 1 size when ``multiplier``
    is None, else (n_strong, n_weak)."""
    bound = BOUNDS[bound_key]
    unit = (
        unit_strong if unit_strong is not None else bound.evaluate(**shared, eps1=eps_s, eps2=eps_w)
    )
    if multiplier is None:
        return unit
    weak = BOUNDS[weak_bound_key or bound_key].evaluate(**shared, eps1=eps_w, eps2=eps_s)
    return (
        np.maximum(MIN_USERS, np.ceil(multiplier * unit)),
        np.maximum(MIN_USERS, np.ceil(multiplier * weak)),
    )


def channels_sizes(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
) -> RunSizes:
    """Each group C·bound(its ε, the other's) users, at least ``MIN_USERS``."""
    shared = (("k", query.k), ("alpha", query.alpha))
    return paired_sizes(BOUND_KEY, shared, eps_strong, eps_weak, multiplier)


def channels_sizes_arrays(
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
    """:func:`channels_sizes` elementwise (``Protocol.size_run_arrays``)."""
    shared = {"k": k, "alpha": alpha}
    return paired_sizes_arrays(BOUND_KEY, shared, eps_s, eps_w, multiplier, unit_strong)


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.local_channels import ChannelsTester

    return ChannelsTester(query.k, query.alpha, query.eps1, query.eps2, **parameters)


def _bins(k: int) -> int:
    return k


CHANNEL_TITLES = {
    "k-rr": "k-ary randomized response",
    "oue": "optimized unary encoding",
    "unary": "bit flipping (symmetric unary encoding)",
}
"""Each channel (``formulas.bounds.CHANNEL_NOISES``) in words, as a plan names it."""


def _mechanism(query: Query, bins: int) -> str:
    """Each group's channel and bits, from ``formulas`` alone (a plan imports no
    validator)."""
    parts = []
    for group, eps in ((1, query.eps1), (2, query.eps2)):
        key = least_noise_channel(query.k, eps)
        bits = channel_bits(key, query.k)
        parts.append(
            f"group {group}: {CHANNEL_TITLES[key]} at ε = {eps:g}, "
            f"{bits} bit{'s' if bits > 1 else ''} a user"
        )
    return "; ".join(parts)


def report_cells(bins: int, eps1: float, eps2: float) -> tuple[int, int]:
    """Each group's report over ``bins``: k-RR's one value, or a unary encoding's bits,
    one a bin (``Protocol.report_cells``)."""
    first, second = (
        1 if least_noise_channel(bins, eps) == "k-rr" else bins for eps in (eps1, eps2)
    )
    return first, second


def _report_cells(query: Query) -> tuple[int, int]:
    return report_cells(query.k, query.eps1, query.eps2)


CHANNELS_GRID_AXES: dict[str, list[float]] = {
    # from k = 16: at k = 2 with α = 0.95 and ε ≥ 5 the ℓ2 statistic on two bins missed
    # the target at every C up to 5 (ten-odd users a group); k-RR's χ² statistic
    # (local_krr) answers small k. k = 4096 nodes cost ~8 CPU-minutes each.
    "k": [16, 128, 1024],
    "alpha": [0.01, 0.03, 0.2, 0.5, 0.95],  # 0.01: the paper protocols' least α
    "eps_strong": [0.125, 1.0, 5.0, 20.0],
    "eps_ratio": [1 / 32, 0.25, 1.0],
}
"""The calibration grid of the channels' statistic: the releases' pairs'
(``mixed_channels``: a curator beside a local channel, two curators), and a channel per
group's with more k nodes (:data:`CHANNEL_PER_GROUP_GRID_AXES`)."""

CHANNEL_PER_GROUP_GRID_AXES: dict[str, list[float]] = {
    **CHANNELS_GRID_AXES,
    "k": [16, 32, 64, 128, 256, 512, 1024],
}
"""A channel per group's grid: a plan reads the largest C of its grid cell
(``Protocol.coupled_groups``), and C falls with k (a median 0.59 at k = 16, 0.49 at 128),
so between nodes 8× apart that was up to 1.25× the interpolated C; the k nodes 32, 64,
256 and 512 were added on 2026-12-01 (docs/evidence.md)."""


PROTOCOL = Protocol(
    setting=Setting(Model.LOCAL, Coin.PRIVATE, "channels"),
    title="local, a channel per group",
    colour="#008837",
    upper_bound_key=BOUND_KEY,
    display_bound_key=BOUND_KEY,
    lower_bound_key="lower-local-private",
    allocation_family=AllocationFamily.FIXED,
    sizes_fall_with_eps=True,
    coupled_groups=True,
    min_users=MIN_USERS,
    thresholds_for_beta=thresholds_for_beta,
    size_run=channels_sizes,
    size_run_arrays=channels_sizes_arrays,
    build_tester=_tester,
    mechanism=_mechanism,
    report_cells=_report_cells,
    simulated_bins=_bins,
    calibration=CalibrationDesign(
        search_range=(0.05, 5.0),
        point_seconds={16: 2.0, 128: 8.0, 1024: 90.0},
        grid_axes=CHANNEL_PER_GROUP_GRID_AXES,
        grid_at_operating_point=True,
        # it runs where ε is large: its factors at ε_strong 5 and 20 too (direct_large_eps)
        direct_beyond={"eps_strong": [5.0, 20.0]},
    ),
)
