"""Shuffle model, public coin: a shared hash onto L buckets, then the private-coin Poisson
mechanism and statistic on [L] (Thm ``theo:sdp_public_ns``); L is the bound's exact
integer argmin, raised to a calibrated floor."""

from __future__ import annotations

from functools import partial
from typing import Any

import planner.protocols.shuffle_private as shuffle_private
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.protocols.base import AllocationFamily, CalibrationDesign, Protocol
from planner.protocols.shuffle_private import noise_mu

UPPER_KEY = "shuffle-public-compressed"


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.shuffle_public import shuffle_public_tester

    assert query.delta is not None and L is not None
    mu1 = noise_mu(query.eps1, query.delta, query.accounting)
    mu2 = noise_mu(query.eps2, query.delta, query.accounting)
    return shuffle_public_tester(query.k, query.alpha, mu1, mu2, L, hashes, **parameters)


PROTOCOL = Protocol(
    setting=Setting(Model.SHUFFLE, Coin.PUBLIC),
    title="shuffle, public coin",
    colour="#d68910",
    upper_bound_key=UPPER_KEY,
    display_bound_key="shuffle-public-eps",
    lower_bound_key="lower-shuffle",
    allocation_family=AllocationFamily.NOISE,
    size_run=partial(shuffle_private.shuffle_sizes, upper_key=UPPER_KEY, hashed=True),
    size_run_arrays=partial(shuffle_private.shuffle_sizes_arrays, upper_key=UPPER_KEY, hashed=True),
    messages_per_user_arrays=partial(
        shuffle_private.shuffle_messages_arrays, upper_key=UPPER_KEY, hashed=True
    ),
    build_tester=_tester,
    mechanism=shuffle_private.PROTOCOL.mechanism,
    simulated_bins=shuffle_private.PROTOCOL.simulated_bins,
    private_coin_key=shuffle_private.PROTOCOL.key,
    noise_mu=noise_mu,
    exact_privacy=shuffle_private.exact_privacy,
    size_for_noise=partial(
        shuffle_private.shuffle_sizes_for_noise, upper_key=UPPER_KEY, hashed=True
    ),
    calibration=CalibrationDesign(
        search_range=(0.02, 100.0),
        point_seconds={16: 0.42, 64: 1.2, 256: 2.4, 4096: 16.0},
        grid_axes=shuffle_private.SMALL_EPS_AXES,
        grid_at_operating_point=True,  # its operating factor spreads 0.77-0.95
        direct_by_node=True,
        direct_beyond={"alpha": [0.75, 0.95]},
    ),
)
