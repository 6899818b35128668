"""The central model's second tester, ``central+channels``: each group's curator releases
a noisy histogram at its own ε and the channels' statistic reads both (docs/method.md,
"The central model: a noisy histogram per group").

Its bound is checked against values computed by hand and a numerical minimisation; the
plan against the paper's central tester where the noise is small, and against the shuffle
model at the query where central once needed more users."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from scipy.optimize import minimize_scalar

from planner import Query
from planner.formulas.bounds import curator_beside_curator, curator_noise_variance
from planner.formulas.settings import Setting
from planner.plan import Coverage, plan
from planner.protocols import other_mechanisms, protocol_for


def test_a_noiseless_pair_of_curators_is_the_l2_order_a_group() -> None:
    """v → 0 (ε = 60): each group's variance times k is 1/n, so τ = α²/√k split in half
    asks n = 2√k/α² a group (k = 400, α = 0.2: 2·20/0.04 = 1,000)."""
    assert curator_beside_curator(400, 0.2, 60.0, 60.0)[0] == pytest.approx(1000.0, rel=1e-9)


def test_one_curator_at_equal_eps_solves_its_quadratic_exactly() -> None:
    """Equal ε: each group takes τ/2 and n = (1 + √(1 + 4k·v·τ/2))/τ, worked out here at
    k = 100, α = 0.1, ε = 1: v = 2r/(1 − r)² with r = e^(−1/2), τ = 0.001."""
    r = math.exp(-0.5)
    v = 2 * r / (1 - r) ** 2
    tau = 0.1**2 / 10
    expected = (1 + math.sqrt(1 + 4 * 100 * v * tau / 2)) / tau
    assert curator_beside_curator(100, 0.1, 1.0, 1.0)[0] == pytest.approx(expected, rel=1e-12)


def test_the_two_curators_split_is_within_one_percent_of_the_fewest_users() -> None:
    """Both groups' C = 1 users against a numerical minimisation of n1 + n2 subject to
    Σ_g (1/n_g + k·v_g/n_g²) = α²/√k."""
    worst = 1.0
    for k in (2, 16, 1000, 10**5):
        for alpha in (0.01, 0.2, 0.9):
            for eps1 in (0.05, 1.0, 20.0):
                for eps2 in (0.05, 1.0, 20.0):
                    noise1 = k * float(curator_noise_variance(eps1))
                    noise2 = k * float(curator_noise_variance(eps2))
                    tau = alpha**2 / math.sqrt(k)

                    def users(noise: float, share: float) -> float:
                        return (1 + math.sqrt(1 + 4 * noise * share)) / (2 * share)

                    def total(s: float, n1=noise1, n2=noise2, t=tau) -> float:
                        return users(n1, t * s) + users(n2, t * (1 - s))

                    least = minimize_scalar(
                        total, bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-12}
                    ).fun
                    ours = (
                        curator_beside_curator(k, alpha, eps1, eps2)[0]
                        + curator_beside_curator(k, alpha, eps2, eps1)[0]
                    )
                    assert ours >= least * (1 - 1e-9)
                    worst = max(worst, ours / least)
    assert worst <= 1.01


def test_a_central_query_weighs_the_histogram_tester_and_nothing_needing_delta() -> None:
    weighed = {other.key for other in other_mechanisms(protocol_for("central"))}
    assert "central+channels" in weighed
    assert not any(protocol_for(key).needs_delta for key in weighed)
    assert not protocol_for("central+channels").needs_delta


@pytest.mark.parametrize(
    ("k", "alpha", "eps1", "eps2"),
    [(16, 0.3, 5.0, 5.0), (64, 0.1, 10.0, 5.0), (100, 0.1, 6.9, 6.9), (1000, 0.02, 10.0, 2.0)],
)
def test_where_the_noise_is_small_the_histogram_tester_beats_the_paper_s(
    k: int, alpha: float, eps1: float, eps2: float
) -> None:
    """At ε ≥ 3 the curator's per-bin noise (v ≤ 0.7) is small beside the sampling, at
    small k or small α: the histogram tester's plan needs fewer users than the paper's
    central tester (``fallback=False``: its own protocol alone), and the central plan,
    which weighs both and the local mechanisms, needs no more than either."""
    point = {"k": k, "alpha": alpha, "eps1": eps1, "eps2": eps2}
    query = Query.build("central", "private", **point)
    histogram = plan(replace(query, setting=Setting.from_key("central+channels")))
    paper = plan(query, fallback=False)
    central = plan(query)
    assert histogram.coverage is paper.coverage is central.coverage is Coverage.CALIBRATED
    assert histogram.total_users < paper.total_users
    assert central.total_users <= histogram.total_users


def test_at_low_eps_the_paper_s_single_noisy_statistic_still_wins() -> None:
    """At ε = 0.2 each bin's noise variance is about 200 (v = 2r/(1 − r)²), k = 1,000 bins
    of it against one noisy statistic: the central plan keeps the paper's tester."""
    query = Query.build("central", "private", k=1000, alpha=0.1, eps1=0.2, eps2=0.2)
    histogram = plan(replace(query, setting=Setting.from_key("central+channels")))
    assert plan(query).total_users < histogram.total_users
    assert plan(query).protocol == "central"


def test_validate_runs_the_histogram_tester_and_its_two_paths_agree() -> None:
    """``planner validate`` on a central plan that runs the histogram tester: user-level and
    fast paths draw the same releases, so each family's error rates agree within 5
    standard errors (400 trials each, seeds 1, 2)."""
    from planner.api import validate_document

    query = {"model": "central", "k": 16, "alpha": 0.3, "eps1": 5, "eps2": 5}
    user = validate_document(trials=400, seed=1, path="user", **query)
    fast = validate_document(trials=400, seed=2, path="fast", **query)
    assert user["protocol"] == fast["protocol"] == "central+channels"
    assert (user["tester"]["model1"], user["tester"]["model2"]) == ("central", "central")
    for one, two in zip(user["families"], fast["families"], strict=True):
        if not one["applicable"]:
            continue
        p = (one["error_rate"] + two["error_rate"]) / 2
        spread = math.sqrt(max(p * (1 - p), 1e-4) * 2 / 400)
        assert abs(one["error_rate"] - two["error_rate"]) <= 5 * spread, one["family"]
