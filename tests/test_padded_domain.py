"""A plan on a larger domain than the query's (``planner.plan.padding_domains``).

A k-bin domain is a larger one whose other bins never occur, with the same total variation
between any two distributions, so a tester for 16 bins answers a query at k = 15. Below a
protocol's least covered k (16; 64 for the shared hash) the plan weighs that domain: the
central model at k = 15 had been planned with a local randomizer at 6,000× the users the
central tester needs at k = 16.
"""

from __future__ import annotations

import numpy as np
import pytest

from planner import Query, Setting
from planner.api import SETTING_KEYS, plan_document, protocol_plan, protocol_query
from planner.constants import default_constants
from planner.inputs import InputError
from planner.plan import Coverage, padding_domains, plan, plan_on_domain
from planner.protocols import protocol_for
from planner.sweep import sweep
from planner.validate import validate
from planner.validators.engine import padded
from planner.validators.instances import build
from tests.conftest import make_query


def _query(key: str, k: int, alpha: float, eps1: float, eps2: float) -> Query:
    setting = Setting.from_key(key)
    return Query(setting, k, alpha, eps1, eps2, 1e-6 if setting.model.value == "shuffle" else None)


def test_the_central_model_below_k_16_runs_its_own_tester_on_16_bins() -> None:
    """The case the k scan found: 28,797,480 users by k-ary randomized response on the
    query's 15 bins, 4,448 by the central tester on 16 — exactly the plan of k = 16."""
    query = _query("central", 15, 0.0634, 0.127, 0.201)
    own = plan_on_domain(query, default_constants())
    made = plan(query)
    at_16 = plan(_query("central", 16, 0.0634, 0.127, 0.201))
    assert own.protocol == "local-private+k-rr"  # the only protocol covered on 15 bins
    assert made.protocol == "central" and made.coverage is Coverage.CALIBRATED
    assert made.tester_point is not None and made.tester_point.k == 16
    assert made.tester_query.k == 16 and made.query.k == 15
    assert (made.n_users_group1, made.n_users_group2) == (
        at_16.n_users_group1,
        at_16.n_users_group2,
    )
    assert made.total_users * 1000 < own.total_users
    (line,) = [w for w in made.warnings if w.startswith("the tester runs on a domain")]
    assert (
        f"k = 16 (asked 15): {at_16.total_users:,} users in all, "
        f"fewer than {own.total_users:,}" in line
    )
    asked = {"model": "central", "k": 15, "alpha": 0.0634, "eps1": 0.127, "eps2": 0.201}
    document = plan_document(**asked, simulation_budget=0)  # the service's: no simulation
    assert document["tester_point"]["k"] == 16
    assert document["total_users"] == at_16.total_users
    # the central tester on the 15 bins themselves is not covered (k-RR is, with 28.8
    # million users): within a budget it is simulated, and kept where it needs fewer
    simulated = plan_document(**asked)
    assert simulated["coverage"] == "simulated"
    assert simulated["total_users"] < at_16.total_users


@pytest.mark.parametrize("key", SETTING_KEYS)
def test_no_k_below_a_least_covered_k_needs_more_users_than_that_domain(key: str) -> None:
    """For every k from 2 to 15 (and 63 for the shared hash's 64), at points where the
    larger domain is covered: the plan needs at most the plan on that domain (16, and 8,
    below which k-RR's tail rule raises its constants)."""
    weighed = padding_domains(Setting.from_key(key), default_constants(), True)
    domains = [domain for domain, lowest, _ in weighed if lowest <= 2 < domain]
    assert 16 in domains and 8 in domains
    for alpha, eps1, eps2 in ((0.1, 1.0, 0.25), (0.3, 0.2, 0.2), (0.05, 4.0, 0.5)):
        for domain in domains:
            larger = plan(_query(key, domain, alpha, eps1, eps2))
            assert larger.coverage is Coverage.CALIBRATED
            for k in sorted(k for k in {2, 3, 7, 8, 12, 15, domain - 1} if k < domain):
                made = plan(_query(key, k, alpha, eps1, eps2))
                assert made.coverage is Coverage.CALIBRATED, (key, k, alpha)
                assert made.total_users <= larger.total_users, (key, k, domain, alpha)


