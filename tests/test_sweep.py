"""Sweeps, plots and batch files: every row is what a single plan (or solve) call says."""

from __future__ import annotations

import csv
import importlib
import io
import json
import time

import numpy as np
import pytest

from planner import api, limits
from planner.api import PROTOCOL_KEYS
from planner.cli import main
from planner.constants import ConstantSource, constants_with_source, default_constants
from planner.documents import sweep_to_dict
from planner.formulas.compression import integer_argmin
from planner.formulas.registry import BOUNDS
from planner.formulas.settings import ALL_SETTINGS, Coin, Model, Setting
from planner.inputs import Accounting, InputError, Query
from planner.plan import Coverage, Split, least_eps_of, plan
from planner.solve import Unknown, solve
from planner.sweep import (
    COLUMNS,
    axes_bits,
    not_covered_status,
    parse_values,
    sweep,
    sweep_to_csv,
)
from planner.vectorised import plan_columns


def _expected_row(setting: Setting, row: dict, accounting: Accounting) -> dict:
    """What single plan() calls say for a sweep row's inputs."""
    try:
        query = Query(
            setting,
            row["k"],
            row["alpha"],
            row["eps1"],
            row["eps2"],
            row["delta"],
            row["beta"],
            accounting=accounting,
        )
        # a mechanism swept by its key runs alone, as ``planner plan --protocol KEY``
        result = plan(query, fallback=not setting.mechanism)
    except InputError as error:
        return {"status": f"error: {error}", "n_users_group1": None, "n_users_group2": None}
    if result.coverage is Coverage.EXTRAPOLATED:  # not printed as a plan
        return {
            "status": not_covered_status(axes_bits(result.coverage_axes), setting),
            "n_users_group1": None,
            "total_users": None,
            "baseline_n_users_group1": None,
        }
    point = result.tester_point  # where the tester runs below the row's inputs
    tester = (None, None, None) if point is None else (point.eps1, point.eps2, point.alpha)
    return {
        "status": "ok",
        "protocol": result.protocol,
        "n_users_group1": result.n_users_group1,
        "n_users_group2": result.n_users_group2,
        "total_users": result.total_users,
        "baseline_n_users_group1": result.groups[0].baseline_n_users,
        "baseline_n_users_group2": result.groups[1].baseline_n_users,
        "lower_bound_group1": pytest.approx(result.groups[0].lower_bound, rel=1e-12),
        "lower_bound_group2": pytest.approx(result.groups[1].lower_bound, rel=1e-12),
        "runs": result.runs,
        **dict(zip(("tester_eps1", "tester_eps2", "tester_alpha"), tester, strict=True)),
        # each group's messages per user, as the plan states them (shuffle plans)
        **{
            f"messages_per_user_group{number}": (
                None if sent is None else pytest.approx(sent, rel=1e-9)
            )
            for number, sent in enumerate((g.messages_per_user for g in result.groups), 1)
        },
    }


@pytest.mark.parametrize("setting", ALL_SETTINGS, ids=lambda s: s.key)
def test_sweep_rows_equal_single_plan_calls(setting: Setting, monkeypatch) -> None:
    """Random points inside and outside the calibration grid, β < 1/3, and bad rows.

    The shuffle sweeps plan about 340 rows one by one (β < 1/3 below k = 16), 7.6 s on an
    idle machine, near the 9 s a sweep may spend on them: the pace limit (tested on its
    own) is lifted here, so a loaded machine does not fail a test of equality."""
    monkeypatch.setattr(limits, "SWEEP_SECONDS_MAX", 600.0)
    rng = np.random.default_rng(20261126)
    k = np.unique(np.round(np.exp(rng.uniform(np.log(2), np.log(2e6), 12))))
    alpha = [*np.exp(rng.uniform(np.log(0.01), 0, 5)).tolist(), 1.5]  # 1.5: an error row
    eps2 = [0.03, 0.2, 0.7, 2.5]
    shuffle = setting.model is Model.SHUFFLE
    result = sweep(
        [setting],
        k=k.tolist(),
        alpha=alpha,
        eps1=0.9,
        eps2=eps2,
        delta=1e-6 if shuffle else None,
        beta=[1 / 3, 0.05],
    )
    rows = result.rows()
    assert len(rows) == len(k) * len(alpha) * len(eps2) * 2
    statuses = {row["status"] == "ok" for row in rows}
    assert statuses == {True, False}
    for row in rows:
        expected = _expected_row(setting, row, Accounting.EXACT)
        assert {name: row[name] for name in expected} == expected, row


@pytest.mark.parametrize(
    "key", [key for key in PROTOCOL_KEYS if "+" in key and not Setting.from_key(key).is_mixed]
)
def test_a_mechanism_swept_by_its_key_runs_alone(key: str) -> None:
    """Each row of a mechanism swept by its key is that mechanism's plan alone, the one
    ``planner plan --protocol KEY`` and ``compare`` give: never its private-coin twin or
    another mechanism (a review: ``sweep -s shuffle-public+messages`` at k = 18 had run
    ``shuffle-private+messages``, 1,389 + 6,598 users against the named protocol's 2,835 +
    13,002; ``-s local-public+hashed`` had run a channel per group)."""
    setting = Setting.from_key(key)
    shuffle = setting.model is Model.SHUFFLE
    result = sweep(
        [setting],
        k=[18, 40, 233, 1000],
        alpha=[0.2, 0.376],
        eps1=[0.115, 2.0],
        eps2=[0.0138, 1.0],
        delta=1.1e-6 if shuffle else None,
    )
    compared = 0
    for row in result.rows():
        expected = _expected_row(setting, row, Accounting.EXACT)
        assert {name: row[name] for name in expected} == expected, row
        if row["status"] == "ok":
            compared += 1
            assert row["protocol"] == key, row
            alone = api.plan_document(
                model=setting.model.value,
                coin=setting.coin.value,
                k=row["k"],
                alpha=row["alpha"],
                eps1=row["eps1"],
                eps2=row["eps2"],
                delta=row["delta"],
                protocol=key,
            )
            assert (row["n_users_group1"], row["n_users_group2"]) == (
                alone["n_users_group1"],
                alone["n_users_group2"],
            )
    assert compared >= 4, (key, compared)


