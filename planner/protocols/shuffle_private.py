"""Shuffle model, private coin: the distributed Poisson mechanism (Thm ``theo:sdp_ns``).

Each user of group g sends its sample plus Poisson(μ_g/n_g) noise messages per bin; the
group's shuffler hands the analyzer the message counts, and an unequal-sample closeness
statistic tests them (``validators/shuffle_private.py``). μ_g comes from exact accounting
of the Poisson mechanism (``formulas/accounting.py``) or the paper's lemma. The public-coin
protocol (``planner.protocols.shuffle_public``) is this one on a hashed domain, so the
sizing here takes ``hashed``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache, partial
from typing import Any

import numpy as np

from planner.formulas.accounting import epsilon_for_noise, poisson_mu_exact
from planner.formulas.compression import (
    closed_form_L,
    closed_form_L_guess,
    integer_argmin,
    paper_L,
)
from planner.formulas.poisson import poisson_mu_paper
from planner.formulas.registry import BOUNDS
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import Accounting, Query
from planner.protocols.base import (
    DEFAULT_GRID_AXES,
    AllocationFamily,
    CalibrationDesign,
    Compression,
    ComputedOnce,
    Protocol,
    RememberedPairs,
    RunSizes,
    bound_value,
    distinct_rows,
)

SMALL_EPS_AXES: dict[str, list[float]] = {
    **DEFAULT_GRID_AXES,
    "eps_strong": [0.01, 0.03, 0.1, 0.25, 0.5, 1.0, 3.0, 10.0, 20.0],
}
"""The shuffle grids: down to ε_strong = 0.01, where their constants rise (public coin: by
up to 1.5× below 0.25, private coin: up to 1.3×), and up to 20, the accepted top, where
the tester adds little noise and its constant rises again (docs/coverage.md)."""


def noise_mu(eps: float, delta: float, accounting: Accounting) -> float:
    """Per-bin Poisson noise for (ε, δ) under replace-one (docs/method.md), per (ε, δ) once,
    also across a sweep's threads (:data:`_NOISE_MU_ONCE`)."""
    return _NOISE_MU_ONCE(eps, delta, accounting)


def _noise_mu(eps: float, delta: float, accounting: Accounting) -> float:
    if accounting is Accounting.EXACT:
        return poisson_mu_exact(eps, delta)
    return float(poisson_mu_paper(eps, delta))


_NOISE_MU_ONCE = ComputedOnce(_noise_mu, maxsize=16384)


_NOISE_MU_ARRAYS = {
    accounting: RememberedPairs(partial(noise_mu, accounting=accounting))
    for accounting in Accounting
}
""":func:`noise_mu` on arrays of (ε, δ), per accounting."""


def exact_privacy(eps: float, delta: float, accounting: Accounting) -> float:
    """The exact ε that the noise μ(ε, δ) of ``accounting`` buys (``plan.grid_position``)."""
    return epsilon_for_noise(noise_mu(eps, delta, accounting), delta)


def shuffle_sizes(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
    *,
    upper_key: str,
    hashed: bool,
) -> RunSizes:
    """Per-group sizes, shuffle model (``Protocol.size_run``); ``hashed``: public coin."""
    assert query.delta is not None
    mu_strong = noise_mu(eps_strong, query.delta, accounting)
    mu_weak = noise_mu(eps_weak, query.delta, accounting)
    return shuffle_sizes_for_noise(
        query, mu_strong, mu_weak, multiplier, compression, upper_key=upper_key, hashed=hashed
    )


