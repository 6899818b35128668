"""Local model, private coin: Hadamard response, one bit a user (Thm ``theo:ldp_ns``).

Each user of group g reports whether its sample lies in one Hadamard block, flipped with
probability 1/(e^ε_g + 1); the analyzer's statistic is the product of two independent
halves' debiased block frequencies (``validators/local_private.py``). The public-coin
protocol (``planner.protocols.local_public``) is this one run on a hashed domain, so the
sizing here takes ``hashed``.
"""

from __future__ import annotations

import math
from functools import lru_cache, partial
from typing import Any

import numpy as np

from planner.formulas.hadamard import debias_factor, hadamard_order
from planner.formulas.registry import BOUNDS
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Accounting, Query
from planner.protocols.base import (
    AllocationFamily,
    CalibrationDesign,
    Compression,
    Protocol,
    RunSizes,
    bound_value,
)


def local_sizes(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
    *,
    order_key: str,
    hashed: bool,
) -> RunSizes:
    """Per-group sizes, local model; ``hashed`` (public coin) hashes onto ``compression =
    (L, R)``.

    The public-coin number is C·k/(α²ε²) (Cor. ``theo:ldp_public_ns``); the tester's L
    and R are chosen by calibration (the bound's own argmin, L = 2, cannot reach error
    1/3 with one hash, docs/method.md), so L and R live with the constant, not in the bound.
    """
    details = None
    if hashed:
        details = _local_compression(min(compression[0], query.k), compression[1])
    shaped_strong, shaped_weak, order_strong, order_weak = _local_values(
        order_key, bound_key or order_key, query.k, query.alpha, eps_strong, eps_weak
    )
    return RunSizes(
        n_strong=math.ceil(multiplier * shaped_strong),
        n_weak=math.ceil(multiplier * shaped_weak),
        order_strong=order_strong,
        order_weak=order_weak,
        bound=BOUNDS[order_key],
        bound_values={"k": query.k, "alpha": query.alpha, "eps": eps_strong},
        compression=details,
        shaped_strong=shaped_strong,
    )


@lru_cache(maxsize=256)
def _local_compression(L: int, hashes: int) -> Compression:
    """The local public-coin protocol's compression: L and R from calibration."""
    return Compression(L=L, L_closed_form=2.0, L_paper=2.0, hashes=hashes, L_argmin=2)


@lru_cache(maxsize=16384)
def _local_values(
    order_key: str, bound_key: str, k: int, alpha: float, eps_strong: float, eps_weak: float
) -> tuple[float, float, float, float]:
    """The local model's C = 1 sizes at a point, per group: under the bound the multiplier
    applies to (``bound_key``) and under the order bound (``order_key``), cached per point."""
    bound = BOUNDS[bound_key]
    shaped = []
    for eps in (eps_strong, eps_weak):
        values: dict[str, Any] = {"alpha": alpha, "eps": eps}
        if "K" in bound.parameters:
            values["K"] = hadamard_order(k)
        if "k" in bound.parameters:
            values["k"] = k
        shaped.append(bound_value(bound.key, tuple(values.items())))
    order = [
        bound_value(order_key, (("k", k), ("alpha", alpha), ("eps", eps)))
        for eps in (eps_strong, eps_weak)
    ]
    return shaped[0], shaped[1], order[0], order[1]


def local_sizes_arrays(
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
    *,
    order_key: str,
) -> Any:
    """:func:`local_sizes` elementwise (``Protocol.size_run_arrays``)."""
    order_bound = BOUNDS[order_key]
    bound = BOUNDS[bound_key] if bound_key else order_bound
    shaped = []
    wanted = (eps_s, eps_w) if multiplier is not None else (eps_s,)
    for eps in wanted[1:] if unit_strong is not None else wanted:
        values: dict[str, Any] = {"alpha": alpha, "eps": eps}
        if "K" in bound.parameters:
            values["K"] = hadamard_order(k)
        if "k" in bound.parameters:
            values["k"] = k
        shaped.append(bound.evaluate(**values))
    if unit_strong is not None:
        shaped.insert(0, unit_strong)
    if multiplier is None:
        return shaped[0]
    return np.ceil(multiplier * shaped[0]), np.ceil(multiplier * shaped[1])


def hadamard_variance_weight(k: int, eps: float) -> float:
    """γ_g = (e^ε + 1)/(e^ε − 1): the Hadamard tester's null variance per block is
    Σ_g γ_g²/(4 m_g) (``theo:l2_mean_flip``)."""
    return float(debias_factor(eps))


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.local_private import LocalPrivateTester

    return LocalPrivateTester(query.k, query.alpha, query.eps1, query.eps2, **parameters)


def _mechanism(query: Query, bins: int) -> str:
    return "Hadamard response: each user sends one bit, randomized at its group's ε"


PROTOCOL = Protocol(
    setting=Setting(Model.LOCAL, Coin.PRIVATE),
    title="local, private coin",
    colour="#1b6ca8",
    upper_bound_key="local-private",
    display_bound_key="local-private",
    lower_bound_key="lower-local-private",
    allocation_family=AllocationFamily.VARIANCE,
    sizes_fall_with_eps=True,
    variance_weight=hadamard_variance_weight,
    size_run=partial(local_sizes, order_key="local-private", hashed=False),
    size_run_arrays=partial(local_sizes_arrays, order_key="local-private"),
    build_tester=_tester,
    mechanism=_mechanism,
    simulated_bins=hadamard_order,
    proof_bound=("local-private-proof", "appendix proof of theo:l2_mean_flip"),
    calibration=CalibrationDesign(
        search_range=(0.2, 200.0),
        point_seconds={16: 0.92, 64: 1.4, 256: 4.4, 4096: 60.0},
        # the statistic sums every user's randomized report at any ε and α: one directly
        # calibrated run up to the covered ε of 20 and α of 0.95 (docs/coverage.md)
        direct_beyond={"eps_strong": [5.0, 20.0], "alpha": [0.75, 0.95]},
    ),
)