@pytest.mark.parametrize("key", ["shuffle-public", "local-private"])
def test_parallel_blocks_give_the_columns_of_one_block(key: str, monkeypatch) -> None:
    """A large call is planned in blocks on several threads: its columns equal one block's,
    NaN for NaN, on rows that cross every region (small k, padded domains, δ above the
    covered top, invalid rows, β < 1/3)."""
    from planner import vectorised

    rng = np.random.default_rng(20261130)
    rows = 601
    k = np.round(np.exp(rng.uniform(np.log(2), np.log(2e5), rows)))
    alpha = np.exp(rng.uniform(np.log(0.008), np.log(1.2), rows))  # some above 1: invalid
    # few distinct ε and δ: scattered ε give each row a ladder of its own, which the
    # vectorised path sizes a few rows at a time
    eps = np.array([0.02, 0.3, 1.0, 4.0, 25.0])
    eps1, eps2 = rng.choice(eps, rows), rng.choice(eps, rows)
    delta = rng.choice([1e-8, 0.01], rows)  # 0.01: above the covered top
    beta = rng.choice([1 / 3, 1 / 3, 0.05], rows)
    setting = next(s for s in ALL_SETTINGS if s.key == key)
    arguments = (setting, k, alpha, eps1, eps2, delta, beta, Accounting.EXACT, default_constants())
    monkeypatch.setattr(vectorised, "PARALLEL_ROWS", 10**9)
    one_block = vectorised.plan_columns(*arguments)
    monkeypatch.setattr(vectorised, "PARALLEL_ROWS", 150)
    monkeypatch.setattr(vectorised, "_cores", lambda: 3)
    threads = []
    original = vectorised._plan_columns

    def recording(*args, **kwargs):
        threads.append(__import__("threading").current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(vectorised, "_plan_columns", recording)
    blocks = vectorised.plan_columns(*arguments)
    assert len(set(threads)) == 3 and all(name.startswith("plan-columns") for name in threads)
    for name in one_block.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(blocks, name), getattr(one_block, name), name)
    assert one_block.regular.sum() > rows // 3 and (~one_block.regular).sum() > 0


def test_parallel_blocks_keep_the_callers_deadline(monkeypatch) -> None:
    """A block planned on another thread ends at the deadline of the thread that asked
    (a service's cap): the error reaches the caller, and no block runs on unbounded."""
    from planner import vectorised
    from planner.formulas.search import DeadlineExceededError, deadline

    monkeypatch.setattr(vectorised, "PARALLEL_ROWS", 50)
    monkeypatch.setattr(vectorised, "_cores", lambda: 2)
    rng = np.random.default_rng(20261131)
    rows = 400
    eps2 = rng.uniform(0.011, 0.019, rows)  # ε met nowhere before: a root-find each
    setting = Setting(Model.SHUFFLE, Coin.PRIVATE)
    arguments = (setting, 1000.0, 0.1, 1.0, eps2, 3.7e-7, 1 / 3, Accounting.EXACT)
    started = time.monotonic()
    with pytest.raises(DeadlineExceededError), deadline(0.05):
        vectorised.plan_columns(*arguments, default_constants())
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize("coin", [Coin.PRIVATE, Coin.PUBLIC])
def test_low_privacy_rows_above_the_grids_top_k_equal_plan(coin: Coin) -> None:
    """Above k = 4096 at large ε the local plans run k-RR, whose constant is read at the ε
    of the same e^ε/k at the grid's top (``Protocol.noise_matched_above_grid``), or the
    shared hash, and above k = 1024 a channel per group where the smaller ε is at most 5
    (``covered_above_grid``): rows equal plans there too."""
    setting = Setting(Model.LOCAL, coin)
    result = sweep(
        [setting],
        k=[2000, 4096, 20000, 100000],
        alpha=[0.05, 0.9],
        eps1=[3.0, 14.0],
        eps2=[0.5, 8.0, 14.0],
    )
    rows = result.rows()
    protocols = {row["protocol"] for row in rows}
    assert "local-private+k-rr" in protocols
    if coin is Coin.PRIVATE:
        assert "local-private+channels" in protocols
    for row in rows:
        expected = _expected_row(setting, row, Accounting.EXACT)
        assert {name: row[name] for name in expected} == expected, row


def test_paper_accounting_and_public_fallback_rows_equal_plan() -> None:
    setting = Setting(Model.SHUFFLE, Coin.PUBLIC)
    result = sweep(
        [setting, Setting(Model.LOCAL, Coin.PUBLIC)],
        k=[20, 300, 5000],
        alpha=[0.08, 0.4],
        eps1=1.0,
        eps2=[0.3, 1.0],
        delta=1e-7,
        accounting="paper",
    )
    protocols = set()
    for row in result.rows():
        chosen = Setting(*(part for part in row["setting"].split("-")))  # type: ignore[arg-type]
        expected = _expected_row(chosen, row, Accounting.PAPER)
        assert {name: row[name] for name in expected} == expected
        protocols.add((row["setting"], row["protocol"]))
    # With exact accounting (both protocols covered at these points), the public-coin
    # shuffle ask falls back to the private-coin protocol at some points; with the lemma's
    # larger noise the private coin's grid position lies below its covered ε, and the
    # covered public-coin plan is preferred.
    exact = sweep(
        [setting], k=[20, 300, 5000], alpha=[0.08, 0.4], eps1=1.0, eps2=[0.3, 1.0], delta=1e-7
    )
    for row in exact.rows():
        expected = _expected_row(setting, row, Accounting.EXACT)
        assert {name: row[name] for name in expected} == expected
        protocols.add((row["setting"], row["protocol"]))
    # (the private coin that runs is the multi-message protocol's since 2026-11-30; above
    # k = 1,024, where it is not covered, the public coin's own)
    assert {
        ("shuffle-public", "shuffle-private+messages"),
        ("shuffle-public", "shuffle-public"),
    } <= protocols


def test_shuffle_rows_without_delta_report_it_and_the_others_run() -> None:
    result = sweep(ALL_SETTINGS, k=100, alpha=0.2, eps1=1.0, eps2=[0.5, 1.0])
    by_setting = {}
    for row in result.rows():
        by_setting.setdefault(row["setting"], set()).add(tuple(row["status"].split(":")[:2]))
    assert by_setting["shuffle-private"] == {("error", " missing delta")}
    assert by_setting["central"] == {("ok",)}


