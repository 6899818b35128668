"""Exact subsampling amplification and the exact majority-vote run count."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy import stats

from planner.formulas.repetition import majority_vote_error, majority_vote_runs
from planner.formulas.subsampling import subsampled_epsilon, subsampling_population


def test_subsampled_epsilon_by_hand() -> None:
    assert subsampled_epsilon(1.0, 10, 40) == pytest.approx(math.log(1 + (math.e - 1) / 4))


@pytest.mark.parametrize(
    ("n_used", "eps1", "eps2"), [(100, 1.0, 0.1), (3163, 1.0, 0.5), (7, 0.3, 0.29), (50, 2.0, 0.01)]
)
def test_subsampling_population_is_the_smallest_that_works(n_used, eps1, eps2) -> None:
    n_total = subsampling_population(n_used, eps1, eps2)
    assert subsampled_epsilon(eps1, n_used, n_total) <= eps2
    assert subsampled_epsilon(eps1, n_used, n_total - 1) > eps2
    assert n_total == pytest.approx(n_used * math.expm1(eps1) / math.expm1(eps2), abs=1)


def test_no_subsampling_when_group_two_is_less_private() -> None:
    assert subsampling_population(100, 0.5, 0.8) == 100


def test_majority_vote_error_by_hand() -> None:
    third = 1 / 3
    assert majority_vote_error(1, third) == pytest.approx(1 / 3)
    assert majority_vote_error(3, third) == pytest.approx(float(Fraction(7, 27)))
    assert majority_vote_error(5, third) == pytest.approx(float(Fraction(51, 243)))
    assert majority_vote_error(7, third) == pytest.approx(float(Fraction(379, 2187)))


@pytest.mark.parametrize(
    ("beta", "runs"),
    [(0.34, 1), (1 / 3, 1), (0.26, 3), (0.25, 5), (0.21, 5), (0.2, 7), (0.1734, 7)],
)
def test_majority_vote_runs_by_hand(beta: float, runs: int) -> None:
    assert majority_vote_runs(beta) == runs


@pytest.mark.parametrize("beta", [0.1, 0.05, 1e-3, 1e-6, 1e-12])
def test_majority_vote_runs_is_minimal_against_scipy(beta: float) -> None:
    runs = majority_vote_runs(beta)
    assert runs % 2 == 1
    assert stats.binom.sf(runs // 2, runs, 1 / 3) <= beta * (1 + 1e-9)
    assert stats.binom.sf((runs - 2) // 2, runs - 2, 1 / 3) > beta


def test_least_passing_integer_by_hand() -> None:
    """n² ≥ 10⁶ first at n = 1000; capped below it, none; above 2⁵³ (where floats skip
    integers) it still finds the exact integer."""
    from planner.formulas.search import least_passing_integer

    assert least_passing_integer(lambda n: n * n >= 10**6, 1) == 1000
    assert least_passing_integer(lambda n: n * n >= 10**6, 1, most=999) is None
    assert least_passing_integer(lambda n: n * n >= 10**6, 1, most=1000) == 1000
    assert least_passing_integer(lambda n: n >= 2**60 + 5, 2**60) == 2**60 + 5
    assert least_passing_integer(lambda n: True, 7) == 7
