"""How many users per group: the plan for one query.

The paper states every result for "group 1 = the group with the larger ε"
(w.l.o.g. ε2 ≤ ε1). A :class:`Query` names its groups in either order; here the
group with the larger ε takes the paper's group-1 role (called *strong* below, the
other *weak*), and the answer is reported back per named group.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from planner.constants import (
    ConstantSource,
    ConstantTable,
    GridCorner,
    SettingConstant,
    default_constants,
)
from planner.formulas.registry import BOUNDS
from planner.formulas.repetition import PER_RUN_ERROR, majority_vote_runs
from planner.formulas.settings import Setting
from planner.formulas.subsampling import subsample_size
from planner.inputs import (
    EPS_MAX,
    EPS_MIN,
    Accounting,
    Query,
    apart_texts,
    at_point,
    beta_text,
    check_choice,
    check_query,
    with_setting,
)
from planner.limits import SIMULATION_N_MAX
from planner.protocols import (
    Protocol,
    delta_runs,
    other_mechanisms,
    private_coin_protocol,
    protocol_for,
)
from planner.protocols.base import AllocationFamily, Compression, RunSizes, mixing_scale
from planner.protocols.base import bound_terms as _bound_terms
from planner.protocols.base import bound_value as _bound_value
from planner.protocols.mixed_channels import run_setting

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


@dataclass(frozen=True)
class GroupPlan:
    """The answer for one named group."""

    name: str
    eps: float
    n_users: int
    paper_role: int
    """1 if this group plays the paper's group 1 (larger ε), else 2."""
    noise_mu: float | None
    """Shuffle: per-bin Poisson noise of the group's histogram (≥ the minimum)."""
    noise_mu_minimum: float | None
    """Shuffle: the smallest μ that gives this group (ε_g, δ) under the accounting."""
    eager_messages: float | None
    """Shuffle (Poisson noise): expected messages each user sends, 1 + (bins·μ)/n per run."""
    messages_by: Callable[[], float | None] | None = field(compare=False, repr=False)
    """A multi-message protocol's messages per user, computed when read (its flood's
    search, remembered per (ε, δ), is not paid by the plans a sweep, a solve or an
    allocation only weighs). Not compared: a function of the group's other fields."""
    baseline_n_users: int
    """Users this group needs with the homogeneous protocol at ε = min(ε1, ε2)."""
    lower_bound: float
    """Per-group identity-testing lower bound at ε_g (C = 1)."""
    optimality_gap: float
    """(upper bound with C = 1) / lower bound: a ratio of expressions, not of constants."""

    @property
    def messages_per_user(self) -> float | None:
        """Expected messages each user sends, its own included (None: one report)."""
        if self.messages_by is not None:
            return self.messages_by()
        return self.eager_messages

    @property
    def saving_users(self) -> int:
        """Users saved against the homogeneous baseline (negative: it costs more)."""
        return self.baseline_n_users - self.n_users

    @property
    def saving_fraction(self) -> float:
        return self.saving_users / self.baseline_n_users


class Coverage(StrEnum):
    """Whether a plan's numbers are backed by the real tester (``Plan.coverage``)."""

    CALIBRATED = "calibrated"
    """Inside the region where calibrated plans passed validation on fresh points."""
    SIMULATED = "simulated"
    """Outside it: sized by simulating the real tester at this very query."""
    EXTRAPOLATED = "extrapolated"
    """Outside it and not simulated: the constant is carried past its evidence. Never
    printed as a plan (``planner.coverage.covered_plan`` simulates or refuses)."""
    NONE = "none"
    """The ``order`` or ``proof`` constants, asked for by name: no claim is made."""


class RepetitionMethod(StrEnum):
    NONE = "none"
    """β ≥ 1/3: one run of the tester."""
    MAJORITY_VOTE = "majority-vote"
    """r runs on disjoint users, each at error 1/3; exact binomial r (README, β)."""
    DIRECT = "direct-calibration"
    """One run whose C is calibrated at β itself (README, β)."""
    DIRECT_VOTE = "direct-calibration-vote"
    """r runs on disjoint users, each calibrated directly at a per-run error β_run above β
    (a node of the direct tables); exact binomial r at β_run (README, β). Below the direct
    tables' least β a vote of runs at 1/3 had needed 4–10× the users of the direct plan
    just above it."""


@dataclass(frozen=True)
class Repetition:
    """How the plan meets β, and what the other way would cost."""

    method: RepetitionMethod
    vote_runs: int
    """r(β) of the majority vote (1 when β ≥ 1/3)."""
    direct_factor: float | None
    """Direct calibration's factor at β; None when not calibrated for this β."""
    other_total_users: int | None
    """n1 + n2 by the method not chosen; None when there is no other."""
    direct_unavailable: str | None = None
    """Why direct calibration has no factor for this query (None when it has one)."""
    run_beta: float | None = None
    """``DIRECT_VOTE``: the error each run is calibrated to (a direct node above β)."""
    run_factor: float | None = None
    """``DIRECT_VOTE``: the direct factor at ``run_beta`` (one run's C × it)."""
    direct_vote_runs: int = 1
    """``DIRECT_VOTE``: its runs, r exact binomial at ``run_beta``."""

    @property
    def runs(self) -> int:
        """Tester runs on disjoint users (r for a vote, else 1)."""
        if self.method is RepetitionMethod.MAJORITY_VOTE:
            return self.vote_runs
        if self.method is RepetitionMethod.DIRECT_VOTE:
            return self.direct_vote_runs
        return 1

    @property
    def factor(self) -> float:
        """One run's C is multiplied by this (direct calibration's factor, at β or at a
        vote's ``run_beta``; else 1)."""
        if self.method is RepetitionMethod.DIRECT and self.direct_factor is not None:
            return self.direct_factor
        if self.method is RepetitionMethod.DIRECT_VOTE and self.run_factor is not None:
            return self.run_factor
        return 1.0

    def tester_beta(self, beta: float) -> float:
        """The error one run of the tester is held to, for a query at β: 1/3 in a vote of
        runs at 1/3, ``run_beta`` in a vote of directly calibrated runs, else β."""
        if self.method is RepetitionMethod.MAJORITY_VOTE:
            return PER_RUN_ERROR
        if self.method is RepetitionMethod.DIRECT_VOTE and self.run_beta is not None:
            return self.run_beta
        return beta


class Split(StrEnum):
    """How a plan divides its users between the groups (``plan``)."""

    FEWEST = "fewest"
    """The fewest users in all over the tester points a plan weighs (the default)."""
    PAPER = "paper"
    """The paper's split at the query (n2 = (μ2/μ1)·n1 shuffle, n_g ∝ 1/ε_g² local, the
    subsampling rate central); a lower tester point only where no group needs more."""
    HOMOGENEOUS = "homogeneous"
    """Both groups at the weaker ε: the homogeneous query's own plan (its fewest users),
    which answers the query, as a group run at a smaller ε is still ε-DP. Weighed by the
    allocations (``planner.allocation``), whose families may not reach it."""


@dataclass(frozen=True)
class LoweredPoint:
    """The (ε1, ε2, α) a plan's tester runs at when they are below the query's: a group
    whose mechanism runs at a smaller ε is still ε-DP, and a tester for a smaller α rejects
    every pair farther apart, so the plan answers the query (``plan``). ``k``: the domain
    the tester runs on when it is larger than the query's (None: the query's): a k-bin
    domain is a larger one whose other bins never occur, and total variation is the same
    on both (``padding_domains``)."""

    eps1: float
    eps2: float
    alpha: float
    k: int | None = None
    delta: float | None = None
    """The δ its mechanism spends where that is below the query's (None: the query's): a
    mechanism that is (ε, δ′)-DP is (ε, δ)-DP for every δ ≥ δ′ (:func:`delta_capped`)."""


@dataclass(frozen=True)
class Plan:
    """A plan: the users per group, the protocol that runs and why, for one query."""

    query: Query
    protocol: str
    """Setting key of the protocol that runs (a public-coin ask may run the private one)."""
    groups: tuple[GroupPlan, GroupPlan]
    bound_key: str
    reference: str
    terms: tuple[tuple[str, float], ...]
    """The bound's terms (C = 1) at the planned point, per run."""
    dominant_term: str
    constant_source: ConstantSource
    constant_multiplier: float
    constants_version: str
    repetition: Repetition
    compression: Compression | None
    alternative_accounting: tuple[Accounting, int, int] | None
    """Shuffle: (the other accounting, n1, n2) it would give."""
    warnings: tuple[str, ...]
    coverage: Coverage = Coverage.CALIBRATED
    coverage_gaps: tuple[str, ...] = ()
    """Why a plan is not covered: each covered range its point lies outside of."""
    coverage_axes: tuple[str, ...] = ()
    """The ``planner.constants.COVERAGE_AXES`` names of those ranges."""
    tester_point: LoweredPoint | None = None
    """Where the tester runs when that is below the query (None: at the query itself)."""
    split: Split = Split.FEWEST
    """The rule that chose the tester point, so the split between the groups."""
    mechanism: str = ""
    """What each user runs and sends under the protocol that runs, in words."""
    paper_split_users: tuple[int, int] | None = None
    """(n1, n2) by the paper's split where the default split resized the run by the tester's
    variance (``_split_by_variance``), else None: what ``--exact``, which sizes the paper's
    split, is compared with."""

    @property
    def tester_query(self) -> Query:
        """The query the tester is built for: the protocol that runs, at ``tester_point``
        when there is one (what ``validate`` and the allocations use)."""
        setting = Setting.from_key(self.protocol)
        changed: dict[str, Any] = {"setting": setting, "warnings": ()}
        if not setting.needs_delta:  # a pure ε-DP tester spends no δ the query gave
            changed["delta"] = None
        if self.tester_point is not None:
            point = self.tester_point
            changed |= {"eps1": point.eps1, "eps2": point.eps2, "alpha": point.alpha}
            if point.k is not None:
                changed["k"] = point.k
            if point.delta is not None:
                changed["delta"] = point.delta
        return replace(self.query, **changed)

    @property
    def runs(self) -> int:
        """Tester runs on disjoint users (majority vote; 1 otherwise)."""
        return self.repetition.runs

    @property
    def n_users_group1(self) -> int:
        return self.groups[0].n_users

    @property
    def n_users_group2(self) -> int:
        return self.groups[1].n_users

    @property
    def total_users(self) -> int:
        return self.n_users_group1 + self.n_users_group2


def run_sizes(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    multiplier: float,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int] = (2, 1),
) -> RunSizes:
    """Users per group for one run of the setting's protocol at error 1/3.

    ``compression`` = (L, R): the local public-coin protocol's L and hashes R; for the
    shuffle public-coin protocol, a floor on L (its bound's argmin is used above it) and R.
    """
    return protocol_for(query.setting).size_run(
        query, eps_strong, eps_weak, multiplier, bound_key, accounting, compression
    )


def strong_order_size(
    setting: Setting,
    k: int,
    alpha: float,
    eps_strong: float,
    eps_weak: float,
    delta: float | None,
    accounting: Accounting,
    compression: tuple[int, int],
    bound_key: str | None = None,
) -> float:
    """The strong group's size with C = 1 at a (grid) point: what a node's C multiplies.

    A corner of a point outside the grid takes the point's own ε_strong times a grid
    ratio, which can fall below the accepted ε or, by a rounding bit, above it (ε = 20 ×
    ratio 1 ÷ ratio 1 gave 20.000000000000004, refused as an input): it is held in the
    accepted range (below it, such a plan is outside the covered region anyway, and never
    printed).

    Remembered per point under plain keys (the setting's key, the accounting's value): a
    cache entry that held the ``Setting`` itself would stay a tracked object for the
    garbage collector's every full pass (``_remembered``).
    """
    return _strong_order_size(
        setting.key,
        k,
        alpha,
        eps_strong,
        eps_weak,
        delta,
        str(accounting),
        compression,
        bound_key,
    )


@lru_cache(maxsize=64)
def _setting_of(key: str) -> Setting:
    """``Setting.from_key``, once per key (a handful of protocols)."""
    return Setting.from_key(key)


@lru_cache(maxsize=65536)
def _strong_order_size(
    setting_key: str,
    k: int,
    alpha: float,
    eps_strong: float,
    eps_weak: float,
    delta: float | None,
    accounting_value: str,
    compression: tuple[int, int],
    bound_key: str | None,
) -> float:
    """:func:`strong_order_size` by plain keys."""
    setting, accounting = _setting_of(setting_key), Accounting(accounting_value)
    eps_strong, eps_weak = (min(max(eps, EPS_MIN), EPS_MAX) for eps in (eps_strong, eps_weak))
    point = Query(setting, k, alpha, eps_strong, eps_weak, delta, accounting=accounting)
    return run_sizes(
        point, eps_strong, eps_weak, 1.0, bound_key, accounting, compression
    ).base_strong


def grid_position(
    query: Query,
    eps_strong: float,
    eps_weak: float,
    accounting: Accounting,
    constant: SettingConstant,
) -> tuple[float, float, Accounting]:
    """Where a point sits on the calibration grid (which was fitted with exact accounting).

    The shuffle tester sees only the noise μ: with the lemma's μ at ε, it is the protocol
    that exact accounting gives at the smaller ε′ = the exact privacy of that μ. So a
    ``paper``-accounting plan reads its constant at ε′, not at ε (to 0.1 %: a grid
    position, not a privacy guarantee). A protocol whose tester runs both groups at ε_weak
    (``Protocol.weak_eps_only``) reads it at (ε_weak, ε_weak), and one whose regime is set
    by e^ε/k (``Protocol.noise_matched_above_grid``) above its grid's top k at the ε of the
    same ratio there (:func:`noise_matched_eps`; ``constant``: the grid read); a weaker
    group released from a subsample (``Protocol.weak_release_eps``) at its release's ε.
    """
    protocol = protocol_for(query.setting)
    if protocol.weak_eps_only:
        if protocol.noise_matched_above_grid:
            eps_weak = float(noise_matched_eps(query.k, eps_weak, constant))
        return eps_weak, eps_weak, accounting
    if protocol.weak_release_eps is not None:  # a subsampled curator's release
        weak_is_group2 = query.eps1 >= query.eps2
        released = protocol.weak_release_eps(query.setting, weak_is_group2, eps_strong, eps_weak)
        return eps_strong, released, accounting
    exact_privacy = protocol.exact_privacy
    if exact_privacy is None or accounting is Accounting.EXACT:
        return eps_strong, eps_weak, accounting
    assert query.delta is not None
    strong, weak = (
        max(EPS_MIN, exact_privacy(eps, query.delta, accounting)) for eps in (eps_strong, eps_weak)
    )
    return strong, weak, Accounting.EXACT


def noise_matched_eps(k: Any, eps: Any, constant: SettingConstant) -> Any:
    """ε − ln(k/k_top) above the grid's top k (k_top), floored at the grid's least ε (an ε
    already below it stays: it is not covered); ε itself at or below k_top
    (``Protocol.noise_matched_above_grid``). Scalars or arrays, with numpy's log either
    way (a sweep's rows equal plans)."""
    ks, eps_nodes = constant.grid_axis("k"), constant.grid_axis("eps_strong")
    if not ks or not eps_nodes:
        return eps
    top = float(ks[-1])
    shift = np.log(np.maximum(np.asarray(k, dtype=np.float64), top) / top)
    floor = np.minimum(eps, float(eps_nodes[0]))
    return np.where(shift > 0, np.maximum(eps - shift, floor), eps)


_Remembered = TypeVar("_Remembered")
_MULTIPLIERS: dict[tuple[Any, ...], Any] = {}
_SIZES: dict[tuple[Any, ...], Any] = {}
_GAPS: dict[tuple[Any, ...], Any] = {}
_RUNS: dict[tuple[Any, ...], Any] = {}
_LEAST: dict[tuple[Any, ...], Any] = {}
_CHEAPEST: dict[tuple[Any, ...], Any] = {}
_POINTS: dict[tuple[Any, ...], Any] = {}
"""The points a plan weighs, per query point and grid kinks (``_points_weighed``)."""
_DOMAIN_PLANS: dict[tuple[Any, ...], Any] = {}
"""A domain's assembled plan, per query and domain (``_plan_on_domain``): a covered plan
assembles two (its own domain and a larger one) and ``planner.coverage`` asks for the
own domain's again."""
_LEAST_EPS: dict[tuple[Any, ...], Any] = {}
"""A weak-ε-only protocol's least-users ε below a query's, per point (``least_eps_of``)."""
_MEMORIES = (
    _MULTIPLIERS,
    _SIZES,
    _GAPS,
    _RUNS,
    _LEAST,
    _CHEAPEST,
    _POINTS,
    _DOMAIN_PLANS,
    _LEAST_EPS,
)
_PINNED: dict[int, object] = {}
"""Every constant (or table) a remembered entry's key names by ``id``, kept alive so that
no other object takes its id while the entry stands (``_remembered``)."""
_PINNED_MAX = 64
_REMEMBERED_MAX = 1 << 16
_RUNS_MAX = 1 << 12
"""Sized protocols remembered (``_ProtocolRun.size``): each holds its query and repetition
besides the sizes ``_SIZES`` holds, and a plan sizes a handful."""
_DOMAIN_PLANS_MAX = 16
"""Assembled plans remembered (``_DOMAIN_PLANS``): each is about 50 tracked objects, so the
memory is kept small. A covered plan holds two entries (its own domain and a larger one),
so it serves the last few queries asked again (a page planning as its user types)."""
_SIZES_MAX = 1 << 13
"""Run sizes remembered (``_sizes``): each is a tracked object the garbage collector walks
on every full pass, about seven a distinct plan; this many keep a pass near 15 ms."""


