"""Pruning the candidate protocols (``planner.plan._least_users``) changes no plan.

A plan sizes every protocol its query may run at each tester point; one whose least
possible users cannot beat the plan chosen so far is skipped. These tests plan random
queries with the pruning on and off and require the very same plan, field by field.
"""

from __future__ import annotations

import math
import random
import sys

import numpy as np
import pytest

import planner.vectorised as vectorised
from planner.api import SETTING_KEYS
from planner.constants import ConstantSource, constants_with_source, default_constants
from planner.formulas.settings import Model, Setting
from planner.inputs import Accounting, Query
from planner.plan import Split, plan
from planner.protocols import PROTOCOLS

PLAN_MODULE = sys.modules["planner.plan"]  # ``planner.plan`` the attribute is the function


def _random_queries(count: int, seed: int) -> list[Query]:
    rng = random.Random(seed)

    def log_uniform(low: float, high: float) -> float:
        return math.exp(rng.uniform(math.log(low), math.log(high)))

    queries = []
    for index in range(count):
        setting = Setting.from_key(SETTING_KEYS[index % len(SETTING_KEYS)])
        shuffle = setting.model is Model.SHUFFLE
        k, alpha, eps1 = int(log_uniform(2, 1e6)), log_uniform(0.01, 1), log_uniform(0.01, 20)
        queries.append(
            Query(
                setting,
                k,
                alpha,
                eps1,
                eps1 if index % 7 == 0 else log_uniform(0.01, 20),  # now and then equal ε
                10 ** rng.uniform(-10, -3) if shuffle else None,
                log_uniform(0.01, 1 / 3) if index % 3 == 1 else 1 / 3,
                Accounting.PAPER if shuffle and index % 4 == 3 else Accounting.EXACT,
            )
        )
    return queries


def _planned(query: Query, **options: object) -> str:
    """The whole plan, every field (the query's warnings too), or the error it raises."""
    try:
        return repr(plan(query, **options))  # type: ignore[arg-type]
    except Exception as error:  # the same refusal either way
        return f"{type(error).__name__}: {error}"


def _both_ways(monkeypatch: pytest.MonkeyPatch, query: Query, **options: object) -> None:
    monkeypatch.setattr(PLAN_MODULE, "_PRUNE_CANDIDATES", True)
    pruned = _planned(query, **options)
    monkeypatch.setattr(PLAN_MODULE, "_PRUNE_CANDIDATES", False)
    full = _planned(query, **options)
    assert pruned == full, (query, options)


def test_pruning_changes_no_plan_over_random_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    """200 random queries over the accepted range, every setting, β at 1/3 and below,
    both accountings, each split: the same plan with and without the pruning."""
    splits = tuple(Split)
    for index, query in enumerate(_random_queries(200, 20261128)):
        _both_ways(monkeypatch, query, split=splits[index % len(splits)])


@pytest.mark.parametrize("source", [ConstantSource.PROOF, ConstantSource.ORDER])
def test_pruning_changes_no_plan_with_other_constants(
    monkeypatch: pytest.MonkeyPatch, source: ConstantSource
) -> None:
    table = constants_with_source(source)
    for query in _random_queries(30, 7):
        _both_ways(monkeypatch, query, constants=table)