def test_a_mechanism_row_outside_its_region_says_plan_protocol_refuses_it(capsys) -> None:
    """A mechanism swept alone, below its covered ε (the multi-message protocol's floor is
    about 0.0049): its row does not promise a simulation, which ``planner plan`` makes only
    of a setting's own protocol; ``planner plan --protocol`` refuses the query (exit 2)."""
    query = {"k": 1000, "alpha": 0.1, "eps1": 1.0, "eps2": 0.004, "delta": 1e-6}
    rows = list(sweep([Setting.from_key("shuffle-private+messages")], **query).rows())
    assert len(rows) == 1 and rows[0]["status"].startswith("not covered: ")
    assert "planner plan --protocol refuses" in rows[0]["status"]
    assert "simulates" not in rows[0]["status"]
    own = list(sweep([Setting.from_key("shuffle-private")], **query).rows())
    assert own[0]["status"] == "ok"  # the setting's own plan weighs the other protocols
    arguments = ["plan", "--model", "shuffle", "-k", "1000", "--alpha", "0.1", "--eps1", "1"]
    arguments += ["--eps2", "0.004", "--delta", "1e-6", "--protocol", "shuffle-private+messages"]
    assert main(arguments) == 2
    assert "must be covered at this query" in capsys.readouterr().err


def test_huge_counts_are_exact_integers() -> None:
    """Rows beyond float64's exact integers are answered by plan itself (big ints)."""
    # far outside the covered region: the order constants (C = 1) make no claim there
    order = constants_with_source(ConstantSource.ORDER)
    result = sweep(
        [Setting(Model.LOCAL, Coin.PRIVATE)],
        k=10**12,
        alpha=0.001,
        eps1=1e-4,
        eps2=1.0,
        constants=order,
    )
    (row,) = result.rows()
    query = Query(Setting(Model.LOCAL, Coin.PRIVATE), 10**12, 0.001, 1e-4, 1.0)
    assert row["n_users_group1"] == plan(query, order).n_users_group1 > 2**53


def test_value_specs() -> None:
    assert parse_values("eps2", "0.1:0.5:5") == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5])
    assert parse_values("eps2", "0.01:1:3log") == pytest.approx([0.01, 0.1, 1.0])
    assert parse_values("alpha", "0.1,0.2") == [0.1, 0.2]
    assert parse_values("k", "10:20:30") == [float(v) for v in range(10, 21)]  # rounded, unique
    # a listed k stays as written: refused as ``planner plan -k 2.5`` refuses it
    assert parse_values("k", "8,2.5,8") == [8.0, 2.5]
    for bad in ("1:2", "a,b", "0:1:5log", "1:2:0", "1:inf:3"):
        with pytest.raises(InputError, match="start:stop:count"):
            parse_values("eps2", bad)


def test_vectorised_argmin_equals_one_search_per_point() -> None:
    bound = BOUNDS["shuffle-public-compressed"]
    rng = np.random.default_rng(7)
    size = 300
    k = rng.integers(2, 10**7, size)
    values = {
        "k": k,
        "alpha": rng.uniform(0.01, 1, size),
        "mu1": np.exp(rng.uniform(0, 9, size)),
    }
    values["mu2"] = values["mu1"] * np.exp(rng.uniform(0, 3, size))
    together = integer_argmin(lambda L: bound.evaluate(**values, L=L), 2, k)
    for index in range(size):
        one = {name: float(column[index]) for name, column in values.items()}
        one["k"] = int(k[index])
        assert together[index] == integer_argmin(
            lambda L, v=one: bound.evaluate(**v, L=L), 2, one["k"]
        )


def test_remembered_pairs_answer_as_the_function_whatever_its_memory_holds() -> None:
    """The sorted memory per fixed value, its restart past ``limit`` (a review found a
    restart that kept only the call's new values while its other values were read from
    it: wrong variance weights, sweep rows off ``plan``), the restart past ``fixed_limit``
    and the last-columns memory: every answer is the function's own."""
    from planner.protocols.base import RememberedPairs

    calls = []

    def function(a: float, b: float) -> float:
        calls.append((a, b))
        return a * 1000.0 + b

    remembered = RememberedPairs(function, limit=8, fixed_limit=3)
    rng = np.random.default_rng(14)
    pool = np.arange(20, dtype=float)
    for _ in range(300):
        size = int(rng.integers(1, 12))
        varying = rng.choice(pool, size)
        fixed = float(rng.choice([0.5, 1.5, 2.5, 3.5]))
        if rng.random() < 0.5:
            first, second = varying, np.full(size, fixed)
            expected = varying * 1000.0 + fixed
        else:
            first, second = np.full(size, fixed), varying
            expected = fixed * 1000.0 + varying
        got = remembered(first, second)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(remembered(first.copy(), second.copy()), expected)
    assert len(calls) < 300 * 6  # the memory answers most values
    many = np.arange(100, 130, dtype=float)  # more values in one call than ``limit``
    np.testing.assert_array_equal(remembered(many, np.full(30, 0.5)), many * 1000.0 + 0.5)
    assert all(values.size <= 8 for values, _ in remembered._known.values())


def test_plan_columns_refuses_the_homogeneous_split() -> None:
    with pytest.raises(ValueError, match=r"FEWEST or Split\.PAPER"):
        plan_columns(
            ALL_SETTINGS[0],
            100.0,
            0.1,
            1.0,
            0.5,
            np.nan,
            1 / 3,
            Accounting.EXACT,
            default_constants(),
            Split.HOMOGENEOUS,
        )


def test_distinct_rows_partitions_as_numpys_unique() -> None:
    """Several varying columns (one sort by a mix of their bits): the rows given one number
    are equal, and there are as many numbers as distinct rows; with a NaN, NaNs are one
    value (the column-by-column codes)."""
    from planner.protocols.base import distinct_rows

    rng = np.random.default_rng(13)
    for trial in range(40):
        rows = int(rng.integers(1, 3000))
        columns = [
            rng.choice(rng.normal(size=int(rng.integers(1, 20))), rows)
            for _ in range(int(rng.integers(2, 5)))
        ]
        if trial % 4 == 0:
            columns.append(rng.integers(0, 4, rows))
        if trial % 5 == 0:
            columns[0] = np.where(rng.random(rows) < 0.3, np.nan, columns[0])
        representatives, code = distinct_rows(*columns)
        table = np.stack([np.asarray(column, dtype=float) for column in columns], axis=1)
        np.testing.assert_array_equal(table[representatives[code]], table)
        canonical = np.nan_to_num(table, nan=1e300)  # NaNs one value, as np.unique's rows
        assert len(representatives) == len(np.unique(canonical, axis=0))