def test_a_local_public_coin_query_below_the_shared_hash_runs_on_64_bins() -> None:
    """k = 63 had needed 1.6× k = 64, where the shared hash is covered from."""
    below = plan(_query("local-public", 63, 0.2, 2.0, 1.0))
    at_64 = plan(_query("local-public", 64, 0.2, 2.0, 1.0))
    assert below.total_users <= at_64.total_users
    own = plan_on_domain(_query("local-public", 63, 0.2, 2.0, 1.0), default_constants())
    if own.total_users > at_64.total_users:  # then the 64-bin plan is taken
        assert below.tester_point is not None and below.tester_point.k == 64


def test_below_k_rr_tail_rule_a_query_runs_on_8_bins_where_that_is_cheaper() -> None:
    """k-RR reads larger constants below k = 8 (its tail rule): local private coin,
    k = 7, α = 0.1411, ε = (10.2, 14.65), β = 0.05 ran a channel per group on 16 bins,
    10,902 users, against 8,234 for k-RR at k = 8 — a smaller domain needing more. The
    8-bin plan answers it (a 7-bin domain is an 8-bin one with an empty bin). Since a
    channel per group has direct factors from k = 16 up (a vote of runs each calibrated
    at β = 0.2, 4,185 users), all of them run on 16 bins: no smaller domain needs more."""
    at_8 = plan(make_query("local-private", k=8, alpha=0.1411, eps1=10.2, eps2=14.65, beta=0.05))
    at_16 = plan(make_query("local-private", k=16, alpha=0.1411, eps1=10.2, eps2=14.65, beta=0.05))
    assert at_8.total_users <= 8_234
    for k in (7, 6):
        below = plan(
            make_query("local-private", k=k, alpha=0.1411, eps1=10.2, eps2=14.65, beta=0.05)
        )
        assert below.total_users <= at_8.total_users
        assert below.tester_point is not None and below.tester_point.k in (8, 16)
        assert below.total_users == at_16.total_users == at_8.total_users


def test_padding_keeps_the_instance_and_its_total_variation() -> None:
    instance = build("paninski", 15, 0.2)
    assert instance is not None
    wide = padded(instance, 16)
    assert wide is not None and wide.p.size == wide.q.size == 16
    assert wide.p[15] == wide.q[15] == 0.0
    np.testing.assert_array_equal(wide.p[:15], instance.p)
    assert wide.tv == pytest.approx(instance.tv, abs=1e-15)
    with pytest.raises(ValueError, match="cannot hold"):
        padded(instance, 14)


def test_validate_runs_the_padded_tester_on_the_query_s_instances() -> None:
    """``planner validate`` of the k = 15 central plan: the 16-bin tester on the query's
    15-bin families, padded (seeded; passes at β = 1/3, every family certified)."""
    query = _query("central", 15, 0.0634, 0.127, 0.201)
    report = validate(query, seed=3)
    assert report.tester_point is not None and report.tester_point.k == 16
    assert report.verdict.value == "pass", [
        (o.family, o.error_rate) for o in report.verification.outcomes
    ]


@pytest.mark.parametrize("key", SETTING_KEYS)
def test_sweep_rows_below_a_least_covered_k_equal_their_plans(key: str) -> None:
    """Every row, padded or not, equals ``plan`` with its inputs: sizes, protocol and the
    tester's domain (k from 2 to 70 crosses both 16 and 64)."""
    setting = Setting.from_key(key)
    delta = 1e-6 if setting.model.value == "shuffle" else None
    rows = sweep(
        [setting], k="2:70:69", alpha="0.05,0.6", eps1="0.2,3", eps2="0.5,8", delta=delta
    ).rows()
    padded_rows = 0
    for row in rows:
        made = plan(_query(key, row["k"], row["alpha"], row["eps1"], row["eps2"]))
        if made.coverage is not Coverage.CALIBRATED:
            assert row["total_users"] is None
            continue
        point = made.tester_point
        expected = (
            made.n_users_group1,
            made.n_users_group2,
            made.protocol,
            None if point is None else point.k,
            None if point is None else (point.eps1, point.eps2, point.alpha),
        )
        tester = (
            None
            if row["tester_eps1"] is None
            else (
                row["tester_eps1"],
                row["tester_eps2"],
                row["tester_alpha"],
            )
        )
        got = (row["n_users_group1"], row["n_users_group2"], row["protocol"], row["tester_k"])
        assert (*got, tester) == expected, row
        padded_rows += row["tester_k"] is not None
    assert padded_rows > 10


