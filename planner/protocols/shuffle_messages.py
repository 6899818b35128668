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

**The public coin** (``shuffle-public+messages``, bound ``curator-hashed``): a hash from
the shared seed maps [k] onto K buckets first, and the protocol runs on the buckets. The
curator's noise is per bin, so K bins cost K·v in the statistic's spread, not k·v, while
hashing keeps ‖p − q‖²₂'s mean up to 1 − 1/K: where the noise dominates (small ε, large
k) it needs fewer users, and every user's share of the noise messages is K/k of the
private coin's. K is the power of 2 with the fewest users in all
(``formulas.bounds.hashed_curator_buckets``, at θ·ε); a public-coin query runs the
private-coin protocol where that needs fewer users.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from planner.formulas.bounds import hashed_curator_buckets
from planner.formulas.correlated_noise import (
    flood_option,
    geometric_ratio,
    noise_messages_per_bin,
)
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Accounting, Query
from planner.protocols.base import (
    AllocationFamily,
    CalibrationDesign,
    Protocol,
    RunSizes,
    distinct_rows,
    per_distinct_pairs,
)
from planner.protocols.local_channels import paired_sizes, paired_sizes_arrays
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
HASHED_BOUND_KEY = "curator-hashed"

HASHED_GRID_AXES: dict[str, list[float]] = {
    "k": [64, 512, 4096],
    "alpha": CURATORS_GRID_AXES["alpha"],
    "eps_strong": [eps / THETA for eps in (1 / 32, 0.125, 1.0, 5.0)],
    "eps_ratio": CURATORS_GRID_AXES["eps_ratio"],
}
"""The public coin's own calibration grid, in its own ε: from k = 64 (below it K = 16
buckets is a quarter of the domain or more, as for ``local-public+hashed``), and ε_strong
up to 5/θ = 6.25: above it the curator's noise is small next to the sampling, whose part
of the statistic's spread a hash onto K ≤ k/2 buckets raises (``formulas.bounds.
hashed_curators``: 1.4× the private coin's users at k = 4,096, α = 0.05, ε = 10), so the
private-coin protocol runs."""


def hashed_buckets_at(k: Any, alpha: Any, eps_strong: Any, eps_weak: Any) -> Any:
    """The public coin's buckets K at a point: ``hashed_curator_buckets`` at θ·ε."""
    return hashed_curator_buckets(k, alpha, THETA * eps_strong, THETA * eps_weak)


def hashed_sizes(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
) -> RunSizes:
    """Each group C·(its ``curator-hashed`` bound at θ·ε) users at the pair's K, at least
    ``MIN_USERS``."""
    buckets = hashed_buckets_at(query.k, query.alpha, eps_strong, eps_weak)
    shared = (("k", query.k), ("K", buckets), ("alpha", query.alpha))
    return paired_sizes(HASHED_BOUND_KEY, shared, THETA * eps_strong, THETA * eps_weak, multiplier)


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
    (k, α, ε_strong, ε_weak)."""
    columns = np.broadcast_arrays(k, alpha, eps_s, eps_w)
    representatives, inverse = distinct_rows(*columns)
    buckets = np.atleast_1d(
        hashed_buckets_at(*(column.flat[representatives] for column in columns))
    )
    shared = {"k": k, "K": buckets[inverse].reshape(columns[0].shape), "alpha": alpha}
    return paired_sizes_arrays(
        HASHED_BOUND_KEY, shared, THETA * eps_s, THETA * eps_w, multiplier, unit_strong
    )


def _buckets(query: Query, hashed: bool) -> int:
    """The bins every user's messages range over: the query's k, or the public coin's K."""
    if not hashed:
        return query.k
    return int(hashed_buckets_at(query.k, query.alpha, query.eps1, query.eps2))


