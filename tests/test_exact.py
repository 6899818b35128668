"""``planner plan --exact``: its criterion by hand, and its sizes against fresh validations."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from planner.calibrate import CALIBRATION_TARGET, exact_target
from planner.cli import app
from planner.exact import exact_plan
from planner.validate import validate
from planner.validators.stats import most_errors_passing, reliably_passing_error, wilson_interval
from tests.conftest import make_query


def test_the_most_errors_a_400_trial_check_passes_with_is_114() -> None:
    """By hand (z = 1.96): 114/400 has Wilson upper bound 0.3311, 115/400 has 0.3337."""
    assert wilson_interval(114, 400)[1] == pytest.approx(0.3311, abs=5e-4)
    assert wilson_interval(115, 400)[1] == pytest.approx(0.3337, abs=5e-4)
    assert most_errors_passing(1 / 3, 400) == 114
    assert most_errors_passing(0.001, 400) == -1  # even 0/400 cannot show error ≤ 0.001
    assert most_errors_passing(1.0, 10) == 10


def _binomial_cdf(count: int, trials: int, rate: float) -> float:
    return sum(
        math.comb(trials, i) * rate**i * (1 - rate) ** (trials - i) for i in range(count + 1)
    )


@pytest.mark.parametrize("beta", [1 / 3, 0.2, 0.05])
def test_reliable_error_is_where_the_check_passes_with_the_stated_probability(beta) -> None:
    rate = reliably_passing_error(beta, 400, 0.9)
    errors = most_errors_passing(beta, 400)
    assert _binomial_cdf(errors, 400, rate) == pytest.approx(0.9, abs=1e-9)
    assert 0 < rate < errors / 400 < beta


def test_exact_target_matches_the_calibration_target_at_a_third() -> None:
    """--exact and the calibrated grid hold the tester to the same error (0.258 vs 0.26)."""
    assert exact_target(1 / 3) == pytest.approx(0.2581, abs=1e-4)
    assert abs(exact_target(1 / 3) - CALIBRATION_TARGET) < 0.005
    assert exact_target(0.05) < exact_target(0.2) < exact_target(1 / 3)


@pytest.mark.parametrize("setting", ["local-private", "central"])
def test_exact_sizes_pass_fresh_validations_and_a_fifth_fewer_do_not(setting: str) -> None:
    """The sizes --exact prints sit at the operating point: a fresh 400-trial check (every
    family's 95 % Wilson upper bound ≤ β, computed here) passes them ≈ 90 % of the time,
    and 0.7× them mostly not, so the search does not over-provision."""
    query = make_query(setting, k=16, alpha=0.5, eps1=1.0, eps2=0.5)
    found = exact_plan(query, seed=5)
    assert found.plan is not None and found.worst is not None
    assert found.worst.error_rate <= found.target
    n1, n2 = found.plan.n_users_group1, found.plan.n_users_group2

    def wilson_check(scale: float, seed: int) -> bool:
        report = validate(query, n1=int(n1 * scale), n2=int(n2 * scale), trials=400, seed=seed)
        outcomes = [o for o in report.verification.outcomes if o.applicable]
        return all(wilson_interval(o.errors, o.trials)[1] <= query.beta for o in outcomes)

    def passed(scale: float) -> int:
        return sum(wilson_check(scale, 500 + s) for s in range(20))

    assert passed(1.0) >= 15  # 20 draws of a ≈ 0.9 pass rate (P(≤ 14) ≈ 1 %)
    # the local tester's error moves slowly with n near the operating point (measured for
    # local-private: 20, 12, 2 and 0 of 20 pass at 1.0, 0.8, 0.7 and 0.6×): 0.7× mostly fails
    assert passed(0.7) <= 10


def test_plan_exact_json_states_its_criterion() -> None:
    query = ["--model", "central", "-k", "16", "--alpha", "0.5", "--eps1", "1", "--eps2", "0.5"]
    result = CliRunner().invoke(app, ["plan", *query, "--exact", "--trials", "300", "--json"])
    assert result.exit_code == 0, result.output
    exact = json.loads(result.output)["exact"]
    assert exact["found"] and exact["trials_per_family"] == 300
    assert exact["target_error"] == pytest.approx(exact_target(1 / 3))
    assert exact["worst_error_rate"] <= exact["target_error"]
    low, high = exact["worst_wilson95"]
    assert low <= exact["worst_error_rate"] <= high
    assert "operating point" in exact["confidence"]
