"""Power (the smallest error bound β given n1, n2) and ``--power`` for ``--beta``: the
CLI, the API, the HTTP route and the solve's infeasible message."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient

from planner import api
from planner.cli import main
from planner.inputs import DEFAULT_BETA, InputError, Query
from planner.power import power_curve
from planner.service import create_app
from planner.solve import BETA_TOP, Unknown, fitting_plan, solve

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CENTRAL = {"model": "central", "k": 200, "alpha": 0.1, "eps1": 0.5, "eps2": 0.1}
LOCAL = {"model": "local", "k": 1000, "alpha": 0.1, "eps1": 1.0, "eps2": 0.25}


def flags(query: dict) -> list[str]:
    out: list[str] = []
    for name, value in query.items():
        out += [f"--{name}" if len(name) > 1 else f"-{name}", str(value)]
    return out


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = create_app(tmp_path_factory.mktemp("power") / "jobs.sqlite3", run_jobs=False)
    with TestClient(app) as test_client:
        yield test_client


def query_of(fields: dict) -> Query:
    return Query.build(
        fields["model"], "private", fields["k"], fields["alpha"], fields["eps1"], fields["eps2"]
    )


@pytest.mark.parametrize(("fields", "n1", "n2"), [(CENTRAL, 5000, 5000), (LOCAL, 10**8, 3 * 10**8)])
def test_the_solved_beta_is_the_edge_of_the_plans_that_fit(fields, n1, n2) -> None:
    query = query_of(fields)
    solved = solve(query, Unknown.BETA, n1=n1, n2=n2)
    assert solved.feasible and solved.plan is not None
    beta = float(solved.value)
    assert 0 < beta < 1 / 3
    # a plan at the solved β fits n1, n2; one at a slightly smaller β does not
    assert fitting_plan(replace(query, beta=beta), n1, n2) is not None
    assert solved.plan.n_users_group1 <= n1 and solved.plan.n_users_group2 <= n2
    assert fitting_plan(replace(query, beta=beta * (1 - 1e-4)), n1, n2) is None


def test_more_users_never_need_a_larger_beta() -> None:
    """The monotonicity the bisection relies on: a plan fitting at β fits at every larger
    β, and with more users in either group."""
    query = query_of(CENTRAL)
    betas = [0.01, 0.05, 0.1, 0.2, 0.3, 1 / 3, 0.4, 0.49]
    for n1, n2 in ((3064, 3064), (5000, 5000), (4000, 9000), (20000, 20000)):
        fits = [fitting_plan(replace(query, beta=b), n1, n2) is not None for b in betas]
        assert fits == sorted(fits), (n1, n2, fits)  # false, then true
    previous = BETA_TOP
    for total in (6200, 8000, 12000, 30000, 100000):
        solved = solve(query, Unknown.BETA, n1=total // 2, n2=total - total // 2)
        assert solved.value is not None and solved.value <= previous
        previous = solved.value


def test_power_increases_with_users_along_the_curve() -> None:
    query = query_of(CENTRAL)
    points = power_curve(query, [2000, 3000, 6200, 7000, 8000, 12000, 24000, 48000, 96000])
    assert points[0].beta is None  # fewer users than the β = 1/3 plan: no power backed
    backed = [point.power for point in points if point.beta is not None]
    assert len(backed) >= 6 and backed == sorted(backed)  # never falls
    assert backed[0] >= 2 / 3 and backed[-1] < 1
    for point in points:  # the plan's own proportion (central: equal groups)
        assert point.n1 + point.n2 == point.total and abs(point.n1 - point.n2) <= 1


def test_power_document_reports_beta_power_and_the_plan() -> None:
    document = api.power_document(**CENTRAL, n1=5000, n2=5000)
    assert document["schema"] == "planner.power/1"
    assert document["feasible"] and document["shortfall"] is None
    assert document["power"] == pytest.approx(1 - document["beta"])
    plan = document["plan"]
    assert plan["inputs"]["beta"] == document["beta"]
    assert plan["n_users_group1"] <= 5000 and plan["n_users_group2"] <= 5000
    assert "beta" not in document["inputs"] and document["inputs"]["n1"] == 5000


def test_too_few_users_name_the_binding_group(capsys) -> None:
    document = api.power_document(**CENTRAL, n1=10**30, n2=5)
    assert not document["feasible"] and document["beta"] is None
    short = document["shortfall"]
    assert short["group"] == "group 2" and short["given"] == 5
    assert short["short"] == short["needed"] - 5 > 0
    code, out, _ = run(["power", *flags(CENTRAL), "--n1", "1e30", "--n2", "5"], capsys)
    assert code == 1 and len(out.strip().splitlines()) == 1
    assert f"group 2 needs at least {short['needed']:,} users" in out
    assert f"({short['short']:,} short)" in out


def test_solve_infeasible_names_the_group_and_its_shortfall(capsys) -> None:
    base = ["solve", "--model", "central", "-k", "200", "--alpha", "0.1", "--eps1", "0.5"]
    lines = []
    for n1, n2 in (("1e30", "5"), ("100", "100"), ("100", "100000")):
        code, out, _ = run([*base, "--n1", n1, "--n2", n2], capsys)
        assert code == 1 and out.startswith("infeasible: group ")
        lines.append(out)
    assert len(set(lines)) == 3  # no longer the same line for different asks
    assert "given 5 (" in lines[0] and "even at ε2 = 20" in lines[0]
    assert lines[2].startswith("infeasible: group 1 needs at least")


def test_power_json_is_the_http_document(client, capsys) -> None:
    code, out, _ = run(["power", *flags(CENTRAL), "--n1", "5000", "--n2", "5000", "--json"], capsys)
    assert code == 0
    expected = json.loads(out)
    posted = client.post("/v1/power", json={**CENTRAL, "n1": 5000, "n2": 5000})
    assert posted.status_code == 200 and posted.json() == expected
    got = client.get("/v1/power", params={**CENTRAL, "n1": 5000, "n2": 5000})
    assert got.status_code == 200 and got.json() == expected


def test_power_table_and_simulation(capsys) -> None:
    code, out, _ = run(["power", *flags(CENTRAL), "--n1", "5000", "--n2", "5000"], capsys)
    assert code == 0 and out.startswith("power = 0.8")
    assert "not a significance level" in out and "--allocation fixed-n2 --n2 5000" in out
    args = ["power", *flags(CENTRAL), "--n1", "5000", "--n2", "5000", "--simulate"]
    code, out, _ = run([*args, "--trials", "200", "--seed", "1", "--json"], capsys)
    document = json.loads(out)
    simulation = document["simulation"]
    assert code == {"pass": 0, "fail": 1, "inconclusive": 3}[simulation["verdict"]]
    report = simulation["report"]
    assert report["target_error"] == document["beta"] and report["seed"] == 1
    assert report["n_users_group2"] == document["plan"]["n_users_group2"]


@pytest.mark.parametrize(
    ("args", "parameter"),
    [
        (["--n1", "5000"], "n2"),  # missing
        (["--n1", "0", "--n2", "5"], "n1"),
        (["--n1", "2.5", "--n2", "5"], "n1"),
        (["--n1", "5", "--n2", "nan"], "n2"),
        (["--n1", "5", "--n2", "5", "--seed", "1"], "seed"),  # without --simulate
        (["--n1", "5000", "--n2", "5000", "--simulate", "--trials", "0"], "trials"),
        (["--n1", "5000", "--n2", "5000", "--beta", "0.1"], "beta"),  # no such option
    ],
)
def test_bad_power_inputs_are_one_line(capsys, args, parameter) -> None:
    code, out, err = run(["power", *flags(CENTRAL), *args], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and parameter in err and "Traceback" not in err


@pytest.mark.parametrize(
    "body",
    [
        {**CENTRAL, "n1": 0, "n2": 5},
        {**CENTRAL, "n1": 5},
        {**CENTRAL, "n1": 5, "n2": 5, "beta": 0.1},
        {**CENTRAL, "alpha": 2, "n1": 5, "n2": 5},
    ],
)
def test_bad_power_requests_are_422(client, body) -> None:
    response = client.post("/v1/power", json=body)
    assert response.status_code == 422
    assert set(response.json()) <= {"error", "parameter"}
    assert "\n" not in response.json()["error"]


@pytest.mark.parametrize("command", ["plan", "compare", "solve", "validate"])
def test_power_stands_for_beta_and_not_beside_it(capsys, command) -> None:
    base = {
        "plan": ["plan", *flags(CENTRAL)],
        "compare": ["compare", "-k", "200", "--alpha", "0.1", "--eps1", "0.5", "--eps2", "0.1"],
        "solve": ["solve", *flags({**CENTRAL, "n1": 5000}), "--n2", "5000"],
        "validate": ["validate", *flags(CENTRAL), "--trials", "50"],
    }[command]
    if command == "solve":
        base = ["solve", *flags({k: v for k, v in CENTRAL.items() if k != "eps2"})]
        base += ["--n1", "5000", "--n2", "5000"]
    code, out, err = run([*base, "--power", "0.8", "--beta", "0.1"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "power" in err and "beta" in err
    for bad in ("0.5", "1", "1.2", "x"):
        code, _, err = run([*base, "--power", bad], capsys)
        assert code == 2 and "invalid power" in err and "(0.5, 1)" in err
    if command in ("plan", "compare", "solve"):
        code, out, _ = run([*base, "--power", "0.8", "--json"], capsys)
        by_power = json.loads(out)
        code, out, _ = run([*base, "--beta", str(1 - 0.8), "--json"], capsys)
        assert by_power == json.loads(out)


def test_power_field_over_http(client) -> None:
    by_power = client.post("/v1/plan", json={**CENTRAL, "power": 0.8})
    by_beta = client.post("/v1/plan", json={**CENTRAL, "beta": 1 - 0.8})
    assert by_power.status_code == 200 and by_power.json() == by_beta.json()
    both = client.post("/v1/plan", json={**CENTRAL, "power": 0.8, "beta": 0.2})
    assert both.status_code == 422 and both.json()["parameter"] == "power"
    assert "beta" in both.json()["error"]
    bad = client.post("/v1/solve", json={**CENTRAL, "n1": 5000, "power": 0.3})
    assert bad.status_code == 422 and bad.json()["parameter"] == "power"
    fields = {k: v for k, v in CENTRAL.items() if k != "model"}
    sweep = client.post("/v1/sweep", json={**fields, "settings": ["central"], "power": "0.7,0.9"})
    assert sweep.status_code == 200
    assert [row["beta"] for row in sweep.json()["rows"]] == pytest.approx([0.3, 0.1])


def test_power_spec_in_sweep(capsys) -> None:
    base = ["sweep", "-s", "central", "-k", "200", "--alpha", "0.1", "--eps1", "0.5"]
    code, out, _ = run([*base, "--eps2", "0.1", "--power", "0.7:0.9:3", "--json"], capsys)
    assert code == 0
    assert [row["beta"] for row in json.loads(out)["rows"]] == pytest.approx([0.3, 0.2, 0.1])
    code, _, err = run([*base, "--eps2", "0.1", "--power", "0.7", "--beta", "0.1"], capsys)
    assert code == 2 and "power" in err and "beta" in err


def test_power_api_refuses_beta_beside_it() -> None:
    with pytest.raises(InputError, match="power"):
        api.plan_document(**CENTRAL, beta=0.1, power=0.8)
    assert api.plan_document(**CENTRAL, power=2 / 3)["inputs"]["beta"] == pytest.approx(
        DEFAULT_BETA
    )


def test_the_plan_table_has_a_total_row_and_no_gap_row(capsys) -> None:
    code, out, _ = run(["plan", *flags(CENTRAL), "--json"], capsys)
    document = json.loads(out)
    code, out, _ = run(["plan", *flags(CENTRAL)], capsys)
    assert code == 0
    (row,) = [line for line in out.splitlines() if "total n1 + n2" in line]
    baseline = document["baseline"]["total_users"]
    assert f"{document['total_users']:,}" in row and f"baseline {baseline:,}" in row
    assert "gap" not in out  # the JSON keeps optimality_gap, a ratio of expressions
    assert all("optimality_gap" in group for group in document["groups"])


def test_plot_power_draws_the_curve(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "power.png"
    args = ["plot", "--power", "-s", "central", "-k", "200", "--alpha", "0.1", "--eps1", "0.5"]
    code, out, err = run(
        [*args, "--eps2", "0.1", "--users", "2000,6200,12000", "-o", str(target)], capsys
    )
    assert code == 0, err
    assert target.stat().st_size > 1000 and "3 points, 2 with a plan" in out
    for extra, parameter in (
        (["--eps2", "0.1,0.2"], "eps2"),  # the x axis is users: one value each
        (["--eps2", "0.1", "--beta", "0.1"], "beta"),
        (["--eps2", "0.1", "--users", "1:2:0"], "users"),
        (["--eps2", "0.1", "--users", "1e30"], "users"),
    ):
        code, _, err = run([*args, *extra, "-o", str(target)], capsys)
        assert code == 2 and parameter in err and len(err.strip().splitlines()) == 1
    code, _, err = run(
        [*args[:1], *args[2:], "--eps2", "0.1", "--users", "5", "-o", str(target)], capsys
    )
    assert code == 2 and "users" in err  # --users without --power