def shuffle_sizes_for_noise(
    query: Query,
    mu_strong: float,
    mu_weak: float,
    multiplier: float,
    compression: tuple[int, int],
    fixed_L: int | None = None,
    *,
    upper_key: str,
    hashed: bool,
) -> RunSizes:
    """Shuffle sizes when the groups' per-bin noise is (μ_strong ≤ μ_weak), n2 = (μ_w/μ_s)·n1.

    ``fixed_L``: the public-coin protocol's L as given (an allocation's member runs the
    plan's own protocol, whose L is the one printed), not the bound's argmin at these μ."""
    bound = BOUNDS[upper_key]
    values: dict[str, Any] = {"k": query.k, "alpha": query.alpha, "mu1": mu_strong, "mu2": mu_weak}
    details = None
    if hashed:
        details = _compression(upper_key, query.k, query.alpha, mu_strong, mu_weak, compression)
        if fixed_L is not None:
            details = replace(details, L=fixed_L)
        values["L"] = details.L
    order_strong = bound_value(upper_key, tuple(values.items()))
    # Both counts are rounded up from the same real value, so n_weak moves smoothly with
    # the privacy levels; equal mixing weights are then restored by raising the noise of
    # whichever group has the smaller μ_g/n_g (``mixing_scale``), as the protocol does.
    n_strong = math.ceil(multiplier * order_strong)
    n_weak = math.ceil(multiplier * order_strong * mu_weak / mu_strong)
    return RunSizes(
        n_strong=n_strong,
        n_weak=n_weak,
        order_strong=order_strong,
        order_weak=order_strong * mu_weak / mu_strong,
        bound=bound,
        bound_values=values,
        mu_strong=mu_strong,
        mu_weak=mu_weak,
        compression=details,
    )


@lru_cache(maxsize=16384)
def _compression(
    bound_key: str,
    k: int,
    alpha: float,
    mu_strong: float,
    mu_weak: float,
    compression: tuple[int, int],
) -> Compression:
    """The public-coin shuffle protocol's L at a point: the bound's exact integer argmin
    over [2, k], raised to the calibrated floor (cached: a plan asks for it ~3 times, a
    report or a batch again for the same query)."""
    bound = BOUNDS[bound_key]
    floor, hashes = min(compression[0], k), compression[1]
    closed_form = closed_form_L(k, alpha, mu_strong, mu_weak)
    argmin = integer_argmin(
        lambda L: bound.evaluate(k=k, alpha=alpha, mu1=mu_strong, mu2=mu_weak, L=L),
        2,
        k,
        guess=closed_form,
    )
    return Compression(
        L=max(floor, argmin),
        L_closed_form=closed_form,
        L_paper=float(paper_L(k, alpha, mu_strong)),
        hashes=hashes,
        L_argmin=argmin,
    )


def shuffle_sizes_arrays(
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
    upper_key: str,
    hashed: bool,
) -> Any:
    """:func:`shuffle_sizes` elementwise (``Protocol.size_run_arrays``): one root-find per
    distinct (ε, δ), one L argmin per distinct point."""
    mu_s, mu_w = (_NOISE_MU_ARRAYS[accounting](eps, delta) for eps in (eps_s, eps_w))
    bound = BOUNDS[upper_key]
    values = {"k": k, "alpha": alpha, "mu1": mu_s, "mu2": mu_w}
    if unit_strong is None:
        if hashed:  # the argmin search once per distinct point
            L = _compressed_domains(k, alpha, mu_s, mu_w, compression, upper_key)
            unit_strong = bound.evaluate(**values, L=L)
        else:
            unit_strong = bound.evaluate(**values)
    if multiplier is None:
        return unit_strong
    return (
        np.ceil(multiplier * unit_strong),
        np.ceil(multiplier * unit_strong * mu_w / mu_s),
    )


def _compressed_domains(
    k: Any, alpha: Any, mu_s: Any, mu_w: Any, compression: tuple[int, int], upper_key: str
) -> np.ndarray:
    """The public coin's L at each point (the bound's exact integer argmin, raised to the
    constant's floor and at most k), elementwise: one search per distinct point, read back
    at its rows (equal points give equal values)."""
    bound = BOUNDS[upper_key]
    columns = np.broadcast_arrays(k, alpha, mu_s, mu_w)
    representatives, inverse = distinct_rows(*columns)
    distinct = {
        name: column.flat[representatives]
        for name, column in zip(("k", "alpha", "mu1", "mu2"), columns, strict=True)
    }
    guess = closed_form_L_guess(distinct["k"], distinct["alpha"], distinct["mu1"], distinct["mu2"])
    argmin = integer_argmin(
        lambda L: bound.evaluate(**distinct, L=L), 2, distinct["k"], guess=guess
    )
    L = np.maximum(np.minimum(compression[0], distinct["k"]), argmin)
    return np.asarray(L)[inverse].reshape(columns[0].shape)


