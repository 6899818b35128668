"""Local model, public coin: a shared hash onto K buckets, then a channel per group (bound
``local-hashed-channels``).

The public coin's seed draws one hash h: [k] → [K] per run; each user reports its bucket
h(x) through its own group's channel over K bins (k-RR or optimized unary encoding, the
least noisy at its ε), and the analyser runs the χ²-weighted two-channel statistic on the
two groups' bucket counts (``validators/local_hashed.py``). Hashing keeps ‖p − q‖²₂'s mean
up to 1 − 1/K while the channels' noise is that of K bins, not k: between ε ≈ 1 and ln k
it needs several times fewer users than a channel per group on [k] (docs/method.md, "A
shared hash, then a channel per group"). K is chosen for the pair of ε
(``formulas.bounds.hashed_buckets``). Where it needs more users than the private-coin
channels (small k, or e^ε of order k), a plan runs those instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from planner.formulas.bounds import channel_bits, hashed_buckets, least_noise_channel
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Accounting, Query
from planner.protocols.base import (
    AllocationFamily,
    CalibrationDesign,
    Protocol,
    RunSizes,
    distinct_rows,
)
from planner.protocols.local_channels import (
    CHANNEL_TITLES,
    paired_sizes,
    paired_sizes_arrays,
    report_cells,
)
from planner.protocols.local_krr import MIN_USERS, thresholds_for_beta

BOUND_KEY = "local-hashed-channels"


def hashed_sizes(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
) -> RunSizes:
    """Each group C·bound(its ε, the other's) users at the pair's K, at least ``MIN_USERS``."""
    buckets = hashed_buckets(query.k, eps_strong, eps_weak)
    shared = (("k", query.k), ("K", buckets), ("alpha", query.alpha))
    return paired_sizes(BOUND_KEY, shared, eps_strong, eps_weak, multiplier)


def hashed_sizes_arrays(
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
    """:func:`hashed_sizes` elementwise (``Protocol.size_run_arrays``): K once per distinct
    (k, ε_strong, ε_weak), as it does not depend on α."""
    columns = np.broadcast_arrays(k, eps_s, eps_w)
    representatives, inverse = distinct_rows(*columns)
    buckets = hashed_buckets(*(column.flat[representatives] for column in columns))
    shared = {"k": k, "K": np.asarray(buckets)[inverse].reshape(columns[0].shape), "alpha": alpha}
    return paired_sizes_arrays(BOUND_KEY, shared, eps_s, eps_w, multiplier, unit_strong)


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.local_hashed import HashedChannelsTester

    buckets = hashed_buckets(query.k, query.eps1, query.eps2)
    return HashedChannelsTester(
        query.k, query.alpha, query.eps1, query.eps2, buckets=buckets, **parameters
    )


def _bins(k: int) -> int:
    return k


def _mechanism(query: Query, bins: int) -> str:
    """The shared hash's buckets, then each group's channel and bits over them."""
    buckets = hashed_buckets(query.k, query.eps1, query.eps2)
    parts = [f"a hash from the shared seed maps each item to one of {buckets} buckets"]
    for group, eps in ((1, query.eps1), (2, query.eps2)):
        key = least_noise_channel(buckets, eps)
        bits = channel_bits(key, buckets)
        parts.append(
            f"group {group}: {CHANNEL_TITLES[key]} of the bucket at ε = {eps:g}, "
            f"{bits} bit{'s' if bits > 1 else ''} a user"
        )
    return "; ".join(parts)


def _report_cells(query: Query) -> tuple[int, int]:
    """Each group's report over the shared hash's buckets (``report_cells``)."""
    buckets = hashed_buckets(query.k, query.eps1, query.eps2)
    return report_cells(buckets, query.eps1, query.eps2)


PROTOCOL = Protocol(
    setting=Setting(Model.LOCAL, Coin.PUBLIC, "hashed"),
    title="local, a shared hash and a channel per group",
    colour="#e7298a",
    upper_bound_key=BOUND_KEY,
    display_bound_key=BOUND_KEY,
    lower_bound_key="lower-local-public",
    allocation_family=AllocationFamily.FIXED,
    sizes_fall_with_eps=True,
    coupled_groups=True,
    min_users=MIN_USERS,
    thresholds_for_beta=thresholds_for_beta,
    private_coin_key="local-private+channels",
    size_run=hashed_sizes,
    size_run_arrays=hashed_sizes_arrays,
    build_tester=_tester,
    mechanism=_mechanism,
    report_cells=_report_cells,
    simulated_bins=_bins,
    calibration=CalibrationDesign(
        search_range=(0.05, 5.0),
        point_seconds={64: 2.0, 512: 4.0, 4096: 20.0},
        grid_axes={
            # from k = 64: below it K = 16 buckets is a quarter of the domain or more, and
            # the private-coin channels need no more users
            "k": [64, 512, 4096],
            "alpha": [0.01, 0.03, 0.2, 0.5, 0.95],  # 0.01: the paper protocols' least α
            "eps_strong": [0.125, 1.0, 5.0, 20.0],
            "eps_ratio": [1 / 32, 0.25, 1.0],
        },
        grid_at_operating_point=True,
    ),
)