def test_pruning_skips_candidates_at_the_benchmark_queries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It does prune: at k = 1000, α = 0.1, ε = (1, 0.25) (``benchmarks/bench_planner.py``)
    the five settings' plans sized 19 protocols at their points, against 51 without it
    (2026-11-28's constants): fewer than half."""
    sized: list[str] = []
    original = PLAN_MODULE._ProtocolRun.size.__func__

    def counting(cls, asked, protocol, table):  # type: ignore[no-untyped-def]
        sized.append(protocol.key)
        return original(cls, asked, protocol, table)

    monkeypatch.setattr(PLAN_MODULE._ProtocolRun, "size", classmethod(counting))
    counts = []
    for prune in (True, False):
        monkeypatch.setattr(PLAN_MODULE, "_PRUNE_CANDIDATES", prune)
        for memory in PLAN_MODULE._MEMORIES:  # each way sizes its own choices afresh
            memory.clear()
        sized.clear()
        for key in SETTING_KEYS:
            setting = Setting.from_key(key)
            delta = 1e-6 if setting.model is Model.SHUFFLE else None
            plan(Query(setting, 1000, 0.1, 1.0, 0.25, delta))
        counts.append(len(sized))
    assert 2 * counts[0] < counts[1]


def test_least_users_is_below_every_candidates_users() -> None:
    """The lower limit itself, for every protocol at random queries."""
    table = default_constants()
    checked = 0
    for query in _random_queries(100, 11):
        for protocol in PROTOCOLS:
            if protocol.needs_delta and query.delta is None:
                continue
            least = PLAN_MODULE._least_users(query, protocol, table)
            run = PLAN_MODULE._ProtocolRun.size(query, protocol.setting, table)
            assert least <= run.total_users, (query, protocol.key)
            checked += 1
    assert checked > 400


def _pooled(rng: np.random.Generator, low: float, high: float, rows: int) -> np.ndarray:
    """``rows`` draws from 16 log-uniform values in [low, high] (the shuffle model's exact μ
    is one root-find per distinct ε and δ: a pool keeps the test fast)."""
    return rng.choice(np.exp(rng.uniform(np.log(low), np.log(high), 16)), rows)


def _random_columns(seed: int, rows: int = 40) -> list[dict]:
    """Random rows of every setting over the accepted range, both splits, planned at once
    (``planner.vectorised.plan_columns``)."""
    rng = np.random.default_rng(seed)
    table = default_constants()
    results = []
    for key in SETTING_KEYS:
        setting = Setting.from_key(key)
        k = np.floor(np.exp(rng.uniform(np.log(2), np.log(1e6), rows)))
        alpha = np.exp(rng.uniform(np.log(0.01), 0, rows))
        eps1 = _pooled(rng, 0.01, 20, rows)
        eps2 = np.where(rng.random(rows) < 0.15, eps1, _pooled(rng, 0.01, 20, rows))
        delta = _pooled(rng, 1e-10, 1e-3, rows) if setting.model is Model.SHUFFLE else np.nan
        beta = np.where(
            rng.random(rows) < 0.3, np.exp(rng.uniform(np.log(0.01), np.log(1 / 3), rows)), 1 / 3
        )
        for accounting, split in (
            (Accounting.EXACT, Split.FEWEST),
            (Accounting.PAPER, Split.PAPER),
        ):
            columns = vectorised.plan_columns(
                setting, k, alpha, eps1, eps2, delta, beta, accounting, table, split
            )
            results.append({name: np.asarray(value) for name, value in vars(columns).items()})
    return results


def test_vectorised_pruning_changes_no_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweeps' pruning (``planner.vectorised.least_sizes``, rows no lower ε can bring
    into the covered region) gives every column of every row bit for bit as sizing
    everything does: 40 random rows per setting, with each split and accounting (each row's
    ladder has its own ε, each a root-find of μ in the shuffle model: a heavy test)."""
    monkeypatch.setattr(vectorised, "_PRUNE_CANDIDATES", True)
    pruned = _random_columns(20261129)
    monkeypatch.setattr(vectorised, "_PRUNE_CANDIDATES", False)
    full = _random_columns(20261129)
    for one, other in zip(pruned, full, strict=True):
        for name in one:
            np.testing.assert_array_equal(one[name], other[name], err_msg=name)


@pytest.mark.parametrize("by_cell", [False, True])
def test_least_sizes_are_below_every_protocols_sizes(by_cell: bool) -> None:
    """The lower limits themselves: each protocol's least (n1, n2) at random points are at
    most its sizes there (``planner.vectorised.least_sizes`` against
    ``_protocol_columns``), by the grid's least C and by each point's cell's; and the
    cell's limit is the sharper one somewhere for every protocol with a grid."""
    rng = np.random.default_rng(5)
    table = default_constants()
    rows = 500
    points = vectorised._Points(
        np.floor(np.exp(rng.uniform(np.log(2), np.log(1e6), rows))).astype(np.int64),
        np.exp(rng.uniform(np.log(0.01), 0, rows)),
        _pooled(rng, 0.01, 20, rows),
        _pooled(rng, 0.01, 20, rows),
        _pooled(rng, 1e-10, 1e-3, rows),
        np.full(rows, 1 / 3),
        Accounting.EXACT,
    )
    for protocol in PROTOCOLS:
        least = vectorised.least_sizes(points, protocol, table, by_cell=by_cell)
        sized = vectorised._protocol_columns(points, protocol.setting, table)
        finite = np.isfinite(sized[0]) & np.isfinite(sized[1])
        assert finite.mean() > 0.9, protocol.key
        assert (least[0][finite] <= sized[0][finite]).all(), protocol.key
        assert (least[1][finite] <= sized[1][finite]).all(), protocol.key
        if by_cell and table.for_setting(protocol.key).grid_nodes() is not None:
            overall = vectorised.least_sizes(points, protocol, table)
            assert (least[0] >= overall[0]).all(), protocol.key
            assert (least[0] > overall[0]).any(), protocol.key


