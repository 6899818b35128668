"""The central model's second tester, ``central+channels``: each group's curator releases
a noisy histogram at its own ε and the channels' statistic reads both (docs/method.md,
"The central model: a noisy histogram per group").

Its bound is checked against values computed by hand (its split against a numerical
minimum: ``tests/test_mixed_pairs.py``, the pair of two curators); its plans against the
paper's central tester where the noise is small."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from planner import Query
from planner.formulas.bounds import curator_beside_curator
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
