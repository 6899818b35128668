"""β < 1/3 (docs/user-guide.md, a target error below 1/3): majority vote against direct
calibration at β."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from importlib import resources
from typing import Any

import pytest

from planner.constants import (
    ConstantSource,
    SettingConstant,
    default_constants,
    parse_constant_table,
)
from planner.documents import plan_to_dict
from planner.formulas.repetition import majority_vote_error
from planner.formulas.settings import Setting
from planner.inputs import Query
from planner.plan import Coverage, LoweredPoint, RepetitionMethod, Split, plan
from tests.conftest import make_query


def _entry(*rows: list[float | None], ks: tuple[int, ...] = (16,)) -> SettingConstant:
    direct = {
        "beta": [0.2, 0.1, 0.05],
        "k": list(ks),
        "factor": list(rows),
        "axes": {"eps_strong": [0.25, 1.0], "alpha": [0.15, 0.5]},
    }
    return SettingConstant(ConstantSource.CALIBRATED, 1.0, extra={"direct": direct})


def test_direct_factor_interpolates_in_log_log_by_hand() -> None:
    entry = _entry([2.0, 4.0, 8.0])
    assert entry.direct_factor(0.2, 16) == pytest.approx(2.0)
    assert entry.direct_factor(0.05, 16) == pytest.approx(8.0)
    assert entry.direct_factor(math.sqrt(0.2 * 0.1), 16) == pytest.approx(math.sqrt(8.0))
    # between 1/3 (factor 1) and 0.2: weight ln(4/3)/ln(5/3) = 0.563171 on the 0.2 node
    assert entry.direct_factor(0.25, 16) == pytest.approx(2.0**0.563171, rel=1e-6)
    assert entry.direct_factor(1 / 3, 16) is None  # one run already meets 1/3
    assert entry.direct_factor(0.04, 16) is None  # below the last calibrated β: vote only
    floor = _entry([2.0, None, None])
    assert floor.direct_factor(0.25, 16) == pytest.approx(2.0**0.563171, rel=1e-6)
    assert floor.direct_factor(0.15, 16) is None
    assert SettingConstant(ConstantSource.CALIBRATED, 1.0).direct_factor(0.1, 16) is None


def test_direct_factor_interpolates_in_log_k_and_keeps_the_last_row_above_it() -> None:
    entry = _entry([2.0, 4.0, 8.0], [1.5, 3.0, 6.0], ks=(16, 256))
    assert entry.direct_factor(0.2, 64) == pytest.approx(math.sqrt(2.0 * 1.5))  # halfway
    assert entry.direct_factor(0.05, 256) == pytest.approx(6.0)
    assert entry.direct_factor(0.05, 10**6) == pytest.approx(6.0)  # the factor falls with k
    assert entry.direct_factor(0.2, 8) is None  # below the first k: not calibrated, vote
    floor = _entry([2.0, None, None], [1.5, 3.0, 6.0], ks=(16, 256))
    assert floor.direct_factor(0.1, 64) is None  # a neighbour without a factor
    assert floor.direct_factor(0.1, 300) == pytest.approx(3.0)


def _table_with_direct(setting: str, factors: list[float | None]):
    """The packaged constants with ``setting``'s direct factors replaced, and without the
    local mechanisms a query might run instead (k-RR, a channel per group): the plans
    here are the setting's own tester's."""
    document = json.loads(
        resources.files("planner").joinpath("data/constants.json").read_text("utf-8")
    )
    for key in list(document["settings"]):
        if "+" in key:
            del document["settings"][key]
    document["settings"][setting]["direct"] = {
        "beta": [0.2, 0.1, 0.05],
        "k": [16],
        "factor": [factors],
        "axes": {"eps_strong": [0.25, 1.0], "alpha": [0.15, 0.5]},
    }
    return parse_constant_table(document)


def test_direct_calibration_is_chosen_when_cheaper_and_the_vote_is_priced() -> None:
    query = make_query("local-private", k=1000, alpha=0.1, eps1=1.0, eps2=0.5, beta=0.05)
    table = _table_with_direct("local-private", [1.5, 2.5, 4.0])
    # the paper's split: ⌈C·bound⌉ per group (the default then re-splits by the variance)
    one_run = plan(
        make_query("local-private", k=1000, alpha=0.1, eps1=1.0, eps2=0.5),
        table,
        split=Split.PAPER,
    )
    chosen = plan(query, table, split=Split.PAPER)
    assert chosen.repetition.method is RepetitionMethod.DIRECT
    assert chosen.runs == 1 and chosen.repetition.factor == pytest.approx(4.0)
    # local sizes are ⌈C·bound⌉ per group: four times one run's, up to the rounding
    assert abs(chosen.n_users_group1 - 4 * one_run.n_users_group1) <= 4
    vote_runs = chosen.repetition.vote_runs
    assert majority_vote_error(vote_runs, 1 / 3) <= 0.05 < majority_vote_error(vote_runs - 2, 1 / 3)
    assert chosen.repetition.other_total_users == vote_runs * one_run.total_users
    # the homogeneous baseline is priced by the same method
    assert abs(chosen.groups[0].baseline_n_users - 4 * one_run.groups[0].baseline_n_users) <= 4
    document = plan_to_dict(chosen)["repetition"]
    assert document["method"] == "direct-calibration" and document["runs"] == 1


def test_the_vote_stays_when_direct_calibration_costs_more_or_is_unknown() -> None:
    query = make_query("local-private", k=1000, alpha=0.1, eps1=1.0, eps2=0.5, beta=0.2)
    vote_runs = plan(query).repetition.vote_runs
    dearer = plan(query, _table_with_direct("local-private", [vote_runs + 1.0, 50.0, 90.0]))
    assert dearer.repetition.method is RepetitionMethod.MAJORITY_VOTE
    assert dearer.runs == vote_runs
    assert dearer.repetition.other_total_users > dearer.total_users
    floor = plan(query, _table_with_direct("local-private", [None, None, None]))
    assert floor.repetition.method is RepetitionMethod.MAJORITY_VOTE
    assert floor.repetition.direct_factor is None and floor.repetition.other_total_users is None


def test_below_the_last_calibrated_beta_a_vote_of_directly_calibrated_runs() -> None:
    """β = 0.01 below the table's last β = 0.05, factors 1.5, 2.5, 4.0 at β = 0.2, 0.1,
    0.05. By hand: runs at 0.2 need r = 13 (P(Bin(11, 0.2) ≥ 6) = 0.0117 > 0.01), 19.5× one
    run; at 0.1, r = 5 (P(Bin(5, 0.1) ≥ 3) = 0.00856, r = 3: 0.028), 12.5×; at 0.05, r = 3
    (P(Bin(3, 0.05) ≥ 2) = 3·0.05²·0.95 + 0.05³ = 0.00725), 12×; the vote of runs at 1/3,
    47 runs. So three runs, each the direct plan at β = 0.05."""
    assert majority_vote_error(3, 0.05) == pytest.approx(0.00725)
    assert majority_vote_error(5, 0.1) == pytest.approx(0.00856)
    assert majority_vote_error(11, 0.2) > 0.01 >= majority_vote_error(13, 0.2)
    table = _table_with_direct("local-private", [1.5, 2.5, 4.0])

    def at(beta: float):
        query = make_query("local-private", k=1000, alpha=0.1, eps1=1.0, eps2=0.5, beta=beta)
        return plan(query, table, split=Split.PAPER)

    chosen, direct_run, one_run = at(0.01), at(0.05), at(1 / 3)
    repetition = chosen.repetition
    assert repetition.method is RepetitionMethod.DIRECT_VOTE
    assert (repetition.runs, repetition.run_beta, repetition.factor) == (3, 0.05, 4.0)
    assert direct_run.repetition.method is RepetitionMethod.DIRECT
    assert chosen.n_users_group1 == 3 * direct_run.n_users_group1
    assert chosen.n_users_group2 == 3 * direct_run.n_users_group2
    assert repetition.vote_runs == 47 and repetition.direct_factor is None
    assert repetition.other_total_users == 47 * one_run.total_users
    document = plan_to_dict(chosen)["repetition"]
    assert document["method"] == "direct-calibration-vote" and document["runs"] == 3
    assert document["per_run_error"] == 0.05 and document["factor"] == 4.0


def test_the_step_below_the_last_calibrated_beta_is_no_longer_a_vote_of_47_runs() -> None:
    """Central k = 371, α = 0.2361, ε = (0.029, 0.005): β from 0.01 to 0.0099 had gone from
    58,274 users (one run, direct factor 4.69) to 558,454 (the 47-run vote), 9.6×. The
    three-run vote of runs calibrated at β = 0.05 keeps the step under 2×, and no smaller
    β needs fewer users."""
    totals = [
        plan(make_query("central", k=371, alpha=0.2361, eps1=0.029, eps2=0.005, beta=b))
        for b in (0.01, 0.0099, 0.005, 0.001, 0.0001)
    ]
    assert totals[0].repetition.method is RepetitionMethod.DIRECT
    assert all(t.repetition.method is RepetitionMethod.DIRECT_VOTE for t in totals[1:])
    users = [t.total_users for t in totals]
    assert users[1] < 2 * users[0]
    assert users == sorted(users)
    for made in totals[1:]:
        assert made.total_users < made.repetition.other_total_users / 3  # the 1/3 vote's


def test_direct_calibration_stops_at_the_top_of_its_epsilon_grid() -> None:
    """The factors were measured at ε_strong ≤ 1; above it the tester adds little noise and
    its error's tail falls more slowly (hold-out: shuffle, k = 50, ε = (1.87, 6.31),
    β = 0.012 needed 8.6× the direct plan), so such a plan never takes a factor there: it
    takes the majority vote, or runs its tester at ε lowered to 1 when that needs fewer
    users (``test_a_vote_plan_above_the_direct_points_runs_its_tester_at_their_tops``)."""
    from dataclasses import replace

    from planner.formulas.settings import Setting
    from planner.inputs import Query
    from planner.plan import RepetitionMethod, plan

    entry = _entry([2.0, 4.0, 8.0])
    assert entry.direct_factor(0.2, 16, 1.0) == pytest.approx(2.0)
    assert entry.direct_factor(0.2, 16, 1.01) is None
    assert entry.direct_factor(0.2, 16) == pytest.approx(2.0)  # ε not given: not checked
    private = Setting.from_key("shuffle-private")
    # the hold-out's query had α = 0.08; the shuffle settings' direct factors now start at
    # α = 0.15 (direct_alpha_min), so the ε check is shown at α = 0.2
    high = Query(private, 50, 0.2, 1.87, 6.31, 3e-5, 0.0118)
    high_plan = plan(high)
    assert high_plan.tester_point == LoweredPoint(1.0, 1.0, 0.2)
    lowered = plan(replace(high, eps1=1.0, eps2=1.0))
    assert lowered.repetition.method is RepetitionMethod.DIRECT
    assert (high_plan.n_users_group1, high_plan.n_users_group2) == (
        lowered.n_users_group1,
        lowered.n_users_group2,
    )
    from planner.constants import default_constants
    from planner.plan import plan_on_domain

    # below the direct points' k, on its own domain: the vote (``plan`` runs it on k = 16)
    on_15 = plan_on_domain(replace(high, k=15), default_constants())
    assert on_15.repetition.method is RepetitionMethod.MAJORITY_VOTE
    low = Query(private, 50, 0.2, 0.187, 0.631, 3e-5, 0.0118)
    assert plan(low).repetition.method is RepetitionMethod.DIRECT


def test_direct_calibration_stops_above_its_largest_alpha() -> None:
    """The factors were measured at α ≤ 0.5; a plan at larger α has few users and a
    statistic as discrete as the data, so it takes the majority vote; a smaller α (more
    users, a statistic closer to normal) keeps the factor, unless the setting states a
    ``direct_alpha_min`` (the shuffle settings: 0.15)."""
    from planner.formulas.settings import Setting
    from planner.inputs import Query
    from planner.plan import RepetitionMethod, plan

    entry = _entry([2.0, 4.0, 8.0])
    assert entry.direct_factor(0.2, 16, 1.0, 0.5) == pytest.approx(2.0)
    assert entry.direct_factor(0.2, 16, 1.0, 0.01) == pytest.approx(2.0)
    assert entry.direct_factor(0.2, 16, 1.0, 0.51) is None
    floored = SettingConstant(
        ConstantSource.CALIBRATED, 1.0, extra={**entry.extra, "direct_alpha_min": 0.15}
    )
    assert floored.direct_factor(0.2, 16, 1.0, 0.15) == pytest.approx(2.0)
    assert floored.direct_factor(0.2, 16, 1.0, 0.149) is None
    central = Setting.from_key("central")
    # below ε_strong = 0.25, central's factors above α = 0.5 are not measured: its tester
    # runs at α = 0.5 (from 0.25 up they are: the next test)
    wide = plan(Query(central, 256, 0.8, 0.2, 0.1, None, 0.05))
    point = wide.tester_point
    assert point is not None and point.alpha == 0.5
    at_point = plan(Query(central, 256, 0.5, point.eps1, point.eps2, None, 0.05))
    assert at_point.repetition.method is RepetitionMethod.DIRECT and at_point.tester_point is None
    assert wide.total_users == at_point.total_users
    assert plan(Query(central, 256, 0.3, 1.0, 0.5, None, 0.05)).repetition.method is (
        RepetitionMethod.DIRECT
    )


def test_central_above_alpha_one_half_reads_its_factors_measured_there() -> None:
    """Central's factors at α = 0.75 and 0.95 (``direct_large_alpha``, ε_strong 0.25 and
    1): a plan at β < 1/3 and α in (0.5, 0.95] runs one directly calibrated run at the
    asked α where ε_strong is in [0.25, 1], with a factor no smaller than the direct
    points' (the table is the worst over both); below ε_strong = 0.25 (where its factor
    moves with ε, per ε node) the table is not read. Before, every such plan ran its
    tester at α = 0.5: at α = 0.95, β = 0.05 that was 1,512 users against 776."""
    central = Setting.from_key("central")
    entry = default_constants().for_setting("central")
    for beta in (0.2, 0.05, 0.01):
        for k in (16, 256, 1000):
            within = entry.direct_factor(beta, k, 1.0, 0.5)
            beyond = entry.direct_factor(beta, k, 1.0, 0.95)
            assert within is not None and beyond is not None and beyond >= within
        assert entry.direct_factor(beta, 256, 0.2, 0.8) is None
        reason = entry.direct_unavailable(beta, 256, 0.2, 0.8)
        assert reason is not None and "ε_strong = 0.2 is below its points' 0.25" in reason
    at_top = plan(Query(central, 1000, 0.95, 1.0, 0.5, None, 0.05))
    assert at_top.repetition.method is RepetitionMethod.DIRECT
    assert at_top.tester_point is None or at_top.tester_point.alpha == 0.95
    at_half = plan(Query(central, 1000, 0.5, 1.0, 0.5, None, 0.05))
    assert at_top.total_users < 0.6 * at_half.total_users
    # just below 1/3 the plan is the plan at 1/3 (the factor tends to 1), not one at α = 0.5
    third = plan(Query(central, 1000, 0.8, 1.0, 0.5, None, 1 / 3))
    near = plan(Query(central, 1000, 0.8, 1.0, 0.5, None, 0.3333333333))
    assert near.total_users <= 1.01 * third.total_users


def test_with_tables_per_node_the_factor_is_interpolated_log_log_in_alpha_and_eps() -> None:
    """A setting with ``direct_alpha_min`` = 0.15 and a ``direct_by_node`` entry at α nodes
    0.01, 0.05, 0.15, 0.5 and ε_strong nodes 0.25, 1 (tables falling with α; at ε 0.25 half
    those at 1): at a node, its table; between nodes, log f linear in log α and log ε
    (α = √(0.05 · 0.15), ε = 0.5: halfway both ways, (2.5 · 5 · 2 · 4)^(1/4) = √10 at
    β = 0.1); below ε 0.25 the 0.25 tables; above the last α node, its table; a neighbour
    without a factor, the vote; below α = 0.01, the vote; ε_strong above the points, the
    vote; no ε given, the last ε node (the worst); no α given, the direct table."""
    entry = _entry([2.0, 4.0, 8.0])
    at_one = [[[3.0, 6.0, 12.0]], [[2.5, 5.0, None]], [[2.0, 4.0, 8.0]], [[1.5, 3.0, 6.0]]]
    halved = [[[None if v is None else v / 2 for v in row] for row in t] for t in at_one]
    band = {
        "alpha": [0.01, 0.05, 0.15, 0.5],
        "eps_strong": [0.25, 1.0],
        "beta": [0.2, 0.1, 0.05],
        "k": [16],
        "factor": [[low, high] for low, high in zip(halved, at_one, strict=True)],
        "axes": {"eps_strong": [0.25, 1.0], "alpha": [0.01, 0.05]},
    }
    floored = SettingConstant(
        ConstantSource.CALIBRATED,
        1.0,
        extra={**entry.extra, "direct_alpha_min": 0.15, "direct_by_node": band},
    )
    assert floored.direct_factor(0.1, 16, 1.0, 0.15) == pytest.approx(4.0)
    assert floored.direct_factor(0.1, 16, 0.25, 0.15) == pytest.approx(2.0)
    assert floored.direct_factor(0.1, 16, 0.01, 0.15) == pytest.approx(2.0)  # first ε node
    assert floored.direct_factor(0.1, 16, 0.5, 0.15) == pytest.approx(math.sqrt(8.0))
    assert floored.direct_factor(0.1, 16, 1.0, 0.5) == pytest.approx(3.0)
    assert floored.direct_factor(0.1, 16, 1.0, 0.05) == pytest.approx(5.0)
    halfway = math.sqrt(0.05 * 0.15)
    assert floored.direct_factor(0.1, 16, 1.0, halfway) == pytest.approx(math.sqrt(20.0))
    assert floored.direct_factor(0.1, 16, 0.5, halfway) == pytest.approx(math.sqrt(10.0))
    # α = 0.3: weight ln(0.3/0.15)/ln(0.5/0.15) = 0.575717 on the 0.5 node
    assert floored.direct_factor(0.2, 16, 1.0, 0.3) == pytest.approx(
        2.0 ** (1 - 0.575717) * 1.5**0.575717, rel=1e-6
    )
    assert floored.direct_factor(0.05, 16, 1.0, 0.05) is None  # the 0.05 tables' floor
    assert floored.direct_factor(0.05, 16, 1.0, 0.1) is None  # a neighbour's floor
    assert floored.direct_factor(0.05, 16, 1.0, 0.01) == pytest.approx(12.0)
    assert floored.direct_factor(0.05, 16, 1.0, 0.03) is None
    assert floored.direct_factor(0.05, 10**6, 1.0, 0.01) == pytest.approx(12.0)  # last row
    assert floored.direct_factor(0.1, 16, 1.0, 0.0099) is None
    assert floored.direct_factor(0.1, 16, 1.01, 0.03) is None
    assert floored.direct_factor(0.1, 8, 1.0, 0.03) is None  # below the first k
    assert floored.direct_factor(0.1, 16, 1.0, 0.51) is None  # above the direct points' α
    assert floored.direct_factor(0.1, 16, None, 0.15) == pytest.approx(4.0)  # no ε: worst
    assert floored.direct_factor(0.1, 16) == pytest.approx(4.0)  # no α: the direct table
    reason = floored.direct_unavailable(0.1, 16, 1.0, 0.0099)
    assert reason == "α = 0.0099 is below its measured points' 0.01"


def test_a_vote_plan_says_why_direct_calibration_has_no_factor() -> None:
    """Each condition of ``direct_factor`` in words, first miss first, and in the plan."""
    entry = _entry([2.0, 4.0, None])
    assert entry.direct_unavailable(0.1, 16, 1.0, 0.3) is None
    assert entry.direct_unavailable(0.04, 16, 1.0, 0.3) == (
        "β = 0.04 is below its last calibrated β = 0.05"
    )
    assert entry.direct_unavailable(0.06, 16, 1.0, 0.3) == (
        "one run has an error floor above β's operating error here"
    )
    assert entry.direct_unavailable(0.1, 8, 1.0, 0.3) == "k = 8 is below its measured points' 16"
    assert entry.direct_unavailable(0.1, 16, 3.0, 0.3) == (
        "ε_strong = 3 is above its measured points' 1"
    )
    assert (
        entry.direct_unavailable(0.1, 16, 1.0, 0.6) == "α = 0.6 is above its measured points' 0.5"
    )
    floored = SettingConstant(
        ConstantSource.CALIBRATED, 1.0, extra={**entry.extra, "direct_alpha_min": 0.15}
    )
    assert floored.direct_unavailable(0.1, 16, 1.0, 0.1) == (
        "α = 0.1 is below its measured points' 0.15"
    )
    # below the last calibrated β: a vote of runs calibrated directly at a node above β,
    # which still says why one run at β itself has no factor
    voted = plan(make_query("central", k=64, alpha=0.3, eps1=1.0, eps2=0.5, beta=0.005))
    assert voted.repetition.method is RepetitionMethod.DIRECT_VOTE
    assert voted.repetition.direct_unavailable == "β = 0.005 is below its last calibrated β = 0.01"
    assert plan_to_dict(voted)["repetition"]["direct_unavailable"] == (
        voted.repetition.direct_unavailable
    )


def test_a_vote_plan_above_the_direct_points_runs_its_tester_at_their_tops() -> None:
    """ε_strong above the direct points' top (1) or α above theirs (0.5) would leave the
    query to the vote, which here costs over 4× a direct plan with ε and α lowered to at
    most those tops; that plan also answers it (a group run at a smaller ε is still ε-DP;
    a tester for α = 0.5 rejects every pair farther apart), so it is the plan: no group
    gets more users than in the vote, its ``tester_point`` is at or below the tops,
    planning that point gives the same numbers and no lower point (the ladder is one grid
    for all queries), and a line gives the vote's cost. Below the last calibrated β the
    same holds for a vote of runs calibrated directly at a node above β."""

    def own_plan(asked: Query, **options: Any) -> Any:
        """The Poisson protocol's own plan: its direct factors are the subject here (the
        multi-message protocol, which has none, is weighed by the default)."""
        return plan(asked, fallback=False, **options)

    def query(**changed: float) -> Query:
        asked = {"k": 256, "alpha": 0.05, "eps1": 1.0, "eps2": 0.25, "beta": 0.1, **changed}
        return make_query("shuffle-private", **asked)

    r = 15  # P(Bin(r, 1/3) ≥ (r+1)/2): r = 13 → 0.1035, r = 15 → 0.0882 (scipy)
    # (above α = 0.5 its factors are measured from ε_strong = 0.25 up: there the tester
    # runs at the asked α, with ε capped at 1)
    for changed, alpha in (
        ({"eps1": 1.5}, 0.05),
        ({"alpha": 0.5001, "eps1": 0.2, "eps2": 0.1}, 0.5),
        ({"eps1": 3.0, "eps2": 2.0, "alpha": 0.6}, 0.6),
    ):
        asked = query(**changed)
        made = own_plan(asked)
        point = made.tester_point
        assert point is not None and made.query == asked
        assert max(point.eps1, point.eps2) <= 1.0 and point.alpha == alpha
        at_point = own_plan(replace(asked, eps1=point.eps1, eps2=point.eps2, alpha=point.alpha))
        assert at_point.repetition.method is RepetitionMethod.DIRECT
        assert at_point.tester_point is None
        assert (made.n_users_group1, made.n_users_group2) == (
            at_point.n_users_group1,
            at_point.n_users_group2,
        )
        assert [group.eps for group in made.groups] == [point.eps1, point.eps2]
        (line,) = [w for w in made.warnings if w.startswith("the tester runs at")]
        assert f": {made.total_users:,} users in all, fewer than the {r}-run majority" in line
        vote_total = int(line.split("majority vote's ")[1].split(" ")[0].replace(",", ""))
        assert vote_total > 4 * made.total_users
        assert vote_total % r == 0  # r runs of equal size
        assert plan_to_dict(made)["tester_point"] == {
            "eps1": point.eps1,
            "eps2": point.eps2,
            "alpha": point.alpha,
            "k": 256,  # the query's own domain
            "delta": asked.delta,  # the δ its mechanism spends: the query's
        }
    # below the last calibrated β the runs of a vote are calibrated directly at a node
    # above it, so α is capped at the direct points' top there too (below ε_strong = 0.25;
    # from it up, at α = 0.6, the factors measured above α = 0.5), and ε above 1 at 1
    # (the paper's split; the default goes on down the ladder, to fewer users in all)
    below = own_plan(query(alpha=0.6, eps1=0.2, eps2=0.1, beta=0.0099), split=Split.PAPER)
    assert below.repetition.method is RepetitionMethod.DIRECT_VOTE
    assert below.tester_point == LoweredPoint(0.2, 0.1, 0.5)
    measured = own_plan(query(alpha=0.6, beta=0.0099), split=Split.PAPER)
    assert measured.repetition.method is RepetitionMethod.DIRECT_VOTE
    assert measured.tester_point is None  # the asked point: its factors are measured
    assert below.total_users < below.repetition.other_total_users  # the vote of runs at 1/3
    fewest = own_plan(query(alpha=0.6, eps1=0.2, eps2=0.1, beta=0.0099))
    assert fewest.repetition.method is RepetitionMethod.DIRECT_VOTE
    assert fewest.total_users <= below.total_users
    capped_vote = own_plan(query(eps1=1.5, beta=0.0099), split=Split.PAPER)
    assert capped_vote.repetition.method is RepetitionMethod.DIRECT_VOTE
    assert capped_vote.tester_point == LoweredPoint(1.0, 0.25, 0.05)
    assert own_plan(query(eps1=1.5, beta=0.0099)).total_users <= capped_vote.total_users
    paper = own_plan(query(), split=Split.PAPER)
    assert not [w for w in paper.warnings if w.startswith("the tester runs at")]


def test_a_vote_plan_below_the_direct_points_k_names_the_direct_plan_at_their_least_k() -> None:
    """The direct points start at k = 16: on its own domain, k = 15 takes the 47-run vote
    at β = 0.01, about 9× the direct plan at k = 16, which also answers it (a 15-bin domain
    is a 16-bin one with an empty bin); that computation names the direct plan. ``plan``
    weighs the 16-bin domain itself (every protocol here is covered from k = 16): the
    direct plan is the plan, its tester point names the domain, and no hint is left."""
    from planner.constants import default_constants
    from planner.plan import plan_on_domain

    asked = {"k": 15, "alpha": 0.15, "eps1": 0.1, "eps2": 0.1, "beta": 0.01}
    # the central tester's own computation (k-RR, which central may run, is covered here)
    voted = plan_on_domain(make_query("central", **asked), default_constants(), fallback=False)
    assert voted.repetition.method is RepetitionMethod.MAJORITY_VOTE
    assert voted.coverage is Coverage.EXTRAPOLATED
    direct = plan(make_query("central", **{**asked, "k": 16}))
    assert direct.repetition.method is RepetitionMethod.DIRECT
    assert voted.total_users > 5 * direct.total_users
    (line,) = [warning for warning in voted.warnings if warning.startswith("fewer users")]
    assert line.startswith("fewer users with --k 16: direct calibration")
    assert f"needs {direct.total_users:,} users in all" in line
    assert "a 15-bin domain is a 16-bin one with empty bins" in line
    padded = plan(make_query("central", **asked))
    assert padded.coverage is Coverage.CALIBRATED and padded.query.k == 15
    assert padded.tester_point is not None and padded.tester_point.k == 16
    assert (padded.n_users_group1, padded.n_users_group2) == (
        direct.n_users_group1,
        direct.n_users_group2,
    )
    assert not [w for w in padded.warnings if w.startswith("fewer users")]
    (domain_line,) = [w for w in padded.warnings if w.startswith("the tester runs on a domain")]
    assert f"k = 16 (asked 15): {padded.total_users:,} users in all" in domain_line


def test_a_plan_run_at_lowered_eps_and_alpha_is_validated_with_that_tester() -> None:
    """Central, ε = (3, 0.1), α = 0.6, β = 0.05: the plan's tester runs at ε ≤ 1 and
    α = 0.5 (ε_strong below 0.25, where its factors above α = 0.5 are not measured).
    ``validate`` builds that tester (its description has its ε), runs it on the
    instances at the query's α = 0.6, and the plan passes at β = 0.05 (seeded)."""
    from planner.validate import validate

    query = make_query("central", k=256, alpha=0.6, eps1=3.0, eps2=0.1, beta=0.05)
    made = plan(query)
    point = made.tester_point
    assert point is not None and point.alpha == 0.5 and max(point.eps1, point.eps2) <= 1.0
    report = validate(query, seed=31)
    assert report.plan == made
    assert (report.tester["eps1"], report.tester["eps2"]) == (point.eps1, point.eps2)
    far = [o for o in report.verification.outcomes if o.applicable and o.kind == "far"]
    assert far and all(o.tv == pytest.approx(0.6, abs=1e-9) for o in far)
    assert report.passed, [(o.family, o.error_rate) for o in report.verification.outcomes]