def test_an_uncovered_own_domain_is_simulated_or_named_beside_the_larger_domain_s_plan() -> None:
    """Shuffle public coin, k = 12, δ = 3·10⁻¹¹ (below the shuffle settings' covered
    10⁻¹⁰, which no plan can lower δ past): on 16 bins only a local randomizer at
    ε2 = 0.005 is covered (about 43 million users), and on the query's own 12 bins k-ary
    randomized response (about 500 million), while simulating the shuffle protocol on its
    own 12 bins needs about 4.7 million. ``planner plan`` simulates it within its budget
    and keeps the smaller (since 2026-11-30 the multi-message protocol's 21,081 on 16
    bins); without a budget (the service's /v1/plan) the larger-domain plan
    stands with a line that says a simulation may need fewer users."""
    from planner.coverage import covered_plan

    query = Query(Setting.from_key("shuffle-public"), 12, 0.3, 1.0, 0.005, 3e-11)
    unsimulated = covered_plan(query, budget_seconds=0)
    assert unsimulated.coverage is Coverage.CALIBRATED
    assert unsimulated.tester_point is not None and unsimulated.tester_point.k == 16
    (line,) = [w for w in unsimulated.warnings if "own 12-bin domain" in w]
    # naming what its own domain is outside of (here k itself, and δ)
    assert line.startswith("the query's own 12-bin domain for the shuffle, public coin protocol")
    assert "k = 12 is outside the covered range [16, 100000]" in line
    assert ") is outside the covered region: simulating it" in line
    # the multi-message protocol (its users do not depend on δ, only its flood does) now
    # runs on 16 bins with 21,081 users: the simulation's 4.7 million do not replace it
    assert unsimulated.protocol == "shuffle-private+messages"
    assert unsimulated.total_users < 25_000
    simulated = covered_plan(query, budget_seconds=30)
    assert simulated.total_users == unsimulated.total_users


def test_a_delta_above_the_covered_top_is_planned_at_the_top() -> None:
    """A mechanism that is (ε, δ′)-DP is (ε, δ)-DP for every δ ≥ δ′: above the shuffle
    settings' covered 10⁻³ the plan runs at 10⁻³ (its tester point says so), where it had
    fallen to a local randomizer (k = 1000, α = 0.1, ε = (1, 0.25), δ = 0.002: 156,930,332
    users in all against 46,264 at 10⁻³; k = 12, δ = 0.01: 42,631,183 against 10,805), and
    the sweep says the same; below the top nothing changes. A protocol whose users do not
    depend on δ (the multi-message one) runs at the asked δ, its flood sized there."""
    from planner.protocols import protocol_for

    kinds = set()
    for key, k, eps1, eps2 in (
        ("shuffle-private", 1000, 1.0, 0.25),
        ("shuffle-public", 12, 1.0, 0.005),
    ):
        setting = Setting.from_key(key)
        at_top = plan(Query(setting, k, 0.3 if k == 12 else 0.1, eps1, eps2, 1e-3))
        for delta in (0.002, 0.01, 0.5):
            made = plan(Query(setting, k, at_top.query.alpha, eps1, eps2, delta))
            assert made.coverage is Coverage.CALIBRATED
            assert (made.n_users_group1, made.n_users_group2) == (
                at_top.n_users_group1,
                at_top.n_users_group2,
            )
            free = protocol_for(made.protocol).users_free_of_delta
            kinds.add(free)
            spent = delta if free else 1e-3
            assert made.query.delta == delta and made.tester_query.delta == spent
            assert any(w.startswith("planned at δ = 0.001") for w in made.warnings) != free
            if not free:
                assert made.tester_point is not None and made.tester_point.delta == 1e-3
            (row,) = sweep(
                [setting], k=k, alpha=at_top.query.alpha, eps1=eps1, eps2=eps2, delta=delta
            ).rows()
            assert (row["n_users_group1"], row["n_users_group2"]) == (
                made.n_users_group1,
                made.n_users_group2,
            )
            assert row["tester_delta"] == (None if free else 1e-3)
            point = made.tester_point
            assert row["tester_k"] == (None if point is None else point.k)
        assert at_top.tester_point is None or at_top.tester_point.delta is None
    assert kinds == {True, False}  # both kinds of protocol ran above the top


