"""The numbers of :func:`planner.plan.plan` for many queries at once (numpy arrays).

:func:`plan_columns` is the array twin of ``plan``: the same bounds (the registry's
vectorised evaluation), the same calibrated constants (the grid's corners as arrays,
:meth:`~planner.constants.SettingConstant.grid_corner_arrays`), the same rounding, the same
public-to-private fallback, the same tester points below the query (``plan``'s ε cap
and ladder of the stronger group's ε, each candidate sized by its users only, and each
row's baseline once at the end, of the protocol and point chosen), and its rows equal
single ``plan`` calls (tested on random points of every setting). What costs a
root-find — the exact Poisson noise μ(ε, δ), the majority-vote runs r(β) — is computed
once per distinct value. ``plan`` stays scalar because one plan must cost microseconds;
this is for sweeps (10⁵ rows: about 0.3–1.0 s with eight protocols and the ladder's
rungs, each rung sized only on the rows it could win (:func:`least_sizes`), the rungs
weighed from the lowest, the baselines once at the end, and a large call's rows split
over the machine's cores; see ``benchmarks/bench_planner.py``).

Columns are float64: counts are exact integers below 2^53 users. Rows at 2^53 or more, with
invalid inputs, or with a β < 1/3 at which ``plan`` weighs direct calibration against the
majority vote, are flagged (``regular`` false) for the caller to answer with ``plan``
itself (:mod:`planner.sweep` does).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from planner.constants import COVERAGE_AXES, ConstantSource, ConstantTable, SettingConstant
from planner.formulas.accounting import DELTA_FLOOR
from planner.formulas.registry import BOUNDS
from planner.formulas.repetition import PER_RUN_ERROR, majority_vote_runs
from planner.formulas.search import carried_deadline, check_deadline, deadline_state
from planner.formulas.settings import Setting
from planner.inputs import ALPHA_MIN, EPS_MAX, EPS_MIN, K_MAX, Accounting
from planner.plan import (
    ALPHA_NODE_REACH,
    EPS_CAP,
    Split,
    alpha_tops,
    coupled_on_node,
    delta_top,
    grid_kinks,
    least_eps_rungs,
    noise_matched_eps,
    padding_domains,
    ratio_node_rungs,
    strong_eps_rungs,
    variance_split,
    weak_eps_rungs,
    weak_only_protocols,
)
from planner.protocols import (
    PROTOCOLS,
    Protocol,
    other_mechanisms,
    private_coin_protocol,
    protocol_for,
)
from planner.protocols.base import RememberedPairs, per_distinct_pairs

EXACT_COUNT_LIMIT = 2.0**53
"""Rows whose users in all reach this go to ``plan``: float64 holds integers exactly only
below it (a total above it had been rounded: 12,402,753,683,151,604 against the exact
…603). Each count is the ceiling of a product whose factors numpy's exp and log may round
one ulp away from the math module's, which moves the product by up to count·2^-52 of a
user, so a row of very many users can still round differently from ``plan`` where its
product sits that near an integer: near 5·10^15 users a k-RR plan had been one user off
(at k = 4096, α = 0.01, ε = (1, 0.1); its total is above 2^53, so it goes to ``plan``
now). Below 2^45 (3.5·10^13) that is under 1/128 of a user, and none of 1,116 random
rows between 2^36 and 2^45 differed; a lower limit would send whole sweeps at tiny ε to
``plan`` one by one, and refuse them (566 rows of a local public-coin sweep over ε2 from
2·10⁻⁴ to 10⁻³ at k = 10,000). The baseline (a secondary count, at the weaker ε) is not
held to it: above 2^53 float64 rounds it to an even count (``plan``'s are exact
integers)."""


@dataclass(frozen=True)
class PlanColumns:
    """One array per plan field, a row per query (NaN where a row is not ``regular``)."""

    protocol: np.ndarray
    """Setting key of the protocol that runs (a public-coin ask may run the private one)."""
    n_users_group1: np.ndarray
    n_users_group2: np.ndarray
    baseline_n_users_group1: np.ndarray
    baseline_n_users_group2: np.ndarray
    lower_bound_group1: np.ndarray
    lower_bound_group2: np.ndarray
    runs: np.ndarray
    """Tester runs behind the plan: 1 (one run), or the majority vote's r(β) at β < 1/3."""
    tester_eps1: np.ndarray
    """``plan``'s ``tester_point`` (ε1, ε2, α) where the tester runs below the query (NaN:
    at the query)."""
    tester_eps2: np.ndarray
    tester_alpha: np.ndarray
    tester_k: np.ndarray
    """The domain the tester runs on where it is larger than the query's (NaN: the query's;
    ``planner.plan.padding_domains``)."""
    tester_delta: np.ndarray
    """The δ the protocol that runs spends where that is below the query's (NaN: the
    query's; ``planner.plan.delta_capped``)."""
    regular: np.ndarray
    """Valid inputs and exact counts: the row equals ``plan``'s. Others: ask ``plan``."""
    uncovered: np.ndarray
    """Regular rows: a bit per ``COVERAGE_AXES`` axis outside the covered region (0: the
    plan is covered; else it must not be printed as a plan)."""


def plan_columns(
    setting: Setting,
    k: Any,
    alpha: Any,
    eps1: Any,
    eps2: Any,
    delta: Any,
    beta: Any,
    accounting: Accounting,
    table: ConstantTable,
    split: Split = Split.FEWEST,
) -> PlanColumns:
    """``plan(Query(setting, k[i], alpha[i], …), split=split)``'s numbers for every i,
    vectorised: each row's plan on its own domain, then on each larger domain ``plan``
    weighs (``padding_domains``, a coupled protocol's node where one runs), taken by the
    same rule (``_padding_wins``).

    ``split``: ``Split.FEWEST`` or ``Split.PAPER`` (a sweep's); ``Split.HOMOGENEOUS`` (the
    equal-ε protocol's own plan, ``plan``'s ``_homogeneous_plan``) is not planned here and
    is refused.

    Rows are planned independently of each other, so a large call is cut into blocks of
    at least :data:`PARALLEL_ROWS` rows planned side by side on the machine's cores (numpy
    releases the interpreter's lock in its loops); the columns are the same as in one
    block."""
    if split is Split.HOMOGENEOUS:  # a review found its rows differing from ``plan``'s
        raise ValueError("plan_columns plans Split.FEWEST or Split.PAPER")
    k, alpha, eps1, eps2, delta, beta = np.broadcast_arrays(
        *(np.asarray(value, dtype=np.float64) for value in (k, alpha, eps1, eps2, delta, beta))
    )
    rows = k.shape[0] if k.ndim else 1
    workers = min(_cores(), rows // PARALLEL_ROWS)
    if k.ndim != 1 or workers < 2:
        return _plan_columns(setting, k, alpha, eps1, eps2, delta, beta, accounting, table, split)
    # each worker takes a quarter from each end (rows 0–¼ and ¾–1, then ¼–½ and ½–¾ for
    # two): a sweep's rows run along its axes and cost more at one end (small ε weighs
    # more tester points), and rows next to each other share their distinct values
    quarters = np.array_split(np.arange(rows), 2 * workers)
    blocks = [np.concatenate([quarters[index], quarters[-1 - index]]) for index in range(workers)]
    caller = deadline_state()  # each block ends at the caller's deadline, if it has one

    def block_columns(block: np.ndarray) -> PlanColumns:
        with carried_deadline(caller):
            return _plan_columns(
                setting,
                k[block],
                alpha[block],
                eps1[block],
                eps2[block],
                delta[block],
                beta[block],
                accounting,
                table,
                split,
            )

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="plan-columns") as pool:
        made = list(pool.map(block_columns, blocks))
    joined = {}
    for field in fields(PlanColumns):
        parts = [getattr(part, field.name) for part in made]
        column = np.empty(rows, dtype=parts[0].dtype)
        for block, part in zip(blocks, parts, strict=True):
            column[block] = part
        joined[field.name] = column
    return PlanColumns(**joined)


