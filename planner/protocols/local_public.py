"""Local model, public coin: a shared hash onto L buckets, then the private-coin Hadamard
response on [L], with R hashes on disjoint users (Cor. ``theo:ldp_public_ns``)."""

from __future__ import annotations

from functools import partial
from typing import Any

import planner.protocols.local_private as local_private
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.protocols.base import AllocationFamily, CalibrationDesign, Protocol


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.local_public import local_public_tester

    assert L is not None
    return local_public_tester(
        query.k, query.alpha, query.eps1, query.eps2, L, hashes, **parameters
    )


def _simulated_bins(k: int) -> int:
    """Hashing a k-bin pmf per trial."""
    return k


def _mechanism(query: Query, bins: int) -> str:
    return (
        f"a shared hash onto {bins:,} bins, then Hadamard response: each user sends one "
        "bit, randomized at its group's ε"
    )


PROTOCOL = Protocol(
    setting=Setting(Model.LOCAL, Coin.PUBLIC),
    title="local, public coin",
    colour="#7b4fa6",
    upper_bound_key="local-public-compressed",
    display_bound_key="local-public",
    lower_bound_key="lower-local-public",
    allocation_family=AllocationFamily.VARIANCE,
    sizes_fall_with_eps=True,
    variance_weight=local_private.hadamard_variance_weight,
    size_run=partial(local_private.local_sizes, order_key="local-public", hashed=True),
    size_run_arrays=partial(local_private.local_sizes_arrays, order_key="local-public"),
    build_tester=_tester,
    mechanism=_mechanism,
    simulated_bins=_simulated_bins,
    private_coin_key=local_private.PROTOCOL.key,
    calibration=CalibrationDesign(
        search_range=(1.0, 2000.0),
        point_seconds={16: 0.24, 64: 0.5, 256: 0.9, 4096: 8.0},
        grid_at_operating_point=True,  # its operating factor spreads 0.67-0.89
        direct_beyond={"alpha": [0.75, 0.95]},
    ),
)
