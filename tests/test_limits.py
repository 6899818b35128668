"""Cost limits (planner/limits.py) and the searches that used to hang (issue 11)."""

from __future__ import annotations

import math
import time
import tracemalloc

import pytest

from planner import limits
from planner.cli import main
from planner.formulas.accounting import (
    GAUSSIAN_SHORTCUT_MU,
    poisson_histogram_delta,
    poisson_mu_exact,
)
from planner.formulas.settings import ALL_SETTINGS
from planner.formulas.subsampling import subsampled_epsilon, subsampling_population
from planner.inputs import InputError, Query
from planner.sweep import parse_values, sweep
from tests.conftest import make_query


@pytest.mark.parametrize("n_used", [10, 12_345, 10**15, 10**20, 10**24])
@pytest.mark.parametrize(("base", "target"), [(1.0, 0.5), (1.0, 1e-4), (20.0, 0.3)])
def test_subsampling_population_is_the_least_passing_integer_even_above_2_to_53(
    n_used: int, base: float, target: float
) -> None:
    start = time.perf_counter()
    n_total = subsampling_population(n_used, base, target)
    assert time.perf_counter() - start < 0.1

    def eps(total: int) -> float:  # the accurate form of subsampled_epsilon
        return math.log1p(n_used / total * math.expm1(base))

    assert eps(n_total) <= target
    assert subsampled_epsilon(base, n_used, n_total) <= target * (1 + 1e-9)
    ratio = math.expm1(base) / math.expm1(target)
    # never more than the exact real threshold, rounded up, plus float slack
    assert n_total <= math.ceil(n_used * ratio * (1 + 1e-12)) + 1
    if n_total < 2**53:  # below 2^53 one user fewer must fail
        assert eps(n_total - 1) > target


@pytest.mark.parametrize(("eps", "delta"), [(1e-4, 1e-6), (1e-3, 1e-12), (0.05, 0.5), (3.0, 1e-9)])
def test_exact_mu_is_bracketed_to_its_tolerance_and_fast_at_tiny_eps(
    eps: float, delta: float
) -> None:
    poisson_mu_exact.cache_clear()
    start = time.perf_counter()
    mu = poisson_mu_exact(eps, delta)
    assert time.perf_counter() - start < 8.0  # was 5-18 s at ε = 1e-4 (on a loaded machine)
    assert poisson_histogram_delta(eps, mu) <= delta
    # within the search's tolerance, or above the Gaussian shortcut's threshold its rise
    # (``GAUSSIAN_SHORTCUT_RISE``, 10⁻⁴: the exact μ is within 2·10⁻⁵ of the Gaussian one)
    tolerance = 1.5e-4 if mu >= GAUSSIAN_SHORTCUT_MU else 2e-6
    assert poisson_histogram_delta(eps, mu * (1 - tolerance)) > delta


def test_the_central_plan_at_the_smallest_alpha_returns_quickly() -> None:
    from planner.plan import plan

    start = time.perf_counter()
    result = plan(make_query("central", k=100, alpha=1e-6, eps1=1.0, eps2=0.5))
    assert time.perf_counter() - start < 5.0
    assert result.n_users_group2 >= result.n_users_group1 > 10**12