def _remembered(
    memory: dict[tuple[Any, ...], Any],
    constant: object,
    key: tuple[Any, ...],
    make: Callable[[], _Remembered],
    limit: int = _REMEMBERED_MAX,
    also_pinned: tuple[object, ...] = (),
) -> _Remembered:
    """``make()``, remembered in ``memory`` per constant and ``key`` (a point); ``key``
    starts with ``id(constant)``, and ``_PINNED`` keeps the constant alive, so the id names
    it for as long as the entry stands. Past ``limit`` entries the memory starts again;
    past ``_PINNED_MAX`` constants (tests build tables by the hundred) every memory does.

    The garbage collector's view: a full collection walks every tracked object, so a
    service's memories of thousands of distinct plans made each full collection of a
    worker pause 100–300 ms (and longer as they grew). So an entry holds no tracked
    wrapper: the value alone (no (constant, value) pair), under a key of plain numbers and
    strings (settings by ``Setting.key``, accountings by their value), which the collector
    stops tracking after its first pass.

    ``also_pinned``: further objects the key names by ``id`` (a table's constants, when
    ``constant`` is the table)."""
    known = memory.get(key)
    if known is not None:
        return known
    value = make()
    named = (constant, *also_pinned)
    unpinned = [each for each in named if _PINNED.get(id(each)) is not each]
    if unpinned:
        if len(_PINNED) + len(unpinned) > _PINNED_MAX:
            for remembered in _MEMORIES:
                remembered.clear()
            _PINNED.clear()
            unpinned = list(named)
        for pinned in unpinned:
            _PINNED[id(pinned)] = pinned
    if len(memory) >= limit:
        memory.clear()
    memory[key] = value
    return value


def _compression(constant: SettingConstant) -> tuple[int, int]:
    """(L, hashes) of the constant's tester (``SettingConstant.compression``), read each
    time: part of every remembered point's key."""
    return constant.compression()


def _query_values(query: Query) -> tuple[Any, ...]:
    """Every field of ``query`` but its setting and warnings, as a key (``Query`` equality
    without hashing the dataclass)."""
    return (
        query.k,
        query.alpha,
        query.eps1,
        query.eps2,
        query.delta,
        query.beta,
        str(query.accounting),
    )


def _point_key(
    query: Query,
    constant: SettingConstant,
    eps_strong: float,
    eps_weak: float,
    accounting: Accounting,
    compression: tuple[int, int],
) -> tuple[Any, ...]:
    """What a point's remembered multiplier and sizes depend on (with the constant's id)."""
    return (
        id(constant),
        query.setting.key,
        query.k,
        query.alpha,
        query.delta,
        eps_strong,
        eps_weak,
        str(accounting),
        compression,
    )


def calibrated_multiplier(
    query: Query,
    constant: SettingConstant,
    eps_strong: float,
    eps_weak: float,
    accounting: Accounting,
    compression: tuple[int, int],
) -> float:
    """The multiplier that puts this point's n on the grid's geometric interpolation of n
    (:func:`_calibrated_multiplier`), remembered per constant and point: a plan asks for
    it at its point and baseline, a compare, sweep row or batch for the same again."""
    key = _point_key(query, constant, eps_strong, eps_weak, accounting, compression)
    return _remembered(
        _MULTIPLIERS,
        constant,
        key,
        lambda: _calibrated_multiplier(
            query, constant, eps_strong, eps_weak, accounting, compression
        ),
    )


def _calibrated_multiplier(
    query: Query,
    constant: SettingConstant,
    eps_strong: float,
    eps_weak: float,
    accounting: Accounting,
    compression: tuple[int, int],
) -> float:
    """The multiplier that puts this point's n on the grid's geometric interpolation of n.

    Interpolating log n = log(C·bound) between grid nodes (rather than log C, then times
    the bound here) keeps n monotone inside every grid cell once the node values are
    (``planner.calibration.grid.monotone_envelope``): a log-convex bound's curvature cannot make a
    dip. Where the bound is not log-convex (the local tester's k·√K), the interpolated C
    times the bound here is used when larger. Without a grid the scalar constant is used.
    """
    eps_strong, eps_weak, accounting = grid_position(
        query, eps_strong, eps_weak, accounting, constant
    )
    corners = constant.grid_corners(query.k, query.alpha, eps_strong, eps_weak)
    if corners is None:
        return constant.multiplier
    protocol = protocol_for(query.setting)
    if protocol.coupled_groups:
        return max(corner.multiplier for corner in corners if corner.weight > 0)
    if query.k < protocol.largest_alpha_c_below_k:
        corners = _alpha_tail_corners(corners, constant)
    interpolated_constant = math.exp(
        sum(corner.weight * math.log(corner.multiplier) for corner in corners)
    )
    log_n = sum(
        corner.weight
        * math.log(
            corner.multiplier
            * strong_order_size(
                query.setting,
                corner.k,
                corner.alpha,
                corner.eps_strong,
                corner.eps_weak,
                query.delta,
                accounting,
                compression,
                constant.bound,
            )
        )
        for corner in corners
    )
    here = strong_order_size(
        query.setting,
        query.k,
        query.alpha,
        eps_strong,
        eps_weak,
        query.delta,
        accounting,
        compression,
        constant.bound,
    )
    # The chord is safe for log-convex bounds (it lies above them); a staircase bound such
    # as k·√K (K jumps at powers of two) can rise above its chord between nodes, where the
    # interpolated constant times this point's own bound is the larger.
    return max(math.exp(log_n) / here, interpolated_constant)


def _alpha_tail_corners(corners: list[GridCorner], constant: SettingConstant) -> list[GridCorner]:
    """The corners with each one's C the largest of the α nodes from the point's cell's
    lower α node up, at the corner's other nodes (``SettingConstant.alpha_tail_multipliers``,
    ``Protocol.largest_alpha_c_below_k``)."""
    tail = constant.alpha_tail_multipliers
    assert tail is not None  # a constant with corners has a grid
    low = min(corner.index[1] for corner in corners)
    return [
        replace(
            corner,
            multiplier=float(tail[corner.index[0], low, corner.index[2], corner.index[3]]),
        )
        for corner in corners
    ]


LADDER_STEP = 2.0
"""The rungs a plan weighs below the query's ε_strong are the powers of 2 between ε_weak
and ε_strong, the grid kinks (:func:`grid_kinks`), and ε_weak itself (the homogeneous
protocol)."""


def strong_eps_ladder(
    eps_strong: float, eps_weak: float, kinks: GridKinks | None = None
) -> tuple[float, ...]:
    """The ladder's ε_strong values, largest first, ending at ε_weak (none when the groups'
    ε are equal): :func:`strong_eps_rungs` for one query. The rungs are one grid for every
    query, so a plan run at a rung finds no rung below it that the query itself did not
    weigh: planning that point again gives the same plan. :mod:`planner.vectorised` weighs
    the same rungs, row by row."""
    if eps_strong <= eps_weak:
        return ()
    # the scalar twin of ``strong_eps_rungs`` (the same values, tested equal), in plain
    # Python for the one-plan latency
    step, strong_nodes, ratio_nodes, *_ = kinks or GridKinks(LADDER_STEP)
    low, high = ladder_exponents(eps_weak, eps_strong, step)
    values = {step**i for i in range(high, low - 1, -1)}
    values.update(strong_nodes)
    values.update(_on_ratio_node(eps_weak, ratio) for ratio in ratio_nodes)
    return (*sorted((v for v in values if eps_weak < v < eps_strong), reverse=True), eps_weak)


def _on_ratio_node(eps_weak: float, ratio: float) -> float:
    """:func:`on_ratio_node` for one ε_weak."""
    eps_strong = eps_weak / ratio
    for _ in range(2):
        if eps_weak / eps_strong < ratio:
            eps_strong = math.nextafter(eps_strong, 0.0)
        if eps_weak / eps_strong > ratio:
            eps_strong = math.nextafter(eps_strong, math.inf)
    return eps_strong


def strong_eps_rungs(eps_strong: np.ndarray, eps_weak: np.ndarray, kinks: GridKinks) -> np.ndarray:
    """Each row's rungs strictly between its ε_weak and ε_strong, largest first, padded with
    NaN (rows × rungs): the powers of the kinks' ladder step, the grids' ε_strong nodes, and
    the ε_strong at which ε_weak/ε_strong is a grid's ratio node (exactly, so that the
    point sits on that node). One function for one query and for a sweep's rows, so both
    weigh the same points in the same order."""
    step, strong_nodes, ratio_nodes, *_ = kinks
    low, _ = ladder_exponents(float(eps_weak.min()), 1.0, step)
    _, high = ladder_exponents(1.0, float(eps_strong.max()), step)
    columns = [np.full(eps_strong.shape, step**i) for i in range(high, low - 1, -1)]
    columns += [np.full(eps_strong.shape, node) for node in strong_nodes]
    columns += [on_ratio_node(eps_weak, ratio) for ratio in ratio_nodes]
    if not columns:
        return np.empty((eps_strong.shape[0], 0))
    rungs = np.stack(columns, axis=1)
    return _largest_first(rungs, (rungs > eps_weak[:, None]) & (rungs < eps_strong[:, None]))


