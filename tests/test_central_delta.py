"""A central query that gives δ: its curator may run a shuffle protocol itself, so the
central plan never needs more users than the shuffle plan of the same query
(``planner.plan.central_delta_plan``). Without δ the central plan is pure ε-DP, as ever.

The query of record is the one where a trust-order benchmark found central above the
shuffle model (2026-11-29): k = 2,255, α = 0.0104, ε = (9.8, 3.1), δ = 6.5·10⁻⁵, where the
pure ε-DP central plan needs 999,910 users in all and the shuffle plan 885,645.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from planner import Query, Setting
from planner.api import compare_document, plan_document
from planner.cli import main
from planner.plan import Coverage, plan
from planner.protocols import delta_runs, protocol_for
from planner.sweep import sweep

POINT = {"k": 2255, "alpha": 0.0104, "eps1": 9.8, "eps2": 3.1}
DELTA = 6.5e-5


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_only_the_central_model_may_spend_a_delta_it_does_not_need() -> None:
    assert [setting.key for setting in delta_runs(protocol_for("central").setting)] == [
        "shuffle-private",
        "shuffle-public",
    ]
    for key in ("local-private", "local-public", "shuffle-private", "central+channels"):
        assert delta_runs(protocol_for(key).setting) == ()
    kept = Query.build("central", "private", delta=1e-6, **POINT)
    assert kept.delta == 1e-6 and not kept.warnings
    dropped = Query.build("local", "private", delta=1e-6, **POINT)
    assert dropped.delta is None and dropped.warnings


def test_with_delta_the_central_plan_runs_the_shuffle_protocol_where_it_needs_fewer() -> None:
    pure = plan(Query.build("central", "private", **POINT))
    shuffle = plan(Query.build("shuffle", "private", delta=DELTA, **POINT))
    spent = plan(Query.build("central", "private", delta=DELTA, **POINT))
    assert pure.coverage is shuffle.coverage is spent.coverage is Coverage.CALIBRATED
    assert shuffle.total_users < pure.total_users  # the violation this fixes
    assert spent.total_users == shuffle.total_users
    assert spent.protocol == "shuffle-private"
    assert spent.query.setting.key == "central" and spent.query.delta == DELTA
    (line,) = [w for w in spent.warnings if w.startswith("the curator runs")]
    assert f"(ε, δ)-DP at δ = {DELTA:g}, not pure ε-DP" in line
    assert f"{pure.total_users - spent.total_users:,} fewer users" in line
    # each group's lower bound stays the central model's
    assert [g.lower_bound for g in spent.groups] == [g.lower_bound for g in pure.groups]
    # the tester built for it is the shuffle protocol's, at the query's δ
    assert spent.tester_query.setting.key == "shuffle-private"
    assert spent.tester_query.delta == DELTA


def test_where_pure_dp_needs_fewer_users_the_delta_is_not_spent() -> None:
    point = {"k": 1000, "alpha": 0.1, "eps1": 1.0, "eps2": 1.0}
    pure = plan(Query.build("central", "private", **point))
    spent = plan(Query.build("central", "private", delta=1e-6, **point))
    assert (spent.n_users_group1, spent.n_users_group2, spent.protocol) == (
        pure.n_users_group1,
        pure.n_users_group2,
        pure.protocol,
    )
    assert any(w.startswith("pure ε-DP: δ = 1e-06 is not spent") for w in spent.warnings)


def test_a_sweep_row_is_the_plan_of_its_query() -> None:
    """The sweep's central rows with δ (vectorised, per run) equal ``plan`` row by row."""
    eps2 = [3.1, 1.0, 9.8, 0.2]
    found = sweep(["central"], delta=DELTA, **{**POINT, "eps2": eps2}).columns
    for row, value in enumerate(eps2):
        made = plan(Query.build("central", "private", delta=DELTA, **{**POINT, "eps2": value}))
        assert found["protocol"][row] == made.protocol
        assert found["total_users"][row] == made.total_users
        assert found["lower_bound_group1"][row] == pytest.approx(made.groups[0].lower_bound)
        assert found["delta"][row] == DELTA
    assert "shuffle-private" in set(found["protocol"]) and "central" in set(found["protocol"])


def test_an_invalid_delta_is_refused_in_one_line_everywhere(capsys) -> None:
    flags = [f for name, value in POINT.items() for f in (f"--{name}", str(value))]
    code, _, err = _cli(["plan", "--model", "central", *flags, "--delta", "1"], capsys)
    assert code == 2 and "delta" in err and "[1e-12, 1)" in err and "Traceback" not in err
    rows = sweep(["central"], delta=[DELTA, 1.0], **POINT).columns
    assert rows["status"][0] == "ok" and rows["status"][1].startswith("error: invalid delta")
    assert math.isnan(rows["total_users"][1])


def test_exact_searches_the_protocol_a_central_query_that_gives_delta_runs() -> None:
    """``--exact`` on a central query that gives δ searches the protocol its plan runs: a
    shuffle protocol the curator runs itself, at the query's δ, or the pure ε-DP tester.
    It had been refused ("give no δ"), and with ``--protocol shuffle-private`` the advice
    led to a second refusal (a review)."""
    from planner.api import plan_answer

    query = {"model": "central", "k": 100, "alpha": 0.3, "eps1": 2, "eps2": 0.5, "delta": 1e-6}
    for protocol in (None, "shuffle-private"):
        answer = plan_answer(**query, protocol=protocol, exact=True, trials=100, seed=0)
        assert answer.exact is not None and answer.exact.plan is not None
        assert answer.exact.plan.protocol == answer.plan.protocol
        expected = 1e-6 if Setting.from_key(answer.plan.protocol).needs_delta else None
        assert answer.exact.query.delta == expected


