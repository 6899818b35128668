"""Shuffle model, multi-message: correlated noise with a cancelling flood (bound
``curator-beside-curator`` at θ·ε).

Each user of group g sends its item as one message "+x", and for every bin j a share of
two geometric noise counts ("+j" and "−j", ratio p_g = e^{−θε_g/2}) and of a flood F_g
sent with both signs (``validators/shuffle_multi_message.py``; the construction, its
exact (ε, δ) accounting and its trust assumptions: docs/shuffle-multi-message.md). After
the group's shuffle the analyser's estimate N⁺ − N⁻ is the group's histogram plus
discrete Laplace noise of ratio p_g, the flood cancelling exactly: **the release of a
trusted curator at ε = θε_g**. The channels' χ²-weighted statistic reads the two
estimates, so this protocol's tester is ``central+channels``'s at (θε1, θε2) and needs
no calibration of its own: its constant is that grid's, each ε node divided by θ
(``planner.calibration.derived``), and its sizing is that bound at θ·ε.

θ = :data:`THETA` trades users for messages. The estimate's noise variance is about
8/(θε)² where the noise dominates, so users grow like 1/θ there (1.25× the curator's
users at θ = 0.8); the flood that hides the geometric noise's shape grows like
ln(1/δ)/((1 − θ)ε) messages a bin (a negative-binomial flood: ``formulas.
correlated_noise.best_flood``). Each user sends 1 + k·(2p/(1 − p) + 2·E F)/n messages on
average, each of 1 + ⌈log₂ k⌉ bits. A shuffle query runs whichever protocol needs fewer
users (``planner.protocols.other_mechanisms``); ``shuffle-private`` (Poisson noise
messages) stays selectable by name.
"""

from __future__ import annotations

import math
from typing import Any

from planner.formulas.correlated_noise import flood_option, geometric_ratio
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Query
from planner.protocols.base import AllocationFamily, CalibrationDesign, Protocol
from planner.protocols.local_krr import MIN_USERS, thresholds_for_beta
from planner.protocols.mixed_channels import (
    CURATORS_GRID_AXES,
    bound_key,
    releases_sizes,
    releases_sizes_arrays,
)

THETA = 0.8
"""The share of each group's ε spent on the estimate's noise (p = e^{−θε/2}); the rest
buys the flood. At θ = 0.8 the users are 1.1 – 1.27× the curator's at ε (60 random
queries), against 2.5× for ``shuffle-private``; θ = 0.9 would save another 9 % of users
for twice the messages (docs/evidence.md)."""

EPS_WEAK_MIN = 0.15625 / 32
"""The least ε a group runs this protocol at (its covered ``eps_weak``): the least flood
is searched in about 3 s and 0.2 GB there at δ = 10⁻¹⁰ (the Poisson protocol's least
covered δ; a plan there took 6 s and 0.22 GB at δ = 10⁻¹², the least accepted), and
below ε ≈ 0.0013 no flood of mean up to ``MAX_FLOOD`` meets δ = 10⁻¹⁰ at all. It is
the least ε_weak of the grid's first derivation (ε_strong from 0.156, ratio 1/32), kept
when the grid gained ε_strong = 1/32·θ⁻¹ ≈ 0.039: a query whose smaller ε lies below it
runs the Poisson protocol (``shuffle-private``), covered at any ε_weak."""

SOURCE_KEY = "central+channels"
"""The protocol whose calibrated grid this one reads, its ε nodes divided by θ."""

BOUND_KEY = bound_key(Model.CENTRAL, Model.CENTRAL)


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.shuffle_multi_message import MultiMessageChannelsTester

    assert query.delta is not None
    return MultiMessageChannelsTester(
        query.k,
        query.alpha,
        query.eps1,
        query.eps2,
        delta=query.delta,
        theta=THETA,
        **parameters,
    )


def group_messages(query: Query, eps: float, n_users: int) -> float | None:
    """Expected messages per user of a group of ``n_users`` at ε (and the query's δ):
    1 + k·(2p/(1 − p) + 2·E F)/n. None where no flood of at most ``MAX_FLOOD`` meets
    (ε, δ) (far below every covered ε)."""
    assert query.delta is not None
    try:
        option = flood_option(eps, query.delta, THETA)
    except ValueError:
        return None
    return option.messages_per_user(n_users, query.k)


def _mechanism(query: Query, bins: int) -> str:
    """What each user sends, in words. The floods are not searched here (a plan's line is
    made for every plan a solve or a sweep weighs): each group's is a function of its ε
    and δ alone, ``formulas.correlated_noise.best_flood(ε_g, δ, p_g)``, negative binomial
    or Poisson, whichever has the smaller mean; the messages per user read it."""
    bits = 1 + math.ceil(math.log2(query.k))
    ratios = ", ".join(
        f"group {group} {geometric_ratio(eps, THETA):.4g}"
        for group, eps in ((1, query.eps1), (2, query.eps2))
    )
    return (
        "multi-message shuffle: each user sends its item and its shares of every bin's "
        f"two-sided geometric noise (ratio {ratios}) and of a cancelling flood (the least "
        f"for each group's ε and δ), {bits} bits a message; the analyser's estimate is a "
        f"curator's histogram at {THETA:g}·ε"
    )


def _bins(k: int) -> int:
    return k


def _report_cells(query: Query) -> tuple[int, int]:
    """What the user path draws per user: three noise shares (two geometric, one flood)
    in each of the k bins."""
    return 3 * query.k, 3 * query.k


PROTOCOL = Protocol(
    setting=Setting(Model.SHUFFLE, Coin.PRIVATE, "messages"),
    title="shuffle, multi-message (a curator's noise)",
    colour="#b35806",
    upper_bound_key=BOUND_KEY,
    display_bound_key=BOUND_KEY,
    lower_bound_key="lower-shuffle",  # its model's, as a shuffle query prints it
    allocation_family=AllocationFamily.FIXED,
    sizes_fall_with_eps=True,
    coupled_groups=True,
    users_free_of_delta=True,
    min_users=MIN_USERS,
    thresholds_for_beta=thresholds_for_beta,
    size_run=releases_sizes(Model.CENTRAL, Model.CENTRAL, THETA),
    size_run_arrays=releases_sizes_arrays(Model.CENTRAL, Model.CENTRAL, THETA),
    build_tester=_tester,
    mechanism=_mechanism,
    simulated_bins=_bins,
    messages_per_user=group_messages,
    report_cells=_report_cells,
    calibration=CalibrationDesign(
        search_range=(0.05, 5.0),
        point_seconds={16: 1.0, 128: 4.0, 1024: 40.0},
        # the source's grid in this protocol's ε (``planner.calibration.derived``)
        grid_axes={
            **CURATORS_GRID_AXES,
            "eps_strong": [eps / THETA for eps in CURATORS_GRID_AXES["eps_strong"]],
        },
        grid_at_operating_point=True,
    ),
)
"""``shuffle-private+messages``."""