def _tester(hashed: bool) -> Any:
    def build(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
        from planner.validators.shuffle_multi_message import (
            HashedMultiMessageTester,
            MultiMessageChannelsTester,
        )

        assert query.delta is not None
        common = dict(delta=query.delta, theta=THETA, **parameters)
        if hashed:
            return HashedMultiMessageTester(
                query.k,
                query.alpha,
                query.eps1,
                query.eps2,
                buckets=_buckets(query, True),
                **common,
            )
        return MultiMessageChannelsTester(query.k, query.alpha, query.eps1, query.eps2, **common)

    return build


def _group_messages(hashed: bool) -> Any:
    def group_messages(query: Query, eps: float, n_users: int) -> float | None:
        """Expected messages per user of a group of ``n_users`` at ε (and the query's δ):
        1 + bins·(2p/(1 − p) + 2·E F)/n, the bins k or the public coin's K. None where no
        flood of at most ``MAX_FLOOD`` meets (ε, δ) (far below every covered ε)."""
        assert query.delta is not None
        try:
            option = flood_option(eps, query.delta, THETA)
        except ValueError:
            return None
        return option.messages_per_user(n_users, _buckets(query, hashed))

    return group_messages


def _group_messages_arrays(hashed: bool) -> Any:
    def messages_arrays(
        k: np.ndarray,
        alpha: np.ndarray,
        delta: np.ndarray,
        eps1: np.ndarray,
        eps2: np.ndarray,
        n1: np.ndarray,
        n2: np.ndarray,
        accounting: Accounting,
        compression: tuple[int, int],
    ) -> tuple[np.ndarray, np.ndarray]:
        """:func:`_group_messages` elementwise (a sweep's rows): one flood search per
        distinct (ε, δ), which a sweep costs first (``planner.limits
        .check_flood_searches``); NaN where no flood meets it."""
        bins = hashed_buckets_at(k, alpha, eps1, eps2) if hashed else k
        sent = []
        for eps, n in ((eps1, n1), (eps2, n2)):
            eps_column, delta_column = np.broadcast_arrays(eps, delta)
            per_bin = per_distinct_pairs(eps_column, delta_column, _noise_messages_per_bin)
            sent.append(1 + bins * per_bin / n)  # as expected_messages_per_user
        return sent[0], sent[1]

    return messages_arrays


def _noise_messages_per_bin(eps: float, delta: float) -> float:
    """One bin's expected noise messages from a group at (ε, δ): 2p/(1 − p) + 2·E F (NaN
    where no flood meets it)."""
    try:
        option = flood_option(eps, delta, THETA)
    except ValueError:
        return math.nan
    return float(noise_messages_per_bin(option.p, option.flood.mean))


def _mechanism(hashed: bool) -> Any:
    def mechanism(query: Query, bins: int) -> str:
        """What each user sends, in words. The floods are not searched here (a plan's line
        is made for every plan a solve or a sweep weighs): each group's is a function of
        its ε and δ alone, ``formulas.correlated_noise.best_flood(ε_g, δ, p_g)``, negative
        binomial or Poisson, whichever has the smaller mean; the messages per user read
        it."""
        buckets = _buckets(query, hashed)
        bits = 1 + math.ceil(math.log2(buckets))
        ratios = ", ".join(
            f"group {group} {geometric_ratio(eps, THETA):.4g}"
            for group, eps in ((1, query.eps1), (2, query.eps2))
        )
        what = "its item" if not hashed else "its item's bucket"
        hashing = (
            f"a hash from the shared seed maps each item to one of {buckets} buckets; "
            if hashed
            else ""
        )
        where = "bin" if not hashed else "bucket"
        return (
            f"multi-message shuffle: {hashing}each user sends {what} and its shares of every "
            f"{where}'s two-sided geometric noise (ratio {ratios}) and of a cancelling flood "
            f"(the least for each group's ε and δ), {bits} bits a message; the analyser's "
            f"estimate is a curator's histogram at {THETA:g}·ε"
        )

    return mechanism


def _bins(k: int) -> int:
    return k


def _report_cells(hashed: bool) -> Any:
    def report_cells(query: Query) -> tuple[int, int]:
        """What the user path draws per user: three noise shares (two geometric, one
        flood) in each of the bins (k, or the public coin's K)."""
        cells = 3 * _buckets(query, hashed)
        return cells, cells

    return report_cells


def _protocol(coin: Coin) -> Protocol:
    """The protocol of ``coin``: on the k bins (private), or on a shared hash's K buckets
    (public)."""
    hashed = coin is Coin.PUBLIC
    bound = HASHED_BOUND_KEY if hashed else BOUND_KEY
    return Protocol(
        setting=Setting(Model.SHUFFLE, coin, "messages"),
        title=(
            "shuffle, multi-message on a shared hash (a curator's noise)"
            if hashed
            else "shuffle, multi-message (a curator's noise)"
        ),
        colour="#fdb863" if hashed else "#b35806",
        upper_bound_key=bound,
        display_bound_key=bound,
        lower_bound_key="lower-shuffle",  # its model's, as a shuffle query prints it
        allocation_family=AllocationFamily.FIXED,
        sizes_fall_with_eps=True,
        coupled_groups=True,
        users_free_of_delta=True,
        min_users=MIN_USERS,
        thresholds_for_beta=thresholds_for_beta,
        private_coin_key="shuffle-private+messages" if hashed else None,
        size_run=(hashed_sizes if hashed else releases_sizes(Model.CENTRAL, Model.CENTRAL, THETA)),
        size_run_arrays=(
            hashed_sizes_arrays
            if hashed
            else releases_sizes_arrays(Model.CENTRAL, Model.CENTRAL, THETA)
        ),
        build_tester=_tester(hashed),
        mechanism=_mechanism(hashed),
        simulated_bins=_bins,
        messages_per_user=_group_messages(hashed),
        messages_per_user_arrays=_group_messages_arrays(hashed),
        report_cells=_report_cells(hashed),
        calibration=CalibrationDesign(
            search_range=(0.05, 5.0),
            point_seconds=(
                {64: 2.0, 512: 6.0, 4096: 40.0} if hashed else {16: 1.0, 128: 4.0, 1024: 40.0}
            ),
            grid_axes=(
                HASHED_GRID_AXES
                if hashed
                # the source's grid in this protocol's ε (``planner.calibration.derived``)
                else {
                    **CURATORS_GRID_AXES,
                    "eps_strong": [eps / THETA for eps in CURATORS_GRID_AXES["eps_strong"]],
                }
            ),
            grid_at_operating_point=True,
        ),
    )


PROTOCOL = _protocol(Coin.PRIVATE)
"""``shuffle-private+messages``."""
PUBLIC_PROTOCOL = _protocol(Coin.PUBLIC)
"""``shuffle-public+messages``: a shared hash onto K buckets, then the same protocol."""