def test_the_domain_line_reads_right_and_allocations_drop_its_stale_total() -> None:
    """A review's finds: "a 8-bin domain" (an 8-bin); ``--allocation cost`` kept the
    paper split's total (610) in the line beside its own 428; the exact search's point had
    no k."""
    from planner.api import plan_answer

    made = plan(_query("central", 8, 0.3, 2.0, 1.0))
    (line,) = [w for w in made.warnings if w.startswith("the tester runs on a domain")]
    assert "(an 8-bin domain is a 16-bin one" in line
    answer = plan_answer(
        model="central", k=12, alpha=0.2, eps1=1, eps2=0.5, allocation="cost", cost2=5
    )
    allocated = answer.to_dict()
    total = allocated["allocation"]["n_users_group1"] + allocated["allocation"]["n_users_group2"]
    assert total == 428
    assert (allocated["n_users_group1"], allocated["n_users_group2"]) == (214, 214)
    # a line about where the tester runs states the allocation's own total, or is dropped
    for line in allocated["warnings"]:
        if line.startswith("the tester runs on"):
            assert f": {total:,} users in all" in line, line
    exact = plan_answer(
        model="central", k=12, alpha=0.2, eps1=1, eps2=0.5, exact=True, trials=50
    ).to_dict()
    assert exact["exact"]["searched_at"]["k"] == 16


def test_the_simulated_own_domain_names_the_covered_plan_it_replaced() -> None:
    """Central k = 8, α = 0.5, ε = (0.1, 0.05): the simulation of the 8 bins beats the
    16-bin plan, and says what that plan needed."""
    from planner.coverage import covered_plan

    query = _query("central", 8, 0.5, 0.1, 0.05)
    padded = plan(query)  # the raw computation: the 16-bin plan, covered
    assert padded.tester_point is not None and padded.tester_point.k == 16
    made = covered_plan(query)
    assert made.coverage is Coverage.SIMULATED and made.total_users < padded.total_users
    line = f"the covered plan on a domain of k = 16 needs {padded.total_users:,} users"
    assert any(line in w for w in made.warnings)


def test_the_page_offers_to_simulate_an_uncovered_own_domain_beside_its_larger_domain_plan(
    tmp_path,
) -> None:
    """The page plans without simulating: where the plan runs on 16 bins and the query's own
    12 bins could be simulated, it shows the plan and the "Simulate this query" job box
    (a plan job, which keeps whichever needs fewer users)."""
    import html
    import json
    import re

    from fastapi.testclient import TestClient

    from planner.service import create_app

    app = create_app(tmp_path / "page.sqlite3", workers=1, run_jobs=False)
    query = {"setting": "shuffle-public", "k": "12", "alpha": "0.3", "eps1": "1"}
    query |= {"eps2": "0.005", "delta": "0.01"}
    with TestClient(app) as client:
        page = client.get("/", params=query)
        assert page.status_code == 200
        assert "runs on a larger domain" in page.text and "Simulate this query" in page.text
        box = re.search(r'id="simulate-box" data-query="([^"]*)"', page.text)
        assert box is not None
        job = json.loads(html.unescape(box.group(1)))
        assert job["kind"] == "plan" and job["k"] == "12"
        assert client.post("/v1/validations", json=job).status_code == 202
        covered_query = {**query, "k": "64", "delta": "1e-6", "eps2": "0.5"}
        assert "Simulate this query" not in client.get("/", params=covered_query).text