@pytest.mark.parametrize("alpha", ["1e-12", "1e-300", "0", "5e-7"])
def test_alpha_below_its_floor_is_one_line(alpha: str, capsys) -> None:
    code = main(
        ["plan", "--model", "central", "-k", "100", "--alpha", alpha, "--eps1", "1", "--eps2", "1"]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "alpha" in err and "[1e-06, 1]" in err


def test_a_huge_range_is_refused_before_numpy_allocates_it() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="at most 100,000 rows"):
            parse_values("eps2", "1:2:10000000000000")
        with pytest.raises(InputError, match="rows"):
            sweep(list(ALL_SETTINGS), k="2:1000:1000", alpha="0.1:0.5:1000", eps1=1, eps2=0.5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20


def test_the_row_limit_is_inclusive() -> None:
    values = parse_values("alpha", f"0.1:0.5:{limits.SWEEP_ROWS_MAX}")
    assert len(values) == limits.SWEEP_ROWS_MAX
    with pytest.raises(InputError):
        parse_values("alpha", f"0.1:0.5:{limits.SWEEP_ROWS_MAX + 1}")


@pytest.mark.parametrize(
    ("extra", "parameter"),
    [
        # explicit sizes: the check of what a validation may cost, not the plan's coverage
        (["-k", "1000000000000", "--n1", "1000", "--n2", "1000"], "k"),
        (["-k", "100", "--n1", "1e30", "--n2", "1e30"], "n1"),
        (["-k", "100", "--n1", "1e7", "--n2", "1e7", "--path", "user", "--trials", "100"], "path"),
        (["-k", "1000000", "--n1", "1000", "--n2", "1000", "--trials", "400"], "trials"),
    ],
)
def test_validation_beyond_its_cost_limits_is_refused_at_once(
    extra: list[str], parameter: str, capsys
) -> None:
    tracemalloc.start()
    start = time.perf_counter()
    try:
        code = main(
            [
                "validate",
                "--model",
                "central",
                "--alpha",
                "0.1",
                "--eps1",
                "1",
                "--eps2",
                "0.5",
                *extra,
            ]
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"error: invalid {parameter} = ") and err.count("\n") == 1
    assert time.perf_counter() - start < 5.0 and peak < 50 * 2**20


def test_validation_limits_accept_work_just_inside_them() -> None:
    limits.check_validation(10**6, 1, 11, 10**15, 10**15, user_path=False)
    limits.check_validation(1000, 1000, 11, 10**4, 10**4, user_path=True)
    with pytest.raises(InputError):
        limits.check_validation(10**6 + 1, 1, 1, 10, 10, user_path=False)


def test_the_validation_cost_is_k_trials_and_families_a_vote_is_checked_through_one_run() -> None:
    """k × trials × families cells: 1000 × 1000 × 11 is fine, 10⁵ × 1000 × 11 = 1.1e9 is
    not (a majority vote's runs no longer multiply it: one run is simulated a trial)."""
    limits.check_validation(1000, 1000, 11, 10, 10, user_path=False)
    with pytest.raises(InputError, match=r"k × trials × families = 1e\+09 cells"):
        limits.check_validation(10**5, 1000, 11, 10, 10, user_path=False)


def test_query_rejects_what_python_callers_may_pass() -> None:
    from planner.formulas.settings import Setting

    setting = Setting.from_key("local-private")
    for bad in (True, 10**400, "nan", None, [0.1]):
        with pytest.raises(InputError, match="alpha"):
            Query(setting, 100, bad, 1.0, 0.5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="model"):
        Query(None, 100, 0.1, 1.0, 0.5)  # type: ignore[arg-type]


def test_a_sweep_of_costly_noise_searches_is_refused_before_any_search() -> None:
    from planner.formulas.accounting import poisson_mu_exact

    poisson_mu_exact.cache_clear()
    start = time.perf_counter()
    with pytest.raises(InputError, match="distinct shuffle"):
        sweep(
            [ALL_SETTINGS[2]],
            k=100,
            alpha=0.1,
            eps1="1e-4:1e-3:50",
            eps2=1e-4,
            delta=1e-6,
        )
    assert time.perf_counter() - start < 2.0
    assert poisson_mu_exact.cache_info().currsize == 0  # refused before the first search


def test_noise_search_cost_grows_as_epsilon_falls() -> None:
    costs = [limits.noise_root_find_cost(eps, 1e-6, paper=False) for eps in (1.0, 0.1, 1e-4)]
    assert costs == sorted(costs)
    assert limits.noise_root_find_cost(1e-4, 1e-6, paper=False) < limits.ROOT_FIND_COST_MAX


def test_too_many_rows_planned_one_by_one_are_refused() -> None:
    with pytest.raises(InputError, match="one by one"):
        sweep(
            [ALL_SETTINGS[0]],
            k="16:4096:40",
            alpha="0.05:0.5:40",
            eps1=1.0,
            eps2=0.5,
            beta=0.1,
        )


def test_a_shuffle_user_path_counts_the_noise_messages() -> None:
    """At ε = 1e-4 each group's histogram carries k·μ ≈ 4·10¹⁰ noise messages (k = 8): the
    user path would allocate them all, so `auto` must take the fast path (the fuzz harness
    found a 74.9 GiB allocation here, at k = 2)."""
    from planner.coverage import covered_plan
    from planner.formulas.settings import Setting
    from planner.validate import PathChoice, validate
    from planner.validators.protocol import SimulationPath

    query = Query(Setting.from_key("shuffle-private"), 8, 0.1, 1e-4, 1e-4, 1e-12, 0.2)
    printed = covered_plan(query)
    report = validate(query, trials=1, path=PathChoice.AUTO, checked_plan=printed)
    assert report.verification.path is SimulationPath.FAST


def test_a_sweep_planning_rows_one_by_one_stops_at_its_time_limit() -> None:
    """A hostile run's sweep (k = 3, β = 0.1, ε = (2, 20), 100 values of δ above the shuffle
    model's covered 10⁻³) planned its rows one by one for 34 s. After each such row the
    sweep's time since it started is checked: past the limit with rows still to go, one
    line names the sweep's size; its last row may finish past it."""
    from planner.limits import SWEEP_SECONDS_MAX, check_sweep_pace

    check_sweep_pace(100.0, 100.0 + SWEEP_SECONDS_MAX - 0.01, 10, 290)
    check_sweep_pace(100.0, 100.0 + SWEEP_SECONDS_MAX + 5.0, 300, 0)  # done: no refusal
    with pytest.raises(InputError, match="sweep size") as caught:
        check_sweep_pace(100.0, 100.0 + SWEEP_SECONDS_MAX + 0.01, 124, 176)
    assert "300 rows planned one by one" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_run_that_needs_no_delta_is_sized_once_for_every_delta() -> None:
    """Plans of one query at several δ share the runs of the protocols that ignore δ (a
    shuffle query at k = 3 runs k-RR or the Hadamard response): remembered without δ, so
    the second and third δ size shuffle runs only."""
    import sys

    from planner import Query
    from planner.plan import plan

    module = sys.modules["planner.plan"]
    sized: list[str] = []
    original = module._ProtocolRun._sized.__func__

    def counting(cls, asked, protocol, constant):  # type: ignore[no-untyped-def]
        sized.append(protocol.key)
        return original(cls, asked, protocol, constant)

    module._ProtocolRun._sized = classmethod(counting)
    for memory in module._MEMORIES:  # what earlier tests sized is sized afresh here
        memory.clear()
    # and no earlier test's pinned constants fill the pin table mid-test, which clears every
    # memory (``plan._remembered``): the second δ would then size the local runs again
    module._PINNED.clear()
    by_delta = {}
    try:
        for delta in (2.01e-4, 3.01e-4, 4.01e-4):
            sized.clear()
            plan(Query.build("shuffle", "public", 3, 0.41, 2.1, 0.7, delta))
            by_delta[delta] = list(sized)
    finally:
        module._ProtocolRun._sized = classmethod(original)
    assert any(key.startswith("local") for key in by_delta[2.01e-4])  # sized the first time
    for delta in (3.01e-4, 4.01e-4):
        assert not [key for key in by_delta[delta] if key.startswith("local")], delta


def test_a_shuffle_validation_holds_users_and_messages_to_their_own_limits() -> None:
    """``planner validate --n1 1e15 --n2 1e15`` in the shuffle model had been refused as
    "n1 = 1000000000304320: must be an integer in [1, 1e+15]": its noise messages counted
    as users (a review). Users are held to 10¹⁵, messages only to the user path's limit."""
    noise = 304_320
    n = 10**15
    # the fast path: 10¹⁵ users and their noise pass
    limits.check_validation(1000, 50, 13, n, n, user_path=False, messages=(n + noise, n + noise))
    with pytest.raises(InputError) as caught:  # more users than a simulation takes
        limits.check_validation(1000, 50, 13, n + 1, n, user_path=False)
    assert caught.value.parameter == "n1"
    with pytest.raises(InputError) as caught:  # the user path: trials × messages
        limits.check_validation(1000, 50, 13, 10**5, 10**5, user_path=True, messages=(n, n))
    assert caught.value.parameter == "path" and "trials × messages ≤ 2e+07" in str(caught.value)