def _largest_first(rungs: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Each row's ``inside`` values, distinct, largest first, padded with NaN."""
    rungs = -np.sort(-np.where(inside, rungs, -np.inf), axis=1)  # largest first, out last
    repeated = np.zeros(rungs.shape, dtype=bool)
    repeated[:, 1:] = rungs[:, 1:] == rungs[:, :-1]
    return np.where(np.isfinite(rungs) & ~repeated, rungs, np.nan)


def weak_eps_ladder(eps_weak: float, kinks: GridKinks) -> tuple[float, ...]:
    """The weaker group's rungs below its ε, largest first: the powers of the step and the
    grids' ε_strong nodes from ``kinks.weak_from`` up (none below it), and the edges of
    covered ranges of the smaller ε (``kinks.weak_caps``) and a coupled protocol's
    ε_strong nodes (``kinks.weak_nodes``) at any ε. The scalar twin of
    :func:`weak_eps_rungs` (tested equal)."""
    values = {cap for cap in (*kinks.weak_caps, *kinks.weak_nodes) if cap < eps_weak}
    if eps_weak > kinks.weak_from:
        low, high = ladder_exponents(kinks.weak_from, eps_weak, LADDER_STEP)
        ladder = {LADDER_STEP**i for i in range(high, low - 1, -1)}
        ladder.update(kinks.strong_nodes)
        values.update(v for v in ladder if kinks.weak_from <= v < eps_weak)
    return tuple(sorted(values, reverse=True))


def ratio_node_below(
    eps_weak: float, eps_strong: float, ratio_nodes: tuple[float, ...]
) -> float | None:
    """The largest ratio node below ε_weak/ε_strong whose weaker ε is accepted (≥ EPS_MIN;
    None: none, or equal ε). A channel per
    group reads the largest C of its grid cell, so a ratio just above a node reads the
    next cell's: the weaker group run at the node instead is never dearer than the node
    itself (k = 20,000, α = 0.3, ε = (12, 3.05) had needed 38 % more users than ε2 = 3).
    The scalar twin of :func:`ratio_node_rungs`."""
    if eps_weak >= eps_strong:
        return None
    # not below the accepted ε: no tester runs a group there (a query at ε = (0.0024,
    # 0.0002) had been refused with "invalid eps1 = 7.5e-05", from the node 1/32)
    below = [
        node
        for node in ratio_nodes
        if node < eps_weak / eps_strong and node * eps_strong >= EPS_MIN
    ]
    return max(below) if below else None


def ratio_node_rungs(
    eps_strong: np.ndarray, eps_weak: np.ndarray, ratio_nodes: tuple[float, ...]
) -> np.ndarray:
    """Each row's weaker ε at its largest ratio node below ε_weak/ε_strong (NaN: none, or
    equal ε): ``ratio_node_below(...) × ε_strong``, elementwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = eps_weak / eps_strong
    node = np.full(eps_weak.shape, np.nan)
    for value in sorted(ratio_nodes):  # ascending: the last below the row's ratio stays
        accepted = value * eps_strong >= EPS_MIN  # as ``ratio_node_below``
        node = np.where((value < ratio) & accepted, value, node)
    return np.where(eps_weak < eps_strong, node * eps_strong, np.nan)


def weak_eps_rungs(eps_weak: np.ndarray, kinks: GridKinks) -> np.ndarray:
    """:func:`weak_eps_ladder` for each row (rows × rungs, largest first, NaN padded)."""
    blocks: list[tuple[np.ndarray, np.ndarray]] = []
    if np.isfinite(kinks.weak_from) and (eps_weak > kinks.weak_from).any():
        low, high = ladder_exponents(kinks.weak_from, float(eps_weak.max()), LADDER_STEP)
        values = [LADDER_STEP**i for i in range(high, low - 1, -1)] + list(kinks.strong_nodes)
        rungs = np.stack([np.full(eps_weak.shape, value) for value in values], axis=1)
        blocks.append((rungs, (rungs >= kinks.weak_from) & (rungs < eps_weak[:, None])))
    fixed = (*kinks.weak_caps, *kinks.weak_nodes)
    if fixed:
        caps = np.stack([np.full(eps_weak.shape, cap) for cap in fixed], axis=1)
        blocks.append((caps, caps < eps_weak[:, None]))
    if not blocks:
        return np.empty((eps_weak.shape[0], 0))
    return _largest_first(
        np.concatenate([rungs for rungs, _ in blocks], axis=1),
        np.concatenate([inside for _, inside in blocks], axis=1),
    )


LEAST_EPS_POINTS = 17
"""Points :func:`least_eps_rungs` sizes a grid cell at in each pass, evenly in log ε: the
cell's, then the two spacings around the least so far (each pass narrows 8×)."""
LEAST_EPS_PASSES = 5
"""Passes of :func:`least_eps_rungs` (the last spacing is under 3·10⁻⁵ of log ε, where the
users differ from the least's by far less than one)."""
LEAST_EPS_DIGITS = 6
"""The significant digits :func:`least_eps_rungs` states its ε with (rounded down)."""
LEAST_EPS_PROBE = 1e-3
"""A cell counts as rising at its top where the users there exceed those this share of
its width (in log ε) below."""


def weak_only_protocols(
    setting: Setting, table: ConstantTable, fallback: bool
) -> tuple[Protocol, ...]:
    """The protocols a query of ``setting`` may run (its own and, with ``fallback``, those
    that may run instead, as a sweep's rows weigh them) whose tester runs both groups at
    ε_weak (``Protocol.weak_eps_only``) and whose calibrated grid has an ε axis of several
    nodes and one ratio node: the ones :func:`least_eps_rungs` weighs lower."""
    key = ("weak-only protocols", setting.key, fallback)
    found = table.memo.get(key)
    if found is None:
        own = protocol_for(setting)
        run = [own]
        if fallback:
            private = private_coin_protocol(own)
            source = table.for_setting(own.key).source
            run += [
                other
                for other in (*((private,) if private else ()), *other_mechanisms(own))
                if table.has_setting(other.key)
                and (other is private or table.for_setting(other.key).source is source)
            ]
        found = table.memo[key] = tuple(
            protocol
            for protocol in run
            if protocol.weak_eps_only
            and table.has_setting(protocol.key)
            and table.for_setting(protocol.key).source is ConstantSource.CALIBRATED
            and len(table.for_setting(protocol.key).grid_axis("eps_strong")) > 1
            and len(table.for_setting(protocol.key).grid_axis("eps_ratio")) == 1
        )
    return found


class WeakOnlyCurve:
    """A weak-ε-only protocol's users a group along ε at each row's (k, α): C·bound at
    (ε, ε) and the per-run error 1/3, unrounded, as ``calibrated_multiplier`` makes them
    (C interpolated over the k, α and ε nodes, the log-n chord over k and α; the grid read
    at ``grid_position``'s ε), with the grid read once per row
    (``SettingConstant.eps_node_constants``)."""

    def __init__(
        self, protocol: Protocol, constant: SettingConstant, k: np.ndarray, alpha: np.ndarray
    ) -> None:
        self.protocol, self.constant, self.k, self.alpha = protocol, constant, k, alpha
        self.log_constants, self.corners = constant.eps_node_constants(
            k, alpha, protocol.largest_alpha_c_below_k
        )
        self.logs = np.log(np.asarray(constant.grid_axis("eps_strong"), dtype=np.float64))
        self.sizing = (constant.bound, Accounting.EXACT, constant.compression())

    def _unit(self, k: np.ndarray, alpha: np.ndarray, eps: np.ndarray) -> np.ndarray:
        """The C = 1 size at (ε, ε) (``strong_order_size``)."""
        k, alpha, eps = np.broadcast_arrays(k, alpha, eps)
        nan = np.full(k.shape, np.nan)
        return np.asarray(
            self.protocol.size_run_arrays(k, alpha, nan, eps, eps, None, *self.sizing)
        )

    def sizes(self, rows: np.ndarray, eps: np.ndarray) -> np.ndarray:
        """The users a group of each row of ``rows`` at each of its ε (``eps``: one line
        of ε a row)."""
        k, alpha = self.k[rows][:, None], self.alpha[rows][:, None]
        grid = eps
        if self.protocol.noise_matched_above_grid:
            grid = np.asarray(noise_matched_eps(k, eps, self.constant))
        x = np.log(grid)
        logs = self.logs
        cell = np.clip(np.searchsorted(logs, x, side="right") - 1, 0, len(logs) - 2)
        fraction = np.clip((x - logs[cell]) / (logs[cell + 1] - logs[cell]), 0.0, 1.0)
        read = self.log_constants[rows]
        log_constant = (1.0 - fraction) * np.take_along_axis(
            read, cell, axis=1
        ) + fraction * np.take_along_axis(read, cell + 1, axis=1)
        # the log-n chord over k and α: the corners' sizes, less the row's own
        spread = -np.log(self._unit(k, alpha, grid))
        for weight, corner_k, corner_alpha in self.corners:
            w = weight[rows][:, None]
            corner = self._unit(corner_k[rows][:, None], corner_alpha[rows][:, None], grid)
            spread = spread + np.where(w > 0, w, 0.0) * np.log(corner)
        return np.exp(log_constant + np.maximum(spread, 0.0)) * self._unit(k, alpha, eps)


def least_eps_of(query: Query, table: ConstantTable, fallback: bool) -> tuple[float, ...]:
    """:func:`least_eps_rungs` for one query, of each of its :func:`weak_only_protocols`
    in their order (each once), remembered per constant and point."""
    found: list[float] = []
    eps_weak = min(query.eps1, query.eps2)

    def searched(protocol: Protocol, constant: SettingConstant) -> float:
        return float(least_eps_rungs(protocol, constant, query.k, query.alpha, eps_weak)[0])

    for protocol in weak_only_protocols(query.setting, table, fallback):
        constant = table.for_setting(protocol.key)
        rung = _remembered(
            _LEAST_EPS,
            constant,
            (id(constant), protocol.key, query.k, query.alpha, eps_weak),
            functools.partial(searched, protocol, constant),
        )
        if not math.isnan(rung) and rung not in found:
            found.append(rung)
    return tuple(found)


def least_eps_rungs(
    protocol: Protocol, constant: SettingConstant, k: Any, alpha: Any, eps_weak: Any
) -> np.ndarray:
    """Each row's ε below its ε_weak at which the weak-ε-only ``protocol`` needs the
    fewest users (:class:`WeakOnlyCurve`), where fewer than at ε_weak itself (NaN
    elsewhere): both groups run there are still private at the query's ε.

    Such a protocol's C is interpolated in ε between its grid's ε nodes while its bound
    is read at the point's own ε (one ratio node: every corner keeps the point's ε_weak),
    and where C grows with ε (e^ε past k) as the bound flattens, the users are least
    inside a cell and rise towards its upper node. No fixed ladder holds that point (it
    moves with k and α, and the cell's nodes themselves need more users): a plan had
    needed 11 users a group at ε = (8, 8), k = 2, α = 0.95, and 10 at ε1 = 3. A plan
    weighs this point (``_tester_points``), so its users never rise as ε_weak grows, and
    its chosen point planned again finds no other.

    Searched, cell by cell of the grid's ε (above its top k, where the grid is read at a
    smaller ε, those cells' ε; below the least node the users only fall with ε): a cell
    whose users rise at its top (:data:`LEAST_EPS_PROBE`) is sized at
    :data:`LEAST_EPS_POINTS` points, then as many around the least, :data:`LEAST_EPS_PASSES`
    passes in all; a cell whose users fall at its top has its least there (the users are
    one bowl a cell). One function for one query and for a sweep's rows, so both weigh the
    same point to the bit."""
    k, alpha, eps_weak = (
        np.asarray(value, dtype=np.float64).ravel()
        for value in np.broadcast_arrays(k, alpha, eps_weak)
    )
    rungs = np.full(k.shape, np.nan)
    nodes = np.asarray(constant.grid_axis("eps_strong"), dtype=np.float64)
    shift = np.zeros(k.shape)
    if protocol.noise_matched_above_grid:  # the grid read at ε - ln(k/k_top) above k_top
        top = float(constant.grid_axis("k")[-1])
        shift = np.log(np.maximum(k, top) / top)
    edges = nodes[None, :] + shift[:, None]
    lower = edges[:, :-1]
    upper = np.minimum(edges[:, 1:], eps_weak[:, None])
    rows, cells = np.nonzero(lower < eps_weak[:, None])
    if rows.size == 0:
        return rungs
    curve = WeakOnlyCurve(protocol, constant, k, alpha)
    low, high = lower[rows, cells], upper[rows, cells]
    start, end = np.log(low), np.log(high)
    probe = np.stack([high, np.exp(end - LEAST_EPS_PROBE * (end - start))], axis=1)
    at_top = curve.sizes(rows, probe)
    rising = at_top[:, 0] > at_top[:, 1]
    if not rising.any():
        return rungs
    rows, cells = rows[rising], cells[rising]
    low, high, start, end = (part[rising] for part in (low, high, start, end))
    fractions = np.linspace(0.0, 1.0, LEAST_EPS_POINTS)
    logs = start[:, None] + (end - start)[:, None] * fractions[None, :]
    eps = np.exp(logs)
    eps[:, 0], eps[:, -1] = low, high  # the cell's ends exactly
    sizes = curve.sizes(rows, eps)
    pairs = np.arange(rows.size)
    best = np.argmin(sizes, axis=1)
    least, least_eps, least_log = sizes[pairs, best], eps[pairs, best], logs[pairs, best]
    spacing = (end - start) / (LEAST_EPS_POINTS - 1)
    around = np.linspace(-1.0, 1.0, LEAST_EPS_POINTS)
    for _ in range(LEAST_EPS_PASSES - 1):
        logs = np.clip(
            least_log[:, None] + spacing[:, None] * around[None, :], start[:, None], end[:, None]
        )
        eps = np.exp(logs)
        sizes = curve.sizes(rows, eps)
        best = np.argmin(sizes, axis=1)
        better = sizes[pairs, best] < least
        least = np.where(better, sizes[pairs, best], least)
        least_eps = np.where(better, eps[pairs, best], least_eps)
        least_log = np.where(better, logs[pairs, best], least_log)
        spacing = spacing * 2.0 / (LEAST_EPS_POINTS - 1)
    # each row's least over its rising cells, against its users at ε_weak itself
    table = np.full((k.size, len(nodes) - 1), np.inf)
    table[rows, cells] = least
    found = np.full(table.shape, np.nan)
    found[rows, cells] = least_eps
    chosen = np.unique(rows)
    column = np.argmin(table[chosen], axis=1)
    least, rung = table[chosen, column], found[chosen, column]
    at_query = curve.sizes(chosen, eps_weak[chosen][:, None])[:, 0]
    # to 6 significant digits, down (below ε_weak still): a plain number to state, whose
    # users differ from the least's by far less than a user (the curve is flat there, or
    # the least is a node, a plain number already)
    scale = 10.0 ** (LEAST_EPS_DIGITS - 1 - np.floor(np.log10(rung)))
    rung = np.floor(rung * scale) / scale
    kept = (least < at_query) & (rung < eps_weak[chosen]) & (rung >= EPS_MIN)
    rungs[chosen[kept]] = rung[kept]
    return rungs


def on_ratio_node(eps_weak: np.ndarray, ratio: float) -> np.ndarray:
    """The ε_strong at which ε_weak/ε_strong is ``ratio`` as the grid computes it (the
    quotient ε_weak/ratio, moved by the last bit where rounding puts it beside the node)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        eps_strong = eps_weak / ratio
        for _ in range(2):
            eps_strong = np.where(
                eps_weak / eps_strong < ratio, np.nextafter(eps_strong, 0.0), eps_strong
            )
            eps_strong = np.where(
                eps_weak / eps_strong > ratio, np.nextafter(eps_strong, np.inf), eps_strong
            )
    return eps_strong


class GridKinks(NamedTuple):
    """Where a setting's plans weigh running a group lower (:func:`grid_kinks`)."""

    step: float
    """The ladder's step: its rungs are the powers of it."""
    strong_nodes: tuple[float, ...] = ()
    """The calibration grids' ε_strong nodes."""
    ratio_nodes: tuple[float, ...] = ()
    """The calibration grids' ε_weak/ε_strong nodes below 1."""
    weak_from: float = math.inf
    """The weaker group is run lower too, at the rungs and nodes from this ε up."""
    weak_caps: tuple[float, ...] = ()
    """The tops of the smaller ε's covered ranges (``SettingConstant.covered_above_grid``):
    the weaker group is run there too, whatever its ε, so a plan just above such an edge
    is never dearer than the one at it (a group run at a smaller ε is still private)."""
    weak_nodes: tuple[float, ...] = ()
    """The ε_strong nodes from :data:`WEAK_LADDER_FROM` up of the grids of the protocols
    sized by their cell's largest C (``coupled_groups``): the weaker group is run there
    too, whatever its ε, where no ladder runs it (a mixed pair at k = 2,000, α = 0.05,
    ε = (8, 6) had needed 766,219 users, 635,448 at ε2 = 5, whose run at (5, 5) answers
    it: a channel per group's C steps at a node)."""
    alpha_nodes: tuple[float, ...] = ()
    """The α nodes (below 1) of the grids whose constant steps at an α node (a channel per
    group's largest C of its cell, ``Protocol.coupled_groups``; the α tail's largest C,
    ``Protocol.largest_alpha_c_below_k``): a query just above one is weighed at it too
    (:func:`alpha_nodes_below`), so a larger α never needs more users than the node's plan
    (a tester for a smaller α rejects every pair farther apart)."""


ALPHA_NODE_REACH = 2.0
"""A grid's α node is weighed for queries up to this multiple of it: farther above, the
node's plan needs (α/node)² ≥ 4× the query's C = 1 users, more than the constant steps
between α nodes anywhere in the grids (at most 3.4×: k-RR from α = 0.15 to 0.95; a channel
per group 2.0×)."""


def alpha_nodes_below(alpha: float, nodes: tuple[float, ...]) -> tuple[float, ...]:
    """The ``nodes`` (sorted) below ``alpha`` that ``alpha`` is within
    :data:`ALPHA_NODE_REACH` of, largest first. Where a grid's constant steps up as α
    crosses a node (k = 19, ε = (8, 3), local: 98 users at α = 0.5, 160 at 0.51), the plan
    at the node also answers the query. Every such node, not only the largest: a node's
    own plan may have run at the node below it (a new user's review: shuffle, k = 4,000,
    ε = (8, 6), δ = 10⁻⁹ needed 1,410 users at α = 0.95, run at 0.5, and 4,664 at 0.951,
    weighed at the node 0.95 alone)."""
    index = bisect.bisect_left(nodes, alpha)
    return tuple(node for node in reversed(nodes[:index]) if alpha <= ALPHA_NODE_REACH * node)


WEAK_LADDER_FROM = 1.0
"""Where the shuffle model's weaker group is also weighed lower: above ε ≈ 1 its noise
grows small and its constant C grows with ε, so a plan can need more users in all as the
weaker group's ε rises (k = 907, α = 0.114, ε2 = 4.17: 15,876 at ε1 = 2.61, 16,208 at
3.92, before). Below it C falls with ε (docs/coverage.md) and lowering cannot help."""
NOISE_LADDER_STEP = 2.0**0.5
"""The ladder's step where the stronger group's noise can be raised towards the weaker's
(``AllocationFamily.NOISE``, the shuffle model): the paper's split
n_weak = (μ_w/μ_s)·n_strong grows as μ_s falls, so the users in all are least at an
ε_strong between the powers of 2 (k = 200, α = 0.1, ε = (1, 0.5): 16,930 at
ε_strong ≈ 0.7 against 17,333 at 1). A step of 2^¼ halves what is left between two rungs
(at most 0.8 % → 0.24 %) for twice the shuffle sweeps' time."""
SUBSAMPLED_LADDER_STEP = 2.0**0.125
"""The ladder's step where a curator's group far below the other releases from a
subsample (``Protocol.weak_release_eps``): its population grows with the stronger group's
ε (the release's ε is a share of it) while the stronger group's users fall, so the users
in all are least at an ε_strong between the powers of 2 (central/local pair, k = 28,
α = 0.129, curator ε = 0.138: 3,260 users at a local ε of 6.08, 3,361 run at the rung 5
for a local ε of 8.35). At this step what is left between two rungs is a few tenths of a
percent."""
_KINKS: dict[tuple[Setting, int], tuple[ConstantTable, GridKinks]] = {}


def grid_kinks(setting: Setting, table: ConstantTable) -> GridKinks:
    """The ladder's step, and the ε_strong nodes and ratio nodes of the calibration grids
    of the protocols a query of ``setting`` may run (itself, its private-coin twin, its
    model's other mechanisms and every less trusted model's protocols it may run: a
    central plan weighs the rungs a local plan weighs, so that running the same local
    protocol it never needs more users; k = 8, α = 0.01, ε = (14, 8) had needed 72,404
    users against the local plan's 71,938). Where ε_strong crosses a node, the
    interpolated constant turns (a channel per group's largest C steps): a plan's users can
    be least there, so the plan weighs each as a rung, and relaxing ε does not cost users
    for that. The step is :data:`NOISE_LADDER_STEP` where a protocol trades noise between
    the groups, :data:`SUBSAMPLED_LADDER_STEP` where one subsamples a curator's group,
    else :data:`LADDER_STEP`."""
    known = _KINKS.get((setting, id(table)))
    if known is not None and known[0] is table:
        return known[1]
    own = protocol_for(setting)
    private = private_coin_protocol(own)
    strong: set[float] = set()
    ratios: set[float] = set()
    caps: set[float] = set()
    nodes: set[float] = set()
    alphas: set[float] = set()
    step, weak_from = LADDER_STEP, math.inf
    for protocol in (own, *((private,) if private else ()), *other_mechanisms(own)):
        if protocol.allocation_family is AllocationFamily.NOISE:
            step, weak_from = NOISE_LADDER_STEP, WEAK_LADDER_FROM
        if protocol.weak_release_eps is not None:
            step = min(step, SUBSAMPLED_LADDER_STEP)
        if not table.has_setting(protocol.key):
            continue
        constant = table.for_setting(protocol.key)
        # the α nodes where the constant steps: a shuffle or central plan runs k-RR or a
        # channel per group where they need fewer users (k = 98, ε = 7.92, β = 0.2,
        # shuffle: 194 users at α = 0.5, a 7-run vote of 658 at 0.505 without)
        if protocol.coupled_groups or protocol.largest_alpha_c_below_k:
            alphas.update(alpha for alpha in constant.grid_axis("alpha") if alpha < 1.0)
        if "eps_weak" in constant.covered_above_grid[1]:
            caps.add(constant.covered_above_grid[1]["eps_weak"][1])
        if protocol.weak_eps_only:
            continue  # a tester run at ε_weak alone does not move with ε_strong
        strong.update(constant.grid_axis("eps_strong"))
        if protocol.coupled_groups:  # its cell's largest C steps at a node
            nodes.update(v for v in constant.grid_axis("eps_strong") if v >= WEAK_LADDER_FROM)
        ratios.update(ratio for ratio in constant.grid_axis("eps_ratio") if ratio < 1.0)
    kinks = GridKinks(
        step,
        tuple(sorted(strong)),
        tuple(sorted(ratios)),
        weak_from,
        tuple(sorted(caps)),
        tuple(sorted(nodes)),
        tuple(sorted(alphas)),
    )
    if len(_KINKS) >= 256:
        _KINKS.clear()
    _KINKS[(setting, id(table))] = (table, kinks)
    return kinks


def ladder_exponents(low: float, high: float, step: float = LADDER_STEP) -> tuple[int, int]:
    """Exponents i of the powers of ``step`` a ladder between ``low`` and ``high`` may hold
    (a rung outside the open interval is dropped by the caller)."""
    return math.floor(math.log(low, step)), math.ceil(math.log(high, step))


def plan(
    query: Query,
    constants: ConstantTable | None = None,
    *,
    fallback: bool = True,
    split: Split = Split.FEWEST,
) -> Plan:
    """The number of users each named group needs, with everything that backs it.

    A public-coin protocol may ignore its coin: when the private-coin protocol of the same
    model needs fewer users in total, it is the plan (``Plan.protocol`` says which runs),
    unless ``fallback`` is off (calibration measures each protocol on its own).

    The tester may run below the query (``Plan.tester_point``): a group whose mechanism
    runs at a smaller ε is still ε-DP, and a tester for a smaller α rejects every pair
    farther apart, so such a plan answers the query. With calibrated constants a plan
    weighs the stronger group's ε lowered along :func:`strong_eps_ladder` (down to
    ε_weak, the homogeneous protocol), each ε capped at :data:`EPS_CAP` (ε > 1 lies
    outside the theorems' range), and at β < 1/3 ε and α lowered to the tops of each
    region direct calibration covers (else the majority vote, up to 10× more; the local
    private coin's regions reach ε = 20 and α = 0.95) and α above the covered region to
    its top (``_capped_points``); the weaker group down its own ladders
    (``_tester_points``); and both groups at the ε below the query where a protocol that
    runs both at the weaker ε (k-RR) needs the fewest users (:func:`least_eps_rungs`), so
    that relaxing either ε never costs that protocol's users.

    ``split`` chooses among the covered points:

    * ``FEWEST`` (the default): the fewest users in all. The paper's split grows like
      e^ε_strong in the central model's subsampling, and in the shuffle model the weaker
      group's users grow with the stronger group's ε, up to 100× past the homogeneous
      protocol's; this plan never needs more users in all than the homogeneous protocol
      or the paper's split.
    * ``PAPER``: the paper's split at the query — or at the capped point when that needs
      fewer users in all, at every β alike (so a β just below 1/3 opens no cheaper plan
      than β = 1/3 does) — and a lower point only where it needs no more users in either
      group: the paper's trade-off between the groups, made cheaper, never another one
      (``planner.allocation`` weighs other trade-offs from this plan).

    Either way the points are one grid for every query, so planning the chosen point
    again gives the same plan. With constants other than the calibrated ones only the
    query itself is weighed, and the plan says ``Split.PAPER``.

    With calibrated constants the tester may also run on a larger domain than the
    query's: the least covered k of each protocol the query may run, where that lies
    above the query's k, and a coupled protocol's grid node just above it, that protocol
    alone there (:func:`padding_domains`).
    A k-bin domain is a larger one whose other bins never occur, so such a tester
    answers the query (the central model at k = 15 had run a local randomizer with 6,000×
    the users the central tester needs at k = 16). The domain's plan is taken by the rule
    of the points above (:func:`_padding_wins`); its tester point names the domain.

    Each group's messages per user are stated as the asked query's models count them
    (:func:`stated_messages`).
    """
    return stated_subsample(stated_messages(_plan(query, constants, fallback, split), query))


def stated_subsample(made: Plan) -> Plan:
    """``made`` with a line giving the subsample a curator's group reads, where its
    protocol releases that group from one (``Protocol.weak_release_eps``): m of its n users
    (each run's), the release's ε′ in full and the ε it gives the group. An auditor or a
    deployer needs them exactly: taking m from a share rounded to 3 digits at a rounded ε′
    could spend more than the group's ε (a review: ε = 0.0030103 for 0.003)."""
    hook = protocol_for(made.protocol).weak_release_eps
    if hook is None:
        return made
    tester = made.tester_query
    eps_strong, eps_weak = sorted((tester.eps1, tester.eps2), reverse=True)
    weak_is_group2 = tester.eps1 >= tester.eps2
    released = float(hook(tester.setting, weak_is_group2, eps_strong, eps_weak))
    if released == eps_weak:
        return made
    group = 2 if weak_is_group2 else 1
    n = made.groups[group - 1].n_users // made.runs
    m = subsample_size(n, released, eps_weak)
    spent = math.log1p(m / n * math.expm1(released))
    each = " (in each run)" if made.runs > 1 else ""
    line = (
        f"group {group}'s curator reads m = {m:,} of its {n:,} users{each}, drawn uniformly "
        f"without replacement and kept secret, and releases their histogram with discrete "
        f"Laplace noise at ε′ = {released!r}: ln(1 + (m/n)(e^ε′ − 1)) = {spent:.10g} ≤ "
        f"ε{group} = {eps_weak:g} (privacy amplification by subsampling)"
    )
    if line in made.warnings:  # a mixed pair's run already says it (``mixed_plan``)
        return made
    return replace(made, warnings=(*made.warnings, line))


def stated_messages(made: Plan, query: Query) -> Plan:
    """``made`` with each group's messages per user as ``query``'s group models count them
    where its protocol sends no noise messages (a local randomizer, a curator's tester):
    a shuffle group sends its one report (1), a local or a curator's group states none.
    Whichever path planned it (a mixed pair's run, a larger domain, a coupled protocol on
    its node, a central query's shuffle run): a review found shuffle groups running a local
    randomizer with no messages stated, and a central plan that gives δ with "1 / 1"."""
    if not protocol_for(made.protocol).sends_reports_only:
        return made
    first, second = (
        replace(group, eager_messages=1.0 if model.counts_messages else None, messages_by=None)
        for group, model in zip(made.groups, query.setting.group_models, strict=True)
    )
    groups = (first, second)
    if groups == made.groups:
        return made
    return replace(made, groups=groups)


def _plan(query: Query, constants: ConstantTable | None, fallback: bool, split: Split) -> Plan:
    """:func:`plan`'s body (its messages not yet stated)."""
    check_query(query)
    if not isinstance(split, Split):  # a hostile caller's split=3 is refused, not ignored
        split = check_choice("split", split, Split)
    table = constants or default_constants()
    if query.setting.is_mixed and (not query.setting.mechanism or query.eps1 < query.eps2):
        return mixed_plan(
            query, table, lambda run: plan(run, table, fallback=fallback, split=split), fallback
        )
    if spends_delta_by_choice(query):
        return central_delta_plan(
            query, table, lambda run: plan(run, table, fallback=fallback, split=split), fallback
        )
    capped = delta_capped(query, table)
    if capped is not query:  # its plan at the covered δ answers it
        return at_capped_delta(plan(capped, table, fallback=fallback, split=split), query)
    if table.for_setting(query.setting.key).source is not ConstantSource.CALIBRATED:
        split = Split.PAPER  # no other point is weighed: the paper's split at the query
    if split is Split.HOMOGENEOUS:
        return _homogeneous_plan(query, table, fallback)  # its plan weighs larger domains
    made = own = plan_on_domain(query, table, fallback, split)
    if table.for_setting(query.setting.key).source is ConstantSource.CALIBRATED:
        for domain, lowest, coupled_node in padding_domains(query.setting, table, fallback):
            if not lowest <= query.k < domain:
                continue
            if coupled_node:  # each coupled protocol alone on its node
                made = _coupled_alone_on_node(query, table, domain, split, made, own, fallback)
                continue
            # a covered plan is displaced only by fewer users (``_padding_wins``)
            to_beat = made.total_users if made.coverage is Coverage.CALIBRATED else None
            padded = _plan_on_domain(replace(query, k=domain), table, fallback, split, to_beat)
            if padded is not None and _padding_wins(padded, made, split):
                made = _on_padded_domain(padded, query, own)
    return made


def coupled_on_node(
    setting: Setting, table: ConstantTable, domain: int, fallback: bool = True
) -> list[Protocol]:
    """The protocols sized by the largest C of their grid cell (``coupled_groups``) that a
    plan of ``setting`` may run and whose grid has a node in k at ``domain``: the ones a
    plan running another protocol weighs there alone (:func:`_coupled_alone_on_node`)."""
    key = ("coupled on node", setting.key, domain, fallback)
    found = table.memo.get(key)
    if found is None:
        found = table.memo[key] = [
            protocol
            for protocol in _protocols_weighed(setting, table, fallback)
            if protocol.coupled_groups
            and table.for_setting(protocol.key).source is ConstantSource.CALIBRATED
            and domain in {round(node) for node in table.for_setting(protocol.key).grid_axis("k")}
        ]
    return list(found)


def _coupled_alone_on_node(
    query: Query,
    table: ConstantTable,
    domain: int,
    split: Split,
    made: Plan,
    own: Plan,
    fallback: bool,
) -> Plan:
    """``made``, or the plan of a coupled protocol alone on its grid node ``domain`` where
    that needs fewer users (``_padding_wins``; ``own``: the query's own domain's plan, for
    the line). Just below a node such a protocol reads the largest C of the cell below
    it, so on the query's domain it can lose to another protocol and still need fewer
    users on the node (a review: shuffle, k = 1000, α = 0.1, ε = (1, 0.5), δ = 10⁻³ ran
    the Poisson protocol, 28,824 users, where the multi-message protocol on 1,024 bins
    needs 28,547, fewer than at δ = 8·10⁻⁴). Not under ``Split.PAPER``, which runs no
    coupled protocol (``_candidates``)."""
    if split is not Split.FEWEST:
        return made
    asked = protocol_for(query.setting)
    for coupled in coupled_on_node(query.setting, table, domain, fallback):
        to_beat = made.total_users if made.coverage is Coverage.CALIBRATED else None
        alone = replace(_run_query(query, coupled.setting), k=domain)
        # alone: a public-coin protocol's private twin is weighed on its own turn, and not
        # at all for a protocol asked by name (``fallback`` False: a review found
        # ``--protocol shuffle-public+messages`` running the private coin's on 512 bins)
        padded = _plan_on_domain(alone, table, False, split, to_beat)
        if padded is None or not _padding_wins(padded, made, split):
            continue
        # the query's own lines (an input it ignores), and why another protocol runs: as
        # the query's own domain would say them (a review found both left out)
        lines = (*query.warnings, *padded.warnings, *_coupled_note(query, table, coupled, asked))
        made = _on_padded_domain(_replaced(padded, warnings=lines), query, own)
    return made


def _coupled_note(
    query: Query, table: ConstantTable, coupled: Protocol, asked: Protocol
) -> tuple[str, ...]:
    """The line saying that ``coupled`` runs instead of the query's own protocol
    (``_displacing_note``: because it needs fewer users, or because the own is not
    covered at the query); none where it is the query's own."""
    if coupled is asked:
        return ()
    own_run = _ProtocolRun.size(query, query.setting, table)
    if own_run.coverage is not Coverage.EXTRAPOLATED:
        return _displacing_note(coupled, asked)
    where = " and ".join(_outside_axes(query, table, asked))
    return _displacing_note(coupled, asked, own_covered=False, where=where)


# Mixed pairs: each group under its own model -------------------------------------------


def mixed_runs(query: Query, fallback: bool = True) -> list[Query]:
    """The queries a mixed query may be planned as, in the order they are weighed.

    * Both groups under the less trusted of the two models, with that model's plan (every
      protocol it may run): a more trusted group may always run a less trusted group's
      mechanism, which is still private (a curator may run its users' local randomizers,
      a shuffler pass local reports on). So a mixed plan never needs more users in all
      than this one. Left out with ``fallback`` off.
    * Where one group is central and the other reports through a local channel (local,
      or shuffle, whose users may run one): the curator's noisy histogram beside the
      local channel (``planner.protocols.mixed_channels``)."""
    setting = query.setting
    runs = []
    if fallback:
        base = Setting(setting.less_trusted, setting.coin)
        runs.append(_run_query(query, base))
    mixed = run_setting(setting)
    if mixed is not None:
        runs.append(_run_query(query, mixed))
    return runs


def subsampled_release_rungs(run: Query) -> list[Query]:
    """``run`` (a mixed protocol's) with its stronger group's ε lowered, largest first,
    where its curator's group releases from a subsample (``Protocol.weak_release_eps``):
    :func:`strong_eps_ladder` from the stronger ε down to the ε at which the release needs
    no subsample (the powers of :data:`LADDER_STEP` between, and that ε); none otherwise.

    The release's ε is a share of the stronger group's, so at given sizes (``--allocation
    fixed-n2`` and ``cost``, ``planner power``, the solves) a larger ε can fit worse: at
    k = 16, α = 0.9 a curator at ε = 0.003 beside 30 local users fitted at a local ε of 8
    and not at 12 (the release at 0.375 reads another grid cell). A group run at a smaller
    ε is still ε-DP, so these runs answer the query too (``planner.allocation`` weighs
    them; a plan weighs its own ladder, :data:`SUBSAMPLED_LADDER_STEP`)."""
    protocol = protocol_for(run.setting)
    if protocol.weak_release_eps is None or run.eps1 == run.eps2:
        return []
    weak_is_group2 = run.eps1 > run.eps2
    eps_strong, eps_weak = max(run.eps1, run.eps2), min(run.eps1, run.eps2)
    released = protocol.weak_release_eps(run.setting, weak_is_group2, eps_strong, eps_weak)
    if released <= eps_weak:
        return []
    unsampled = eps_strong * eps_weak / released  # the ratio floor's own stronger ε
    values = strong_eps_ladder(eps_strong, unsampled)
    if weak_is_group2:
        return [replace(run, eps1=value) for value in values]
    return [replace(run, eps2=value) for value in values]


def _run_query(query: Query, setting: Setting) -> Query:
    """``query`` under ``setting``, its δ and its shuffle noise's accounting kept only
    where that setting spends a δ (no "ignored" line from a run that does not)."""
    if setting.needs_delta:
        return replace(query, setting=setting, warnings=())
    return replace(query, setting=setting, delta=None, accounting=Accounting.EXACT, warnings=())


def mirrored_query(query: Query) -> Query:
    """The query with its two groups exchanged: group 1's model and ε become group 2's."""
    return replace(
        query, setting=query.setting.mirrored(), eps1=query.eps2, eps2=query.eps1, warnings=()
    )


_GROUP_WORDS = {"group 1": "group 2", "ε1": "ε2", "eps1": "eps2", "n1": "n2", "γ1": "γ2"}
_GROUP_WORDS |= {second: first for first, second in _GROUP_WORDS.items()}
_GROUP_PATTERN = re.compile(r"\b(?:group [12]|ε[12]|eps[12]|n[12]|γ[12])\b")


def _named_back(text: str) -> str:
    """A plan's line with the two groups' names exchanged (group 1 ↔ group 2, ε1 ↔ ε2,
    eps1 ↔ eps2, n1 ↔ n2, γ1 ↔ γ2): a mirrored run's lines named as the query names its
    groups."""
    return _GROUP_PATTERN.sub(lambda match: _GROUP_WORDS[match.group(0)], text)


def mirrored_plan(made: Plan, query: Query) -> Plan:
    """``made``, the plan of ``mirrored_query(query)``, with the groups named as ``query``
    names them: sizes, tester point, protocol key, lines and mechanism exchanged back."""
    one, two = made.groups
    groups = (replace(two, name="group 1"), replace(one, name="group 2"))
    point = made.tester_point
    if point is not None:
        point = replace(point, eps1=point.eps2, eps2=point.eps1)
    alternative = made.alternative_accounting
    if alternative is not None:
        alternative = (alternative[0], alternative[2], alternative[1])
    back = replace(
        made,
        query=query,
        protocol=Setting.from_key(made.protocol).mirrored().key,
        groups=groups,
        tester_point=point,
        alternative_accounting=alternative,
        warnings=tuple(_named_back(line) for line in made.warnings),
        coverage_gaps=tuple(_named_back(line) for line in made.coverage_gaps),
    )
    describe = protocol_for(back.protocol).mechanism
    tester = back.tester_query
    return replace(back, mechanism="" if describe is None else describe(tester, tester.k))


def mixed_plan(
    query: Query, table: ConstantTable, plan_of: Callable[[Query], Plan], fallback: bool = True
) -> Plan:
    """The plan of a mixed query: of :func:`mixed_runs`, the covered plan with the fewest
    users in all (where none is covered, the first run's), named as the query asks.
    ``plan_of`` plans each run (``plan`` or ``covered_plan`` with the caller's options); a
    mixed protocol's run is weighed only where its constants are calibrated and cover it
    (with ``fallback`` off, wherever it has constants)."""
    if query.setting.mechanism:  # a mixed protocol asked by its key: itself
        return _planned_run(query, plan_of)
    made: list[Plan] = []
    skipped = ""
    base = Setting(query.setting.less_trusted, query.setting.coin).key
    for run in mixed_runs(query, fallback):
        key = run.setting.key
        if run.setting.is_mixed and not table.has_setting(key):
            skipped = f"{key} has no calibrated constant yet"
            continue
        source = table.for_setting(key).source
        if run.setting.is_mixed and fallback and source is not table.for_setting(base).source:
            # a C = 1 plan is no match for a proof-backed one (``--constants proof``)
            skipped = f"its constant is the {source.value} one, the {base} plan's is not"
            continue
        result = _planned_run(run, plan_of)
        if run.setting.is_mixed and fallback and result.coverage is Coverage.EXTRAPOLATED:
            skipped = f"{key} is not covered here ({'; '.join(result.coverage_gaps)})"
            continue
        made.append(result)
    if not made:  # fallback off and no constant: the one-model plan after all
        made.append(
            plan_of(_run_query(query, Setting(query.setting.less_trusted, query.setting.coin)))
        )
    covered = [result for result in made if result.coverage is not Coverage.EXTRAPOLATED]
    best = min(covered or made, key=lambda result: result.total_users)
    best = own_lower_bounds(best, query)
    return replace(
        best,
        query=query,
        warnings=(*query.warnings, *best.warnings, *_mixed_notes(query, best, skipped)),
    )


def own_lower_bounds(made: Plan, query: Query) -> Plan:
    """``made`` with each group's lower bound at its own model's (the run's is the less
    trusted model's for both): a central group's is the central bound at its ε."""
    groups = []
    for group, model, eps in zip(
        made.groups, query.setting.group_models, (query.eps1, query.eps2), strict=True
    ):
        lower = BOUNDS[protocol_for(Setting(model, query.setting.coin)).lower_bound_key]
        value = _bound_value(lower.key, (("k", query.k), ("alpha", query.alpha), ("eps", eps)))
        gap = group.optimality_gap * group.lower_bound / value
        groups.append(replace(group, lower_bound=value, optimality_gap=gap))
    return replace(made, groups=(groups[0], groups[1]))


def _planned_run(run: Query, plan_of: Callable[[Query], Plan]) -> Plan:
    """``plan_of(run)``; a mixed protocol's run with the larger ε on group 2 is planned as
    its mirror (where its constants were calibrated) and named back. At equal ε both
    orders' constants apply (the same protocol, its groups named either way): the plan is
    the larger of the two, so that neither order, nor relaxing either group's ε from
    there, gives a plan its neighbours do not back (the two differed by up to 3.7 %)."""
    if run.setting.is_mixed and run.eps1 < run.eps2:
        return mirrored_plan(plan_of(mirrored_query(run)), run)
    made = plan_of(run)
    if run.setting.is_mixed and run.eps1 == run.eps2:
        other = mirrored_plan(plan_of(mirrored_query(run)), run)
        if other.total_users > made.total_users:
            return other
    return made


def _mixed_notes(query: Query, made: Plan, skipped: str) -> tuple[str, ...]:
    """What a mixed plan says of who runs what, whose privacy rests on whom, and why no
    mixed protocol ran where none did (``skipped``: why one was not weighed)."""
    setting = query.setting
    if Setting.from_key(made.protocol).is_mixed:
        return (
            "each group's privacy is its own model's, pure ε-DP: the curator's group trusts "
            "its curator, the other group trusts nobody; whoever analyses reads only the two "
            "private releases",
        )
    less = setting.less_trusted.value
    trusted = [
        f"group {index}, under the {model.value} model,"
        for index, model in enumerate(setting.group_models, start=1)
        if model is not setting.less_trusted
    ]
    spent = Setting.from_key(made.protocol).needs_delta  # the run is (ε, δ)-DP
    pure = [
        f"group {index} ({model.value}) then has that protocol's (ε{index}, δ)-DP at the "
        "query's δ, not pure ε-DP"
        for index, model in enumerate(setting.group_models, start=1)
        if spent and not model.needs_delta
    ]
    if skipped:
        why = f"the mixed protocol was not weighed: {skipped}"
    elif run_setting(setting) is None:
        why = (
            "no mixed protocol serves this pair yet (a shuffle group's own noisy histogram "
            "is not weighed)"
        )
    else:
        why = "the mixed protocol needs more users here"
    return (
        f"both groups run the {less} model's protocol ({made.protocol}): {trusted[0]} may "
        "run it too (a less trusted model's mechanism is still private under a more "
        f"trusted one); {why}",
        *pure,
    )


# A central query that gives δ: its curator may run a shuffle protocol itself -----------


def spends_delta_by_choice(query: Query) -> bool:
    """A central query that gives δ (``Setting.takes_delta``, not ``needs_delta``): planned
    by :func:`central_delta_plan`."""
    setting = query.setting
    return query.delta is not None and setting.takes_delta and not setting.needs_delta


def trust_runs(query: Query, fallback: bool = True) -> list[Query]:
    """The runs a query planned by runs may take, in the order they are weighed, the first
    always: a mixed pair's :func:`mixed_runs`; for a central query that gives δ, the pure
    ε-DP central plan (δ dropped), then, with ``fallback``, each shuffle protocol at the
    query's δ. A curator holds its users' items and may run a shuffle protocol itself (the
    users' messages, the shuffler, and the analyser; with a public coin it draws the shared
    seed): each user is then (ε, δ)-DP, which the query allowed by giving δ. So a central
    plan that gives δ never needs more users than the shuffle plan of the same query."""
    if query.setting.is_mixed:
        return mixed_runs(query, fallback)
    runs = [_run_query(query, query.setting)]
    if fallback and spends_delta_by_choice(query):
        runs.extend(_run_query(query, setting) for setting in delta_runs(query.setting))
    return runs


def central_delta_plan(
    query: Query, table: ConstantTable, plan_of: Callable[[Query], Plan], fallback: bool = True
) -> Plan:
    """The plan of a central query that gives δ: of :func:`trust_runs`, the covered plan
    with the fewest users in all (the pure ε-DP one on a tie), named as the query asks,
    with a line saying which privacy it gives. ``plan_of`` plans each run (``plan``, or
    ``coverage.covered_plan`` for the first); each group's lower bound is the central
    model's."""
    made = [plan_of(run) for run in trust_runs(query, fallback)]
    covered = [result for result in made if result.coverage is not Coverage.EXTRAPOLATED]
    best = min(covered or made[:1], key=lambda result: result.total_users)
    fewer = made[0].total_users - best.total_users  # below 0 where the pure plan is not covered
    return as_central_plan(best, query, fewer if fewer > 0 else None, alone=not fallback)


def as_central_plan(
    made: Plan, query: Query, fewer: int | None = None, *, alone: bool = False
) -> Plan:
    """``made``, a run's plan of the central ``query`` that gives δ
    (:func:`trust_runs`), named as the query asks: each group's lower bound the central
    model's, and the line (:func:`central_delta_line`) saying which privacy it gives."""
    asked = replace(
        made.query,
        setting=query.setting,
        delta=query.delta,
        accounting=query.accounting,
        warnings=query.warnings,
    )
    line = central_delta_line(made, query.delta, fewer, alone=alone)
    return replace(
        own_lower_bounds(made, asked), query=asked, warnings=(*asked.warnings, *made.warnings, line)
    )


PRIVACY_LINE_OPENINGS = ("the curator runs the ", "pure ε-DP: δ = ")
"""How :func:`central_delta_line`'s lines open (``privacy_lines`` finds them)."""


def privacy_lines(made: Plan) -> tuple[str, ...]:
    """``made``'s lines on the privacy a central plan given δ gives (which every surface
    that shows a plan in short, solve and validate, prints too)."""
    return tuple(line for line in made.warnings if line.startswith(PRIVACY_LINE_OPENINGS))


def central_delta_line(
    made: Plan, delta: float | None, fewer: int | None = None, *, alone: bool = False
) -> str:
    """What a central plan given δ says of its privacy: pure ε-DP (the δ not spent), or
    that the curator runs ``made``'s shuffle protocol itself and each group is (ε, δ)-DP at
    the δ that protocol spends (the query's, or the covered top it is capped to), with
    ``fewer`` users in all than the pure ε-DP plan where known. ``alone``: the pure ε-DP
    protocol was asked for alone (``--protocol central``), so no shuffle run was weighed
    (a review: the line had said none needs fewer users, where one did)."""
    if not Setting.from_key(made.protocol).needs_delta:
        why = (
            "the pure ε-DP protocol was asked for alone; planner compare lists the shuffle "
            "protocols the curator may run"
            if alone
            else "no shuffle protocol the curator may run needs fewer users here"
        )
        return f"pure ε-DP: δ = {delta:.6g} is not spent ({why})"  # PRIVACY_LINE_OPENINGS[1]
    spent = made.tester_query.delta
    saving = "" if fewer is None else f", for {fewer:,} fewer users in all than the pure plan"
    return (  # opens with PRIVACY_LINE_OPENINGS[0]
        f"the curator runs the {made.protocol} protocol itself (the users' messages, the "
        f"shuffler and the analyser): each group is then (ε, δ)-DP at δ = {spent:.6g}, not "
        f"pure ε-DP{saving}; give no δ for a pure ε-DP plan"
    )


def delta_top(setting: Setting, table: ConstantTable) -> float | None:
    """The largest δ at which the setting's own protocol is covered (None: it takes no δ,
    or its constant is not calibrated); a mixed pair's, its shuffle group's model's."""
    if setting.is_mixed:
        spending = [model for model in setting.group_models if model.needs_delta]
        if not spending:
            return None
        setting = Setting(spending[0], setting.coin)
    protocol = protocol_for(setting)
    if not protocol.needs_delta or not table.has_setting(protocol.key):
        return None
    constant = table.for_setting(protocol.key)
    if constant.source is not ConstantSource.CALIBRATED or "delta" not in constant.covered:
        return None
    return constant.covered["delta"][1]


def delta_capped(query: Query, table: ConstantTable) -> Query:
    """The query at :func:`delta_top` where it asks a larger δ (else the query itself).

    A mechanism that is (ε, δ′)-DP is (ε, δ)-DP for every δ ≥ δ′, so the plan at the
    covered top answers the query. Above it the protocol's own plan is not covered, and
    the covered plan left had been a local randomizer's: 156,930,332 users in all at
    k = 1000, α = 0.1, ε = (1, 0.25), δ = 0.002, against 46,264 at δ = 10⁻³."""
    top = delta_top(query.setting, table)
    if top is None or query.delta is None or not query.delta > top:
        return query
    return replace(query, delta=top)


def at_capped_delta(made: Plan, query: Query) -> Plan:
    """``made`` (the plan of ``query`` at its capped δ, :func:`delta_capped`) as the
    query's plan: where the protocol that runs spends δ, its tester point says at which,
    and a line says why. A protocol whose users do not depend on δ
    (``Protocol.users_free_of_delta``) runs at the asked δ: its flood, and so each user's
    messages, is sized there (a review found 4 – 9× the messages the asked δ = 0.1 needs:
    k = 1000, α = 1, ε = (0.415, 1.369), 72.3 and 84.0 a user against 8.1 and 9.8)."""
    protocol = protocol_for(made.protocol)
    if not protocol.needs_delta:  # a local randomizer: δ plays no part
        return _replaced(made, query=query)
    if protocol.users_free_of_delta:
        tester = replace(made.tester_query, delta=query.delta)
        runs = made.runs
        groups = tuple(
            _replaced(
                group,
                messages_by=_protocol_messages(
                    protocol, tester, eps, group.n_users // runs, made.coverage
                ),
            )
            for group, eps in zip(made.groups, (tester.eps1, tester.eps2), strict=True)
        )
        return _replaced(made, query=query, groups=(groups[0], groups[1]))
    spent = made.query.delta
    assert spent is not None and query.delta is not None
    point = made.tester_point or LoweredPoint(query.eps1, query.eps2, query.alpha)
    asked = f"{query.delta:g}" if f"{query.delta:g}" != f"{spent:g}" else repr(query.delta)
    note = (
        f"planned at δ = {spent:g}, the largest δ the calibration covers (asked {asked}): "
        f"a mechanism that is (ε, {spent:g})-DP is (ε, δ)-DP for every larger δ"
    )
    return _replaced(
        made,
        query=query,
        tester_point=replace(point, delta=spent),
        warnings=(*made.warnings, note),
    )


def covered_at_query(query: Query, table: ConstantTable) -> bool:
    """Is the setting's own protocol covered at the query itself? Then its own plan
    (``plan_on_domain(..., fallback=False)``) is covered too: it starts from the query's
    own run and only covered tester points replace it (``planner.coverage`` asks before
    planning it). The run is remembered, so asking again costs a lookup."""
    run = _ProtocolRun.size(query, query.setting, table)
    return run.coverage is Coverage.CALIBRATED


PADDING_NODE_REACH = 2
"""A coupled protocol's grid node in k is weighed as a domain from k = node/this up
(:func:`padding_domains`)."""


def padding_domains(
    setting: Setting, table: ConstantTable, fallback: bool
) -> tuple[tuple[int, int, bool], ...]:
    """:func:`_padding_domains`, remembered with the table (a plan asks each time)."""
    key = ("padding_domains", setting.key, fallback)
    found = table.memo.get(key)
    if found is None:
        found = table.memo[key] = _padding_domains(setting, table, fallback)
    return found


def _padding_domains(
    setting: Setting, table: ConstantTable, fallback: bool
) -> tuple[tuple[int, int, bool], ...]:
    """Every larger domain a plan of ``setting`` may weigh, ascending: (domain, the least
    k it is weighed from, whether it is a coupled protocol's node, where each coupled
    protocol is weighed alone rather than the domain's whole plan).

    * The least covered k of each calibrated protocol it may run (16 for most protocols,
      64 for the hashed channels), from any k.
    * The k below which a protocol's tail rule raises its constants
      (``Protocol.largest_alpha_c_below_k``, 8 for k-ary randomized response), from any k.
    * Each grid node in k of a protocol sized by the largest C of its grid cell
      (``Protocol.coupled_groups``: a channel per group, and the hashed channels), from
      half of it: just below a node the cell's C is the largest of both nodes', and the
      node's own cell may need fewer users (a channel per group, α = 0.01, ε = (20, 1):
      35,745,285 users at k = 127 against 30,202,383 at k = 128). Each coupled protocol
      is weighed alone there, at every tester point of its own
      (:func:`_coupled_alone_on_node`): the node is what its plan can gain from. (The
      node's whole plan, weighed only where the plan so far ran a coupled protocol, left
      plans up to 28 % above a coupled protocol's own on the node where another protocol
      ran, and ``compare`` listed a mechanism alone below its setting's plan (a review);
      the whole plan for every plan had doubled a 10⁵-row sweep at k = 1000. Over 3,000
      random queries below the nodes and 700,000 sweep rows, each protocol alone gives
      the very plans the whole plan gave where that ran, and shuffle sweeps take 0.6×
      the time.)"""
    found: dict[int, tuple[int, bool]] = {}

    def add(domain: int, lowest: int, coupled_only: bool) -> None:
        before = found.get(domain)
        if before is None or (lowest, coupled_only) < before:
            found[domain] = (lowest, coupled_only)

    for protocol in _protocols_weighed(setting, table, fallback):
        constant = table.for_setting(protocol.key)
        if constant.source is not ConstantSource.CALIBRATED:
            continue
        least = constant.covered.get("k", (0.0, 0.0))[0]
        if least > 0:
            add(math.ceil(least), 0, False)
        # below its tail rule's k a protocol reads larger constants: the domain at that k
        # answers the queries below it as well (k-RR, k = 7, α = 0.14, ε = (10.2, 14.65),
        # β = 0.05 had run a channel per group on 16 bins, 10,902 users, where k-RR on
        # 8 bins needs 8,234)
        tail = protocol.largest_alpha_c_below_k
        if tail and tail >= least:
            add(tail, 0, False)
        if protocol.coupled_groups and constant.grid_nodes() is not None:
            for node in constant.grid_axis("k"):
                domain = round(node)
                add(domain, math.ceil(domain / PADDING_NODE_REACH), True)
    return tuple((domain, *found[domain]) for domain in sorted(found))


def _padding_wins(padded: Plan, made: Plan, split: Split) -> bool:
    """Does the plan on a larger domain replace ``made``: a covered plan beats one outside
    the covered region, and between covered plans the fewer users in all (under
    ``Split.PAPER`` also no more in either group, as for a lower point)."""
    if padded.coverage is not Coverage.CALIBRATED:
        return False
    if made.coverage is not Coverage.CALIBRATED:
        return True
    if padded.total_users >= made.total_users:
        return False
    return split is Split.FEWEST or (
        padded.n_users_group1 <= made.n_users_group1
        and padded.n_users_group2 <= made.n_users_group2
    )


def _on_padded_domain(padded: Plan, query: Query, made: Plan) -> Plan:
    """``padded`` (the plan of ``query`` on a larger domain) as the query's plan: its
    tester point names the domain, its lower bounds are the query's, and a line says
    where it runs and what the query's own domain needed (``made``, its plan there)."""
    point = padded.tester_point
    domain = padded.query.k
    tester = LoweredPoint(
        query.eps1 if point is None else point.eps1,
        query.eps2 if point is None else point.eps2,
        query.alpha if point is None else point.alpha,
        domain,
    )
    outside = made.coverage is not Coverage.CALIBRATED
    if padded.total_users < made.total_users:
        compared = f"fewer than {made.total_users:,} on the asked domain" + (
            " (outside the covered region)"
            if outside
            # a new user's review: why would more bins need fewer users?
            else " (on a node of the calibration grid a plan reads that node's constant, "
            "between nodes a larger one)"
        )
    else:  # taken because the asked domain's plan is not covered
        compared = f"where the asked domain's {made.total_users:,} lie outside the covered region"
    note = (
        f"the tester runs on a domain of k = {domain:,} (asked {query.k:,}): "
        f"{padded.total_users:,} users in all, {compared}; it answers this query "
        f"({_bins(query.k)} domain is {_bins(domain)} one whose other bins never occur, with "
        "the same total variation)"
    )
    # a hint about another k speaks of the padded query's k: the plan says where it runs
    kept = tuple(line for line in padded.warnings if not line.startswith(LARGER_K_HINT))
    return _replaced(
        padded,
        query=query,
        tester_point=tester,
        groups=_lower_bounds_at_the_query(padded.groups, query, query.setting),
        warnings=(*kept, note),
    )


def poisson_groups_at(plan: Plan, sizes: tuple[int, int]) -> tuple[GroupPlan, GroupPlan]:
    """A Poisson-noise shuffle plan's groups run with ``sizes`` users (an allocation's, or a
    validation's): each group's noise as its tester runs it there, equal mixing weights
    over one run's users (``validators.shuffle_private.noise_levels``: μ_g = max(s·n_g,
    μ_g^min), s = max_g μ_g^min/n_g), and each user's messages 1 + (bins·hashes)·μ_g/n_g,
    the bins per unit of noise read off the plan's own figures (a review found these
    fields left empty wherever an allocation moved a size: every plan states them)."""
    runs = plan.runs
    lows: list[float] = []
    bins: list[float] = []  # bins·hashes per unit of noise, at the plan's own sizes
    for group in plan.groups:
        low, mu, sent = group.noise_mu_minimum, group.noise_mu, group.eager_messages
        if low is None or mu is None or sent is None:  # no Poisson noise: none stated
            return (
                replace(plan.groups[0], n_users=sizes[0], noise_mu=None, eager_messages=None),
                replace(plan.groups[1], n_users=sizes[1], noise_mu=None, eager_messages=None),
            )
        lows.append(low)
        bins.append((sent - 1.0) * (group.n_users // runs) / mu)
    per_run = [max(1, size // runs) for size in sizes]
    scale = max(low / n for low, n in zip(lows, per_run, strict=True))
    noise = [max(scale * n, low) for low, n in zip(lows, per_run, strict=True)]
    first, second = (
        replace(group, n_users=size, noise_mu=mu, eager_messages=1.0 + b * mu / n)
        for group, size, mu, b, n in zip(plan.groups, sizes, noise, bins, per_run, strict=True)
    )
    return first, second


def rescaled_messages(messages_by: Callable[[], float | None], factor: float) -> float | None:
    """A multi-message group's messages per user once its users are scaled by 1/``factor``
    (an allocation's new size, same ε): its noise messages are a fixed total, so each
    user's share moves by ``factor``, 1 + (m − 1)·factor."""
    messages = messages_by()
    return None if messages is None else 1.0 + (messages - 1.0) * factor


def _protocol_messages(
    protocol: Protocol, query: Query, eps: float, n_run: int, coverage: Coverage
) -> Callable[[], float | None] | None:
    """A multi-message protocol's expected messages per user (``Protocol
    .messages_per_user``) for a group at ε with ``n_run`` users, to be computed when read,
    where the plan is covered (its flood's search is bounded there; an uncovered plan is
    never the one printed); None for the others."""
    if protocol.messages_per_user is None or query.delta is None:
        return None
    if coverage is not Coverage.CALIBRATED:
        return None
    return functools.partial(protocol.messages_per_user, query, eps, n_run)


def _bins(k: int) -> str:
    """ "a 16-bin", "an 8-bin", "an 11-bin" (the article as the number is said)."""
    spoken = f"{k:,}"
    vowel = spoken.startswith("8") or (spoken.startswith(("11", "18")) and len(spoken) in (2, 6))
    return f"{'an' if vowel else 'a'} {spoken}-bin"


def plan_on_domain(
    query: Query, table: ConstantTable, fallback: bool = True, split: Split = Split.FEWEST
) -> Plan:
    """:func:`plan` on the query's own domain only (no larger domain weighed; the query
    checked, ``split`` not ``HOMOGENEOUS``): what ``planner.coverage`` simulates when it
    is outside the covered region."""
    made = _plan_on_domain(query, table, fallback, split, None)
    assert made is not None
    return made


def _plan_on_domain(
    query: Query, table: ConstantTable, fallback: bool, split: Split, to_beat: int | None
) -> Plan | None:
    """:func:`plan_on_domain`; with ``to_beat``, None where its plan would not be covered
    or would need at least that many users in all (no plan is assembled then: a larger
    domain ``plan`` weighs and does not take). Remembered per query (its warnings
    included: the plan carries them), split, ``to_beat`` and ``_PRUNE_CANDIDATES``."""
    weighing = _weighing(query.setting, table, fallback)
    key = (
        *weighing.key,
        split.value,
        _PRUNE_CANDIDATES,
        to_beat,
        *_query_values(query),
        query.warnings,
    )
    made = _remembered(
        _DOMAIN_PLANS,
        table,
        key,
        lambda: _assembled_on_domain(query, table, fallback, split, to_beat, weighing),
        _DOMAIN_PLANS_MAX,
        weighing.constants,
    )
    return None if made is _NOT_TAKEN else made


_NOT_TAKEN = object()
"""``_DOMAIN_PLANS``'s entry for a domain whose plan was not assembled (None is "not
remembered" there)."""


def _assembled_on_domain(
    query: Query,
    table: ConstantTable,
    fallback: bool,
    split: Split,
    to_beat: int | None,
    weighing: _Weighing,
) -> Any:
    """:func:`_plan_on_domain`, sized and assembled (``_NOT_TAKEN`` for its None)."""
    asked, notes = _cheapest_protocol(query, table, fallback, split, weighing)
    best, best_notes, best_point = asked, notes, None
    reference = asked
    paper = asked  # the paper split's plan (``Split.PAPER``), for the lines comparing both
    fewest: tuple[LoweredPoint | None, _ProtocolRun] = (None, asked)  # the default's choice
    if table.for_setting(query.setting.key).source is ConstantSource.CALIBRATED:
        regions = _direct_regions(query, table, fallback)
        kinks = grid_kinks(query.setting, table)
        tops = alpha_tops(query.setting, table, fallback)
        nodes = alpha_nodes_below(query.alpha, kinks.alpha_nodes)
        tops = (*tops, *(node for node in nodes if node not in tops))  # last, largest first:
        # as the sweeps weigh them
        least = least_eps_of(query, table, fallback)
        capped, points = _remembered(
            _POINTS,
            kinks,
            (id(kinks), query.eps1, query.eps2, query.alpha, *regions, None, *tops, "at", *least),
            lambda: _points_weighed(query, regions, kinks, tops, least),
        )
        runs = []
        # a point none of whose protocols can need fewer users than the query's own plan
        # (``_least_users``) can be chosen by no rule below: it is not sized
        unbeatable = (
            max(_fewest_users(asked), asked.total_users)
            if _PRUNE_CANDIDATES and asked.coverage is Coverage.CALIBRATED
            else None
        )
        if _PRUNE_CANDIDATES and to_beat is not None:  # no point at or above it is taken
            unbeatable = to_beat if unbeatable is None else min(unbeatable, to_beat)
        for at in points:  # (ε1, ε2, α)
            lowered = at_point(query, *at)
            if unbeatable is not None and at not in capped:
                values = _query_values(lowered)
                if _least_users_weighed(lowered, table, weighing, values) >= unbeatable:
                    continue
            run, run_notes = _cheapest_protocol(lowered, table, fallback, split, weighing)
            if run.coverage is Coverage.CALIBRATED:
                runs.append((LoweredPoint(*at), run, run_notes))
        # ε above 1 (outside the theorems' range), or at β < 1/3 α above direct
        # calibration's top (where the vote costs up to 10× more): a capped point (the
        # cheapest) is the reference when it needs fewer users in all, or when the query's
        # own plan is not covered (α above every covered top: a review found the paper's
        # split refused there while the default ran at the top)
        for point, run, run_notes in runs:
            if (point.eps1, point.eps2, point.alpha) in capped and (
                run.total_users < reference.total_users
                or reference.coverage is not Coverage.CALIBRATED
            ):
                reference = paper = run
                best, best_notes, best_point = run, run_notes, point
        if split is Split.FEWEST:  # of the query and every point, the fewest in all
            best, best_notes, best_point = asked, notes, None
        for point, run, run_notes in runs:
            if _no_group_larger(run, reference) and run.total_users < paper.total_users:
                paper = run
            if split is Split.FEWEST:  # a covered point beats an uncovered query
                kept = best.coverage is not run.coverage or _fewest_users(run) < _fewest_users(best)
            else:
                kept = _no_group_larger(run, reference) and run.total_users < best.total_users
            if kept:
                best, best_notes, best_point = run, run_notes, point
        for point, run, _ in runs:  # the default's choice, for the paper split's line
            if fewest[1].coverage is not run.coverage or _fewest_users(run) < _fewest_users(
                fewest[1]
            ):
                fewest = (point, run)
    if to_beat is not None and (
        best.coverage is not Coverage.CALIBRATED
        or (_fewest_users(best) if split is Split.FEWEST else best.total_users) >= to_beat
    ):
        return _NOT_TAKEN  # the plan's users in all, as assembled below
    if best_point is None:
        made = best.plan(query, table, notes, split)
        if split is Split.FEWEST:
            made = _split_by_variance(made, best)
    else:
        lowered = at_point(query, best_point.eps1, best_point.eps2, best_point.alpha)
        made = best.plan(lowered, table, best_notes, split)
        asked_users = asked.total_users
        if split is Split.FEWEST:
            made, asked_users = _split_by_variance(made, best), _fewest_users(asked)
        note = _lowered_note(query, best_point, made, asked, asked_users)
        made = _replaced(
            made,
            query=query,
            tester_point=best_point,
            groups=_lower_bounds_at_the_query(made.groups, query, query.setting),
            warnings=(*made.warnings, note),
        )
    hints: list[str | None] = []
    covered_fewest = fewest[1].coverage is Coverage.CALIBRATED
    far_fewer = _fewest_users(fewest[1]) <= SPLIT_HINT_SHARE * made.total_users
    if split is Split.PAPER and covered_fewest and far_fewer:
        hints.append(_fewest_split_hint(*fewest, made))
    covered_paper = paper.coverage is Coverage.CALIBRATED  # else it plans no such numbers
    made_sizes = (made.n_users_group1, made.n_users_group2)
    if split is Split.FEWEST and covered_paper and not _no_group_larger_sizes(made_sizes, paper):
        hints.append(_paper_split_hint(paper, made))
    if made.repetition.method is RepetitionMethod.MAJORITY_VOTE:
        hints.append(_larger_k_hint(query, made, best.constant, table, fallback))
    shown = tuple(hint for hint in hints if hint)
    return _replaced(made, warnings=(*made.warnings, *shown)) if shown else made


SPLIT_HINT_SHARE = 0.8
"""A plan with the paper's split names the default's split when that needs at most this
share of its users in all (the default plan never needs more in all than any point)."""


def _fewest_split_hint(point: LoweredPoint | None, run: _ProtocolRun, made: Plan) -> str:
    """The default (fewest users in all) split, in words, for a plan that kept the paper's
    split although the default needs far fewer users in all."""
    n1, n2 = _variance_sizes(run) or run.named_users
    if point is None:
        at = "the query (its users split by the tester's variance)"
    else:
        at = ", ".join(
            f"{symbol} = {apart_texts(value, asked)[0]}"
            for _, symbol, value, asked in _lowered(made.query, point)
        )
    return (
        f"the default split (--allocation fewest) needs fewer users in all: n1 = {n1:,}, "
        f"n2 = {n2:,} ({n1 + n2:,}, against this plan's {made.total_users:,}), its "
        f"tester at {at}; this plan keeps the paper's split, giving no group more users "
        "than the paper's split at the query"
    )


def _paper_split_hint(paper: _ProtocolRun, made: Plan) -> str:
    """The paper's split, in words, where it needs fewer users than the default plan in
    one group (and more in all): the trade-off ``--allocation paper`` keeps. Its sizes
    are the cheapest such run at the points the plan weighed; ``paper_split_line`` states
    the paper split's own plan instead where that is at hand (``planner.api``)."""
    return paper_split_line(paper.named_users, made)


PAPER_SPLIT_LINE = "the paper's split needs fewer users in"
"""How the line naming the paper split's sizes opens (:func:`paper_split_line`)."""


def paper_split_line(sizes: tuple[int, int], made: Plan) -> str:
    """The line naming the paper split's (n1, n2) beside the default plan ``made``, where
    they need fewer users in a group and more in all; "" where they do not."""
    n1, n2 = sizes
    fewer = [
        f"group {index}"
        for index, (theirs, ours) in enumerate(
            zip((n1, n2), (made.n_users_group1, made.n_users_group2), strict=True), start=1
        )
        if theirs < ours
    ]
    if not fewer or n1 + n2 <= made.total_users:
        return ""
    return (
        f"{PAPER_SPLIT_LINE} {' and '.join(fewer)} and more in all: "
        f"n1 = {n1:,}, n2 = {n2:,} ({n1 + n2:,}; --allocation paper)"
    )


def _no_group_larger(run: _ProtocolRun, than: _ProtocolRun) -> bool:
    """Does ``run`` need at most ``than``'s users in each named group?"""
    return _no_group_larger_sizes(run.named_users, than)


def _no_group_larger_sizes(sizes: tuple[int, int], than: _ProtocolRun) -> bool:
    return all(a <= b for a, b in zip(sizes, than.named_users, strict=True))


def variance_split(
    n1: Any, n2: Any, gamma1: Any, gamma2: Any, cost1: float = 1.0, cost2: float = 1.0
) -> tuple[Any, Any]:
    """Local sizes with the cheapest c1·n1 + c2·n2 at the null variance of (n1, n2).

    The Hadamard tester's null variance per block is Σ_g γ_g²/(4 m_g), so every
    (n1, n2) with the same W = γ1²/n1 + γ2²/n2 tests alike (and its variance under an
    alternative, 4·Σ_j Δ_j²·(v1_j + v2_j), moves with W too); the cheapest is
    n_g = (γ_g/√c_g)·(Σ_h γ_h√c_h)/W (Lagrange). At unit costs, the fewest users in all,
    n_g = γ_g·(γ1 + γ2)/W: the default plan's split of one run, where the paper's rule
    n_g ∝ γ_g² needs up to twice as many (ε = (1, 0.1)); with costs, ``--allocation
    cost``. Scalars or numpy arrays alike, with the same operations in the same order
    (sweep rows equal plans; √1 = 1 and ×1, ÷1 are exact)."""
    root1, root2 = cost1**0.5, cost2**0.5
    budget = gamma1 * gamma1 / n1 + gamma2 * gamma2 / n2
    spread = gamma1 * root1 + gamma2 * root2
    return gamma1 / root1 * spread / budget, gamma2 / root2 * spread / budget


def _variance_sizes(run: _ProtocolRun) -> tuple[int, int] | None:
    """A local run's named groups resized by :func:`variance_split`, run by run, when that
    needs fewer users in all (else None, as for the other models)."""
    protocol = protocol_for(run.protocol)
    if protocol.variance_weight is None or protocol.coupled_groups:
        return None  # not a variance family, or sized by its variance already
    runs = run.repetition.runs
    n1, n2 = run.named_users
    exact1, exact2 = variance_split(
        n1 // runs,
        n2 // runs,
        protocol.variance_weight(run.query.k, run.query.eps1),
        protocol.variance_weight(run.query.k, run.query.eps2),
    )
    sizes = runs * math.ceil(exact1), runs * math.ceil(exact2)
    return sizes if sum(sizes) < n1 + n2 else None


def _total_users(run: _ProtocolRun) -> int:
    """Users in all of a run as sized (the paper's split)."""
    return run.total_users


def _fewest_users(run: _ProtocolRun) -> int:
    """Users in all by the default split (:func:`_variance_sizes` in the local model),
    kept on the run (a plan compares it at every point)."""
    fewest = run.fewest
    if fewest < 0:
        sizes = _variance_sizes(run)
        fewest = run.fewest = run.total_users if sizes is None else sum(sizes)
    return fewest


def _split_by_variance(made: Plan, run: _ProtocolRun) -> Plan:
    """The default plan's groups resized by :func:`_variance_sizes` (a line says so and
    what the paper's split needed); ``made`` is ``run``'s plan."""
    sizes = _variance_sizes(run)
    if sizes is None:
        return made
    n1, n2 = sizes
    groups = (_replaced(made.groups[0], n_users=n1), _replaced(made.groups[1], n_users=n2))
    weight = protocol_for(run.protocol).variance_weight
    assert weight is not None
    gamma1, gamma2 = weight(run.query.k, run.query.eps1), weight(run.query.k, run.query.eps2)
    note = (
        f"split by the tester's variance: n_g ∝ γ_g (γ1 = {gamma1:.4g}, γ2 = {gamma2:.4g}) "
        f"keeps its null variance with {n1 + n2:,} users in all, where the paper's n_g ∝ "
        f"γ_g² needs {made.total_users:,}"
    )
    # the lines about a group above the baseline, for these sizes
    kept = tuple(w for w in made.warnings if ABOVE_BASELINE not in w)
    above = tuple(_above_baseline_line(g) for g in groups if g.saving_users < 0)
    return _replaced(
        made,
        groups=groups,
        warnings=(*kept, *above, note),
        paper_split_users=(made.n_users_group1, made.n_users_group2),
    )


def _homogeneous_plan(query: Query, table: ConstantTable, fallback: bool) -> Plan:
    """``Split.HOMOGENEOUS``: the plan of the query with the stronger ε lowered to the
    weaker, run for the query itself (its tester point says where it runs)."""
    weak = min(query.eps1, query.eps2)
    inner = plan(replace(query, eps1=weak, eps2=weak), table, fallback=fallback)
    # an equal-ε plan may run group 2 lower (``_tester_points``): the homogeneous protocol
    # runs both groups at the lower ε of its point instead, lowering until they agree (a
    # finite ladder), so that planning its point again gives it
    while inner.tester_point is not None and inner.tester_point.eps1 != inner.tester_point.eps2:
        lower = min(inner.tester_point.eps1, inner.tester_point.eps2)
        inner = plan(replace(query, eps1=lower, eps2=lower), table, fallback=fallback)
        weak = lower
    if query.eps1 == query.eps2 and weak == query.eps1:
        return _replaced(inner, split=Split.HOMOGENEOUS)
    point = inner.tester_point or LoweredPoint(weak, weak, query.alpha)
    same = point.eps1 == point.eps2
    where = f"ε = {point.eps1:g}" if same else f"ε1 = {point.eps1:g}, ε2 = {point.eps2:g}"
    if point.alpha != query.alpha:
        where += f", α = {point.alpha:g}"
    note = (
        f"the homogeneous protocol: both groups run at {where} (a group run at a smaller ε "
        "is still ε-DP)"
    )
    # the paper's roles follow the query's ε (1: the larger); the equal-ε plan's lines
    # about its own point (its totals, its vote) are not this query's
    roles = (1, 2) if query.eps1 >= query.eps2 else (2, 1)
    groups = tuple(
        _replaced(group, paper_role=role) for group, role in zip(inner.groups, roles, strict=True)
    )
    kept = tuple(line for line in inner.warnings if not line.startswith("the tester runs at"))
    return _replaced(
        inner,
        query=query,
        tester_point=point,
        split=Split.HOMOGENEOUS,
        groups=_lower_bounds_at_the_query((groups[0], groups[1]), query, query.setting),
        warnings=(*kept, note),
    )


def _lower_bounds_at_the_query(
    groups: tuple[GroupPlan, GroupPlan], query: Query, protocol: Setting
) -> tuple[GroupPlan, GroupPlan]:
    """The groups of a plan run below its query, with the lower bound (and the gap to it)
    of the query itself: a lower bound of an easier problem (smaller α, larger ε) is no
    lower bound of the query's. ``protocol``: the asked setting (its lower bound holds for
    every protocol that answers it)."""
    lower = BOUNDS[protocol_for(protocol).lower_bound_key]
    redone = []
    for group, eps in zip(groups, (query.eps1, query.eps2), strict=True):
        value = _bound_value(lower.key, (("k", query.k), ("alpha", query.alpha), ("eps", eps)))
        gap = group.optimality_gap * group.lower_bound / value
        redone.append(_replaced(group, lower_bound=value, optimality_gap=gap))
    return redone[0], redone[1]


def _protocols_weighed(setting: Setting, table: ConstantTable, fallback: bool) -> list[Protocol]:
    """Every protocol :func:`_cheapest_protocol` may size for a query of ``setting`` (a
    superset: the least users over them is a lower limit on its choice's)."""
    own = protocol_for(setting)
    if not fallback:
        return [own]
    private = private_coin_protocol(own)
    return [
        protocol
        for protocol in (own, *((private,) if private else ()), *other_mechanisms(own))
        if table.has_setting(protocol.key)
    ]


@dataclass(frozen=True)
class _Weighing:
    """The protocols a plan of one setting weighs (``_protocols_weighed``), their constants,
    and the key that names them in a memory: the table's and every constant's ``id`` with
    its L and hashes (``_compression``, read once a plan)."""

    protocols: tuple[Protocol, ...]
    constants: tuple[SettingConstant, ...]
    key: tuple[Any, ...]


def _weighing(setting: Setting, table: ConstantTable, fallback: bool) -> _Weighing:
    key = ("weighed protocols", setting.key, fallback)
    found = table.memo.get(key)
    if found is None:  # the protocols and their constants: the table's, remembered with it
        protocols = tuple(_protocols_weighed(setting, table, fallback))
        found = table.memo[key] = (
            protocols,
            tuple(table.for_setting(protocol.key) for protocol in protocols),
        )
    protocols, constants = found
    named = tuple(value for c in constants for value in (id(c), *_compression(c)))
    return _Weighing(protocols, constants, (id(table), setting.key, fallback, *named))


def _least_users_weighed(
    query: Query, table: ConstantTable, weighing: _Weighing, values: tuple[Any, ...]
) -> float:
    """The least of :func:`_least_users` over the weighed protocols at ``query`` (its
    ``values``), remembered per point."""
    return _remembered(
        _LEAST,
        table,
        ("weighed", *weighing.key, *values),
        lambda: min(_least_users(query, other, table, values) for other in weighing.protocols),
        also_pinned=weighing.constants,
    )


def _cheapest_protocol(
    query: Query,
    table: ConstantTable,
    fallback: bool,
    split: Split = Split.PAPER,
    weighing: _Weighing | None = None,
) -> tuple[_ProtocolRun, tuple[str, ...]]:
    """The query's protocol sized, or, with ``fallback``, whichever of the protocols it may
    run instead needs fewer users (a covered plan first; counted as ``split`` splits
    them, :func:`_fewest_users` under the default; under ``Split.PAPER`` never a protocol
    with ``coupled_groups``): a public-coin protocol's
    private-coin twin, its model's other mechanisms and every less trusted model's
    protocols (``planner.protocols.other_mechanisms``, sized by constants of the same
    source), with the note that says which runs. Remembered per point, split and
    ``_PRUNE_CANDIDATES`` (the tests compare a pruned choice with one sized in full;
    ``weighing``: the query setting's, when the caller has it)."""
    weighing = weighing or _weighing(query.setting, table, fallback)
    key = (*weighing.key, split.value, _PRUNE_CANDIDATES, *_query_values(query))
    return _remembered(
        _CHEAPEST,
        table,
        key,
        lambda: _cheapest_protocol_of(query, table, fallback, split),
        _RUNS_MAX,
        weighing.constants,
    )


def _candidates(query: Query, table: ConstantTable, split: Split) -> list[Protocol]:
    """The protocols that may run instead of the query's own (``_cheapest_protocol``), in
    the order they are weighed: its private-coin twin, then ``other_mechanisms``, each
    sized by constants of the own's source (``--constants proof`` plans by proofs), and
    under ``Split.PAPER`` none with ``coupled_groups`` (a channel per group has its own
    split, not the theorems' trade-off between the groups, which ``paper`` and the
    allocations that start there keep)."""
    own = protocol_for(query.setting)
    private = private_coin_protocol(own)
    source = table.for_setting(own.key).source
    return [
        other
        for other in (*((private,) if private else ()), *other_mechanisms(own))
        if (
            other is private
            or (table.has_setting(other.key) and table.for_setting(other.key).source is source)
        )
        and not (split is Split.PAPER and other.coupled_groups)
    ]


def _displacing_note(
    other: Protocol, own: Protocol, own_covered: bool = True, where: str = "point"
) -> tuple[str, ...]:
    """The line a plan carries when ``other`` runs instead of the query's own ``own``
    (``own_covered`` off: because ``own`` is outside its covered region at the query's
    ``where``, e.g. "k", not because it needs more users; a review found the line claiming
    fewer users at δ = 0.002)."""
    private = other.setting.model is not own.setting.model
    why = ": a local randomizer's reports are private in every model" if private else ""
    if not own_covered:
        return (
            f"{own.title} is not covered at this query's {where}, so the {other.title} "
            f"protocol runs{why}",
        )
    if other is private_coin_protocol(own):
        return (
            "the public coin saves nothing here: the private-coin protocol (it simply "
            "ignores the coin) needs fewer users",
        )
    if not private:
        return (f"{other.title} needs fewer users here than {own.title}",)
    return (f"the {other.title} protocol needs fewer users here than {own.title}{why}",)


def _outside_at_every_point(query: Query, table: ConstantTable, protocol: Protocol) -> bool:
    """``protocol`` is outside its covered region in k or δ at the query, which no tester
    point below the query changes (they lower ε and α): its run there is extrapolated."""
    return bool(_outside_axes(query, table, protocol))


def _outside_axes(query: Query, table: ConstantTable, protocol: Protocol) -> tuple[str, ...]:
    """The axes, "k" and "δ", on which ``protocol`` is outside its covered region at the
    query (none where it has no calibrated constant)."""
    if not table.has_setting(protocol.key):
        return ()
    constant = table.for_setting(protocol.key)
    if constant.source is not ConstantSource.CALIBRATED:
        return ()
    eps_strong, eps_weak = max(query.eps1, query.eps2), min(query.eps1, query.eps2)
    delta = query.delta if protocol.needs_delta else None
    gaps = constant.coverage_gaps(query.k, query.alpha, eps_strong, eps_weak, delta)
    named = {"k": "k", "delta": "δ"}
    return tuple(dict.fromkeys(named[name] for name, *_ in gaps if name in named))


def _cheapest_protocol_of(
    query: Query, table: ConstantTable, fallback: bool, split: Split
) -> tuple[_ProtocolRun, tuple[str, ...]]:
    """:func:`_cheapest_protocol`, not remembered.

    Where the own protocol is outside its covered k or δ, any covered candidate displaces
    it, so the covered candidate with the fewest users is found without sizing the own
    (a sweep of 100 δ above the shuffle model's covered 10⁻³ at k = 3 and β = 0.1 had
    sized the two shuffle protocols at each of about 80 tester points of each row: 10 s);
    the own is sized where none is covered, as before."""
    own = protocol_for(query.setting)
    users = _fewest_users if split is Split.FEWEST else _total_users
    if fallback and _outside_at_every_point(query, table, own):
        best: _ProtocolRun | None = None
        best_protocol = own
        values = _query_values(query)
        for other_protocol in _candidates(query, table, split):
            if _outside_at_every_point(query, table, other_protocol):
                continue  # extrapolated too: it cannot be the covered one
            if (
                _PRUNE_CANDIDATES
                and best is not None
                and _least_users(query, other_protocol, table, values) >= users(best)
            ):
                continue
            other = _ProtocolRun.size(query, other_protocol.setting, table)
            if other.coverage is not Coverage.EXTRAPOLATED and (
                best is None or users(other) < users(best)
            ):
                best, best_protocol = other, other_protocol
        if best is not None:
            where = " and ".join(_outside_axes(query, table, own))
            return best, _displacing_note(best_protocol, own, own_covered=False, where=where)
    chosen = _ProtocolRun.size(query, query.setting, table)
    if not fallback:
        return chosen, ()
    notes: tuple[str, ...] = ()
    private = private_coin_protocol(own)
    values = _query_values(query)
    own_covered = chosen.coverage is not Coverage.EXTRAPOLATED
    for other_protocol in _candidates(query, table, split):
        # a covered (or unclaimed) plan is displaced only by fewer users: a candidate that
        # cannot need fewer is not sized (``_least_users``; the choice is the same)
        if (
            _PRUNE_CANDIDATES
            and chosen.coverage is not Coverage.EXTRAPOLATED
            and _least_users(query, other_protocol, table, values) >= users(chosen)
        ):
            continue
        other = _ProtocolRun.size(query, other_protocol.setting, table)
        # a covered plan beats an extrapolated one, and between covered plans the fewer
        # users in all as the default plan splits them (a local run by its tester's
        # variance); an extrapolated one displaces the query's own only if it is its
        # private-coin twin (the same tester, the same covered range), else the query's
        # own is simulated or refused by its own covered range
        other_out = other.coverage is Coverage.EXTRAPOLATED
        chosen_out = chosen.coverage is Coverage.EXTRAPOLATED
        if (other_out, users(other)) < (chosen_out, users(chosen)) and (
            not other_out or other_protocol is private
        ):
            chosen = other
            notes = _displacing_note(other_protocol, own, own_covered=own_covered)
    return chosen, notes


_PRUNE_CANDIDATES = True
"""Skip a candidate protocol whose least possible users cannot beat the chosen plan's
(``_cheapest_protocol``); off, every candidate is sized (the tests compare both)."""

_LEAST_MARGIN = 1.0 - 1e-9
"""The least users are scaled by this: the multiplier's interpolation (a weighted mean of
logs, then ``exp``) may land a few ulps below its least corner's C."""


def _least_users(
    query: Query, protocol: Protocol, table: ConstantTable, values: tuple[Any, ...] | None = None
) -> float:
    """A lower limit on ``_ProtocolRun.size(query, protocol.setting, table).total_users``,
    without sizing it: the strong group's C = 1 size at the query (``strong_order_size``,
    the ``base_strong`` the multiplier multiplies, whatever the multiplier) times the
    least multiplier, times the least direct factor (at β, or at a node above it for a
    vote of directly calibrated runs) when that is below 1. Every protocol rounds its
    strong group's users up from multiplier × base_strong (k-RR to at least
    ``MIN_USERS``), a vote runs at least once and a direct run's multiplier is C × the
    factor, and the weak group's users are ≥ 0. Remembered per constant and point
    (``values``: the query's ``_query_values``, when the caller has them)."""
    constant = table.for_setting(protocol.key)
    key = (id(constant), protocol.key, *(values or _query_values(query)), _compression(constant))
    known = _LEAST.get(key)
    if known is not None:
        return known
    return _remembered(_LEAST, constant, key, lambda: _least_users_of(query, protocol, constant))


def _least_users_of(query: Query, protocol: Protocol, constant: SettingConstant) -> float:
    """:func:`_least_users` with the protocol's constant."""
    eps_strong, eps_weak = sorted((query.eps1, query.eps2), reverse=True)
    factor = 1.0
    if query.beta < PER_RUN_ERROR:  # one run at β, or a vote's runs at a node above it
        for at in constant.run_betas(query.beta):
            direct = constant.direct_factor(at, query.k, eps_strong, query.alpha)
            if direct is not None:
                factor = min(factor, direct)
    delta, accounting = query.delta, query.accounting
    if not protocol.needs_delta:  # as ``with_setting`` leaves them for such a protocol
        delta, accounting = None, Accounting.EXACT
    base = strong_order_size(
        protocol.setting,
        query.k,
        query.alpha,
        eps_strong,
        eps_weak,
        delta,
        accounting,
        _compression(constant),
        constant.bound,
    )
    return _LEAST_MARGIN * factor * constant.least_multiplier * base


EPS_CAP = 1.0
"""A group's ε above this (outside the theorems' range, ε ≤ 1, and above every direct
calibration point) may be run at it (``plan``)."""


def _direct_regions(
    query: Query, table: ConstantTable, fallback: bool
) -> list[tuple[float, float]]:
    """The (ε_strong, α) tops of each region where direct calibration may hold at the
    query's (β, k), or at a direct node above β (a vote of such runs), for a protocol the
    query may run (a public-coin query also its model's
    private-coin one, with ``fallback``): ``SettingConstant.direct_regions``; empty where
    none has it. (``planner.vectorised`` leaves exactly the rows with some to ``plan``.)"""
    settings = [query.setting]
    private = private_coin_protocol(protocol_for(query.setting))
    if fallback and private is not None:
        settings.append(private.setting)
    regions: list[tuple[float, float]] = []
    for constant in (table.for_setting(setting.key) for setting in settings):
        if constant.has_direct_factor(query.beta, query.k):
            regions += [r for r in constant.direct_regions() if r not in regions]
    return regions


def alpha_tops(setting: Setting, table: ConstantTable, fallback: bool) -> tuple[float, ...]:
    """The covered α tops of the calibrated protocols a query of ``setting`` may run (its
    own, or with ``fallback`` every one :func:`_protocols_weighed` lists), below 1,
    largest first: a query above one is weighed at it too (``_capped_points``)."""
    tops = set()
    for protocol in _protocols_weighed(setting, table, fallback):
        constant = table.for_setting(protocol.key)
        if constant.source is ConstantSource.CALIBRATED and "alpha" in constant.covered:
            tops.add(constant.covered["alpha"][1])
    return tuple(sorted((top for top in tops if top < 1.0), reverse=True))


def _capped_points(
    query: Query, regions: list[tuple[float, float]], alpha_tops: tuple[float, ...] = ()
) -> list[tuple[float, float, float]]:
    """The (ε1, ε2, α) of the query with each ε capped at :data:`EPS_CAP`; where direct
    calibration may hold at (β, k), instead per region it covers (``_direct_regions``) each
    ε capped at the larger of 1 and the region's ε_strong top and α at its α top: a smaller
    ε or α only costs users where the factors hold. Above the covered α of a protocol the
    query may run (``alpha_tops``, :func:`alpha_tops`), also ε at 1 with α at that top:
    above it that protocol is not covered, and the query must not be dearer than its
    neighbour just inside (a tester for a smaller α rejects every pair farther apart). The
    points that change the query, first the direct points' own region."""
    caps = [(EPS_CAP, math.inf)] if not regions else [(max(EPS_CAP, e), a) for e, a in regions]
    caps.extend((EPS_CAP, top) for top in alpha_tops if query.alpha > top)
    points: list[tuple[float, float, float]] = []
    for eps_cap, alpha_cap in caps:
        point = (
            min(query.eps1, eps_cap),
            min(query.eps2, eps_cap),
            min(query.alpha, alpha_cap),
        )
        if point != (query.eps1, query.eps2, query.alpha) and point not in points:
            points.append(point)
    return points


def _points_weighed(
    query: Query,
    regions: list[tuple[float, float]],
    kinks: GridKinks,
    alpha_tops: tuple[float, ...],
    least: tuple[float, ...] = (),
) -> tuple[tuple[tuple[float, float, float], ...], tuple[tuple[float, float, float], ...]]:
    """The capped points (:func:`_capped_points`), and every point a plan weighs in its
    order: the capped points first, as the sweeps weigh them (each is the reference when
    it needs fewer users; on a tie the first point wins, so where a capped point is also a
    rung of the ladder, it is weighed at the front, not at the rung: a review found a
    sweep and ``plan`` splitting a tie at α above the covered top differently), then
    :func:`_tester_points`. Each point as its (ε1, ε2, α): a memory of plain tuples of
    floats, which the garbage collector stops tracking (``_remembered``; a review found
    ``LoweredPoint`` objects held here tripling a full collection's pause)."""
    capped = tuple(_capped_points(query, regions, alpha_tops))
    points = _tester_points(query, regions, kinks, alpha_tops, least)
    return capped, (*capped, *(point for point in points if point not in capped))


def _tester_points(
    query: Query,
    regions: list[tuple[float, float]],
    kinks: GridKinks,
    alpha_tops: tuple[float, ...] = (),
    least: tuple[float, ...] = (),
) -> list[tuple[float, float, float]]:
    """Where below the query its tester may run (see ``plan``), as (ε1, ε2, α), nearest
    first: the strong ε down :func:`strong_eps_ladder` (with the grids' ``kinks``), then
    each rung of :func:`weak_eps_ladder` with the strong ε at the query and down its ladder
    (at equal ε group 2 is the weaker; a mixed pair's protocol there runs both groups at
    the rung, so that either naming order gives one plan), then the weaker group at the
    largest ratio node below the query's (:func:`ratio_node_below`, the stronger at its own
    ε), then at each rung of the stronger group's ladder the weaker at that rung's ratio
    node below, and last both groups at each of ``least`` (where a weak-ε-only protocol
    needs the fewest users below the query, :func:`least_eps_rungs`; the one point that
    depends on k and α). At a β < 1/3 and k direct
    calibration is measured at, also the query and each of those with ε and α capped at each
    region's tops; and above a covered α top (``alpha_tops``; also the grids' α node just
    below the query's, :func:`alpha_nodes_below`), each with α at that top (as
    ``_capped_points``: a tester for a smaller α rejects every pair farther apart)."""
    strong_is_1 = query.eps1 >= query.eps2
    eps_strong, eps_weak = (query.eps1, query.eps2) if strong_is_1 else (query.eps2, query.eps1)
    rungs = [eps_strong, *strong_eps_ladder(eps_strong, eps_weak, kinks)]
    caps = [(math.inf, math.inf), *regions]
    caps.extend((math.inf, top) for top in alpha_tops if query.alpha > top)
    points: list[tuple[float, float, float]] = []
    asked = (query.eps1, query.eps2, query.alpha)
    seen = {asked}
    pairs = [(rung, eps_weak) for rung in rungs]
    for weak in weak_eps_ladder(eps_weak, kinks):  # the weaker group run lower too
        if eps_strong == eps_weak and query.setting.is_mixed:
            # a mixed pair's protocol at equal ε: both groups together, so that either
            # naming order gives one plan
            pairs.append((weak, weak))
            continue
        # (at equal ε, group 2 run lower as the weaker: a review found the shuffle model at
        # ε = (8.6, 8.6) needing 1,672,138 users, and 1,494,799 at (8.6, 8), both run at
        # (5.66, 3))
        pairs.append((eps_strong, weak))
        pairs.extend((rung, weak) for rung in strong_eps_ladder(eps_strong, weak, kinks))
    # the weaker group at the largest ratio node below the query's ratio, the stronger at
    # its own ε (one point: a cell's largest C steps there)
    node = ratio_node_below(eps_weak, eps_strong, kinks.ratio_nodes)
    if node is not None:
        pairs.append((eps_strong, node * eps_strong))
    # and at each rung of the stronger group's ladder, the weaker at that rung's ratio node
    # below (a cell's largest C steps there too: k = 31, α = 0.785, ε2 = 7.4, the stronger
    # run at 5, had needed 522 users at ε1 = 1.25, ratio 1/4, and 804 at ε1 = 1.3)
    for rung in rungs[1:]:
        node = ratio_node_below(eps_weak, rung, kinks.ratio_nodes)
        if node is not None:
            pairs.append((rung, node * rung))
    # last, both groups where a weak-ε-only protocol needs the fewest users below the query
    # (``least``: :func:`least_eps_rungs`; that protocol runs both groups there anyway)
    pairs.extend((weak, weak) for weak in least)
    for rung, eps_w in pairs:
        for top_eps, top_alpha in caps:
            strong, weak = min(rung, top_eps), min(eps_w, top_eps)
            eps1, eps2 = (strong, weak) if strong_is_1 else (weak, strong)
            values = (eps1, eps2, min(query.alpha, top_alpha))
            if values not in seen:
                seen.add(values)
                points.append(values)
    return points


def _lowered(query: Query, point: LoweredPoint) -> list[tuple[str, str, float, float]]:
    """(option, symbol, value at the point, asked value) of each input the point lowers."""
    return [
        (option, symbol, value, asked)
        for option, symbol, value, asked in (
            ("eps1", "ε1", point.eps1, query.eps1),
            ("eps2", "ε2", point.eps2, query.eps2),
            ("alpha", "α", point.alpha, query.alpha),
            ("k", "k", query.k if point.k is None else point.k, query.k),
        )
        if value != asked
    ]


def _lowered_note(
    query: Query, point: LoweredPoint, made: Plan, asked: _ProtocolRun, asked_users: int
) -> str:
    """The line a plan run below its query prints: where, and what the query's own point
    would have cost (``asked_users``: by the plan's split)."""
    lowered = [
        "{} = {} (asked {})".format(symbol, *apart_texts(value, given))
        for _, symbol, value, given in _lowered(query, point)
    ]
    why = []
    if (point.eps1, point.eps2) != (query.eps1, query.eps2):
        why.append("a group run at a smaller ε is still ε-DP")
    if point.alpha != query.alpha:
        why.append(f"a tester for α = {point.alpha:g} rejects every pair farther apart")
    if asked.repetition.runs > 1:
        there = f"the {asked.repetition.runs}-run majority vote's {asked_users:,}"
    else:
        there = f"{asked_users:,}"
    if made.total_users < asked_users:
        compared = f"fewer than {there} at the asked values" + (
            " (outside the covered region)" if asked.coverage is not Coverage.CALIBRATED else ""
        )
    else:  # taken because the asked values' plan is not covered (a review: "the asked
        # values' the 7-run majority vote's 34,916 lie …")
        users = there if asked.repetition.runs > 1 else f"the {there}"
        compared = f"where {users} users at the asked values lie outside the covered region"
    return (
        "the tester runs at "
        + ", ".join(lowered)
        + f": {made.total_users:,} users in all, {compared}; it answers this query ("
        + "; ".join(why)
        + ")"
    )


LARGER_K_HINT = "fewer users with --k"
"""How :func:`_larger_k_hint`'s line starts."""


def _larger_k_hint(
    query: Query, made: Plan, constant: SettingConstant, table: ConstantTable, fallback: bool
) -> str | None:
    """For a majority-vote plan whose k lies below the direct points' least k: the directly
    calibrated plan at that k, when it needs fewer users in all, in words. It also answers
    the query: a k-bin domain is a larger one with empty bins (README, β). (Not made the
    plan itself: its tester and the validation's instances would have different k.)"""
    least_k = constant.direct_least_k()
    if made.repetition.method is not RepetitionMethod.MAJORITY_VOTE or not least_k:
        return None
    if query.k >= least_k:
        return None
    within = plan(replace(query, k=least_k), table, fallback=fallback)
    if (
        within.repetition.method is not RepetitionMethod.DIRECT
        or within.coverage is not Coverage.CALIBRATED
        or within.total_users >= made.total_users
    ):
        return None
    tester = "" if within.tester_point is None else " (its tester at smaller ε or α, as it says)"
    return (
        f"{LARGER_K_HINT} {least_k}: direct calibration needs {within.total_users:,} "
        f"users in all (n1 = {within.n_users_group1:,}, n2 = {within.n_users_group2:,})"
        f"{tester}, fewer than this vote's {made.total_users:,}; that plan also answers "
        f"this query (a {query.k}-bin domain is a {least_k}-bin one with empty bins)"
    )


@dataclass(slots=True)
class _ProtocolRun:
    """One protocol sized at a query (its constants, bound and tester): what choosing
    between protocols needs (users and coverage); :meth:`plan` completes it. (Not frozen:
    made once per protocol and plan and never changed, and a frozen ``__init__`` pays an
    ``object.__setattr__`` per field.)"""

    query: Query
    """The query with the protocol's setting."""
    protocol: Setting
    constant: SettingConstant
    compression: tuple[int, int]
    eps_strong: float
    eps_weak: float
    repetition: Repetition
    main: RunSizes
    coverage: Coverage
    outside: tuple[tuple[str, float, float, float], ...]
    """The covered ranges the point lies outside of (``coverage_gaps``)."""
    total_users: int
    """n1 + n2 of the plan this run gives."""
    named_users: tuple[int, int]
    """(n1, n2) of the plan this run gives (the larger ε plays the paper's group 1)."""
    fewest: int = -1
    """``_fewest_users``, once asked (-1 before): a plan compares it at every point."""

    @classmethod
    def size(cls, asked: Query, protocol: Setting, table: ConstantTable) -> _ProtocolRun:
        """``protocol`` sized at ``asked``, remembered per constant and point (its sizes,
        multiplier and coverage gaps are: a plan sizes its query again at the homogeneous
        and larger-k plans, a compare or an allocation its points again). The constant's
        tables are read once per point, as its grid's are; its L and hashes are part of the
        key (``_compression``)."""
        constant = table.for_setting(protocol.key)
        values = _query_values(asked)
        if not protocol_for(protocol).needs_delta:  # its run is the same at every δ
            values = (*values[:4], None, *values[5:])
        key = (id(constant), protocol.key, asked.setting.key, *values, _compression(constant))
        return _remembered(
            _RUNS, constant, key, lambda: cls._sized(asked, protocol, constant), _RUNS_MAX
        )

    @classmethod
    def _sized(cls, asked: Query, protocol: Setting, constant: SettingConstant) -> _ProtocolRun:
        query = with_setting(asked, protocol)
        eps_strong, eps_weak = sorted((query.eps1, query.eps2), reverse=True)
        compression = _compression(constant)
        repetition, main = _repetition(
            query,
            constant,
            lambda factor: _sizes(
                query, constant, compression, eps_strong, eps_weak, query.accounting, factor
            ),
        )
        grid_strong, grid_weak, _ = grid_position(
            query, eps_strong, eps_weak, query.accounting, constant
        )
        outside = _remembered(
            _GAPS,
            constant,
            (id(constant), query.k, query.alpha, grid_strong, grid_weak, query.delta),
            lambda: tuple(
                constant.coverage_gaps(query.k, query.alpha, grid_strong, grid_weak, query.delta)
            ),
        )
        if constant.source is not ConstantSource.CALIBRATED:
            coverage = Coverage.NONE
        else:
            coverage = Coverage.EXTRAPOLATED if outside else Coverage.CALIBRATED
        runs = repetition.runs
        strong, weak = runs * main.n_strong, runs * main.n_weak
        return cls(
            query,
            protocol,
            constant,
            compression,
            eps_strong,
            eps_weak,
            repetition,
            main,
            coverage,
            outside,
            strong + weak,
            (strong, weak) if query.eps1 >= query.eps2 else (weak, strong),
        )

    def plan(
        self,
        asked: Query,
        table: ConstantTable,
        notes: tuple[str, ...] = (),
        split: Split = Split.FEWEST,
    ) -> Plan:
        """The full plan: baseline, the other accounting, groups, terms, warnings (``notes``
        last)."""
        query, constant, main = self.query, self.constant, self.main
        eps_strong, eps_weak = self.eps_strong, self.eps_weak
        strong_is_group1 = query.eps1 >= query.eps2
        runs, factor = self.repetition.runs, self.repetition.factor
        baseline = _sizes(
            query, constant, self.compression, eps_weak, eps_weak, query.accounting, factor
        )
        alternative = None
        if protocol_for(query.setting).noise_messages:
            other = Accounting.PAPER if query.accounting is Accounting.EXACT else Accounting.EXACT
            other_sizes = _sizes(
                query, constant, self.compression, eps_strong, eps_weak, other, factor
            )
            n_other = (runs * other_sizes.n_strong, runs * other_sizes.n_weak)
            alternative = (other, *(n_other if strong_is_group1 else n_other[::-1]))
        elif asked.accounting is Accounting.PAPER:
            # a new user's review: the multi-message plan printed nothing of it
            notes = (*notes, _PAPER_ACCOUNTING_UNUSED.format(protocol_for(query.setting).title))

        # the asked setting's: what any protocol for the query needs, whichever one runs
        lower = BOUNDS[protocol_for(asked.setting).lower_bound_key]
        bins = main.compression.L if main.compression else query.k
        hashes = main.compression.hashes if main.compression else 1  # each hash run adds noise
        groups = []
        run = protocol_for(self.protocol)
        for role, eps in ((1, eps_strong), (2, eps_weak)):
            named_1 = (role == 1) == strong_is_group1  # the named group 1 plays this role
            n_run = main.n_strong if role == 1 else main.n_weak
            mu_min = main.mu_strong if role == 1 else main.mu_weak
            # never below the minimum, not even by s·n's last bit (the privacy rests on it)
            mu_used = None if mu_min is None else max(n_run * mixing_scale(main), mu_min)
            point = (("k", query.k), ("alpha", query.alpha), ("eps", eps))
            lower_value = _bound_value(lower.key, point)
            order_value = main.order_strong if role == 1 else main.order_weak
            groups.append(
                _made(
                    GroupPlan,
                    name="group 1" if named_1 else "group 2",
                    eps=eps,
                    n_users=runs * n_run,
                    paper_role=role,
                    noise_mu=mu_used,
                    noise_mu_minimum=mu_min,
                    eager_messages=(
                        None if mu_used is None else 1 + hashes * bins * mu_used / n_run
                    ),
                    messages_by=_protocol_messages(run, query, eps, n_run, self.coverage),
                    baseline_n_users=runs * (baseline.n_strong if role == 1 else baseline.n_weak),
                    lower_bound=lower_value,
                    optimality_gap=order_value / lower_value,
                )
            )
        named = (groups[0], groups[1]) if strong_is_group1 else (groups[1], groups[0])
        term_values = _bound_terms(main.bound.key, tuple(main.bound_values.items()))
        gaps = tuple(
            _describe_gap(axis, value, low, high, strong_is_group1)
            for axis, value, low, high in self.outside
        )
        warnings = asked.warnings + _warnings(query, constant, main, named)
        return _made(
            Plan,
            query=asked,
            protocol=self.protocol.key,
            groups=named,
            bound_key=main.bound.key,
            reference=main.bound.reference,
            terms=tuple(zip(main.bound.term_labels, term_values, strict=True)),
            dominant_term=main.bound.term_labels[term_values.index(max(term_values))],
            constant_source=constant.source,
            # 12 digits: C = 1 reads 1, not the division's 1.0000000000000002
            constant_multiplier=float(f"{main.n_strong / main.order_strong:.12g}"),
            constants_version=table.version,
            repetition=self.repetition,
            compression=main.compression,
            alternative_accounting=alternative,
            warnings=(*warnings, *notes),
            coverage=self.coverage,
            coverage_gaps=gaps,
            coverage_axes=tuple(axis for axis, *_ in self.outside),
            tester_point=None,
            split=split,
            mechanism=_mechanism_text(query, main),
            paper_split_users=None,
        )


def _mechanism_text(query: Query, main: RunSizes) -> str:
    """The protocol's words for what each user runs and sends (``Plan.mechanism``)."""
    describe = protocol_for(query.setting).mechanism
    if describe is None:
        return ""
    return describe(query, main.compression.L if main.compression else query.k)


def _sizes(
    query: Query,
    constant: SettingConstant,
    compression: tuple[int, int],
    eps_strong: float,
    eps_weak: float,
    accounting: Accounting,
    factor: float,
) -> RunSizes:
    """One run's sizes with the calibrated C (times ``factor``) at this point, remembered
    per constant and point as the multiplier is (a plan sizes its point, its baseline and
    the other accounting, and a public-coin plan both protocols)."""

    def made() -> RunSizes:
        multiplier = factor * calibrated_multiplier(
            query, constant, eps_strong, eps_weak, accounting, compression
        )
        return run_sizes(
            query, eps_strong, eps_weak, multiplier, constant.bound, accounting, compression
        )

    key = (*_point_key(query, constant, eps_strong, eps_weak, accounting, compression), factor)
    return _remembered(_SIZES, constant, key, made, _SIZES_MAX)


def _describe_gap(axis: str, value: float, low: float, high: float, strong_is_1: bool) -> str:
    """One covered range a point lies outside of, in the user's parameters."""
    strong, weak = ("eps1", "eps2") if strong_is_1 else ("eps2", "eps1")
    name = {
        "eps_strong": f"{strong} (the larger ε)",
        "eps_ratio": f"{weak}/{strong}",
        # a group's own floor (the multi-message flood's), or a range above the grid's k
        "eps_weak": f"{weak} (the smaller ε)" + (" at this k" if low == 0 else ""),
    }.get(axis, axis)
    shown = f"{value:.6g}" if axis != "k" else f"{value:,.0f}"
    return f"{name} = {shown} is outside the covered range [{low:g}, {high:g}]"


_ONE_RUN = Repetition(RepetitionMethod.NONE, 1, None, None)
"""β ≥ 1/3: one run of the tester (immutable, so shared by every such plan)."""


_Frozen = TypeVar("_Frozen", bound="DataclassInstance")
_FIELD_NAMES: dict[type, frozenset[str]] = {}


def _made(cls: type[_Frozen], **values: Any) -> _Frozen:
    """``cls(**values)`` for a frozen dataclass without ``__post_init__`` (``Plan``,
    ``GroupPlan``), given every field: one ``__dict__`` update instead of the generated
    ``__init__``'s ``object.__setattr__`` per field (a fifth of a plan's time)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        assert hasattr(cls, "__dict__") and not hasattr(cls, "__post_init__")
        names = _FIELD_NAMES[cls] = frozenset(cls.__dataclass_fields__)
    if values.keys() != names:
        raise TypeError(f"{cls.__name__} takes {sorted(names)}; given {sorted(values)}")
    made = object.__new__(cls)
    made.__dict__.update(values)
    return made


def _replaced(made: _Frozen, **changes: Any) -> _Frozen:
    """``dataclasses.replace(made, **changes)`` for a ``Plan`` or ``GroupPlan``, built as
    :func:`_made` builds them (``made`` has every field: only the changes are checked)."""
    cls = type(made)
    names = _FIELD_NAMES.get(cls)
    if names is None or not changes.keys() <= names:
        return _made(cls, **{**made.__dict__, **changes})
    copied = object.__new__(cls)
    fields = copied.__dict__
    fields.update(made.__dict__)
    fields.update(changes)
    return copied


def _repetition(
    query: Query, constant: SettingConstant, sized: Callable[[float], RunSizes]
) -> tuple[Repetition, RunSizes]:
    """The fewest users in total of: a majority vote of runs at 1/3, one run calibrated
    directly at β, and a vote of runs each calibrated directly at a direct node β_run
    above β (r exact binomial at β_run).

    ``sized(factor)`` is one run's sizes with the calibrated C times ``factor``.
    """
    one_run = sized(1.0)
    if query.beta >= PER_RUN_ERROR:
        return _ONE_RUN, one_run
    vote_runs = majority_vote_runs(query.beta, PER_RUN_ERROR)
    vote_total = vote_runs * (one_run.n_strong + one_run.n_weak)
    eps_strong = max(query.eps1, query.eps2)
    factor = constant.direct_factor(query.beta, query.k, eps_strong, query.alpha)
    direct_vote = _direct_vote(query, constant, sized, vote_runs, factor, vote_total)
    if factor is None:
        reason = constant.direct_unavailable(query.beta, query.k, eps_strong, query.alpha)
        vote = Repetition(RepetitionMethod.MAJORITY_VOTE, vote_runs, None, None, reason)
        return _fewer_by_vote(vote, one_run, vote_total, direct_vote)
    direct = sized(factor)
    merged = hash_floor_line(direct.compression, query.beta)
    if merged is not None:  # one run cannot meet β on every pair, however many users
        vote = Repetition(RepetitionMethod.MAJORITY_VOTE, vote_runs, None, None, merged)
        return _fewer_by_vote(vote, one_run, vote_total, direct_vote)
    direct_total = direct.n_strong + direct.n_weak
    if direct_total <= vote_total:
        if direct_vote is not None and direct_vote[2] < direct_total:
            return direct_vote[0], direct_vote[1]
        return Repetition(RepetitionMethod.DIRECT, vote_runs, factor, vote_total), direct
    vote = Repetition(RepetitionMethod.MAJORITY_VOTE, vote_runs, factor, direct_total)
    return _fewer_by_vote(vote, one_run, vote_total, direct_vote)


def _fewer_by_vote(
    vote: Repetition,
    one_run: RunSizes,
    vote_total: int,
    direct_vote: tuple[Repetition, RunSizes, int] | None,
) -> tuple[Repetition, RunSizes]:
    """The vote of runs at 1/3, or the vote of directly calibrated runs where that needs
    fewer users in all."""
    if direct_vote is not None and direct_vote[2] < vote_total:
        # why one run at β itself has no factor, where it has none
        return replace(direct_vote[0], direct_unavailable=vote.direct_unavailable), direct_vote[1]
    return vote, one_run


def _direct_vote(
    query: Query,
    constant: SettingConstant,
    sized: Callable[[float], RunSizes],
    vote_runs: int,
    factor: float | None,
    vote_total: int,
) -> tuple[Repetition, RunSizes, int] | None:
    """The cheapest vote of runs each calibrated directly at a direct node β_run above β
    (:attr:`RepetitionMethod.DIRECT_VOTE`), with its total users; None where no node
    above β has a factor here.

    Each run errs with probability at most β_run's operating error, below β_run, on
    disjoint users, so r runs with P(Binomial(r, β_run) ≥ r/2) ≤ β meet β; a
    validation checks one run against the per-run error that makes the vote's ≤ β
    (``planner.validators.engine``), as for the vote of runs at 1/3. ``vote_runs``,
    ``factor`` and ``vote_total``: that vote's runs and users, and the factor at β."""
    eps_strong = max(query.eps1, query.eps2)
    best: tuple[Repetition, RunSizes, int] | None = None
    for run_beta in reversed(constant.run_betas(query.beta)[1:]):  # largest first
        if run_beta >= PER_RUN_ERROR:
            continue
        run_factor = constant.direct_factor(run_beta, query.k, eps_strong, query.alpha)
        if run_factor is None:
            continue
        run = sized(run_factor)
        if hash_floor_line(run.compression, run_beta) is not None:
            continue
        runs = majority_vote_runs(query.beta, run_beta)
        total = runs * (run.n_strong + run.n_weak)
        if best is None or total < best[2]:
            repetition = Repetition(
                RepetitionMethod.DIRECT_VOTE,
                vote_runs,
                factor,
                vote_total,
                run_beta=run_beta,
                run_factor=run_factor,
                direct_vote_runs=runs,
            )
            best = (repetition, run, total)
    return best


@functools.lru_cache(maxsize=64)
def _operating_error(beta: float) -> float:
    from planner.statistics import operating_error  # scipy: only when a plan needs it

    return operating_error(beta)


def hash_floor_line(compression: Compression | None, beta: float) -> str | None:
    """Why one run of a public-coin tester cannot be held to β (None when it can).

    Its one public hash onto L buckets puts two given elements in the same bucket with
    probability 1/L; a pair of pmfs that differ in those two elements alone then looks
    equal, and the run accepts it. So one run errs on such a pair at least about 1/L of the
    time, whatever its users: above β's operating error (``operating_error(β)``), direct
    calibration at β is refused and independent hashes vote instead. (A review measured
    0.131 at L = 8, β = 0.1 and 0.216 at L = 4, β = 0.2, both FAIL, with such a pair given
    as ``--p-file/--q-file``; no built-in family differs in two elements alone.)
    """
    if compression is None or compression.hashes != 1 or beta >= PER_RUN_ERROR:
        return None
    floor = 1.0 / compression.L
    operating = _operating_error(beta)
    if floor <= operating:
        return None
    return (
        f"one public hash onto L = {compression.L} buckets merges two elements with "
        f"probability 1/L = {floor:.3g}, above the {operating:.3g} one run is held to for "
        f"β = {beta:g}: a pair differing in those two alone would be missed that often"
    )


ABOVE_BASELINE = "more users than the homogeneous protocol"
"""The phrase of the line a group needing more than the homogeneous baseline gets."""


def _above_baseline_line(group: GroupPlan) -> str:
    return (
        f"{group.name} needs {-group.saving_users:,} {ABOVE_BASELINE} at ε = min(ε1, ε2); "
        "--allocation cost (a cost per user) or fixed-n2 (a given n2) weighs other splits"
    )


_PAPER_ACCOUNTING_UNUSED = (
    "accounting paper does not apply: the {} protocol runs here, which sends no Poisson "
    "noise (the paper's lemma accounts for that noise alone; --protocol names a protocol "
    "that sends it)"
)


def _warnings(
    query: Query, constant: SettingConstant, sizes: RunSizes, groups: tuple[GroupPlan, ...]
) -> tuple[str, ...]:
    notes = []
    if constant.source is ConstantSource.ORDER:
        notes.append(
            "constant source 'order' (C = 1): the O(·) bound itself, NOT a guarantee "
            "that a tester succeeds with these numbers"
            + (f"; {constant.note}" if constant.note else "")
        )
    top = sizes.bound.eps_max  # 1 for the paper's theorems; k-RR's, channels': none
    for group in groups:
        if group.eps > top:
            notes.append(
                f"{group.name}: ε = {group.eps:g} > {top:g} is outside the theorems' range "
                f"(they assume ε ≤ {top:g})"
            )
        if group.saving_users < 0:
            notes.append(_above_baseline_line(group))
    if query.beta > PER_RUN_ERROR:
        notes.append(
            f"β = {beta_text(query.beta, 6)} > 1/3: planned for β = 1/3 (the theorems' target)"
        )
    largest_run = max(sizes.n_strong, sizes.n_weak)
    if largest_run > SIMULATION_N_MAX:
        notes.append(
            f"one run needs {largest_run:,} users in a group, above the {SIMULATION_N_MAX:.0e} "
            "a simulation takes: planner validate cannot check this plan, which rests on "
            "how the tester's cost scales beyond the grid (docs/coverage.md)"
        )
    if sizes.mu_weak is not None and groups:
        raised = [
            g
            for g in groups
            if g.noise_mu
            and g.noise_mu_minimum is not None
            and g.noise_mu > g.noise_mu_minimum * 1.001
        ]
        notes.extend(
            f"{g.name}: noise raised to μ = {g.noise_mu:.4g} (minimum "
            f"{g.noise_mu_minimum:.4g}) to keep equal mixing weights after rounding"
            for g in raised
        )
    return tuple(notes)


__all__ = [
    "Compression",
    "GroupPlan",
    "LoweredPoint",
    "Plan",
    "Repetition",
    "RepetitionMethod",
    "plan",
    "run_sizes",
]
