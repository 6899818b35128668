"""What the planner knows of one protocol: the record every ``planner/protocols`` module fills.

A protocol is one way of testing closeness under a privacy model and a coin: the bound it
is sized by, the real tester that meets it (``validators/``), how its groups trade users
(its allocation family) and how it is shown. The planner's other modules never name a
setting: they read these records (``planner.protocols.protocol_for``), so a new protocol
is its bound in ``formulas/``, its tester in ``validators/``, one module here and one line
in ``planner.protocols.PROTOCOLS``.

This module also holds what every protocol's sizing returns (:class:`RunSizes`,
:class:`Compression`) and the cached bound evaluations they share.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any, Generic, ParamSpec, TypeVar

import numpy as np

from planner.formulas.registry import BOUNDS, Bound
from planner.formulas.search import check_deadline
from planner.formulas.settings import Setting
from planner.inputs import Accounting, Query


@dataclass(frozen=True)
class Compression:
    """Public-coin domain compression: hash [k] onto [L] (docs/method.md)."""

    L: int
    """Compressed domain size used: the argmin, raised to the tester's calibrated floor."""
    L_closed_form: float
    """Stationary point of the bound in closed form (continuous, clipped to [2, k])."""
    L_paper: float
    """The paper's balance-point choice."""
    hashes: int = 1
    """Independent hashes R on disjoint users (priced by calibration; 1 = the paper's)."""
    L_argmin: int | None = None
    """Exact integer argmin of the bound over [2, k] (2 for the local bound, increasing in L)."""


@dataclass(frozen=True)
class RunSizes:
    """One run's users for the strong and weak group, before and after rounding."""

    n_strong: int
    n_weak: int
    order_strong: float
    """C = 1 real-valued size of the strong group (for the optimality gap)."""
    order_weak: float
    bound: Bound
    bound_values: dict[str, Any]
    mu_strong: float | None = None
    mu_weak: float | None = None
    compression: Compression | None = None
    shaped_strong: float | None = None
    """C = 1 size of the strong group under the bound the multiplier applies to (a
    constant's override, e.g. the tester-shaped local bound); None: ``order_strong``."""

    @property
    def base_strong(self) -> float:
        return self.order_strong if self.shaped_strong is None else self.shaped_strong


_Arguments = ParamSpec("_Arguments")
_Result = TypeVar("_Result")


class ComputedOnce(Generic[_Arguments, _Result]):
    """``functools.lru_cache`` for work split over threads: a call whose arguments another
    thread is computing waits for that result instead of computing it again.

    A sweep's threads (``planner.vectorised.plan_columns``) meet many of the same noise
    levels; with ``lru_cache`` both computed each one they asked for at the same time (the
    first run of a 10⁵-row shuffle sweep paid 3,422 root-finds for 2,307 distinct ε).
    Where the computing thread fails (its deadline passed), a waiting one computes the
    value itself; a waiting thread keeps its own deadline (``formulas.search``). A child
    process forked meanwhile forgets the calls in flight (their threads are not in it).
    At most ``maxsize`` results are kept, the least recently used dropped. Call it through
    a plain module function (``shuffle_private.noise_mu``), which pickles by name.
    """

    WAIT_SECONDS = 0.05
    """How often a waiting thread checks its deadline."""

    def __init__(self, function: Callable[_Arguments, _Result], maxsize: int) -> None:
        self.function = function
        self.maxsize = maxsize
        self._lock = threading.Lock()
        self._results: OrderedDict[Hashable, _Result] = OrderedDict()
        self._running: dict[Hashable, threading.Event] = {}
        os.register_at_fork(after_in_child=self._forget_running)

    def __call__(self, *args: _Arguments.args, **kwargs: _Arguments.kwargs) -> _Result:
        key = (args, tuple(sorted(kwargs.items())))
        while True:
            with self._lock:
                if key in self._results:
                    self._results.move_to_end(key)
                    return self._results[key]
                running = self._running.get(key)
                if running is None:
                    running = self._running[key] = threading.Event()
                    break
            # another thread computes it; if that fails, the loop claims it
            while not running.wait(self.WAIT_SECONDS):
                check_deadline()
        try:
            result = self.function(*args, **kwargs)
            with self._lock:
                self._results[key] = result
                if len(self._results) > self.maxsize:
                    self._results.popitem(last=False)
            return result
        finally:
            with self._lock:
                del self._running[key]
            running.set()

    def cache_clear(self) -> None:
        """Forget every result (calls being computed finish and are kept)."""
        with self._lock:
            self._results.clear()

    def _forget_running(self) -> None:
        """In a forked child: no thread computes what the parent's threads were computing."""
        self._lock = threading.Lock()
        self._running = {}


