"""Central's threshold constants for one run held to β < 1/3 (``shifts_for_error``).

Fixed constants (the file's C1 = 0.7, C2 = 4) leave a null rejection floor of about
18–21 % however many users there are; a one-run plan at β = 0.1 needs that floor below
the operating error 0.077. Hand values: ½e^{−C2/S} and Φ̄(C1) each scale by error/base_error.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from planner.formulas.settings import Setting
from planner.statistics import operating_error
from planner.testers import build_tester, parameters_for_beta
from planner.validators.central import SENSITIVITY, CentralTester, shifts_for_error
from planner.validators.instances import FAMILIES, Kind, build
from planner.validators.stats import clopper_pearson_bounds
from tests.conftest import make_query

FILE = {"shift_scale": 0.7, "shift_privacy": 4.0, "statistic": "conditional"}


def test_shifts_scale_each_limit_by_the_error_ratio() -> None:
    upper_tail = 1 - NormalDist().cdf(0.9)  # 0.18406...
    c1, c2 = shifts_for_error(0.9, 4.0, 0.3, 0.03)
    assert 0.5 * math.exp(-c2 / SENSITIVITY) == pytest.approx(0.5 * math.exp(-1.0) / 10, rel=1e-12)
    assert 1 - NormalDist().cdf(c1) == pytest.approx(upper_tail / 10, rel=1e-9)
    assert c2 == pytest.approx(4.0 + 4.0 * math.log(10.0), rel=1e-12)
    assert shifts_for_error(0.9, 4.0, 0.3, 0.3) == pytest.approx((0.9, 4.0), rel=1e-12)
    with pytest.raises(ValueError):
        shifts_for_error(0.9, 4.0, 0.3, 0.31)


def test_only_central_and_only_below_one_third_change() -> None:
    assert parameters_for_beta(Setting.from_key("central"), FILE, 1 / 3) == FILE
    assert parameters_for_beta(
        Setting.from_key("local-private"), {"threshold_fraction": 0.5}, 0.01
    ) == {"threshold_fraction": 0.5}
    raised = parameters_for_beta(Setting.from_key("central"), FILE, 0.1)
    assert raised["shift_scale"] > 0.7 and raised["shift_privacy"] > 4.0


def test_a_majority_vote_keeps_the_one_third_constants() -> None:
    query = make_query("central", k=64, alpha=0.25, eps1=1.0, eps2=0.5, beta=0.1)
    one_run = build_tester(query, runs=1)
    vote = build_tester(query, runs=5)
    assert vote.base.shift_privacy == pytest.approx(4.0)
    assert one_run.shift_privacy > 9.0


@pytest.mark.parametrize("regime", ["noise-dominated", "statistic-dominated"])
def test_the_null_floor_falls_below_the_operating_error(regime: str) -> None:
    """At both limits of m, every null family is rejected less often than
    operating_error(0.1) = 0.077 with the raised constants (95 % Clopper–Pearson, 3,000
    trials each), and more often than that with the file's (the test can fail)."""
    k = 64
    users, eps = (40, 0.05) if regime == "noise-dominated" else (200_000, 20.0)
    target = operating_error(0.1)
    raised = parameters_for_beta(Setting.from_key("central"), FILE, 0.1)
    worst_raised, worst_file = 0.0, 0.0
    for index, family in enumerate(
        name for name, (kind, _) in FAMILIES.items() if kind is Kind.NULL
    ):
        instance = build(family, k, 0.25)
        assert instance is not None
        for parameters, high in ((raised, True), (FILE, False)):
            tester = CentralTester(k, eps, eps, **parameters)
            batch = tester.simulate_fast(
                instance.p, instance.q, users, users, 3000, np.random.default_rng(100 + index)
            )
            low, up = clopper_pearson_bounds(int(batch.rejects.sum()), 3000, 0.025)
            if high:
                worst_raised = max(worst_raised, up)
            else:
                worst_file = max(worst_file, low)
    assert worst_raised < target
    assert worst_file > target


def test_the_per_query_search_holds_one_run_to_beta_with_the_raised_constants() -> None:
    """``--exact`` (and a simulated plan) at β = 0.1 finds a size: its one run uses the
    raised constants; with the file's constants its null floor is above the target."""
    from planner.calibration.search import exact_search

    query = make_query("central", k=16, alpha=0.5, eps1=1.0, eps2=1.0, beta=0.1)
    found = exact_search(query, trials=600, seed=5)
    assert found.multiplier is not None and found.verification is not None
    assert found.verification.worst_error_rate <= operating_error(0.1)