def test_the_cli_http_page_and_allocation_give_the_api_s_numbers(capsys, tmp_path) -> None:
    from fastapi.testclient import TestClient

    from planner.service import create_app

    query = {**POINT, "delta": DELTA}
    document = plan_document(model="central", **query)
    assert document["protocol"] == "shuffle-private" and document["inputs"]["delta"] == DELTA
    flags = [f for name, value in query.items() for f in (f"--{name}", str(value))]
    code, out, err = _cli(["plan", "--model", "central", *flags, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out) == document
    # compare and the page give δ to the shuffle rows alone: their central plan is pure
    pure_document = plan_document(model="central", **POINT)
    compared = compare_document(**query)
    rows: dict[str, int] = {}  # each setting's plan (its own protocol alone may follow)
    for row in compared["plans"]:
        rows.setdefault(row["setting"], row["total_users"])
    assert rows["shuffle-private"] == document["total_users"]
    assert rows["central"] == pure_document["total_users"] > document["total_users"]
    app = create_app(tmp_path / "jobs.sqlite3", workers=1, run_jobs=False)
    with TestClient(app) as client:
        assert client.post("/v1/plan", json={"model": "central", **query}).json() == document
        page = client.get("/", params={**query, "setting": "central"})
        assert page.status_code == 200
        users = re.findall(r'data-field="users"[^>]*>([\d,]+)<', page.text)
        assert [int(value.replace(",", "")) for value in users] == [
            group["n_users"] for group in pure_document["groups"]
        ]
    # a cost allocation weighs both runs: never dearer than the pure plan's own allocation
    costed = plan_document(model="central", allocation="cost", cost1=1, cost2=3, **query)
    pure = plan_document(model="central", allocation="cost", cost1=1, cost2=3, **POINT)
    cost = costed["n_users_group1"] + 3 * costed["n_users_group2"]
    assert cost <= pure["n_users_group1"] + 3 * pure["n_users_group2"]


def test_validate_runs_the_shuffle_tester_a_central_plan_with_delta_ran() -> None:
    """At k = 16, α = 0.05, ε = (8, 3), δ = 10⁻³ the shuffle protocol needs fewer users
    than any pure ε-DP one (3,823 against 4,178); ``validate`` checks the plan with the
    tester that runs, sequentially at β = 1/3 (seeded)."""
    from planner.api import validate_document

    query = {"k": 16, "alpha": 0.05, "eps1": 8.0, "eps2": 3.0, "delta": 1e-3}
    made = plan(Query.build("central", "private", **query))
    assert made.protocol == "shuffle-private"
    report = validate_document(model="central", seed=3, path="fast", **query)
    assert report["protocol"] == "shuffle-private"
    assert report["verdict"] == "pass", report["families"]


# A hostile review's findings (2026-11-30) ----------------------------------------------


def test_an_allocated_plan_keeps_the_line_of_the_run_it_prints() -> None:
    """A cost or fixed-n2 allocation may pick the shuffle run where the default plan is
    pure: the printed plan still says it is (ε, δ)-DP."""
    asked = {"k": 16, "alpha": 0.02, "eps1": 4, "eps2": 2, "delta": 1e-3}
    document = plan_document(model="central", allocation="fixed-n2", n2=20000, **asked)
    assert document["protocol"] == "shuffle-private"
    assert any("(ε, δ)-DP at δ = 0.001" in line for line in document["warnings"])
    costed = plan_document(model="central", allocation="cost", cost1=5, cost2=1, **asked)
    lines = [line for line in costed["warnings"] if line.startswith(("the curator", "pure"))]
    assert len(lines) == 1
    assert ("(ε, δ)-DP" in lines[0]) == (costed["protocol"] == "shuffle-private")


def test_solve_weighs_the_shuffle_runs_and_says_so() -> None:
    """The sizes a fixed-n2 central plan given δ runs at ε2 = 2 (11,572 and 13,011, by the
    shuffle protocol) solve back to ε2 ≈ 2, as the shuffle model's own solve does, not to
    the pure central plan's larger ε2."""
    from planner.api import solve_document

    given = {"k": 16, "alpha": 0.02, "eps1": 4, "n1": 11572, "n2": 13011, "delta": 1e-3}
    central = solve_document(model="central", **given)
    shuffle = solve_document(model="shuffle", **given)
    pure = solve_document(model="central", **{**given, "delta": None})
    assert central["value"] == shuffle["value"]
    assert pure["value"] is None or pure["value"] > central["value"]  # pure: none fits
    assert central["plan"]["inputs"]["model"] == "central"
    assert any("(ε, δ)-DP" in line for line in central["plan"]["warnings"])


def test_the_line_names_the_delta_spent_and_paper_accounting_is_not_called_ignored() -> None:
    capped = plan(Query.build("central", "private", k=16, alpha=0.02, eps1=4, eps2=2, delta=0.5))
    assert capped.protocol == "shuffle-private"
    assert capped.tester_query.delta == 1e-3
    assert any("(ε, δ)-DP at δ = 0.001," in line for line in capped.warnings)
    paper = plan(
        Query.build(
            "central", "private", k=16, alpha=0.02, eps1=4, eps2=2, delta=1e-3, accounting="paper"
        )
    )
    assert not any("accounting paper is ignored" in line for line in paper.warnings)


def test_validate_says_which_privacy_the_plan_it_checks_gives() -> None:
    from planner.api import validate_document

    query = {"k": 16, "alpha": 0.05, "eps1": 8.0, "eps2": 3.0, "delta": 1e-3}
    report = validate_document(model="central", trials=50, seed=1, path="fast", **query)
    assert report["protocol"] == "shuffle-private"
    assert any("(ε, δ)-DP at δ = 0.001" in line for line in report["warnings"])