def mixing_scale(sizes: RunSizes) -> float:
    """s = max_g μ_g^min/n_g: every group's noise becomes s·n_g (equal mixing weights)."""
    assert sizes.mu_strong is not None and sizes.mu_weak is not None
    return max(sizes.mu_strong / sizes.n_strong, sizes.mu_weak / sizes.n_weak)


@lru_cache(maxsize=16384)
def bound_terms(bound_key: str, values: tuple[tuple[str, Any], ...]) -> tuple[float, ...]:
    """The bound's terms as floats at a point, cached per point."""
    return tuple(float(value) for value in BOUNDS[bound_key].terms(**dict(values)))


@lru_cache(maxsize=16384)
def bound_value(bound_key: str, values: tuple[tuple[str, Any], ...]) -> float:
    """``float(BOUNDS[bound_key].evaluate(**values))``, cached per point."""
    return float(BOUNDS[bound_key].evaluate(**dict(values)))


def per_distinct_pairs(first: np.ndarray, second: np.ndarray, function: Any) -> np.ndarray:
    """``function(a, b)`` once per distinct pair of ``(first, second)``, elementwise."""
    representatives, inverse = distinct_rows(first, second)
    pairs = zip(
        np.ravel(first)[representatives].astype(np.float64).tolist(),
        np.ravel(second)[representatives].astype(np.float64).tolist(),
        strict=True,
    )
    results = np.array([function(a, b) for a, b in pairs], dtype=np.float64)
    return results[inverse].reshape(first.shape)


class RememberedPairs:
    """A scalar function of (a, b) on arrays, each value met remembered.

    Where one of the two columns holds a single value (a sweep's δ, or its k on an ε
    axis), the other's values met so far are kept sorted with their results, per that
    value, and each call looks its elements up there (a binary search a row: no sort of
    the call's rows, and no call of the function for a value met before). Elsewhere, or
    with a NaN, it is :func:`per_distinct_pairs`. The results are the function's own, so
    the same as without the memory. At most ``limit`` values are kept per single value
    (beyond it, the memory of that value starts anew with the values of the call that
    passed it, unless they alone are more), and ``fixed_limit`` single values (beyond
    it, every memory starts anew): a service's memory stays bounded whatever it asks.
    """

    def __init__(
        self,
        function: Callable[[float, float], float],
        limit: int = 1 << 17,
        fixed_limit: int = 64,
    ) -> None:
        self.function = function
        self.limit = limit
        self.fixed_limit = fixed_limit
        self._known: dict[tuple[int, float], tuple[np.ndarray, np.ndarray]] = {}
        self._recent: list[tuple[tuple[int, float], np.ndarray, np.ndarray]] = []

    def __call__(self, first: Any, second: Any) -> np.ndarray:
        first, second = np.broadcast_arrays(
            np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
        )
        flat_first, flat_second = first.ravel(), second.ravel()
        if flat_first.size == 0 or np.isnan(flat_first).any() or np.isnan(flat_second).any():
            return per_distinct_pairs(first, second, self.function)
        if (flat_second == flat_second[0]).all():
            fixed, varying, position = float(flat_second[0]), flat_first, 1
        elif (flat_first == flat_first[0]).all():
            fixed, varying, position = float(flat_first[0]), flat_second, 0
        else:
            return per_distinct_pairs(first, second, self.function)
        if (varying == varying[0]).all():  # one value in all (a rung's ε): no search
            return np.full(first.shape, self._one(position, fixed, float(varying[0])))
        for key, seen, found in self._recent:  # a column looked up just before
            if (
                key == (position, fixed)
                and seen.shape == varying.shape
                and seen[-1] == varying[-1]
                and np.array_equal(seen, varying)
            ):
                return found.reshape(first.shape)
        # one reading of the memory (another thread may replace it meanwhile: each
        # stored pair of arrays is whole, and never changed in place)
        values, results = self._known.get((position, fixed), (_EMPTY, _EMPTY))
        index = np.searchsorted(values, varying)
        met = index < values.size
        met[met] = values[index[met]] == varying[met]
        if not met.all():
            new = np.unique(varying[~met])
            computed = [self._evaluate(position, fixed, value) for value in new.tolist()]
            if values.size + new.size > self.limit:  # anew, with this call's values alone
                kept = np.unique(index[met])  # those met before keep their results
                values, results = values[kept], results[kept]
            if (position, fixed) not in self._known and len(self._known) >= self.fixed_limit:
                self._known.clear()
            values = np.concatenate([values, new])
            results = np.concatenate([results, np.asarray(computed, dtype=np.float64)])
            order = values.argsort(kind="stable")
            values, results = values[order], results[order]
            if values.size <= self.limit:  # a call's own values beyond it: not kept
                self._known[position, fixed] = (values, results)
            index = np.searchsorted(values, varying)
        found = results[index]
        found.setflags(write=False)  # handed out again to a later call
        seen = varying.copy()
        self._recent = [((position, fixed), seen, found), *self._recent[: RECENT_COLUMNS - 1]]
        return found.reshape(first.shape)

    def _one(self, position: int, fixed: float, value: float) -> float:
        """The function at one pair (``position``: which of the two is ``fixed``)."""
        values, results = self._known.get((position, fixed), (_EMPTY, _EMPTY))
        index = int(np.searchsorted(values, value))
        if index < values.size and values[index] == value:
            return float(results[index])
        return self._evaluate(position, fixed, value)

    def _evaluate(self, position: int, fixed: float, value: float) -> float:
        """The function at ``value`` and the ``fixed`` one, in their places."""
        return float(self.function(value, fixed) if position == 1 else self.function(fixed, value))