def test_cell_index_is_the_binary_searchs_cell() -> None:
    from planner.constants import _cell_index

    rng = np.random.default_rng(12)
    for nodes in (1, 2, 3, 5, 9):
        logs = np.sort(rng.normal(size=nodes))
        x = np.concatenate([rng.normal(scale=2, size=5000), logs, [np.nan, -np.inf, np.inf]])
        expected = np.clip(np.searchsorted(logs, x, side="right") - 1, 0, max(nodes - 2, 0))
        np.testing.assert_array_equal(_cell_index(logs, x), expected)


def test_argmin_above_the_guess_range_is_the_same_alone_or_among_others() -> None:
    """Above 2^20 bins the computed bound need not be unimodal (neighbours tie in floating
    point): a point's L must still not depend on the points searched with it (a review
    found threaded sweep blocks differing from one block, and sweeps from ``plan``)."""
    bound = BOUNDS["shuffle-public-compressed"]
    points = 400
    k = np.round(np.geomspace(2**21, 1e12, points))  # the review's case: α = 0.0101, ε ≈ 2.2
    alpha = np.full(points, 0.0101)
    mu1 = np.full(points, 13.508)
    mu2 = np.full(points, 15.621)

    def argmins(rows: slice) -> np.ndarray:
        values = {"k": k[rows], "alpha": alpha[rows], "mu1": mu1[rows], "mu2": mu2[rows]}
        return integer_argmin(lambda L: bound.evaluate(**values, L=L), 2, k[rows])

    together = argmins(slice(None))
    np.testing.assert_array_equal(argmins(slice(0, 77)), together[:77])
    for index in range(0, points, 20):
        one = {"k": k[index], "alpha": alpha[index], "mu1": mu1[index], "mu2": mu2[index]}
        alone = integer_argmin(lambda L, v=one: bound.evaluate(**v, L=L), 2, int(k[index]))
        assert alone == together[index]


def test_grid_corner_arrays_match_the_scalar_corners() -> None:
    rng = np.random.default_rng(11)
    for key in ("local-private", "shuffle-public", "central"):
        constant = default_constants().for_setting(key)
        points = (
            np.round(np.exp(rng.uniform(0, 12, 200))) + 2,
            np.exp(rng.uniform(np.log(0.01), 0, 200)),
            np.exp(rng.uniform(np.log(0.05), np.log(3), 200)),
        )
        eps_weak = points[2] * np.exp(rng.uniform(np.log(0.05), 0, 200))
        arrays = constant.grid_corner_arrays(*points, eps_weak)
        for index in range(200):
            scalar = constant.grid_corners(
                int(points[0][index]), points[1][index], points[2][index], eps_weak[index]
            )
            from_arrays = [
                (
                    float(c.weight[index]),
                    float(c.multiplier[index]),
                    int(c.k[index]),
                    float(c.alpha[index]),
                    float(c.eps_strong[index]),
                    float(c.eps_weak[index]),
                )
                for c in arrays
                if c.weight[index] > 0
            ]
            assert from_arrays == [
                (c.weight, c.multiplier, c.k, c.alpha, c.eps_strong, c.eps_weak) for c in scalar
            ]