def shuffle_messages_arrays(
    k: np.ndarray,
    alpha: np.ndarray,
    delta: np.ndarray,
    eps1: np.ndarray,
    eps2: np.ndarray,
    n1: np.ndarray,
    n2: np.ndarray,
    accounting: Accounting,
    compression: tuple[int, int],
    *,
    upper_key: str,
    hashed: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Each group's expected messages per user at its tester point, elementwise
    (``Protocol.messages_per_user_arrays``; a sweep's rows): every group's noise is raised
    to s·n_g, s = max_g μ_g/n_g (equal mixing weights), so each user sends
    1 + hashes·bins·s, bins k or the public coin's L (``planner.plan``'s
    ``eager_messages``). ``n1``, ``n2``: one run's users."""
    mu1, mu2 = (_NOISE_MU_ARRAYS[accounting](eps, delta) for eps in (eps1, eps2))
    scale = np.maximum(mu1 / n1, mu2 / n2)
    if hashed:
        strong = eps1 >= eps2
        mu_s, mu_w = np.where(strong, mu1, mu2), np.where(strong, mu2, mu1)
        bins = _compressed_domains(k, alpha, mu_s, mu_w, compression, upper_key)
        sent = 1 + compression[1] * bins * scale
    else:
        sent = 1 + k * scale
    return sent, sent.copy()


def _tester(query: Query, parameters: dict[str, Any], L: int | None, hashes: int) -> Any:
    from planner.validators.shuffle_private import ShufflePrivateTester

    assert query.delta is not None
    mu1 = noise_mu(query.eps1, query.delta, query.accounting)
    mu2 = noise_mu(query.eps2, query.delta, query.accounting)
    return ShufflePrivateTester(query.k, query.alpha, mu1, mu2, **parameters)


def _simulated_bins(k: int) -> int:
    return k


def _mechanism(query: Query, bins: int) -> str:
    bits = max(1, math.ceil(math.log2(bins)))
    return (
        f"each user sends its item and Poisson noise messages to its group's shuffler, "
        f"{bits} bit{'s' if bits > 1 else ''} a message"
    )


PROTOCOL = Protocol(
    setting=Setting(Model.SHUFFLE, Coin.PRIVATE),
    title="shuffle, private coin",
    colour="#c0392b",
    upper_bound_key="shuffle-private",
    display_bound_key="shuffle-private-eps",
    lower_bound_key="lower-shuffle",
    allocation_family=AllocationFamily.NOISE,
    size_run=partial(shuffle_sizes, upper_key="shuffle-private", hashed=False),
    size_run_arrays=partial(shuffle_sizes_arrays, upper_key="shuffle-private", hashed=False),
    messages_per_user_arrays=partial(
        shuffle_messages_arrays, upper_key="shuffle-private", hashed=False
    ),
    build_tester=_tester,
    mechanism=_mechanism,
    simulated_bins=_simulated_bins,
    noise_mu=noise_mu,
    exact_privacy=exact_privacy,
    size_for_noise=partial(shuffle_sizes_for_noise, upper_key="shuffle-private", hashed=False),
    calibration=CalibrationDesign(
        search_range=(0.02, 100.0),
        point_seconds={16: 0.48, 64: 2.5, 256: 9.4, 4096: 120.0},
        grid_axes=SMALL_EPS_AXES,
        direct_by_node=True,
        direct_small_eps=(0.05,),  # its factor falls below ε_strong = 0.25
        direct_beyond={"alpha": [0.75, 0.95]},
    ),
)