PARALLEL_ROWS = 20_000
"""Rows a block of a parallel :func:`plan_columns` holds at least (below it a thread's
start and numpy's per-call costs outweigh a second core)."""


def _cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def _plan_columns(
    setting: Setting,
    k: np.ndarray,
    alpha: np.ndarray,
    eps1: np.ndarray,
    eps2: np.ndarray,
    delta: np.ndarray,
    beta: np.ndarray,
    accounting: Accounting,
    table: ConstantTable,
    split: Split,
) -> PlanColumns:
    """:func:`plan_columns` in one block."""
    k, alpha, eps1, eps2, delta, beta = np.broadcast_arrays(k, alpha, eps1, eps2, delta, beta)
    top = delta_top(setting, table)
    if top is not None:  # ``plan.delta_capped``: a valid δ above the covered top runs there
        with np.errstate(invalid="ignore"):
            capped = (delta > top) & (delta < 1)
        if capped.any():
            made = _plan_columns(
                setting,
                k,
                alpha,
                eps1,
                eps2,
                np.where(capped, top, delta),
                beta,
                accounting,
                table,
                split,
            )
            return _at_capped_delta(made, capped, top, (eps1, eps2, alpha))
    made = _plan_columns_on_domain(
        setting, k, alpha, eps1, eps2, delta, beta, accounting, table, split
    )
    if table.for_setting(setting.key).source is not ConstantSource.CALIBRATED:
        return made
    for domain, lowest, coupled_node in padding_domains(setting, table, _fallback(setting)):
        weighed = made.regular & (k < domain) & (k >= lowest)
        if coupled_node:  # a coupled protocol's k node: each such protocol alone (``plan``)
            if split is Split.FEWEST:
                for protocol in coupled_on_node(setting, table, domain, _fallback(setting)):
                    rows = _may_win_alone(
                        made,
                        weighed,
                        protocol,
                        domain,
                        (alpha, eps1, eps2, delta, beta),
                        accounting,
                        table,
                    )
                    if rows.size == 0:
                        continue
                    alone = _plan_columns_on_domain(
                        protocol.setting,
                        np.full(rows.size, float(domain)),
                        alpha[rows],
                        eps1[rows],
                        eps2[rows],
                        delta[rows] if protocol.needs_delta else np.full(rows.size, np.nan),
                        beta[rows],
                        accounting if protocol.needs_delta else Accounting.EXACT,
                        table,
                        split,
                    )
                    made = _padded_rows(made, alone, rows, domain, (eps1, eps2, alpha), split)
            continue
        rows = np.flatnonzero(weighed)
        if rows.size == 0:
            continue
        padded = _plan_columns_on_domain(
            setting,
            np.full(rows.size, float(domain)),
            alpha[rows],
            eps1[rows],
            eps2[rows],
            delta[rows],
            beta[rows],
            accounting,
            table,
            split,
        )
        made = _padded_rows(made, padded, rows, domain, (eps1, eps2, alpha), split)
    return made


def _may_win_alone(
    made: PlanColumns,
    candidates: np.ndarray,
    protocol: Protocol,
    domain: int,
    columns: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    accounting: Accounting,
    table: ConstantTable,
) -> np.ndarray:
    """The ``candidates`` rows on which ``protocol`` alone on the ``domain``-bin node may
    need fewer users in all than the row's plan so far (``plan._coupled_alone_on_node``):
    not a covered row where its least users there, at the least C of its grid and the
    row's own ε and α, are no fewer. Its sizes fall with ε and α
    (``Protocol.sizes_fall_with_eps``), so no tester point of its plan needs fewer, and a
    vote runs at least once; a row at β < 1/3, which direct calibration may size below
    that C, is always weighed. A bound, not a choice: the rows it drops could not win."""
    rows = np.flatnonzero(candidates)
    if rows.size == 0 or not (_PRUNE_CANDIDATES and protocol.sizes_fall_with_eps):
        return rows
    alpha, eps1, eps2, delta, beta = columns
    count = rows.size
    at_node = _Points(
        np.full(count, float(domain)),
        alpha[rows],
        eps1[rows],
        eps2[rows],
        delta[rows] if protocol.needs_delta else np.full(count, 1e-6),
        beta[rows],
        accounting if protocol.needs_delta else Accounting.EXACT,
    )
    least = least_sizes(at_node, protocol, table, by_cell=False)
    total = made.n_users_group1[rows] + made.n_users_group2[rows]
    may = (made.uncovered[rows] != 0) | (least[0] + least[1] < total)
    return rows[may | (beta[rows] < PER_RUN_ERROR)]


