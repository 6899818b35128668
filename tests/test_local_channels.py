"""The local protocol with a channel per group (``local-private+channels``): each group's
randomizer chosen at its own ε, the sizes by each channel's noise, and the plan's choice."""

from __future__ import annotations

import math

import pytest

from planner import Query
from planner.formulas.bounds import channel_noise
from planner.formulas.registry import BOUNDS
from planner.formulas.settings import Setting
from planner.plan import Coverage, Split, plan
from planner.protocols import ASKED_PROTOCOLS, other_mechanisms, protocol_for


def test_the_bound_against_hand_computed_values() -> None:
    """k = 1000, α = 0.1, ε = (8, 0.5): w1 = 1.78196 (k-RR), w2 = 15,672.79 (optimized
    unary encoding, test_channels' hand values); group 1's users at C = 1 are
    √1000·√w1·(√w1 + √w2)/0.01 = 31.6228·1.33490·(1.33490 + 125.1910)/0.01 = 534,110,
    group 2's 31.6228·125.1910·126.5259/0.01 = 50,090,190."""
    bound = BOUNDS["local-channels"]
    assert bound.evaluate(k=1000, alpha=0.1, eps1=8.0, eps2=0.5) == pytest.approx(534_110, rel=1e-5)
    assert bound.evaluate(k=1000, alpha=0.1, eps1=0.5, eps2=8.0) == pytest.approx(
        50_090_190, rel=1e-5
    )
    # without privacy both channels tend to k-RR's w = 1 − 1/k: √k/α² a group, times 2(1 − 1/k)
    assert bound.evaluate(k=100, alpha=0.5, eps1=60.0, eps2=60.0) == pytest.approx(
        2 * 0.99 * 10 / 0.25, rel=1e-9
    )


def test_every_query_may_run_it_and_it_runs_only_itself() -> None:
    channels = protocol_for("local-private+channels")
    for asked in ASKED_PROTOCOLS:
        assert channels in other_mechanisms(asked), asked.key
    assert other_mechanisms(channels) == ()


def test_heterogeneous_privacy_gets_a_channel_per_group() -> None:
    """The issue's example, k = 1000, α = 0.1, group 1 at ε = 8 and group 2 at ε = 0.5: the
    plan runs k-RR for group 1 and unary encoding for group 2, sized n_g ∝ √w_g, with
    fewer users in all than the one-bit Hadamard plan (39,423,767 before this protocol) and
    than k-RR for both groups at ε = 0.5."""
    made = plan(Query.build("local", "private", 1000, 0.1, 8.0, 0.5))
    assert made.protocol == "local-private+channels"
    assert made.coverage is Coverage.CALIBRATED
    # on its own domain: with the grid's k node at 512 the cell below the node 1,024 reads
    # no larger C than the node itself (before, padding to 1,024 bins had needed fewer
    # users, ``plan.padding_domains``)
    bins = made.tester_query.k
    assert bins == 1000
    assert "group 1: k-ary randomized response at ε = 8, 10 bits" in made.mechanism
    assert f"group 2: optimized unary encoding at ε = 0.5, {bins} bits" in made.mechanism
    ratio = made.n_users_group2 / made.n_users_group1
    expected = math.sqrt(channel_noise(float(bins), 0.5) / channel_noise(float(bins), 8.0))
    assert ratio == pytest.approx(expected, rel=1e-3)
    assert made.total_users < 39_423_767
    paper_only = plan(Query.build("local", "private", 1000, 0.1, 8.0, 0.5), fallback=False)
    assert paper_only.protocol == "local-private"
    assert made.total_users < paper_only.total_users


@pytest.mark.parametrize(("k", "eps"), [(256, 1.0), (1000, 0.5), (1000, 0.25), (256, 0.125)])
def test_at_high_privacy_no_plan_is_larger_than_the_one_bit_plan(k: int, eps: float) -> None:
    """ε ≤ 1, k ≥ 256: the plan is never above the paper's protocol alone (the issue's
    "no plan larger than today's")."""
    for eps2 in (eps, eps / 4):
        query = Query.build("local", "private", k, 0.1, eps, eps2)
        assert plan(query).total_users <= plan(query, fallback=False).total_users


def test_allocations_start_from_the_papers_split_and_never_cost_more_than_the_default() -> None:
    """A channel per group is the default plan (its own split, n_g ∝ √w_g), never the
    paper split's, where the allocations start (the Hadamard tester's variance family,
    on which users can move). A cost allocation weighs the default's own sizes too, so it
    never costs more than them."""
    from planner.allocation import AllocationRule, allocate

    query = Query.build("local", "private", 1000, 0.1, 8.0, 0.5)
    default, paper = plan(query), plan(query, split=Split.PAPER)
    assert default.protocol == "local-private+channels"
    assert paper.protocol == "local-private"
    for cost2 in (0.1, 1.0, 10.0):
        cheap = allocate(paper, AllocationRule.COST, cost1=1.0, cost2=cost2)
        assert cheap.cost <= default.n_users_group1 + cost2 * default.n_users_group2


def test_the_automatic_path_counts_a_unary_reports_bits() -> None:
    """A channel per group at k = 100 (ε = (1.5, 0.5): unary encodings, 100 bits a user)
    with 101,551 + 328,578 users and 5 trials: 2.2 million users fit the user path's
    budget, but their reports are 215 million bits (at ε = (1, 0.5) the user path had run
    13 s, a hostile run). ``path=auto`` weighs the cells a user's report draws, and takes
    the fast path."""
    from planner.api import validate_document
    from planner.validate import USER_PATH_BUDGET

    asked = {"model": "local", "k": 100, "alpha": 0.2, "eps1": 1.5, "eps2": 0.5}
    report = validate_document(**asked, trials=5, families=["uniform"])
    assert report["protocol"] == "local-private+channels"
    users = report["n_users_group1"] + report["n_users_group2"]
    assert 5 * users <= USER_PATH_BUDGET < 5 * users * 100
    assert report["path"] == "fast"


def test_a_plan_warns_of_the_theorems_range_only_where_its_bound_assumes_eps_at_most_one() -> None:
    """Above ε = 1 a channels plan (its bound holds at every ε) prints no theorem warning;
    a plan sized by a paper bound (ε ≤ 1: Hadamard response at k = 16, ε = 1.5, which
    the channels do not beat there) still does."""
    channels = plan(Query(Setting.from_key("local-private+channels"), 1000, 0.1, 8.0, 8.0))
    assert BOUNDS["local-channels"].eps_max == math.inf
    assert not [w for w in channels.warnings if "theorems' range" in w]
    hadamard = plan(Query(Setting.from_key("local-private"), 16, 0.3, 1.5, 1.5), fallback=False)
    assert BOUNDS["local-private"].eps_max == 1.0
    assert [w for w in hadamard.warnings if "ε = 1.5 > 1 is outside the theorems' range" in w]