def test_cli_sweep_csv_and_json_are_the_api_rows(tmp_path, capsys) -> None:
    arguments = [
        "-s",
        "central",
        "-s",
        "local-private",
        "-k",
        "64,1000",
        "--alpha",
        "0.1",
        "--eps1",
        "1",
        "--eps2",
        "0.3:1:4log",
    ]
    assert main(["sweep", *arguments, "--format", "csv"]) == 0
    printed = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    api = sweep(
        [Setting(Model.CENTRAL, Coin.PRIVATE), Setting(Model.LOCAL, Coin.PRIVATE)],
        k=[64, 1000],
        alpha=0.1,
        eps1=1.0,
        eps2="0.3:1:4log",
    )
    assert [int(row["n_users_group2"]) for row in printed] == [
        row["n_users_group2"] for row in api.rows()
    ]
    assert list(printed[0]) == list(COLUMNS)
    target = tmp_path / "sweep.json"
    assert main(["sweep", *arguments, "--format", "json", "--output", str(target)]) == 0
    document = json.loads(target.read_text())
    assert document == json.loads(json.dumps(sweep_to_dict(api)))
    assert document["schema"] == "planner.sweep/6" and document["varied"] == ["k", "eps2"]
    assert sweep_to_csv(api).count("\n") == len(api) + 1


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["-k", "10:x", "--alpha", "0.1", "--eps1", "1", "--eps2", "1"], "invalid k"),
        (["-s", "nope", "-k", "10", "--alpha", "0.1", "--eps1", "1", "--eps2", "1"], "setting"),
        (["-k", "10", "--alpha", "0.1", "--eps1", "1", "--eps2", "1", "-f", "xml"], "format"),
    ],
)
def test_cli_sweep_bad_input_is_one_line(arguments, named, capsys) -> None:
    assert main(["sweep", *arguments]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and named in error and "Traceback" not in error


def test_plot_file_and_its_data_match_the_sweep(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib import image

    from planner.plot import plot_sweep, save_figure

    settings = [Setting(Model.LOCAL, Coin.PRIVATE), Setting(Model.SHUFFLE, Coin.PRIVATE)]
    result = sweep(settings, k=1000, alpha=0.1, eps1=1.0, eps2="0.05:1:12log", delta=1e-6)
    figure = plot_sweep(result, "test")
    target = tmp_path / "plot.png"
    save_figure(figure, target)
    assert 20_000 < target.stat().st_size < 500_000
    height, width, _ = image.imread(target).shape
    assert (width, height) == (1320, 672)  # 11 × 5.6 inches at 120 dpi
    columns = result.columns
    for group, axis in enumerate(figure.axes[:2], start=1):
        lines = [line for line in axis.get_lines() if len(line.get_xdata())]
        assert len(lines) == 3 * len(settings)
        for index, setting in enumerate(settings):
            rows = columns["setting"] == setting.key
            plan_line, baseline_line, lower_line = lines[3 * index : 3 * index + 3]
            np.testing.assert_array_equal(plan_line.get_xdata(), columns["eps2"][rows])
            for line, column in (
                (plan_line, f"n_users_group{group}"),
                (baseline_line, f"baseline_n_users_group{group}"),
                (lower_line, f"lower_bound_group{group}"),
            ):
                np.testing.assert_array_equal(line.get_ydata(), columns[column][rows])
        assert axis.get_yscale() == "log" and axis.get_xscale() == "log"
        assert axis.get_xlabel() == "group 2's privacy ε2"


def test_plot_needs_exactly_one_varied_parameter(tmp_path, capsys) -> None:
    arguments = ["-k", "10,20", "--alpha", "0.1,0.2", "--eps1", "1", "--eps2", "1"]
    assert main(["plot", *arguments, "-o", str(tmp_path / "x.png")]) == 2
    assert "exactly one parameter" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
    bad_suffix = ["-k", "10,20", "--alpha", "0.1", "--eps1", "1", "--eps2", "1", "-o", "x.pdf"]
    assert main(["plot", *bad_suffix]) == 2
    assert ".png or .svg" in capsys.readouterr().err


SCENARIOS_TOML = """
[[scenario]]
name = "shuffle plan"
model = "shuffle"
k = 1000
alpha = 0.1
eps1 = 1.0
eps2 = 0.25
delta = 1e-6

[[scenario]]
name = "smallest eps2 for 50k users each"
model = "central"
k = 1000
alpha = 0.1
eps1 = 1.0
n1 = 50000
n2 = 50000

[[scenario]]
name = "too few users"
model = "local"
k = 1000
alpha = 0.1
eps1 = 1.0
eps2 = 0.5
n1 = 10

[[scenario]]
name = "typo"
model = "local"
k = 1000
alpha = 1.5
eps1 = 1.0
eps2 = 0.5
"""


def test_batch_rows_equal_plan_and_solve(tmp_path, capsys) -> None:
    from planner.batch import read_scenarios, run_batch

    path = tmp_path / "scenarios.toml"
    path.write_text(SCENARIOS_TOML)
    rows = run_batch(read_scenarios(path))
    shuffle = plan(Query(Setting(Model.SHUFFLE, Coin.PRIVATE), 1000, 0.1, 1.0, 0.25, 1e-6))
    assert (rows[0]["kind"], rows[0]["status"]) == ("plan", "ok")
    assert (rows[0]["n_users_group1"], rows[0]["n_users_group2"]) == (
        shuffle.n_users_group1,
        shuffle.n_users_group2,
    )
    # each group's messages per user, as `planner plan` gives them (a review: batch had none)
    sent = (rows[0]["messages_per_user_group1"], rows[0]["messages_per_user_group2"])
    assert sent == tuple(group.messages_per_user for group in shuffle.groups)
    assert all(value is not None and value > 1 for value in sent)
    template = Query(Setting(Model.CENTRAL, Coin.PRIVATE), 1000, 0.1, 1.0, 1.0)
    solution = solve(template, Unknown.EPS2, n1=50000, n2=50000)
    assert rows[1]["solved_for"] == "eps2" and rows[1]["solved_value"] == solution.value
    assert rows[2]["status"].startswith("infeasible") and rows[2]["solved_for"] == "n2"
    assert rows[3]["status"] == "error: invalid alpha = 1.5: must be a number in [1e-06, 1]"

    csv_path = tmp_path / "scenarios.csv"
    csv_path.write_text(
        "name,model,k,alpha,eps1,eps2,delta\nshuffle plan,shuffle,1000,0.1,1.0,0.25,1e-6\n"
    )
    assert run_batch(read_scenarios(csv_path))[0]["n_users_group2"] == shuffle.n_users_group2

    assert main(["batch", str(path), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "planner.batch/2"
    assert [row["status"][:5] for row in document["rows"]] == ["ok", "ok", "infea", "error"]


def test_a_batch_scenario_may_name_a_protocol_as_plan_does(tmp_path) -> None:
    """A scenario's ``protocol`` runs that protocol alone, as ``planner plan --protocol``
    (the Poisson shuffle protocol had been plannable by name, but not in a batch): the same
    users and messages per user, the row naming the protocol; a key that does not answer
    the query, or one in a solve scenario, is an error row."""
    from planner import api
    from planner.batch import read_scenarios, run_batch

    query = {"model": "shuffle", "k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25, "delta": 1e-6}
    header = ",".join(["name", *query, "protocol", "n1", "n2"])
    lines = [
        header,
        "default,shuffle,1000,0.1,1,0.25,1e-6,,,",
        "poisson,shuffle,1000,0.1,1,0.25,1e-6,shuffle-private,,",
        "k-rr,shuffle,1000,0.1,1,0.25,1e-6,local-private+k-rr,,",
        "not an answer,local,1000,0.1,1,0.25,,shuffle-private,,",
        "solve,shuffle,1000,,1,0.25,1e-6,shuffle-private,100000,100000",
    ]
    path = tmp_path / "scenarios.csv"
    path.write_text("\n".join(lines) + "\n")
    rows = run_batch(read_scenarios(path))
    default = api.plan_document(**query)
    assert default["protocol"] == "shuffle-private+messages"  # else the rows test nothing
    assert rows[0]["total_users"] == default["total_users"]
    for row, key in ((rows[1], "shuffle-private"), (rows[2], "local-private+k-rr")):
        alone = api.plan_document(**query, protocol=key)
        assert (row["status"], row["protocol"]) == ("ok", key)
        assert row["total_users"] == alone["total_users"] != default["total_users"]
        sent = [group["messages_per_user"] for group in alone["groups"]]
        assert [row["messages_per_user_group1"], row["messages_per_user_group2"]] == sent
    assert rows[2]["messages_per_user_group1"] == 1.0  # a shuffle user's one report
    assert rows[3]["status"] == (
        "error: invalid protocol = 'shuffle-private': must be one of local-private, "
        "local-private+k-rr, local-private+channels"
    )
    assert rows[4]["status"] == (
        "error: invalid protocol = 'shuffle-private': must be left out of a solve scenario (n1, n2)"
    )


def test_batch_validate_exits_3_when_a_row_has_no_plan_to_certify(tmp_path, capsys) -> None:
    """A fresh-user trial: an invalid and an infeasible row had an empty verdict and the
    batch exited 0, as if everything were certified (docs/user-guide.md: 3 when one is not run)."""
    path = tmp_path / "rows.csv"
    path.write_text(
        "name,model,k,alpha,eps1,eps2,n1\n"
        "ok,central,64,0.5,1,1,\n"
        "typo,central,64,1.5,1,1,\n"
        "too few,local,1000,0.1,1,0.5,10\n"
    )
    code = main(["batch", str(path), "--validate", "--trials", "200", "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 3
    assert rows[0]["verdict"] in ("pass", "inconclusive")
    assert [row["verdict"] for row in rows[1:]] == ["not run: no plan"] * 2


@pytest.mark.parametrize(
    ("name", "text", "named"),
    [
        ("bad.toml", "[[scenario]\nmodel = 1", "valid TOML"),
        ("extra.toml", '[[scenario]]\nmodel = "local"\nepsilon = 1\n', "'epsilon'"),
        ("empty.csv", "", "header row"),
        ("scenarios.txt", "model\nlocal\n", ".toml"),
    ],
)
def test_batch_malformed_file_is_one_line(tmp_path, capsys, name, text, named) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert main(["batch", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: invalid file") and named in error
    assert error.count("\n") == 1 and "Traceback" not in error


def test_the_user_guides_python_example_runs(capsys) -> None:
    """The user guide's API example is real code with the documented objects."""
    from pathlib import Path

    guide = Path(__file__).parent.parent / "docs" / "user-guide.md"
    text = guide.read_text(encoding="utf-8")
    start = text.index("from planner import Query, Setting, Unknown")
    exec(text[start : text.index("```", start)], {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith("calibrated") and printed[-1] == "True"


def test_the_runs_column_shows_where_a_sweep_leaves_direct_calibration_for_the_vote() -> None:
    """A row that is a majority vote shows its runs: the local public coin at β = 0.2 is a
    7-run vote (one public hash onto L = 4 buckets cannot hold one run to β: 1/L = 0.25 is
    above the 0.169 one run is held to), and the table shows a runs column then, and not
    when every row is one run. Central at β = 0.01 below k = 16 is no longer a vote row:
    its covered k starts at 16, and the row below runs on that 16-bin domain, with the
    same numbers and its tester's k (``tester_k``). Past the
    direct points' top ε_strong = 1 there is no jump: the plan runs its tester at ε ≤ 1
    (no row above the one at ε1 = 1)."""
    from planner.report import sweep_renderable

    central = Setting.from_key("central")
    # ε = 0.1: below the 0.125 where k-RR (which every setting may run) is covered
    crossing = sweep([central], k=[15, 16], alpha=0.15, eps1=0.1, eps2=0.1, beta=0.01)
    below, above = crossing.rows()
    assert (below["runs"], above["runs"]) == (1, 1)
    assert (below["tester_k"], above["tester_k"]) == (16, None)
    assert below["total_users"] == above["total_users"] and below["status"] == "ok"
    public = Setting.from_key("local-public")
    voted = sweep([public], k=[256, 512], alpha=0.3, eps1=1.0, eps2=0.5, beta=0.2)
    assert [row["runs"] for row in voted.rows()] == [7, 7]  # r(0.2) = 7 at a third a run
    header = [column.header for column in sweep_renderable(voted).renderables[1].columns]
    assert header[-1] == "runs"
    past_top = sweep([central], k=256, alpha=0.15, eps1=[1.0, 1.001, 3.0], eps2=0.01, beta=0.01)
    rows = past_top.rows()
    assert [row["runs"] for row in rows] == [1, 1, 1]
    assert all(row["total_users"] <= rows[0]["total_users"] for row in rows)
    table = sweep_renderable(past_top).renderables[1]  # under its title
    assert "runs" not in [column.header for column in table.columns]


@pytest.mark.parametrize("setting", ALL_SETTINGS, ids=lambda s: s.key)
def test_sweep_rows_equal_plan_where_the_tester_runs_below_the_query(setting: Setting) -> None:
    """Far-apart ε (up to 20 and down to 0.05) at β = 1/3: many plans run the stronger
    group's tester lower on the ladder (``plan``'s ``tester_point``), and the vectorised
    rows make the same choice, row for row."""
    shuffle = setting.model is Model.SHUFFLE
    result = sweep(
        [setting],
        k=[16, 300, 20_000],
        alpha=[0.05, 0.3],
        eps1=[0.05, 0.8, 3.0, 19.0],
        eps2=[0.2, 9.0],
        delta=1e-6 if shuffle else None,
    )
    lowered = 0
    for row in result.rows():
        expected = _expected_row(setting, row, Accounting.EXACT)
        assert {name: row[name] for name in expected} == expected, row
        query = Query(
            setting, row["k"], row["alpha"], row["eps1"], row["eps2"], row["delta"], row["beta"]
        )
        lowered += plan(query).tester_point is not None
    if setting.model is not Model.LOCAL:  # the local split never loses to a lower rung here
        assert lowered >= 6


@pytest.mark.parametrize("key", ["local-private", "local-public", "central", "shuffle-private"])
def test_sweep_rows_equal_plan_where_k_rr_runs_at_its_least_eps(key: str) -> None:
    """Low privacy at small k, where k-RR runs and its users are least inside a grid cell
    of ε below the query (``plan.least_eps_rungs``): the vectorised rows weigh the same
    point, to the bit, and choose as ``plan`` does, row for row (at β = 1/3, where the
    sweep sizes every row itself)."""
    setting = Setting.from_key(key)
    shuffle = setting.model is Model.SHUFFLE
    result = sweep(
        [setting],
        k=[2, 30, 64],
        alpha=[0.02, 0.5, 0.95],
        eps1=[8.0, 20.0],
        eps2=[2.5, 3.3, 8.0, 11.7, 20.0],
        delta=1e-6 if shuffle else None,
    )
    at_least = 0
    for row in result.rows():
        expected = _expected_row(setting, row, Accounting.EXACT)
        assert {name: row[name] for name in expected} == expected, row
        query = Query(setting, row["k"], row["alpha"], row["eps1"], row["eps2"], row["delta"])
        least = least_eps_of(query, default_constants(), fallback=True)
        at_least += row["tester_eps1"] in least or row["tester_eps2"] in least
    assert at_least >= 3  # rows that run at the least point (none had before)


def test_a_batch_over_its_cost_limits_is_refused_before_any_row_runs(tmp_path, capsys) -> None:
    """A hostile review: 10,000 shuffle solves (~6 s each) were accepted and ran for
    hours. 1,001 solve rows, or 201 rows to validate, are one line, at once."""
    from planner.limits import BATCH_SOLVES_MAX, BATCH_VALIDATED_MAX

    solves = tmp_path / "solves.csv"
    row = "shuffle,1000,0.1,20,100000000,1e-10,0.01\n"
    solves.write_text("model,k,alpha,eps1,n1,delta,beta\n" + row * (BATCH_SOLVES_MAX + 1))
    started = time.perf_counter()
    assert main(["batch", str(solves)]) == 2
    assert time.perf_counter() - started < 10
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"at most {BATCH_SOLVES_MAX:,} solve rows" in error
    plans = tmp_path / "plans.csv"
    plans.write_text("model,k,alpha,eps1,eps2\n" + "central,64,0.5,1,1\n" * 201)
    assert main(["batch", str(plans), "--validate"]) == 2
    assert f"at most {BATCH_VALIDATED_MAX:,} rows to validate" in capsys.readouterr().err


@pytest.mark.parametrize("split", [Split.FEWEST, Split.PAPER])
def test_rows_above_a_covered_alpha_top_equal_plan(split: Split) -> None:
    """Above a covered α top (0.5 for the shuffle public coin, 0.95 for the rest) a plan
    also weighs its tester at that top (a tester for a smaller α rejects every pair
    farther apart); the sweeps' columns weigh the same points, row for row, and split ties
    alike: where the capped point (each ε at most 1, α at the top) is also a rung of the
    ladder, both weigh it first (a review found shuffle-private k = 100, α = 0.97, ε = (1, 2)
    at 235 + 235 in the sweep and 330 + 140 in ``plan``)."""
    table = default_constants()
    alphas, ks = (0.45, 0.55, 0.8, 0.97, 1.0), (2, 16, 100, 300, 5000)
    eps_pairs = ((0.5, 0.2), (3, 0.7), (1.0, 2.0), (0.1, 1.5))
    grid = [(a, k, e1, e2) for a in alphas for k in ks for e1, e2 in eps_pairs]
    alpha, k, eps1, eps2 = (
        np.array(column, dtype=np.float64) for column in zip(*grid, strict=True)
    )
    for setting in ALL_SETTINGS:
        delta = np.full(alpha.shape, 1e-6 if setting.model is Model.SHUFFLE else np.nan)
        columns = plan_columns(
            setting, k, alpha, eps1, eps2, delta, 1 / 3, Accounting.EXACT, table, split
        )
        lowered_alpha = 0
        for row, (a, k_row, e1, e2) in enumerate(grid):
            query = Query(
                setting, k_row, a, e1, e2, 1e-6 if setting.model is Model.SHUFFLE else None
            )
            expected = plan(query, split=split)
            if not columns.regular[row] or expected.coverage is Coverage.EXTRAPOLATED:
                continue
            point = expected.tester_point
            tester = (columns.tester_eps1, columns.tester_eps2, columns.tester_alpha)
            assert (
                columns.n_users_group1[row],
                columns.n_users_group2[row],
                columns.protocol[row],
                *(float(np.nan_to_num(column[row], nan=-1.0)) for column in tester),
            ) == (
                expected.n_users_group1,
                expected.n_users_group2,
                expected.protocol,
                *((-1.0,) * 3 if point is None else (point.eps1, point.eps2, point.alpha)),
            ), (setting.key, split, grid[row])
            lowered_alpha += point is not None and point.alpha < a
        # some rows ran at a covered top: under the paper's split only where that needs
        # fewer users in all (the shuffle public coin at 0.5, against its private coin)
        if split is Split.FEWEST or setting.key == "shuffle-public":
            assert lowered_alpha > 0, setting.key
    # the public coin above 0.5 is never dearer than at 0.5 itself
    public = Setting(Model.SHUFFLE, Coin.PUBLIC)
    at_top = plan(Query(public, 5000, 0.5, 0.5, 0.2, 1e-6), split=split)
    above = plan(Query(public, 5000, 0.55, 0.5, 0.2, 1e-6), split=split)
    assert above.total_users <= at_top.total_users


@pytest.mark.parametrize("key", ["local-private", "shuffle-private"])
def test_rows_below_k_8_at_the_alpha_top_equal_plan(key: str) -> None:
    """k-RR below k = 8 reads the largest C of the α nodes from its cell's lower node up; on
    the grid's top α node (0.95) the cell's lower side weighs 0, and the sweeps read the
    tail from that side's node (0.15) anyway: local-private k = 2, α = 0.95, ε = (1, 5) was
    19 + 19 users against plan's 15 + 15 (a review of 2026-11-29; k = 3: 34 against 27).
    The users are compared: above α's top k-RR needs the same users at the capped point
    (ε at 1) and at the query's ε, and on that tie the sweeps keep the capped point, which
    they weigh first, where ``plan`` keeps the one it lists first (a known difference of
    the tester point only)."""
    setting = Setting.from_key(key)
    result = sweep(
        [setting],
        k=[2, 3, 4, 7],
        alpha=[0.9, 0.95, 0.97, 1.0],
        eps1=1.0,
        eps2=[0.7, 5.0, 9.56],
        delta=1e-6 if setting.model is Model.SHUFFLE else None,
    )
    users = ("protocol", "n_users_group1", "n_users_group2", "total_users", "runs")
    for row in result.rows():
        expected = _expected_row(setting, row, Accounting.EXACT)
        assert {name: row[name] for name in users} == {name: expected[name] for name in users}


def test_computed_once_computes_a_value_asked_by_two_threads_once() -> None:
    """A sweep's threads ask for the same noise levels at once: the second waits for the
    first's result instead of computing it again (3,422 root-finds for 2,307 distinct ε
    before); a failed computation leaves the value to the next asker; the oldest result
    goes past ``maxsize``."""
    import threading

    from planner.protocols.base import ComputedOnce

    calls: list[float] = []
    both_asked = threading.Barrier(2)
    release = threading.Event()

    def slow_square(x: float) -> float:
        calls.append(x)
        release.wait(timeout=5)
        return x * x

    once = ComputedOnce(slow_square, maxsize=2)
    results: list[float] = []

    def ask() -> None:
        both_asked.wait(timeout=5)
        results.append(once(3.0))

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # both threads are inside: one computes, one waits
    release.set()
    for thread in threads:
        thread.join(timeout=5)
    assert results == [9.0, 9.0] and calls == [3.0]

    failures = iter([True, False])

    def fails_once(x: float) -> float:
        if next(failures):
            raise RuntimeError("deadline")
        return -x

    flaky = ComputedOnce(fails_once, maxsize=4)
    with pytest.raises(RuntimeError):
        flaky(1.0)
    assert flaky(1.0) == -1.0  # not remembered as failed: computed again

    once(4.0), once(5.0)  # 3 is the oldest of three: dropped
    once(3.0)
    assert calls == [3.0, 4.0, 5.0, 3.0]
    once(5.0)
    assert calls == [3.0, 4.0, 5.0, 3.0]


def test_computed_once_keeps_deadlines_forks_and_pickling() -> None:
    """A thread waiting for another's computation still ends at its own deadline; a child
    forked while a value is being computed computes it itself instead of waiting for a
    thread it does not have; ``noise_mu`` and the shuffle records still pickle and copy
    (a review: wrapping ``noise_mu`` itself had broken both)."""
    import copy
    import os
    import pickle
    import threading

    from planner.formulas.search import DeadlineExceededError, deadline
    from planner.protocols import protocol_for
    from planner.protocols.base import ComputedOnce
    from planner.protocols.shuffle_private import noise_mu

    parent = os.getpid()
    release = threading.Event()

    def slow_in_parent(x: float) -> float:
        if os.getpid() == parent:
            release.wait(timeout=10)
        return 2 * x

    once = ComputedOnce(slow_in_parent, maxsize=8)
    owner = threading.Thread(target=once, args=(1.0,))
    owner.start()
    time.sleep(0.1)  # the owner computes 1.0 until released
    try:
        start = time.monotonic()
        with pytest.raises(DeadlineExceededError), deadline(0.2):
            once(1.0)
        assert time.monotonic() - start < 2.0
        child = os.fork()
        if child == 0:  # the child: no owner thread here
            os._exit(0 if once(1.0) == 2.0 else 1)
        waited = 0.0
        while waited < 10:
            done, status = os.waitpid(child, os.WNOHANG)
            if done:
                break
            time.sleep(0.05)
            waited += 0.05
        else:
            os.kill(child, 9)
            os.waitpid(child, 0)
            pytest.fail("the forked child waited for a thread it does not have")
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        release.set()
        owner.join(timeout=10)
    assert once(1.0) == 2.0

    assert pickle.loads(pickle.dumps(noise_mu)) is noise_mu
    record = protocol_for("shuffle-public")
    assert copy.deepcopy(record).key == record.key


@pytest.mark.parametrize(
    "key", ["shuffle-private", "shuffle-public", "local-private", "local-public", "central"]
)
def test_a_setting_swept_alone_is_plan_protocol_row_by_row(key: str) -> None:
    """``sweep --alone``: each row of a setting is its own protocol alone, as ``planner plan
    --protocol KEY`` gives it (users and messages), or, where that refuses the query as not
    covered, a row saying so; the sweep says it ran alone. Before, a sweep could run a
    mechanism alone by its key, but not a setting's own protocol (the Poisson protocol,
    where a shuffle plan runs the multi-message one)."""
    setting = Setting.from_key(key)
    delta = 1e-6 if setting.model is not Model.LOCAL else None
    result = api.sweep_result(
        settings=[key],
        k=[12, 300, 2_000_000],  # 2,000,000: outside every covered k
        alpha=[0.1, 0.4],
        eps1=1.0,
        eps2=[0.2, 4.0],
        delta=delta,
        alone=True,
    )
    assert result.notes[0].startswith("each setting's own protocol runs alone (--alone)")
    answered = refused = 0
    for row in result.rows():
        asked = {name: row[name] for name in ("k", "alpha", "eps1", "eps2", "delta")}
        try:
            alone = api.plan_document(
                model=setting.model.value, coin=setting.coin.value, protocol=key, **asked
            )
        except InputError as error:
            assert error.parameter == "protocol", error
            assert row["status"].startswith("not covered: "), row
            assert "planner plan --protocol refuses" in row["status"], row
            refused += 1
            continue
        answered += 1
        assert row["status"] == "ok" and row["protocol"] == alone["protocol"], row
        assert (row["n_users_group1"], row["n_users_group2"]) == (
            alone["n_users_group1"],
            alone["n_users_group2"],
        )
        stated = [group["messages_per_user"] for group in alone["groups"]]
        assert [row["messages_per_user_group1"], row["messages_per_user_group2"]] == stated
    assert answered >= 6 and refused >= 2, (answered, refused)


def test_alone_differs_from_the_setting_s_plan_where_that_runs_another_protocol() -> None:
    """Shuffle, k = 1,000, α = 0.1, ε = (1, 0.25), δ = 10⁻⁶: the setting's plan runs the
    multi-message protocol (42,338 users in all); alone, the Poisson protocol needs more,
    with fewer messages a user."""
    query = {"k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25, "delta": 1e-6}
    (default,) = api.sweep_result(settings=["shuffle-private"], **query).rows()
    (alone,) = api.sweep_result(settings=["shuffle-private"], alone=True, **query).rows()
    assert default["protocol"] == "shuffle-private+messages"
    assert alone["protocol"] == "shuffle-private"
    assert alone["total_users"] > default["total_users"]
    assert alone["messages_per_user_group2"] < default["messages_per_user_group2"]


def test_alone_refuses_a_mixed_pair_a_non_flag_and_too_many_rows(capsys, monkeypatch) -> None:
    """One line each, exit 2: a mixed pair (as ``plan --protocol``), a value of ``alone``
    that is not a flag (HTTP's field), and more rows than are planned one by one, refused
    before any row is planned."""
    query = ["-k", "100", "--alpha", "0.1", "--eps1", "1", "--eps2", "0.5", "--alone"]
    assert main(["sweep", "-s", "local/central-private", *query]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: invalid setting = 'local/central-private': must be one")
    assert "\n" not in err
    with pytest.raises(InputError, match="alone"):
        api.sweep_result(settings=["central"], k=100, alpha=0.1, eps1=1, eps2=0.5, alone="yes")

    def planned(*args, **kwargs):
        raise AssertionError("a row was planned before the sweep's size was refused")

    monkeypatch.setattr(importlib.import_module("planner.sweep"), "plan", planned)
    many = ["-k", "100:200:30", "--alpha", "0.1:0.2:20", "--eps1", "1", "--eps2", "0.5"]
    assert main(["sweep", "-s", "local-private", *many, "--alone"]) == 2
    err = capsys.readouterr().err
    assert "sweep size = '600 rows of local-private alone': must be at most 500" in err