def _at_capped_delta(
    made: PlanColumns,
    capped: np.ndarray,
    top: float,
    asked: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> PlanColumns:
    """``made`` (planned with δ capped at ``top`` on the ``capped`` rows) as the rows'
    plans (``plan.at_capped_delta``): where the protocol that runs spends δ, the tester
    point carries the δ, and the query's (ε1, ε2, α) where it ran at them; a protocol
    whose users do not depend on δ runs at the row's own."""
    spending = [
        key
        for key in _KEYS
        if protocol_for(key).needs_delta and not protocol_for(key).users_free_of_delta
    ]
    rows = capped & made.regular & np.isin(made.protocol, spending)
    at_query = rows & np.isnan(made.tester_eps1)
    tester = {
        name: np.where(at_query, value, getattr(made, name))
        for name, value in zip(("tester_eps1", "tester_eps2", "tester_alpha"), asked, strict=True)
    }
    return replace(made, **tester, tester_delta=np.where(rows, top, made.tester_delta))


def _padded_rows(
    made: PlanColumns,
    padded: PlanColumns,
    rows: np.ndarray,
    domain: int,
    asked: tuple[np.ndarray, np.ndarray, np.ndarray],
    split: Split,
) -> PlanColumns:
    """``made`` with the ``rows`` where ``padded`` (their plans on ``domain``) wins by
    ``planner.plan._padding_wins``; a row that either leaves to ``plan`` is left to it."""
    own_covered = made.uncovered[rows] == 0
    padded_covered = padded.regular & (padded.uncovered == 0)
    own_total = made.n_users_group1[rows] + made.n_users_group2[rows]
    padded_total = padded.n_users_group1 + padded.n_users_group2
    fewer = padded_total < own_total
    if split is not Split.FEWEST:
        fewer &= padded.n_users_group1 <= made.n_users_group1[rows]
        fewer &= padded.n_users_group2 <= made.n_users_group2[rows]
    wins = padded_covered & (~own_covered | fewer)
    taken = rows[wins]
    changed = {}
    for name in (
        "protocol",
        "n_users_group1",
        "n_users_group2",
        "baseline_n_users_group1",
        "baseline_n_users_group2",
        "runs",
        "uncovered",
    ):
        column = getattr(made, name).copy()
        column[taken] = getattr(padded, name)[wins]
        changed[name] = column
    for name, values in zip(("tester_eps1", "tester_eps2", "tester_alpha"), asked, strict=True):
        column = getattr(made, name).copy()
        at = getattr(padded, name)[wins]
        column[taken] = np.where(np.isnan(at), values[taken], at)
        changed[name] = column
    tester_k = made.tester_k.copy()
    tester_k[taken] = float(domain)
    regular = made.regular.copy()
    regular[rows] &= padded.regular  # either plan left to ``plan``: the row is
    blank = np.where(regular, 1.0, np.nan)
    result = replace(made, **changed, tester_k=tester_k, regular=regular)
    numbers = {name: getattr(result, name) * blank for name in _NUMBER_FIELDS}
    protocol = np.where(regular, result.protocol, "").astype(object)
    return replace(
        result, **numbers, protocol=protocol, uncovered=np.where(regular, result.uncovered, 0)
    )


_NUMBER_FIELDS = tuple(
    field.name
    for field in fields(PlanColumns)
    if field.name not in ("protocol", "regular", "uncovered")
)
"""The columns of numbers, NaN on a row left to ``plan``."""


def _plan_columns_on_domain(
    setting: Setting,
    k: np.ndarray,
    alpha: np.ndarray,
    eps1: np.ndarray,
    eps2: np.ndarray,
    delta: np.ndarray,
    beta: np.ndarray,
    accounting: Accounting,
    table: ConstantTable,
    split: Split,
) -> PlanColumns:
    """:func:`plan_columns` on each row's own domain."""
    valid = valid_rows(setting, k, alpha, eps1, eps2, delta, beta)
    # Invalid rows compute on harmless stand-ins and are flagged, never answered here.
    stand_in = {"k": 16.0, "alpha": 0.5, "eps": 1.0, "delta": 1e-6, "beta": PER_RUN_ERROR}
    k = np.where(valid, k, stand_in["k"]).astype(np.int64)
    alpha = np.where(valid, alpha, stand_in["alpha"])
    eps1, eps2 = (np.where(valid, eps, stand_in["eps"]) for eps in (eps1, eps2))
    delta = np.where(valid & protocol_for(setting).needs_delta, delta, stand_in["delta"])
    beta = np.where(valid, beta, stand_in["beta"])
    points = _Points(k, alpha, eps1, eps2, delta, beta, accounting)

    columns = _cheapest_protocol_columns(points, setting, table, split)
    tester = np.full((3, points.k.shape[0]), np.nan)
    if table.for_setting(setting.key).source is ConstantSource.CALIBRATED:
        columns, tester = _lowered(points, setting, table, columns, split)
    n1, n2, protocol, uncovered = columns
    base1, base2 = _baseline_columns(points, tester, protocol, table)
    lower1, lower2 = _lower_bound_columns(points, setting)
    if split is Split.FEWEST and _by_variance(setting, table):
        n1, n2 = _split_by_variance(n1, n2, points, tester, protocol)
    exact = (n1 + n2 < EXACT_COUNT_LIMIT) | (uncovered != 0)  # uncovered: no numbers shown
    regular = valid & exact & ~_may_calibrate_directly(points, setting, table)
    blank = np.where(regular, 1.0, np.nan)
    return PlanColumns(
        protocol=np.array((*_KEYS, ""), dtype=object)[np.where(regular, protocol, len(_KEYS))],
        n_users_group1=n1 * blank,
        n_users_group2=n2 * blank,
        baseline_n_users_group1=base1 * blank,
        baseline_n_users_group2=base2 * blank,
        lower_bound_group1=lower1 * blank,
        lower_bound_group2=lower2 * blank,
        runs=_vote_runs(points.beta) * blank,
        tester_eps1=tester[0] * blank,
        tester_eps2=tester[1] * blank,
        tester_alpha=tester[2] * blank,
        tester_k=np.full(regular.shape, np.nan),
        tester_delta=np.full(regular.shape, np.nan),
        regular=regular,
        uncovered=np.where(regular, uncovered, 0),
    )


def _cheapest_protocol_columns(
    points: _Points,
    setting: Setting,
    table: ConstantTable,
    split: Split,
    least_users: dict[str, np.ndarray] | None = None,
    units: dict[str, np.ndarray] | None = None,
) -> tuple:
    """The setting's columns (:func:`_protocol_columns`), or on each row the protocol it
    may run instead that needs fewer users in all (``plan``'s fallback; by the default
    split's count under ``Split.FEWEST``, ``plan._fewest_users``).
    ``least_users``: each alternative's least users in all per row, when known (+inf: it is
    not sized on that row, as it cannot be chosen over the caller's best; see
    :func:`_lowered`); ``units``: each protocol's strong-group C = 1 size per row where
    already known (NaN: not), from :func:`least_sizes`."""
    check_deadline()  # a service's cap per request (a review: a sweep ran 31 s past 20 s)
    by_variance = split is Split.FEWEST and _by_variance(setting, table)

    def users(sizes: Sequence[np.ndarray]) -> np.ndarray:
        if not by_variance:
            return sizes[0] + sizes[1]
        split1, split2 = _split_by_variance(
            sizes[0], sizes[1], points, np.full((2, 1), np.nan), sizes[-2]
        )
        return split1 + split2

    def unit_of(key: str, rows: np.ndarray | None = None) -> np.ndarray | None:
        if units is None or key not in units:
            return None
        return units[key] if rows is None else units[key][rows]

    columns = _protocol_columns(points, setting, table, unit_of(setting.key))
    for other in _alternatives(setting, table):
        if split is Split.PAPER and other.coupled_groups:  # its own split (``plan``)
            continue
        # a row whose own plan is covered is displaced only by fewer users: where the
        # other's least possible users cannot be fewer, it is not sized (``plan``)
        if least_users is not None:
            least = least_users[other.key]
            sized = np.isfinite(least) & ((columns[-1] != 0) | (least < users(columns)))
        elif _PRUNE_CANDIDATES:
            sized = (columns[-1] != 0) | (
                users(least_sizes(points, other, table, by_cell=True)) < users(columns)
            )
        else:
            sized = np.ones(points.k.shape, dtype=bool)
        if not sized.any():
            continue
        if sized.all():
            private = _protocol_columns(points, other.setting, table, unit_of(other.key))
        else:
            private = _scattered(
                _protocol_columns(
                    _subset(points, sized), other.setting, table, unit_of(other.key, sized)
                ),
                sized,
                columns,
            )
        # a covered plan beats an extrapolated one, and between covered plans the fewer
        # users; an extrapolated one displaces only as the private-coin twin (``plan``)
        own_out, other_out = columns[-1] != 0, private[-1] != 0
        fewer = users(private) < users(columns)
        cheaper = (other_out < own_out) | ((other_out == own_out) & fewer)
        if other.key != protocol_for(setting).private_coin_key:
            cheaper &= ~other_out
        columns = tuple(
            np.where(cheaper, other, own) for own, other in zip(columns, private, strict=True)
        )
    return columns


def _lowered(
    points: _Points, setting: Setting, table: ConstantTable, columns: tuple, split: Split
) -> tuple[tuple, np.ndarray]:
    """``plan``'s tester points: the row with each ε capped at ``EPS_CAP`` when that
    needs fewer users in all (the reference then), and its ladder of the stronger group's
    ε (:func:`planner.plan.strong_eps_ladder`, largest first): of the covered rungs, the
    one with the fewest users in all (``Split.PAPER``: of those needing no more users in
    either group than the reference). A row above the covered region's α top, or above a
    grid's α node where the constant steps (the node just below it,
    ``plan.alpha_nodes_below``), is weighed at that α as well, at the capped point and on
    every rung (``plan._capped_points`` and
    ``_tester_points``; the caps by direct calibration's regions at β < 1/3 matter only on
    rows left to ``plan``). Returns the columns and the (ε1, ε2, α) each row's tester runs
    at (NaN: the query's)."""
    strong_is_1 = points.eps1 >= points.eps2
    eps_strong = np.maximum(points.eps1, points.eps2)
    eps_weak = np.minimum(points.eps1, points.eps2)
    calibrated_keys = [
        key
        for key in _keys_run(setting, table)
        if table.for_setting(key).source is ConstantSource.CALIBRATED
    ]
    calibrated_codes = [_CODE[key] for key in calibrated_keys]
    best = [np.array(column, copy=True) for column in columns]  # some are read-only views
    tester = np.full((3, points.k.shape[0]), np.nan)
    fewest = split is Split.FEWEST
    # each covered α top below a row's α: the row is weighed at it as well; then the
    # grids' α nodes just below it where they are no such top (``plan.alpha_nodes_below``)
    covered_tops = alpha_tops(setting, table, fallback=_fallback(setting))
    tops = [
        (high, np.where(high, top, points.alpha))
        for top in covered_tops
        if (high := points.alpha > top).any()
    ]
    # every such node within reach, largest first (``plan.alpha_nodes_below``)
    for node in sorted(grid_kinks(setting, table).alpha_nodes, reverse=True):
        if node in covered_tops:
            continue
        below = (node < points.alpha) & (points.alpha <= ALPHA_NODE_REACH * node)
        if below.any():
            tops.append((below, np.where(below, node, points.alpha)))
    by_variance = fewest and _by_variance(setting, table)

    def users(sizes: Sequence[np.ndarray], at: _Points) -> np.ndarray:
        """Users in all by the split (``plan._fewest_users``: local, by the variance)."""
        if not by_variance:
            return sizes[0] + sizes[1]
        split1, split2 = _split_by_variance(
            sizes[0], sizes[1], at, np.full((2, 1), np.nan), sizes[-2]
        )
        return split1 + split2

    def least_in_all(sizes: Sequence[np.ndarray], at: _Points, best: np.ndarray) -> np.ndarray:
        """``users(sizes, at)`` of a protocol's least sizes (:func:`least_sizes`), or where
        the smaller group alone is above ``best``, that group's users: no split needs
        fewer (a variance split puts n1·n2·(γ1 + γ2)²/(γ1²·n2 + γ2²·n1) ≥ min(n1, n2) in
        all), so such a row is ruled out alike, without computing its split."""
        if not by_variance or int(sizes[-2].flat[0]) not in _VARIANCE_CODES:
            return sizes[0] + sizes[1]
        smaller = np.minimum(sizes[0], sizes[1])
        split = smaller <= best
        if split.all():
            return users(sizes, at)
        if split.any():
            smaller[split] = users(tuple(column[split] for column in sizes), _subset(at, split))
        return smaller

    best_users = users(best, points)
    # ε above EPS_CAP, and α above the covered top: each capped point is the reference
    # where it needs fewer users in all
    capped = (points.eps1 > EPS_CAP) | (points.eps2 > EPS_CAP)
    for rows, alpha in ((capped, points.alpha), *tops):
        if not rows.any():
            continue
        at_cap = _subset(
            replace(
                points,
                eps1=np.minimum(points.eps1, EPS_CAP),
                eps2=np.minimum(points.eps2, EPS_CAP),
                alpha=alpha,
            ),
            rows,
        )
        candidate = _cheapest_protocol_columns(at_cap, setting, table, split)
        covered = (candidate[-1] == 0) & np.isin(candidate[-2], calibrated_codes)
        cheaper = covered & (users(candidate, at_cap) < best_users[rows])
        cheaper |= covered & (best[-1][rows] != 0)  # a covered point beats an uncovered query
        chosen = np.flatnonzero(rows)[cheaper]
        best_users[chosen] = users(candidate, at_cap)[cheaper]
        _take(best, tester, chosen, at_cap, cheaper, candidate)
    reference1, reference2 = best[0].copy(), best[1].copy()  # the reference: no group above it
    kinks = grid_kinks(setting, table)
    weighed = [protocol_for(key) for key in _keys_run(setting, table)]

    # a row outside every calibrated protocol's covered k, α or δ stays outside at every
    # lower ε: no tester point of it can be chosen (each must be covered)
    def coverable_at(alpha: np.ndarray) -> np.ndarray:
        coverable = np.zeros(points.k.shape, dtype=bool)
        for key in calibrated_keys:
            coverable |= (
                table.for_setting(key).uncovered_axes(
                    points.k,
                    alpha,
                    1.0,
                    1.0,
                    points.delta if protocol_for(key).needs_delta else np.nan,
                )
                & _EPS_FREE_AXES
            ) == 0
        return coverable

    coverable = coverable_at(points.alpha)
    coverable_tops = [(coverable_at(alpha) & high, alpha) for high, alpha in tops]

    def weigh(
        rows: np.ndarray, strong: np.ndarray, weak: np.ndarray, query_alpha: bool = True
    ) -> None:
        """Weigh the tester run at (``strong``, ``weak``) on ``rows`` (as ``plan`` does) at
        the query's α (unless ``query_alpha`` is off), then on the rows above each covered
        α top at that top, as ``plan`` lists them (``_tester_points``)."""
        if query_alpha:
            weigh_at(rows & coverable, strong, weak, points.alpha)
        for coverable_top, alpha in coverable_tops:
            weigh_at(rows & coverable_top, strong, weak, alpha)

    # ``plan`` takes the first tester point, in its order, with the fewest users; the
    # points are listed in that order, then weighed from the last: the lowest rungs,
    # which most often win, come first, so the best so far is small early and most rows
    # are ruled out at the others (``least_sizes``). Walking backwards, a point takes a
    # row from an earlier-weighed point on a tie (it comes first in ``plan``'s order), but
    # never from the reference it starts from (``plan`` weighs that first).
    queued: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    from_reference = np.ones(points.k.shape, dtype=bool)

    def weigh_at(rows: np.ndarray, strong: np.ndarray, weak: np.ndarray, alpha: np.ndarray) -> None:
        """Queue one tester point (:func:`weigh_queued` weighs it)."""
        if rows.any():
            queued.append((rows, strong, weak, alpha))

    def weigh_queued(
        rows: np.ndarray, strong: np.ndarray, weak: np.ndarray, alpha: np.ndarray
    ) -> None:
        """Weigh one tester point: not on rows whose best so far is covered and that no
        protocol can beat there (:func:`least_sizes`; the choice is the same)."""
        check_deadline()
        at_point = replace(
            points,
            eps1=np.where(strong_is_1, strong, weak),
            eps2=np.where(strong_is_1, weak, strong),
            alpha=alpha,
        )
        least_users = units = None
        if _PRUNE_CANDIDATES:
            indices = np.flatnonzero(rows)
            at_rows = _subset(at_point, rows)
            by_key = {}
            units_by_key = {}
            for other in weighed:  # +inf where the protocol was ruled out for the row
                least = np.full(indices.shape, np.inf)
                unit = np.full(indices.shape, np.nan)
                live = alive[other.key][rows]
                found: dict[str, np.ndarray] = {}
                if live.all():
                    least = least_in_all(
                        least_sizes(at_rows, other, table, found, by_cell=True),
                        at_rows,
                        best_users[rows],
                    )
                    unit = found[other.key]
                elif live.any():
                    at_live = _subset(at_rows, live)
                    least[live] = least_in_all(
                        least_sizes(at_live, other, table, found, by_cell=True),
                        at_live,
                        best_users[rows][live],
                    )
                    unit[live] = found[other.key]
                by_key[other.key] = least
                units_by_key[other.key] = unit
            fewest_possible = np.min(list(by_key.values()), axis=0)
            beaten = (best[-1][rows] == 0) & (
                (fewest_possible > best_users[rows])
                | (from_reference[rows] & (fewest_possible >= best_users[rows]))
            )
            if beaten.all():
                return
            kept = ~beaten
            rows = rows.copy()
            rows[indices[beaten]] = False
            least_users = {key: least[kept] for key, least in by_key.items()}
            units = {key: unit[kept] for key, unit in units_by_key.items()}
        at_rung = _subset(at_point, rows)
        candidate = _cheapest_protocol_columns(
            at_rung, setting, table, split, least_users=least_users, units=units
        )
        c1, c2 = candidate[0], candidate[1]
        covered = (candidate[-1] == 0) & np.isin(candidate[-2], calibrated_codes)
        candidate_users = users(candidate, at_rung)
        better = covered & (
            (candidate_users < best_users[rows])
            | (~from_reference[rows] & (candidate_users == best_users[rows]))
        )
        if fewest:  # a covered point beats an uncovered query (``plan``)
            better |= covered & (best[-1][rows] != 0)
        else:
            better &= (c1 <= reference1[rows]) & (c2 <= reference2[rows])
        chosen = np.flatnonzero(rows)[better]
        best_users[chosen] = candidate_users[better]
        from_reference[chosen] = False
        _take(best, tester, chosen, at_rung, better, candidate)

    def weigh_ladder(rows: np.ndarray, weak: np.ndarray) -> None:
        """The stronger group down its rungs to ``weak`` (``plan.strong_eps_ladder``),
        each row's largest first, the last at ``weak`` itself."""
        rows = rows & (weak < eps_strong)
        if not rows.any():
            return
        rungs = strong_eps_rungs(np.where(rows, eps_strong, 1.0), np.where(rows, weak, 1.0), kinks)
        for column in rungs.T:
            weigh(rows & ~np.isnan(column), np.where(np.isnan(column), weak, column), weak)
        weigh(rows, weak, weak)

    # A protocol whose least users at the query's own point are no fewer than a row's
    # covered best is ruled out there at every tester point, where its sizes fall with ε
    # (``Protocol.sizes_fall_with_eps``): each tester point has no larger ε or α, so its
    # least users there are no fewer, and the best only falls. So it is not sized there
    # again. For a protocol the default split resizes by its variance, the users in all
    # also move with the groups' variance weights, which need not keep them from falling
    # at a lower ε (a review: the shuffle public coin at k = 7, α = 0.01, ε = (10.07,
    # 0.026), δ = 10⁻¹², ran the local public coin at the query, 325 users above
    # ``plan``'s point at ε1 = 10, whose variance split needs fewer in all); but no split
    # puts fewer than its smaller group in all (``least_in_all``), and each group's size
    # only grows at a lower point, so such a protocol is ruled out where its smaller
    # group's least size at the query is no fewer than the best.
    alive = {}
    for other in weighed:
        alive[other.key] = np.ones(points.k.shape, dtype=bool)
        if other.sizes_fall_with_eps:
            sizes = least_sizes(points, other, table)
            if by_variance and other.key in _VARIANCE_KEYS:
                least_here = np.minimum(sizes[0], sizes[1])
            else:
                least_here = users(sizes, points)
            alive[other.key] = (best[-1] != 0) | (least_here < best_users)

    # above the covered α top, the query's own ε at that α (a tester point where ε is
    # above EPS_CAP; else it is the capped point, weighed above)
    weigh(capped, eps_strong, eps_weak, query_alpha=False)
    weigh_ladder(np.ones(eps_weak.shape, dtype=bool), eps_weak)
    # the weaker group run lower too (``plan.weak_eps_ladder``): at each of its rungs, the
    # stronger group at its own ε, then down its ladder
    # (at equal ε, group 2 as the weaker: a sweep has no mixed pair, whose protocol would
    # run both groups at the rung)
    weak_rungs = weak_eps_rungs(eps_weak, kinks)
    for column in weak_rungs.T:
        rows = ~np.isnan(column)
        weak = np.where(rows, column, eps_weak)
        weigh(rows, eps_strong, weak)
        weigh_ladder(rows, weak)
    # the weaker group at its largest ratio node below (``plan.ratio_node_below``)
    at_node = ratio_node_rungs(eps_strong, eps_weak, kinks.ratio_nodes)
    rows = ~np.isnan(at_node)
    weigh(rows, eps_strong, np.where(rows, at_node, eps_weak))
    # and at each rung of the stronger group's ladder, the weaker at that rung's ratio node
    # below (``plan._tester_points``)
    below = eps_weak < eps_strong
    if below.any():
        rungs = strong_eps_rungs(
            np.where(below, eps_strong, 1.0), np.where(below, eps_weak, 1.0), kinks
        )
        for column in rungs.T:
            rows = below & ~np.isnan(column)
            rung = np.where(rows, column, eps_strong)
            at_node = ratio_node_rungs(rung, eps_weak, kinks.ratio_nodes)
            rows &= ~np.isnan(at_node)
            weigh(rows, rung, np.where(rows, at_node, eps_weak))
    # last, both groups where a weak-ε-only protocol needs the fewest users below the row's
    # ε (``plan.least_eps_rungs``)
    for protocol in weak_only_protocols(setting, table, _fallback(setting)):
        least = least_eps_rungs(
            protocol, table.for_setting(protocol.key), points.k, points.alpha, eps_weak
        )
        rows = ~np.isnan(least)
        if rows.any():
            weak = np.where(rows, least, eps_weak)
            weigh(rows, weak, weak)
    for point in reversed(queued):
        weigh_queued(*point)
    return tuple(best), tester


def _split_by_variance(
    n1: np.ndarray, n2: np.ndarray, points: _Points, tester: np.ndarray, protocol: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``plan``'s local split by the tester's variance (:func:`planner.plan.variance_split`),
    run by run, where it needs fewer users in all, on the rows whose ``protocol`` key is
    resized so; γ from the same scalar function."""
    resized = np.isin(protocol, _VARIANCE_CODES)
    if not resized.any():
        return n1, n2
    runs = _vote_runs(points.beta)
    eps1 = np.where(np.isnan(tester[0]), points.eps1, tester[0])
    eps2 = np.where(np.isnan(tester[1]), points.eps2, tester[1])
    gamma1 = np.ones(n1.shape)
    gamma2 = np.ones(n1.shape)
    for key in _VARIANCE_KEYS:  # γ from each protocol's own scalar function, once per (k, ε)
        rows = protocol == _CODE[key]
        if rows.any():
            k = points.k[rows].astype(np.float64)  # exact: k ≤ K_MAX < 2^53
            gamma1[rows] = _VARIANCE_WEIGHTS[key](k, eps1[rows])
            gamma2[rows] = _VARIANCE_WEIGHTS[key](k, eps2[rows])
    with np.errstate(all="ignore"):  # rows far past exact counts are left to ``plan``
        exact1, exact2 = variance_split(n1 // runs, n2 // runs, gamma1, gamma2)
        split1, split2 = runs * np.ceil(exact1), runs * np.ceil(exact2)
    fewer = np.isfinite(split1 + split2) & (split1 + split2 < n1 + n2)
    fewer &= resized
    return np.where(fewer, split1, n1), np.where(fewer, split2, n2)


def _take(
    best: list[np.ndarray],
    tester: np.ndarray,
    chosen: np.ndarray,
    candidates: _Points,
    taken: np.ndarray,
    columns: tuple,
) -> None:
    """Rows ``chosen`` of ``best`` take the ``taken`` rows of the candidates' ``columns``;
    ``tester`` records the candidates' (ε1, ε2, α)."""
    if not taken.any():
        return
    tester[0][chosen] = candidates.eps1[taken]
    tester[1][chosen] = candidates.eps2[taken]
    tester[2][chosen] = candidates.alpha[taken]
    for column, candidate in zip(best, columns, strict=True):
        column[chosen] = candidate[taken]


_EPS_FREE_AXES = sum(
    1 << bit for bit, name in enumerate(COVERAGE_AXES) if name in ("k", "alpha", "delta")
)
"""The ``uncovered_axes`` bits no lower ε changes."""

_PRUNE_CANDIDATES = True
"""Skip sizing where a protocol's least possible users cannot beat the row's best so far
(as ``planner.plan`` does; off, everything is sized: the tests compare both)."""

_LEAST_MARGIN = 1.0 - 1e-9
"""As ``planner.plan``'s: the multiplier's interpolation may land a few ulps below its least
corner's C."""


def least_sizes(
    points: _Points,
    protocol: Protocol,
    table: ConstantTable,
    units: dict | None = None,
    by_cell: bool = False,
) -> tuple:
    """Lower limits on the (n1, n2, …, protocol key, uncovered) columns of ``protocol``
    sized at each point (``_protocol_columns``' order, for a ``users`` count): its run
    sizes at the least multiplier of its constant (``by_cell``: of each point's grid cell,
    :meth:`~planner.constants.SettingConstant.least_cell_multipliers`; a sharper limit, but
    one that may fall at a lower ε, so not for ``Protocol.sizes_fall_with_eps``'s ruling).
    Every protocol's run sizes grow with the multiplier, the multiplier is at least the
    least C of its grid cell (``planner.plan._least_users``), and a vote runs at least
    once; a count of users in all (the sum, or the variance split where it needs fewer)
    grows with each group's users.
    Rows ``plan`` may calibrate directly (a factor below 1) are answered by ``plan``, not
    here. ``units``: where given, the strong group's C = 1 size at each point is put there
    under the protocol's key (the sizing at the same points reads it, not sizing it again)."""
    constant = table.for_setting(protocol.key)
    compression = constant.compression()
    strong = np.maximum(points.eps1, points.eps2)
    weak = np.minimum(points.eps1, points.eps2)
    if by_cell:
        grid_strong, grid_weak, _ = _grid_position(
            points, protocol.setting, strong, weak, points.accounting, constant
        )
        least = _LEAST_MARGIN * constant.least_cell_multipliers(
            points.k, points.alpha, grid_strong, grid_weak
        )
    else:
        least = np.full(points.k.shape, _LEAST_MARGIN * constant.least_multiplier)
    sizing = (constant.bound, points.accounting, compression)
    unit = _run_sizes(points, protocol.setting, strong, weak, None, *sizing)
    if units is not None:
        units[protocol.key] = unit
    n_strong, n_weak = _run_sizes(points, protocol.setting, strong, weak, least, *sizing, unit)
    strong_is_group1 = points.eps1 >= points.eps2
    zeros = np.zeros(points.k.shape)
    return (
        np.where(strong_is_group1, n_strong, n_weak),
        np.where(strong_is_group1, n_weak, n_strong),
        np.full(points.k.shape, _CODE[protocol.key]),
        zeros,
    )


def _scattered(subset: tuple, rows: np.ndarray, like: tuple) -> tuple:
    """Columns sized on ``rows`` only, spread to every row (the others: +inf users, so
    they are never chosen; the other columns copied from ``like``)."""
    spread = []
    for index, (column, template) in enumerate(zip(subset, like, strict=True)):
        full = np.array(template, copy=True)
        if index < 2:
            full = np.full(full.shape, np.inf)
        full[rows] = column
        spread.append(full)
    return tuple(spread)


def _subset(points: _Points, rows: np.ndarray) -> _Points:
    """The points of the selected rows."""
    return _Points(
        points.k[rows],
        points.alpha[rows],
        points.eps1[rows],
        points.eps2[rows],
        points.delta[rows],
        points.beta[rows],
        points.accounting,
    )


@dataclass(frozen=True)
class _Points:
    k: np.ndarray
    alpha: np.ndarray
    eps1: np.ndarray
    eps2: np.ndarray
    delta: np.ndarray
    beta: np.ndarray
    accounting: Accounting


def valid_rows(
    setting: Setting,
    k: np.ndarray,
    alpha: np.ndarray,
    eps1: np.ndarray,
    eps2: np.ndarray,
    delta: np.ndarray,
    beta: np.ndarray,
) -> np.ndarray:
    """Rows that ``Query`` accepts (the ranges of :mod:`planner.inputs`; NaN δ: not given)."""
    with np.errstate(invalid="ignore"):
        valid = (k == np.floor(k)) & (k >= 2) & (k <= K_MAX)
        valid &= (alpha >= ALPHA_MIN) & (alpha <= 1)
        for eps in (eps1, eps2):
            valid &= (eps >= EPS_MIN) & (eps <= EPS_MAX)
        valid &= (beta > 0) & (beta < 0.5)
        delta_accepted = (delta >= DELTA_FLOOR) & (delta < 1)
        if protocol_for(setting).needs_delta:
            valid &= delta_accepted
        else:  # δ is ignored, but a given one must still be valid
            valid &= np.isnan(delta) | delta_accepted
    return valid


def _protocol_columns(
    points: _Points,
    protocol: Setting,
    table: ConstantTable,
    unit_strong: np.ndarray | None = None,
) -> tuple:
    """(n1, n2, protocol key, uncovered axes) of ``protocol`` sized at each point;
    ``unit_strong``: the strong group's C = 1 size at each point where already known (NaN:
    not)."""
    constant = table.for_setting(protocol.key)
    strong = np.maximum(points.eps1, points.eps2)
    weak = np.minimum(points.eps1, points.eps2)
    runs = _vote_runs(points.beta)
    main_strong, main_weak = _calibrated_sizes(
        points, protocol, constant, strong, weak, unit_strong
    )
    grid_strong, grid_weak, _ = _grid_position(
        points, protocol, strong, weak, points.accounting, constant
    )
    uncovered = (
        constant.uncovered_axes(
            points.k,
            points.alpha,
            grid_strong,
            grid_weak,
            points.delta if protocol_for(protocol).needs_delta else np.nan,
        )
        if constant.source is ConstantSource.CALIBRATED
        else np.zeros(points.k.shape, dtype=np.int64)
    )
    return (
        *_by_group(points, runs * main_strong, runs * main_weak),
        np.full(points.k.shape, _CODE[protocol.key]),
        np.broadcast_to(uncovered, points.k.shape),
    )


def _calibrated_sizes(
    points: _Points,
    protocol: Setting,
    constant: SettingConstant,
    eps_s: np.ndarray,
    eps_w: np.ndarray,
    known: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One run's (n_strong, n_weak) of ``protocol`` at each point with the groups at
    (``eps_s``, ``eps_w``), by its calibrated multiplier (``plan.run_sizes``); ``known``:
    the strong group's C = 1 size there where already known (NaN: not)."""
    compression = constant.compression()
    multiplier, unit = _calibrated_multiplier(
        points, protocol, constant, eps_s, eps_w, points.accounting, compression, known
    )
    if _reads_grid_elsewhere(protocol, points.accounting):
        unit = None  # the grid was read at another ε: size this point afresh
    return _run_sizes(
        points,
        protocol,
        eps_s,
        eps_w,
        multiplier,
        constant.bound,
        points.accounting,
        compression,
        unit,
    )


def _by_group(
    points: _Points, for_strong: np.ndarray, for_weak: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(group 1's, group 2's) from the strong and weak group's values (group 1 is the
    strong one where ε1 ≥ ε2)."""
    strong_is_group1 = points.eps1 >= points.eps2
    return (
        np.where(strong_is_group1, for_strong, for_weak),
        np.where(strong_is_group1, for_weak, for_strong),
    )


def _baseline_columns(
    points: _Points, tester: np.ndarray, protocol: np.ndarray, table: ConstantTable
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's homogeneous baseline (both groups at the weaker ε; ``plan``'s
    ``baseline_n_users``): of the protocol it runs (``protocol``'s codes), at the point its
    tester runs (``tester``'s (ε1, ε2, α); NaN: the query's), once per protocol."""
    taken = ~np.isnan(tester[0])
    at = replace(
        points,
        eps1=np.where(taken, tester[0], points.eps1),
        eps2=np.where(taken, tester[1], points.eps2),
        alpha=np.where(taken, tester[2], points.alpha),
    )
    runs = _vote_runs(points.beta)
    baseline = np.empty((2, points.k.shape[0]))
    for code in np.unique(protocol):
        rows = protocol == code
        at_rows = _subset(at, rows)
        record = protocol_for(_KEYS[int(code)])
        weak = np.minimum(at_rows.eps1, at_rows.eps2)
        base_strong, base_weak = _calibrated_sizes(
            at_rows, record.setting, table.for_setting(record.key), weak, weak
        )
        baseline[:, rows] = _by_group(at_rows, runs[rows] * base_strong, runs[rows] * base_weak)
    return baseline[0], baseline[1]


def _lower_bound_columns(points: _Points, setting: Setting) -> tuple[np.ndarray, np.ndarray]:
    """The asked setting's lower bounds at each query, whichever protocol runs it and at
    whichever tester point (``plan``)."""
    lower = BOUNDS[protocol_for(setting).lower_bound_key]
    strong = np.maximum(points.eps1, points.eps2)
    weak = np.minimum(points.eps1, points.eps2)
    lower_strong, lower_weak = (
        np.asarray(lower.evaluate(k=points.k, alpha=points.alpha, eps=eps), dtype=float)
        for eps in (strong, weak)
    )
    return _by_group(points, lower_strong, lower_weak)


def _vote_runs(beta: np.ndarray) -> np.ndarray:
    """Runs of the plan at each β on the vectorised path: r(β) below 1/3 (a row that may
    be calibrated directly goes to ``plan``), else 1."""
    return _per_distinct(
        beta, lambda value: majority_vote_runs(value, PER_RUN_ERROR) if value < PER_RUN_ERROR else 1
    )


def _may_calibrate_directly(points: _Points, setting: Setting, table: ConstantTable) -> np.ndarray:
    """Rows where ``plan`` weighs direct calibration against the vote of runs at 1/3, at
    β or at a direct node above it (a vote of directly calibrated runs): left to it."""
    entries = [table.for_setting(key) for key in _keys_run(setting, table)]

    def weighed(beta: float, k: float) -> bool:
        return any(entry.has_direct_factor(beta, int(k)) for entry in entries)

    return per_distinct_pairs(points.beta, points.k.astype(np.float64), weighed) > 0


def _per_distinct(values: np.ndarray, function: Any) -> np.ndarray:
    """``function`` (a scalar function) applied once per distinct value of ``values``."""
    if values.size and bool((values == values.flat[0]).all()):  # one value (a sweep's β)
        return np.full(values.shape, function(float(values.flat[0])), dtype=np.float64)
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([function(float(value)) for value in distinct], dtype=np.float64)[
        inverse.reshape(values.shape)
    ]


def _fallback(setting: Setting) -> bool:
    """``plan``'s ``fallback`` for a sweep's rows of ``setting``: off for a mechanism swept
    by its key, which runs alone, as ``planner plan --protocol KEY`` and ``compare`` run it
    (a review: ``sweep -s shuffle-public+messages`` had run its private-coin twin, 2,835
    users' plan answered by 1,389)."""
    return not setting.mechanism


def _alternatives(setting: Setting, table: ConstantTable) -> list[Protocol]:
    """The protocols ``plan`` may run in place of the setting's own, in its order: a
    public-coin protocol's private-coin twin, then the model's other mechanisms the table
    sizes with constants of the same source as the setting's own (``plan``; the twin, as
    ever, whatever its source). None for a mechanism swept alone (:func:`_fallback`)."""
    if not _fallback(setting):
        return []
    own = protocol_for(setting)
    twin = private_coin_protocol(own)
    source = table.for_setting(setting.key).source
    others = [
        other
        for other in other_mechanisms(own)
        if table.has_setting(other.key) and table.for_setting(other.key).source is source
    ]
    return ([twin] if twin is not None else []) + others


def _keys_run(setting: Setting, table: ConstantTable) -> list[str]:
    """The keys of the protocols a query of ``setting`` may run: its own and
    :func:`_alternatives`."""
    return [setting.key, *(other.key for other in _alternatives(setting, table))]


def _by_variance(setting: Setting, table: ConstantTable) -> bool:
    """Some protocol the setting's rows may run is resized by the statistic's variance
    under the default split (``plan``)."""
    return any(key in _VARIANCE_KEYS for key in _keys_run(setting, table))


_VARIANCE_KEYS = frozenset(
    protocol.key
    for protocol in PROTOCOLS
    if protocol.variance_weight is not None and not protocol.coupled_groups
)
"""The protocols the default plan splits again by their statistic's variance (a channel
per group is sized so already)."""


def _variance_weight(key: str) -> RememberedPairs:
    """γ(k, ε) of the protocol ``key`` (its ``variance_weight``) on arrays, remembered."""
    function: Any = protocol_for(key).variance_weight

    def weight(k: float, eps: float) -> float:
        return float(function(int(k), eps))

    return RememberedPairs(weight)


_VARIANCE_WEIGHTS = {key: _variance_weight(key) for key in _VARIANCE_KEYS}

_KEYS = tuple(protocol.key for protocol in PROTOCOLS)
_CODE = {key: code for code, key in enumerate(_KEYS)}
"""The protocol column's code for each key (a key per row costs object arrays)."""
_VARIANCE_CODES = np.array(sorted(_CODE[key] for key in _VARIANCE_KEYS))


def _reads_grid_elsewhere(protocol: Setting, accounting: Accounting) -> bool:
    """The lemma's μ, or a k above the grid (``Protocol.noise_matched_above_grid``), reads
    its constant at another ε (``plan.grid_position``)."""
    if protocol_for(protocol).noise_matched_above_grid:
        return True
    return protocol_for(protocol).exact_privacy is not None and accounting is Accounting.PAPER


def _grid_position(
    points: _Points,
    protocol: Setting,
    eps_s: np.ndarray,
    eps_w: np.ndarray,
    accounting: Accounting,
    constant: SettingConstant,
) -> tuple[np.ndarray, np.ndarray, Accounting]:
    """``planner.plan.grid_position``, elementwise: the lemma's μ read at the exact
    privacy it buys."""
    if protocol_for(protocol).weak_eps_only:
        if protocol_for(protocol).noise_matched_above_grid:
            eps_w = noise_matched_eps(points.k, eps_w, constant)
        return eps_w, eps_w, accounting
    weak_release_eps = protocol_for(protocol).weak_release_eps
    if weak_release_eps is not None:  # a subsampled curator's release
        return (
            eps_s,
            weak_release_eps(protocol, points.eps1 >= points.eps2, eps_s, eps_w),
            accounting,
        )
    exact_privacy = protocol_for(protocol).exact_privacy
    if exact_privacy is None or accounting is not Accounting.PAPER:
        return eps_s, eps_w, accounting
    eps_s, eps_w = (
        np.maximum(
            EPS_MIN,
            per_distinct_pairs(
                eps, points.delta, lambda e, d: exact_privacy(e, d, Accounting.PAPER)
            ),
        )
        for eps in (eps_s, eps_w)
    )
    return eps_s, eps_w, Accounting.EXACT


def _calibrated_multiplier(
    points: _Points,
    protocol: Setting,
    constant: SettingConstant,
    eps_s: np.ndarray,
    eps_w: np.ndarray,
    accounting: Accounting,
    compression: tuple[int, int],
    known: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """``planner.plan.calibrated_multiplier``, elementwise (the same log-n chord), and the
    strong group's C = 1 size at the grid position (None without a grid); ``known``: that
    size at the point itself where already known (NaN: not), read where the grid position
    is the point."""
    at_point = (eps_s, eps_w, accounting)
    eps_s, eps_w, accounting = _grid_position(points, protocol, eps_s, eps_w, accounting, constant)
    if eps_s is not at_point[0] or eps_w is not at_point[1] or accounting is not at_point[2]:
        known = None  # the grid is read at another ε
    corners = constant.grid_corner_arrays(points.k, points.alpha, eps_s, eps_w)
    if corners is None:
        return np.full(points.k.shape, constant.multiplier), None
    record = protocol_for(protocol)
    if record.largest_alpha_c_below_k:
        below = points.k < record.largest_alpha_c_below_k
        corners = _alpha_tail_corners(corners, constant, below)
    unit = _corner_units(points, protocol, constant, corners, accounting, compression)
    log_n = 0
    log_constant = 0
    for corner, corner_unit in zip(corners, unit, strict=True):
        log_n = log_n + corner.weight * np.log(corner.multiplier * corner_unit)
        log_constant = log_constant + corner.weight * np.log(corner.multiplier)
    sizing = (constant.bound, accounting, compression)
    if known is None:
        here = _run_sizes(points, protocol, eps_s, eps_w, None, *sizing)
    else:
        here = np.array(known, dtype=np.float64, copy=True)
        missing = np.isnan(here)
        if missing.any():
            at_missing = _subset(points, missing)
            here[missing] = _run_sizes(
                at_missing, protocol, eps_s[missing], eps_w[missing], None, *sizing
            )
    if record.coupled_groups:  # the largest C of the point's cell (``plan``)
        largest = np.zeros(points.k.shape)
        for corner in corners:
            largest = np.maximum(largest, np.where(corner.weight > 0, corner.multiplier, 0.0))
        return largest, here
    return np.maximum(np.exp(log_n) / here, np.exp(log_constant)), here


def _alpha_tail_corners(corners: list, constant: SettingConstant, rows: np.ndarray) -> list:
    """``plan._alpha_tail_corners`` on the rows ``rows``: the first corner's α side is
    each point's cell's lower α node."""
    tail = constant.alpha_tail_multipliers
    assert tail is not None  # a constant with corners has a grid
    # the least α node of the corners that weigh (``grid_corners`` leaves the others out
    # of the scalar's list): at α on the grid's top node its lower side weighs 0
    low = np.min(
        [
            np.where(corner.weight > 0, corner.index[1], np.iinfo(np.int64).max)
            for corner in corners
        ],
        axis=0,
    )
    return [
        replace(
            corner,
            multiplier=np.where(
                rows,
                tail[corner.index[0], low, corner.index[2], corner.index[3]],
                corner.multiplier,
            ),
        )
        for corner in corners
    ]


def _corner_units(
    points: _Points,
    protocol: Setting,
    constant: SettingConstant,
    corners: list,
    accounting: Accounting,
    compression: tuple[int, int],
) -> np.ndarray:
    """The strong group's C = 1 size at each corner (``plan.strong_order_size``), shape
    (corners, *points): read from a table of the grid's nodes (one per distinct δ) where
    every corner is a node, computed corner by corner elsewhere."""
    shape = points.k.shape
    unit = np.empty((len(corners), *shape))
    on_nodes = np.broadcast_to(corners[0].on_nodes, shape)
    if on_nodes.any():
        deltas, delta_code = np.unique(points.delta[on_nodes], return_inverse=True)
        table = np.stack(
            [
                _node_units(protocol, constant, float(delta), accounting, compression)
                for delta in deltas
            ]
        )
        flat_table = table.reshape(deltas.size, -1)
        every = bool(on_nodes.all())
        for position, corner in enumerate(corners):
            flat = np.broadcast_to(corner.flat_index, shape)
            unit[position][on_nodes] = flat_table[delta_code, flat if every else flat[on_nodes]]
    off = ~on_nodes
    if off.any():
        # only the corners that weigh (most weigh 0: a point outside the grid on an axis
        # has both corners there, weights 1 and 0): a weight of 0 adds nothing to the
        # chord, whatever the size, so those keep a size of 1 (``grid_corners`` leaves
        # them out of the scalar chord)
        weighs = np.stack([np.broadcast_to(corner.weight, shape)[off] for corner in corners]) > 0
        corner_k, corner_alpha, corner_strong, corner_weak = (
            np.stack([np.broadcast_to(getattr(corner, name), shape)[off] for corner in corners])[
                weighs
            ]
            for name in ("k", "alpha", "eps_strong", "eps_weak")
        )
        corner_points = _Points(
            corner_k,
            corner_alpha,
            corner_strong,
            corner_weak,
            np.broadcast_to(points.delta[off], weighs.shape)[weighs],
            np.broadcast_to(points.beta[off], weighs.shape)[weighs],
            accounting,
        )
        sizes = np.ones(weighs.shape)
        sizes[weighs] = _run_sizes(
            corner_points,
            protocol,
            corner_points.eps1,
            corner_points.eps2,
            None,
            constant.bound,
            accounting,
            compression,
        )
        unit[:, off] = sizes
    return unit


NODE_UNITS_MEMO = 256
"""Node tables (one per δ, accounting and compression) a constant remembers at most."""


def _node_units(
    protocol: Setting,
    constant: SettingConstant,
    delta: float,
    accounting: Accounting,
    compression: tuple[int, int],
) -> np.ndarray:
    """The strong group's C = 1 size at every node of the constant's grid (its shape), at
    ``delta``: sized once and remembered with the constant (a sweep reads it at each of
    its tester points)."""
    memo = constant.node_units_memo
    key = (protocol.key, delta, accounting, compression)
    found = memo.get(key)
    if found is None:
        nodes = constant.grid_nodes()
        assert nodes is not None
        node_k, node_alpha, node_strong, node_weak = nodes
        shape = node_k.shape
        node_points = _Points(
            node_k,
            node_alpha,
            node_strong,
            node_weak,
            np.full(shape, delta),
            np.full(shape, PER_RUN_ERROR),
            accounting,
        )
        found = _run_sizes(
            node_points,
            protocol,
            node_points.eps1,
            node_points.eps2,
            None,
            constant.bound,
            accounting,
            compression,
        )
        found.setflags(write=False)
        if len(memo) >= NODE_UNITS_MEMO:
            memo.clear()
        memo[key] = found
    return found


def _run_sizes(
    points: _Points,
    protocol: Setting,
    eps_s: np.ndarray,
    eps_w: np.ndarray,
    multiplier: np.ndarray | None,
    bound_key: str | None,
    accounting: Accounting,
    compression: tuple[int, int],
    unit_strong: np.ndarray | None = None,
) -> Any:
    """``planner.plan.run_sizes``, elementwise: (n_strong, n_weak) for a ``multiplier``;
    with ``multiplier=None``, the strong group's C = 1 size (``strong_order_size``).
    ``unit_strong``: that size, when already known (it is not recomputed)."""
    record = protocol_for(protocol)
    # a subsampled curator's release depends on which named group is the weaker
    oriented = (
        {} if record.weak_release_eps is None else {"weak_is_group2": points.eps1 >= points.eps2}
    )
    return record.size_run_arrays(
        points.k,
        points.alpha,
        points.delta,
        eps_s,
        eps_w,
        multiplier,
        bound_key,
        accounting,
        compression,
        unit_strong,
        **oriented,
    )


__all__ = ["EXACT_COUNT_LIMIT", "PlanColumns", "plan_columns"]