def _users_in_all(points: vectorised._Points, columns: tuple) -> np.ndarray:
    """Users in all as the sweep counts them: the sum, or the variance split where fewer."""
    split1, split2 = vectorised._split_by_variance(
        columns[0], columns[1], points, np.full((2, 1), np.nan), columns[-2]
    )
    return np.minimum(columns[0] + columns[1], split1 + split2)


def test_least_users_fall_with_eps_where_a_protocol_says_so() -> None:
    """``Protocol.sizes_fall_with_eps`` is what lets a sweep rule a protocol out of every
    lower tester point of a row from its least users at the row itself. At 600 random
    points and a lower point of each (each ε and α times a factor in (0, 1]) the least
    users in all are no fewer at the lower point, for every protocol that says so; and
    the flag is off for central, whose least users do fall with ε at k = 3, and for the
    mixed pairs, whose curator's group far below the local one is the population of a
    subsample whose release's ε grows with the local group's."""
    rng = np.random.default_rng(29)
    table = default_constants()
    rows = 600

    def points(k: np.ndarray, alpha: np.ndarray, eps1: np.ndarray, eps2: np.ndarray):
        return vectorised._Points(
            k, alpha, eps1, eps2, np.full(rows, 1e-6), np.full(rows, 1 / 3), Accounting.EXACT
        )

    k = np.floor(np.exp(rng.uniform(np.log(2), np.log(1e6), rows))).astype(np.int64)
    alpha = np.exp(rng.uniform(np.log(0.01), 0, rows))
    eps1, eps2 = _pooled(rng, 0.01, 20, rows), _pooled(rng, 0.01, 20, rows)
    here = points(k, alpha, eps1, eps2)
    lower = points(
        k,
        alpha * np.where(rng.random(rows) < 0.3, 1.0, rng.uniform(0.2, 1, rows)),
        np.maximum(0.01, eps1 * rng.uniform(0.05, 1, rows)),
        np.maximum(0.01, eps2 * rng.uniform(0.05, 1, rows)),
    )
    flagged = [protocol for protocol in PROTOCOLS if protocol.sizes_fall_with_eps]
    # local mechanisms, the mixed pairs' and the central histograms' (a curator's noise
    # falls with its ε too)
    assert {p.key for p in flagged if p.setting.model is Model.CENTRAL} == {"central+channels"}
    for protocol in flagged:
        at_here = _users_in_all(here, vectorised.least_sizes(here, protocol, table))
        at_lower = _users_in_all(lower, vectorised.least_sizes(lower, protocol, table))
        assert (at_lower >= at_here).all(), protocol.key
    central = next(protocol for protocol in PROTOCOLS if protocol.key == "central")
    assert not central.sizes_fall_with_eps
    one = np.ones(1)

    def central_least(eps2: float) -> float:
        at = vectorised._Points(
            np.array([3]),
            0.43 * one,
            0.9 * one,
            eps2 * one,
            1e-6 * one,
            one / 3,
            Accounting.EXACT,
        )
        columns = vectorised.least_sizes(at, central, table)
        return float(columns[0][0] + columns[1][0])

    assert central_least(1.0) < central_least(2.5)
    mixed = next(p for p in PROTOCOLS if p.key == "local/central-private+channels")
    assert not mixed.sizes_fall_with_eps

    def mixed_least(eps1: float) -> float:
        at = vectorised._Points(
            np.array([28]), 0.129 * one, eps1 * one, 0.01 * one, 1e-6 * one, one / 3,
            Accounting.EXACT,
        )  # fmt: skip
        columns = vectorised.least_sizes(at, mixed, table)
        return float(columns[0][0] + columns[1][0])

    assert mixed_least(8.0) < mixed_least(16.0)