def test_a_vote_of_directly_calibrated_runs_validates_each_run_held_to_its_beta() -> None:
    """Central k = 64, α = 0.3, ε = (1, 0.5), β = 0.005: three runs calibrated at β = 0.02.
    The validation runs the vote through one run whose tester constants are those for
    β = 0.02 (central's thresholds are raised below 1/3), and it passes."""
    from planner.testers import tester_parameters
    from planner.validate import validate
    from planner.validators.stats import Verdict

    query = make_query("central", k=64, alpha=0.3, eps1=1.0, eps2=0.5, beta=0.005)
    made = plan(query)
    assert made.repetition.method is RepetitionMethod.DIRECT_VOTE
    run_beta = made.repetition.run_beta
    assert run_beta is not None and 0.005 < run_beta < 1 / 3
    report = validate(query, seed=11, checked_plan=made)
    assert report.verification.verdict is Verdict.PASS
    assert report.tester["majority_vote_runs"] == made.runs
    expected = tester_parameters(made.tester_query, run_beta=run_beta)
    at_third = tester_parameters(made.tester_query, run_beta=1 / 3)
    base = report.tester["base"]
    assert base["shift_scale"] == expected["shift_scale"] != at_third["shift_scale"]


def test_a_channel_per_group_above_its_grid_takes_the_vote() -> None:
    """Above its grid's top k a channel per group is covered in part only, and its β = 1/3
    run sits nearer 1/3 than the operating point: a hold-out at k = 36,339, α = 0.255,
    ε = (14.95, 1.07), β = 0.306 run directly erred 0.295 (0.283 – 0.308, 4,000 trials)
    against the 0.27 it is held to. There it keeps the vote; within the grid, the factors."""
    entry = default_constants().for_setting("local-private+channels")
    assert entry.direct_factor(0.2, 1024, 8.0, 0.1) is not None
    assert entry.direct_factor(0.2, 1025, 8.0, 0.1) is None
    reason = entry.direct_unavailable(0.2, 36_339, 8.0, 0.1)
    assert reason is not None and "above its grid's 1,024" in reason
    made = plan(
        make_query("local-private", k=36_339, alpha=0.255, eps1=14.95, eps2=1.07, beta=0.306)
    )
    assert made.repetition.method is RepetitionMethod.MAJORITY_VOTE