_EMPTY = np.empty(0, dtype=np.float64)
RECENT_COLUMNS = 4
"""Columns :class:`RememberedPairs` keeps its last answers for (a sizing looks the same
ε column up two or three times in a row)."""


def dense_codes(flat: np.ndarray) -> tuple[np.ndarray, int]:
    """Each element's rank among the distinct values of the 1-d ``flat`` (0 … m − 1, in
    sorted order; NaNs one value, as ``np.unique``'s inverse), and m: one sort, without
    ``np.unique``'s extra passes."""
    order = flat.argsort()
    ordered = flat[order]
    new = _changes(ordered)
    if ordered.dtype.kind == "f" and ordered.size and np.isnan(ordered[-1]):
        nan = np.isnan(ordered)  # NaNs sort last; they are one value
        new[1:] &= ~(nan[1:] & nan[:-1])
    return _ranks(order, new)


def _changes(ordered: np.ndarray) -> np.ndarray:
    """Where each element of sorted ``ordered`` starts a new value (True at the first)."""
    new = np.empty(ordered.size, dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return new


def _ranks(order: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, int]:
    """Each element's rank (0 … m − 1) from the sort ``order`` and where, in that order,
    a new value starts; and m."""
    ranks = np.cumsum(new) - 1
    code = np.empty(order.size, dtype=np.int64)
    code[order] = ranks
    return code, int(ranks[-1]) + 1 if ranks.size else 0


def _representatives(code: np.ndarray, count: int) -> np.ndarray:
    """A flat index of each of the ``count`` dense codes (any member stands for it)."""
    representatives = np.zeros(count, dtype=np.int64)
    representatives[code] = np.arange(code.size)
    return representatives


def distinct_rows(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a flat index of each distinct tuple, each element's tuple number) over ``columns``.

    Column by column (1-d sorts, codes kept dense), not ``np.unique(axis=0)``'s slow
    lexicographic sort of rows.
    """
    flats = [np.ravel(column) for column in columns]
    # a column of one value (often δ) adds nothing to the codes
    varying = [flat for flat in flats if not (flat.size and bool((flat == flat[0]).all()))]
    if (
        len(varying) >= 2
        and all(flat.dtype in _EIGHT_BYTE_NUMBERS for flat in varying)
        and not any(flat.dtype.kind == "f" and np.isnan(flat).any() for flat in varying)
    ):
        return _distinct_by_hash(varying)
    code = np.zeros(columns[0].size, dtype=np.int64)
    varied = False  # code is all zeros until a column varies
    for flat in varying:
        column_code, count = dense_codes(flat)
        if not varied:  # 0·(m + 1) + column_code: already dense
            code, varied = column_code, True
            continue
        code, _ = dense_codes(code * count + column_code)
    # the codes are dense (0 … m − 1): an index of each, without another sort
    return _representatives(code, int(code.max(initial=-1)) + 1), code


_EIGHT_BYTE_NUMBERS = (np.dtype(np.float64), np.dtype(np.int64))
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def _distinct_by_hash(flats: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`distinct_rows` over several varying columns with one sort: the rows sorted
    by a 64-bit mix of their bits, a new tuple wherever the mix or any column differs from
    the row before. Rows given one number are equal in every column whatever the mix
    (a collision can only split equal rows, which then evaluate alike twice); equal rows
    share their mix, so they sort together and share a number (no NaN: the caller keeps
    those to the column-by-column codes, where NaNs are one value)."""
    mixed = np.zeros(flats[0].size, dtype=np.uint64)
    for flat in flats:  # h ← h·m + bits, wrapping
        mixed *= _HASH_MULTIPLIER
        mixed += np.ascontiguousarray(flat).view(np.uint64)
    order = mixed.argsort()
    new = _changes(mixed[order])
    for flat in flats:
        column = flat[order]
        new[1:] |= column[1:] != column[:-1]
    code, count = _ranks(order, new)
    return _representatives(code, count), code


DEFAULT_GRID_AXES: dict[str, list[float]] = {
    "k": [16, 256, 4096],
    "alpha": [0.01, 0.05, 0.15, 0.5, 0.95],
    "eps_strong": [0.25, 0.5, 1.0],
    "eps_ratio": [0.25, 0.5, 1.0],
}
"""The calibration grid's axes where a protocol has none of its own (``planner.constants
.GRID_AXES``); δ is fixed at ``planner.calibration.grid.GRID_DELTA``."""


@dataclass(frozen=True)
class CalibrationDesign:
    """How a protocol's constant is fitted and its direct factors measured by simulating its
    real tester (``planner/calibration``, ``planner calibrate``; docs/method.md)."""

    search_range: tuple[float, float]
    """The multiplier C's bisection range at one grid point."""
    point_seconds: dict[int, float]
    """CPU seconds of one grid point's search at 1000 trials, by k: measured one point at a
    time on an idle core at α = 0.25, ε_strong = 1, ratio 0.5 (k ≤ 256) and from the full
    calibration's timings (k = 4096). Orders the tasks (costliest first); no result
    depends on it."""
    grid_axes: dict[str, list[float]] = field(default_factory=lambda: DEFAULT_GRID_AXES)
    """The grid ``planner calibrate`` fits."""
    grid_at_operating_point: bool = False
    """Nodes fitted at the operating point ``operating_error(1/3)`` itself, not at the
    calibration target times the worst point's operating factor: where that factor spreads
    widely across points (the public-coin testers: one hash makes C noisy), or where a
    tester's null floor sits near the target (central)."""
    direct_by_node: bool = False
    """Direct factors tabled per node (α, ε_strong), ``direct_by_node``: where the factor
    grows as α falls (shuffle) or moves with ε_strong both ways (central)."""
    direct_small_eps: tuple[float, ...] = ()
    """ε_strong values ``planner calibrate --direct --small-eps`` measures below the direct
    points' 0.25."""
    eps_node_own_points: bool = False
    """A ``direct_by_node`` table at an ε_strong node is the worst over that node's points
    alone (a factor that rises both ways from a least value, central), not over it and
    every smaller node (a factor rising with ε)."""
    direct_beyond: dict[str, list[float]] = field(default_factory=dict)
    """Axis (``eps_strong`` or ``alpha``) → the points ``--large-eps`` / ``--large-alpha``
    measure beyond the direct points' tops (ε_strong 1, α 0.5)."""


class AllocationFamily(StrEnum):
    """How a protocol's plan can trade users between its groups (``planner.allocation``)."""

    VARIANCE = "variance"
    """Users move between the groups at a fixed variance of the statistic (local)."""
    NOISE = "noise"
    """The stronger group's noise is raised towards the weaker's (shuffle)."""
    SUBSAMPLING = "subsampling"
    """The tester runs at a smaller ε′ on a subsample of the weaker group (central)."""
    FIXED = "fixed"
    """Each group's size is already its statistic's variance split (a channel per group,
    n_g ∝ √w_g), and moving users along that variance is not iso-power for it: where n is
    below k (few reports a bin) the lopsided split of a cost allocation missed more (k = 869,
    α = 0.55, ε = (17.7, 7.0): 0.22 against 0.19 at the same Σ_g w_g/n_g, 4,000 trials).
    Nothing to trade: an allocation keeps its sizes."""
    EQUAL = "equal"
    """Both groups report through one channel at the weaker ε: equal sizes are the
    cheapest, and there is nothing to trade (local k-RR)."""


@dataclass(frozen=True, eq=False)
class Protocol:
    """One protocol: everything the planner needs to know of it, and nothing else does."""

    setting: Setting
    """The privacy model and coin it answers."""
    title: str
    """Its name as the plan, the table and the web page show it."""
    colour: str
    """Its colour in plots (CSS hex)."""
    upper_bound_key: str
    """The bound (μ-form / L-form) the planner evaluates for numbers."""
    display_bound_key: str
    """The bound as the paper states it (ε-form), for display."""
    lower_bound_key: str
    """The per-group identity-testing lower bound at ε_g."""
    allocation_family: AllocationFamily
    size_run: Callable[..., RunSizes]
    """(query, ε_strong, ε_weak, multiplier, bound key, accounting, (L, R)) → one run's
    :class:`RunSizes` at error 1/3 (the bound times the multiplier, rounded up)."""
    size_run_arrays: Callable[..., Any]
    """``size_run`` elementwise over numpy columns (``planner.vectorised``): (k, α, δ,
    ε_strong, ε_weak, multiplier or None, bound key, accounting, (L, R), unit_strong) →
    (n_strong, n_weak), or the strong group's C = 1 size when the multiplier is None."""
    build_tester: Callable[..., Any]
    """(query, parameters, L, hashes) → the real tester for named groups 1 and 2; imports
    ``validators`` lazily (a plan never needs them)."""
    simulated_bins: Callable[[int], int]
    """Cells a simulated trial touches per family at domain size k (the ``--exact``
    search's cost estimate)."""
    calibration: CalibrationDesign
    """How its constant is fitted and checked by simulation."""
    noise_mu: Callable[[float, float, Accounting], float] | None = None
    """(ε, δ, accounting) → a group's per-bin Poisson noise μ, for protocols whose users
    send noise messages besides their own (shuffle); None for the others."""
    exact_privacy: Callable[[float, float, Accounting], float] | None = None
    """(ε, δ, accounting) → the exact ε the noise of ``accounting`` buys: a plan under the
    paper's accounting reads its constant there (``plan.grid_position``)."""
    size_for_noise: Callable[..., RunSizes] | None = None
    """(query, μ_strong, μ_weak, multiplier, (L, R), fixed_L) → sizes at given noise levels
    (the ``NOISE`` allocation family's members)."""
    private_coin_key: str | None = None
    """A public-coin protocol: the key of its model's private-coin protocol, which ignores
    the coin and which the plan may run instead when it needs fewer users."""
    proof_bound: tuple[str, str] | None = None
    """(bound key, source) of the constant the paper's proof gives, at C = 1 (``--constants
    proof``); None where the proofs give none."""
    mechanism: Callable[[Query, int], str] | None = None
    """(query at the tester point, bins the randomizer sees) → what each user runs and
    sends, in words (the plan's ``mechanism`` line)."""
    weak_eps_only: bool = False
    """Its tester runs both groups at ε_weak (one channel): a point (ε_strong, ε_weak)
    tests as (ε_weak, ε_weak), and reads its constant and coverage there
    (``plan.grid_position``), so its grid needs no ratio axis."""
    noise_matched_above_grid: bool = False
    """With ``weak_eps_only``: above its grid's largest k, the constant is read at
    ε_weak − ln(k/k_top), floored at the grid's least ε: the ε at which e^ε/k is what it is
    here, at the grid's top k_top. For
    k-ary randomized response that ratio sets how much of a report is noise, and with it
    the constant (``planner.plan.grid_position``); at the query's own ε a larger k would
    read a less noisy regime's smaller C."""
    weak_release_eps: Callable[[Setting, Any, Any, Any], Any] | None = None
    """(setting, the named group 2 is the weaker, ε_strong, ε_weak) → the ε the weaker
    group's release runs at, scalars or arrays: above ε_weak where that group (a
    curator's) releases from a secret uniform subsample of its users, which keeps it
    private at its own ε (Lemma ``theo:subsampling``). The point reads its constant and
    coverage at the release's ε (``plan.grid_position``), and the group's users are the
    subsample's population (its ``size_run_arrays`` takes ``weak_is_group2``). None:
    always ε_weak."""
    variance_weight: Callable[[int, float], float] | None = None
    """(k, ε_g) → γ_g, a group's weight in the statistic's null variance Σ_g γ_g²/n_g: what
    the ``VARIANCE`` family keeps fixed while users move between the groups
    (``planner.plan.variance_split``, the allocations); None for the other families."""
    coupled_groups: bool = False
    """Each group's size moves with the other group's ε (a channel per group: its sizing is
    already its statistic's variance split n_g ∝ √w_g).
    A plan multiplies this point's own bound by the largest C of the grid cell around it,
    not the chord of log n between the corners: the corners' n lie on other curves than
    the point's, and their chord ran 2× above a C that hardly varies (0.43 – 0.53 across
    most of the channels grid; k = 1000, α = 0.1, ε = (8, 0.5): 1.04); nor C interpolated,
    which fell short where C does vary (few reports a bin: k = 869, α = 0.55, ε = (17.7,
    7.0) ran 0.50 where its tester needed about 0.6, and erred 0.34). Its calibration
    envelope keeps the total monotone along ε_weak/ε_strong
    (``planner.calibration.grid.monotone_envelope``)."""
    largest_alpha_c_below_k: int = 0
    """Below this k a plan reads each corner of its grid cell at the largest C of the α
    nodes from its cell's lower α node up (the chord in k and ε as elsewhere;
    ``SettingConstant.alpha_tail_multipliers``): there plans run at a few dozen users,
    where the C a tester needs is not monotone between α nodes (k-ary randomized response,
    k = 2, α = 0.915, ε = 0.49: the chord toward the α = 0.95 node gave 31 users a group,
    which erred 0.36, while the node's own 29 at α = 0.95 met 1/3). Non-increasing in α,
    so no larger α needs more users (the larger C of the two nodes around α alone had
    stepped up 1.21× across α = 0.15). 0: never."""
    sizes_fall_with_eps: bool = False
    """At a fixed multiplier, no group's run size grows as either group's ε or α grows
    (each group's noise falls with its own ε, and the other's ε lowers it if anything):
    the sweep then rules the protocol out of a row's lower tester points once its least
    users at the row's own point are no fewer than the row's best (``planner.vectorised
    ._lowered``; not where the default split resizes it by its variance, whose users in
    all also move with the groups' weights). Not so where a group's users rise with the
    other group's ε (shuffle's noise matching, central's subsampling: at k = 3, α = 0.43,
    the central least users in all are 61 at ε = (0.9, 2.5) and 16 at (0.9, 1))."""
    min_users: int = 1
    """Each group's least users in a run, also where an allocation moves users."""
    thresholds_for_beta: Callable[[dict[str, Any], float], dict[str, Any]] | None = None
    """Tester constants tuned at β = 1/3 adapted to one run held to a smaller β (central's
    thresholds leave a null-error floor); None: the constants stay."""
    messages_per_user: Callable[[Query, float, int], float | None] | None = None
    """(query, a group's ε, its users) → that group's expected messages per user, for
    protocols whose users send several messages but no Poisson noise μ (multi-message
    shuffle); None: one message, or ``noise_mu``'s 1 + bins·μ/n."""
    messages_per_user_arrays: Callable[..., tuple[Any, Any]] | None = None
    """Each group's expected messages per user elementwise, for a sweep's rows: (k, α, δ,
    ε1, ε2 at the tester point, one run's n1 and n2, accounting, (L, hashes)) → (group 1's,
    group 2's), as the plan's groups give them (``messages_per_user``, or ``noise_mu``'s
    1 + hashes·bins·μ/n); None: one report a user."""
    users_free_of_delta: bool = False
    """Its users do not depend on δ, only each user's messages do (the multi-message
    protocol's flood): a query whose δ is above the setting's covered top is planned at
    the top, and such a protocol's flood is then sized at the asked δ
    (``planner.plan.at_capped_delta``)."""
    report_cells: Callable[[Query], tuple[int, int]] | None = None
    """Cells of one user's report in each group, at the tester's query: what the user
    path draws per user (a unary encoding's k bits); None: one each."""

    @property
    def key(self) -> str:
        """The setting's stable key, e.g. ``"shuffle-public"``."""
        return self.setting.key

    @property
    def needs_delta(self) -> bool:
        """Whether its privacy is (ε, δ): a query must give δ."""
        return self.setting.needs_delta

    @property
    def noise_messages(self) -> bool:
        """Users send noise messages besides their own (shuffle): the plan reports each
        group's noise μ and messages per user, and the other accounting's sizes."""
        return self.noise_mu is not None

    @property
    def sends_reports_only(self) -> bool:
        """Each user sends its one report (or gives its item to a curator) and no noise
        messages: neither Poisson noise (:attr:`noise_messages`) nor a multi-message
        protocol's shares (``messages_per_user``)."""
        return not self.noise_messages and self.messages_per_user is None