def test_a_setting_run_by_another_protocol_has_its_own_tester_simulated() -> None:
    """The shuffle private coin below its covered ε = 0.001: the plan runs a local
    randomizer (58 billion users at k = 16, α = 0.2, ε = 0.0005, δ = 10⁻⁶), where a
    simulation of the shuffle tester on the query itself needs about half a million.
    ``planner plan`` simulates the setting's own tester within its budget and keeps the
    smaller; without one, a line says it may need fewer."""
    from planner.coverage import covered_plan

    query = _query("shuffle-private", 16, 0.2, 0.0005, 0.0005)
    covered = plan(query)
    assert covered.protocol.startswith("local") and covered.coverage is Coverage.CALIBRATED
    unsimulated = covered_plan(query, budget_seconds=0)
    (line,) = [w for w in unsimulated.warnings if "is outside the covered region: sim" in w]
    # the query itself, named with what it is outside of (not its covered 16-bin domain)
    assert line.startswith("the query for the shuffle, private coin protocol (eps1 (the larger")
    simulated = covered_plan(query, budget_seconds=30)
    assert simulated.coverage is Coverage.SIMULATED and simulated.protocol == "shuffle-private"
    assert simulated.total_users * 1000 < covered.total_users
    line = f"the covered plan of the {protocol_for(covered.protocol).title} protocol needs "
    assert any(line + f"{covered.total_users:,}" in w for w in simulated.warnings)


def test_a_covered_setting_run_by_another_protocol_is_not_planned_again(monkeypatch) -> None:
    """Local private coin, k = 1000, α = 0.1, ε = (1, 1) runs a channel per group, and
    its own protocol is covered at the query: ``covered_plan`` has nothing to simulate and
    plans no domain again (it had planned the query's own domain twice more, 182 µs a
    repeated plan against 65 µs)."""
    import planner.coverage as coverage

    calls: list[object] = []
    real = coverage.plan_on_domain

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(coverage, "plan_on_domain", counted)
    result = coverage.covered_plan(_query("local-private", 1000, 0.1, 1.0, 1.0))
    assert result.protocol != "local-private" and result.coverage is Coverage.CALIBRATED
    assert calls == []
    # where the own protocol is not covered at the query, it is planned (and simulated)
    uncovered = coverage.covered_plan(
        _query("shuffle-private", 16, 0.2, 0.0005, 0.0005), budget_seconds=0
    )
    assert uncovered.protocol.startswith("local") and len(calls) == 1


def test_just_below_a_coupled_protocol_s_k_node_its_node_is_weighed() -> None:
    """A channel per group reads the largest C of its grid cell, so just below its k nodes
    a plan read the lower cell's C: k = 127 needed 35,745,285 users in all where k = 128
    needed 30,202,383 (α = 0.01, ε = (20, 1); a review, when the nodes were 16, 128 and
    1024). A 63-bin domain is a 64-bin one with an empty bin: below a node, down to half of
    it, the node is weighed where the plan runs such a protocol, and no such k needs more
    than the node."""
    setting = Setting.from_key("local-private")
    at_node = plan(Query(setting, 64, 0.01, 20.0, 1.0))
    below = plan(Query(setting, 63, 0.01, 20.0, 1.0))
    assert below.total_users == at_node.total_users
    assert below.tester_point is not None and below.tester_point.k == 64
    rng = np.random.default_rng(11)
    for _ in range(12):
        node = int(rng.choice([64, 128, 512, 1024]))
        k = int(rng.integers(node // 2, node))
        alpha, eps1, eps2 = (
            float(rng.choice([0.01, 0.05, 0.3])),
            20.0,
            float(rng.choice([0.5, 1.0])),
        )
        made = plan(Query(setting, k, alpha, eps1, eps2))
        if protocol_for(made.protocol).coupled_groups:
            assert made.total_users <= plan(Query(setting, node, alpha, eps1, eps2)).total_users
        (row,) = sweep([setting], k=k, alpha=alpha, eps1=eps1, eps2=eps2).rows()
        assert (row["n_users_group1"], row["n_users_group2"], row["tester_k"]) == (
            made.n_users_group1,
            made.n_users_group2,
            None if made.tester_point is None else made.tester_point.k,
        )


def test_a_node_is_weighed_wherever_a_coupled_protocol_runs_below_it() -> None:
    """A narrower rule (the node only where the running protocol's largest C fell there at
    the plan's tester point) read the hashed channels' grid for the channels' node and
    missed it: local public coin, k = 127, α = 0.15, ε = (1.6, 4.8), β = 0.08 ran the
    hashed channels on 127 bins with 604,928 users, where the channels on 128 bins need
    593,615 (a review)."""
    setting = Setting.from_key("local-public")
    below = plan(Query(setting, 127, 0.15, 1.6, 4.8, None, 0.08))
    at_node = plan(Query(setting, 128, 0.15, 1.6, 4.8, None, 0.08))
    assert below.total_users == at_node.total_users
    assert below.tester_point is not None and below.tester_point.k == 128


def test_a_plan_never_needs_more_than_a_mechanism_it_may_run_alone() -> None:
    """``compare`` lists each mechanism a setting may run, alone: the setting's plan (the
    fewest users in all) must never need more. Just below a coupled protocol's k node that
    protocol reads its cell's largest C, so it lost to another protocol on the asked domain
    while its own plan on the node needed fewer: shuffle, k = 1000, α = 0.1, ε = (1, 0.5),
    δ = 10⁻³ planned 28,824 users (Poisson) against the multi-message protocol's 28,547 on
    1,024 bins, and fewer at δ = 8·10⁻⁴ (a review); local k = 127, α = 0.074, ε = (0.474,
    1.997) 4,013,585 against a channel per group's 3,611,493. Random queries, most of them
    within half a node below 128 or 1,024, every setting, δ up to 10⁻²."""
    from planner.formulas.settings import ALL_SETTINGS, Model
    from planner.protocols import other_mechanisms, private_coin_protocol, protocol_for

    asked = Query(Setting.from_key("shuffle-private"), 1000, 0.1, 1.0, 0.5, 1e-3)
    review = plan(asked)
    alone = protocol_plan(protocol_query(asked, "shuffle-private+messages"))
    assert review.protocol == "shuffle-private+messages"
    assert review.total_users == alone.total_users < 28_824  # the review's Poisson plan
    assert review.tester_point is not None and review.tester_point.k == 1024
    assert any("needs fewer users here than shuffle, private coin" in w for w in review.warnings)
    rng = np.random.default_rng(20261130)
    compared = 0
    for index in range(60):
        setting = ALL_SETTINGS[index % len(ALL_SETTINGS)]
        node = int(rng.choice([128, 1024]))
        k = int(rng.integers(node // 2, node))
        alpha, eps1, eps2 = (
            float(np.exp(rng.uniform(np.log(a), np.log(b))))
            for a, b in ((0.05, 0.5), (0.1, 10), (0.1, 10))
        )
        delta = float(rng.choice([1e-6, 1e-3, 1e-2])) if setting.model is Model.SHUFFLE else None
        query = Query(setting, k, alpha, eps1, eps2, delta)
        made = plan(query)
        if made.coverage is not Coverage.CALIBRATED:
            continue
        own = protocol_for(setting)
        twin = private_coin_protocol(own)
        for other in (own, *((twin,) if twin else ()), *other_mechanisms(own)):
            try:
                alone = protocol_plan(protocol_query(query, other.key))
            except InputError:  # not covered alone at this query
                continue
            compared += 1
            assert made.total_users <= alone.total_users, (query, other.key)
    assert compared > 150


def test_a_coupled_protocol_on_its_node_keeps_the_query_s_own_lines() -> None:
    """A plan that moves to a coupled protocol's k node keeps the query's own lines: a
    review found "delta is ignored" dropped at local k = 127 with δ given (printed at
    k = 128 and before the node rule), so the δ was silently left out."""
    for k in (127, 128):
        made = plan(Query(Setting.from_key("local-private"), k, 0.074, 0.474, 1.997, 1e-6))
        assert made.protocol == "local-private+channels"
        assert made.warnings[0].startswith("delta is ignored: the local protocol is pure ε-DP")
        assert (
            sum("needs fewer users here than local, private coin" in w for w in made.warnings) == 1
        )
    assert made.tester_point is None or made.tester_point.k is None  # k = 128: its own node
