"""The API layer: its documents are the CLI's --json documents, its errors one line."""

from __future__ import annotations

import json
import resource
from dataclasses import replace

import pytest

from planner import api
from planner.allocation import AllocationRule, allocate
from planner.cli import main
from planner.documents import plan_to_dict
from planner.formulas.settings import Coin, Model, Setting
from planner.inputs import InputError, Query
from planner.plan import Split, plan


def cli_json(args: list[str], capsys) -> dict:
    code = main(args)
    captured = capsys.readouterr()
    assert code in (0, 1, 3), captured.err  # 1: fail, 3: inconclusive (validate)
    return json.loads(captured.out)


QUERIES = [
    dict(model="shuffle", k=1000, alpha=0.1, eps1=1, eps2=0.25, delta=1e-6),
    dict(model="local", coin="public", k=4096, alpha=0.05, eps1=0.5, eps2=1, beta=0.1),
    dict(model="central", k=37, alpha=0.5, eps1=0.3, eps2=0.3),
    dict(model="shuffle", coin="public", k=300, alpha=0.3, eps1=1, eps2=0.5, delta=1e-9),
]


def _flags(query: dict) -> list[str]:
    flags = []
    for name, value in query.items():
        flags += [f"--{name}" if len(name) > 1 else f"-{name}", str(value)]
    return flags


def _library_query(query: dict) -> Query:
    """The same query built from typed values, not through the API's parsing."""
    setting = Setting(Model(query["model"]), Coin(query.get("coin", "private")))
    return Query(
        setting,
        k=int(query["k"]),
        alpha=float(query["alpha"]),
        eps1=float(query["eps1"]),
        eps2=float(query["eps2"]),
        delta=query.get("delta"),
        beta=float(query.get("beta", 1 / 3)),
    )


@pytest.mark.parametrize("query", QUERIES)
def test_plan_document_is_the_library_plan_and_the_cli_json(query, capsys) -> None:
    document = api.plan_document(**{name: str(value) for name, value in query.items()})
    assert document == cli_json(["plan", *_flags(query), "--json"], capsys)
    # the API adds one line to a plan below β = 1/3: what β = 1/3 needs, where fewer
    warnings = document["warnings"]
    priced = [line for line in warnings if line.startswith(api.BELOW_A_THIRD_LINE)]
    assert len(priced) == (float(query.get("beta", 1 / 3)) < 1 / 3)
    document["warnings"] = [line for line in warnings if line not in priced]
    assert document == plan_to_dict(plan(_library_query(query)))
    assert document["coverage"] == "calibrated"


def test_plan_document_with_an_allocation_is_the_librarys_allocation(capsys) -> None:
    query = dict(model="local", k=1000, alpha=0.1, eps1=1, eps2=0.25)
    document = api.plan_document(**query, allocation="cost", cost1="3")
    allocated = allocate(plan(_library_query(query)), AllocationRule.COST, cost1=3.0)
    assert document["allocation"]["n_users_group1"] == allocated.n_users_group1
    assert document["allocation"]["n_users_group2"] == allocated.n_users_group2
    args = ["plan", *_flags(query), "--allocation", "cost", "--cost1", "3", "--json"]
    assert document == cli_json(args, capsys)


def test_the_packages_plan_answers_as_planner_plan_outside_the_covered_region(capsys) -> None:
    """A fresh-user trial: ``from planner import plan`` returned an extrapolated 13 + 35 at
    central k = 2, which the CLI simulated (14 + 38) and the service refused, and 6.3e9 users
    for a local query the CLI refuses. (k = 8 here, at α = 0.02 and ε = (0.1, 0.05): on the
    8-bin domain only k-ary randomized response, which central may run, is covered, with
    about 10⁴ times the users; ``plan`` takes the 16-bin domain's covered central plan, and
    ``planner.plan`` simulates the 8-bin domain within its budget and keeps it where it
    needs fewer users.)"""
    import planner
    from planner.constants import default_constants
    from planner.coverage import NotCoveredError
    from planner.plan import plan_on_domain

    central = Query(Setting(Model.CENTRAL, Coin.PRIVATE), 8, 0.02, 0.1, 0.05)
    own = plan_on_domain(central, default_constants())
    assert own.protocol == "local-private+k-rr"  # the one covered plan on the 8-bin domain
    padded = plan(central)  # the 16-bin domain's plan answers it too, and is covered
    assert padded.coverage.value == "calibrated" and padded.tester_point.k == 16
    assert padded.protocol == "central" and 1000 * padded.total_users < own.total_users
    simulated = planner.plan(central)  # the 8-bin domain simulated: fewer users here
    assert simulated.total_users < padded.total_users
    shown = cli_json(
        [
            "plan",
            "--model",
            "central",
            "-k",
            "8",
            "--alpha",
            "0.02",
            "--eps1",
            "0.1",
            "--eps2",
            "0.05",
            "--json",
        ],
        capsys,
    )
    assert simulated.coverage.value == shown["coverage"] == "simulated"
    assert (simulated.n_users_group1, simulated.n_users_group2) == (
        shown["n_users_group1"],
        shown["n_users_group2"],
    )
    local = Query(Setting(Model.LOCAL, Coin.PRIVATE), 200_000, 0.2, 5.0, 0.5)
    with pytest.raises(NotCoveredError, match="k = 200,000 is outside the covered range"):
        planner.plan(local)
    assert (
        main(
            [
                "plan",
                "--model",
                "local",
                "-k",
                "200000",
                "--alpha",
                "0.2",
                "--eps1",
                "5",
                "--eps2",
                "0.5",
            ]
        )
        == 2
    )


def test_compare_is_every_covered_setting_cheapest_first(capsys) -> None:
    inputs = dict(k="500", alpha="0.2", eps1="1", eps2="0.1", delta="1e-7")
    document = api.compare_document(**inputs)
    totals = [item["total_users"] for item in document["plans"]]
    assert totals == sorted(totals)
    shown = {item["setting"] for item in document["plans"]}
    refused = {item["setting"] for item in document["not_covered"]}
    # every setting, and each local mechanism alone (``compare`` lists the local options);
    # a mixed pair's rows only where the query names one
    one_model = [key for key in api.PROTOCOL_KEYS if not Setting.from_key(key).is_mixed]
    assert sorted(shown | refused) == sorted(one_model)
    assert not shown & refused
    rows: dict[str, list[dict]] = {}
    for item in document["plans"]:
        rows.setdefault(item["setting"], []).append(item)
    for key, items in rows.items():
        query = _library_query(inputs | items[0]["inputs"])
        if "+" in key:  # the mechanism alone
            assert len(items) == 1 and items[0]["protocol"] == key
            query = replace(query, setting=Setting.from_key(key))
            assert items[0]["total_users"] == plan(query).total_users
            continue
        default = plan(query)
        # the setting's plan; where it runs another protocol, then its own protocol alone,
        # as ``planner plan --protocol KEY`` plans it (a user weighing users against
        # messages sees the Poisson shuffle protocol beside the multi-message one)
        assert items[0]["protocol"] == default.protocol
        assert items[0]["total_users"] == default.total_users
        if default.protocol == key:
            assert len(items) == 1
        else:
            assert len(items) == 2 and items[1]["protocol"] == key
            alone = api.plan_document(**items[1]["inputs"], protocol=key)
            assert items[1]["total_users"] == alone["total_users"] >= default.total_users
            assert items[1]["groups"] == alone["groups"]
    assert {"shuffle-private", "shuffle-public"} <= {
        key for key, items in rows.items() if len(items) == 2
    }
    for item in document["not_covered"]:
        assert "outside the covered range" in item["reason"]
    flags = ["-k", "500", "--alpha", "0.2", "--eps1", "1", "--eps2", "0.1", "--delta", "1e-7"]
    assert document == cli_json(["compare", *flags, "--json"], capsys)
    without_delta = api.compare_document(k=500, alpha=0.2, eps1=1, eps2=0.5)
    assert {item["setting"] for item in without_delta["plans"]} == {
        "local-private",
        "local-public",
        "central",
        "central+channels",
        "local-private+k-rr",
        "local-private+channels",
        "local-public+hashed",
    }


def test_solve_document_solves_the_left_out_parameter() -> None:
    """The smallest ε2 at which n2 = 400,000 users in group 2 leave group 1 at most
    10,000 (``--allocation fixed-n2``): its plan fits, and 0.1 % less ε2 needs more
    group-1 users. Far below the paper split's own answer, whose group 2 is a fixed
    multiple of group 1: the family subsamples group 2 from its 400,000 users."""
    from planner.allocation import AllocationRule, allocate

    asked = dict(model="central", k=1000, alpha=0.1, eps1=1)
    solved = api.solve_document(**asked, n1=10000, n2=400000)
    assert solved["unknown"] == "eps2" and solved["feasible"]
    assert (solved["plan"]["n_users_group1"], solved["plan"]["n_users_group2"]) <= (10000, 400000)

    def group1_needs(eps2: float) -> int | None:
        paper = plan(_library_query(asked | {"eps2": eps2}), split=Split.PAPER)
        return allocate(paper, AllocationRule.FIXED_N2, n2=400000).n_users_group1

    assert group1_needs(solved["value"]) <= 10000
    below = group1_needs(solved["value"] * 0.999)
    assert below is None or below > 10000
    paper_alone = plan(_library_query(asked | {"eps2": solved["value"]}), split=Split.PAPER)
    assert paper_alone.n_users_group2 > 400000
    with pytest.raises(InputError) as caught:
        api.solve_document(model="central", k=1000, alpha=0.1, eps1=1, eps2=0.5, n1=5, n2=5)
    assert caught.value.parameter == "unknown"


def test_sweep_document_and_csv_are_the_cli_outputs(capsys) -> None:
    flags = ["-s", "central", "-s", "local-private", "-k", "100,1000", "--alpha", "0.1"]
    flags += ["--eps1", "1", "--eps2", "0.05:1:4log"]
    expected = cli_json(["sweep", *flags, "--format", "json"], capsys)
    inputs = dict(
        settings=["central", "local-private"],
        k="100,1000",
        alpha="0.1",
        eps1="1",
        eps2="0.05:1:4log",
    )
    assert api.sweep_document(**inputs) == expected
    assert len(expected["rows"]) == 2 * 2 * 4
    main(["sweep", *flags, "--format", "csv"])
    assert api.sweep_csv(**inputs) == capsys.readouterr().out


@pytest.mark.parametrize(
    ("spec", "count"),
    [("1000", 1), ("1,2,3", 3), ("0.1:1:7", 7), ("0.1:1:20log", 20), (None, 1), ([1, 2], 2)],
)
def test_spec_count_counts_without_building(spec, count) -> None:
    from planner.sweep import parse_values

    assert api.spec_count("alpha", spec) == count
    if isinstance(spec, str):
        assert len(parse_values("alpha", spec)) == count


def test_a_huge_sweep_is_refused_before_any_value_is_built() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(InputError) as caught:
        api.sweep_result(k=1000, alpha=0.1, eps1=1, eps2="0.01:1:2000000000log", max_rows=10**4)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert caught.value.parameter == "rows"
    assert "at most 10,000 rows" in str(caught.value)
    assert after - before < 100_000  # KiB: no 16 GB array was made


def test_explain_document_names_every_term_of_the_registry() -> None:
    from planner.formulas.registry import BOUNDS

    document = api.explain_document("shuffle", "public")
    upper, lower = document["bounds"]
    assert document["setting"] == "shuffle-public"
    assert upper["key"] == "shuffle-public-compressed"  # the L-form the numbers use
    assert lower["key"] == "lower-shuffle"
    assert [term["label"] for term in upper["terms"]] == list(BOUNDS[upper["key"]].term_labels)
    assert all(term["latex"] and term["text"] for term in upper["terms"])
    with pytest.raises(InputError) as caught:
        api.explain_document("quantum")
    assert caught.value.parameter == "model"


@pytest.mark.parametrize(
    ("inputs", "parameter"),
    [
        (dict(model="local", k=2.5, alpha=0.1, eps1=1, eps2=0.1), "k"),
        (dict(model="local", k=10, alpha=0, eps1=1, eps2=0.1), "alpha"),
        (dict(model="shuffle", k=10, alpha=0.1, eps1=1, eps2=0.1), "delta"),
        (dict(model="local", k=10, alpha=0.1, eps1=1, eps2=0.1, allocation="x"), "allocation"),
        (dict(model="warp", k=10, alpha=0.1, eps1=1, eps2=0.1), "model"),
    ],
)
def test_bad_input_is_one_line_naming_the_parameter(inputs, parameter) -> None:
    with pytest.raises(InputError) as caught:
        api.plan_document(**inputs)
    assert caught.value.parameter == parameter
    assert "\n" not in str(caught.value) and f" {parameter}" in str(caught.value)


def test_validation_query_takes_the_allocated_sizes() -> None:
    _, n1, n2, split, *_ = api.validation_query(
        model="local", k=1000, alpha=0.1, eps1=2, eps2=0.5, allocation="cost"
    )
    document = api.plan_document(
        model="local", k=1000, alpha=0.1, eps1=2, eps2=0.5, allocation="cost"
    )
    # the tester the allocation was sized for: here the default's own (a channel per
    # group, cheaper than every member of the paper split's variance family)
    assert split.value == document["allocation"]["split"] == "fewest"
    assert document["protocol"] == "local-private+channels"
    assert (n1, n2) == (
        document["allocation"]["n_users_group1"],
        document["allocation"]["n_users_group2"],
    )
    assert (document["n_users_group1"], document["n_users_group2"]) == (n1, n2)  # as printed
    for rule in ("fewest", "paper"):
        printed = api.plan_document(
            model="local", k=1000, alpha=0.1, eps1=2, eps2=0.5, allocation=rule
        )
        target = api.validation_query(
            model="local", k=1000, alpha=0.1, eps1=2, eps2=0.5, allocation=rule
        )
        assert target.split.value == rule
        assert api.validation_sizes(target) == (
            printed["n_users_group1"],
            printed["n_users_group2"],
        )
    with pytest.raises(InputError) as caught:
        api.validation_query(model="local", k=1000, alpha=0.1, eps1=2, eps2=0.5, n1=5)
    assert caught.value.parameter == "n2"


def test_validate_document_is_the_cli_json_but_for_the_clock(capsys, tmp_path) -> None:
    flags = ["--model", "central", "-k", "64", "--alpha", "0.3", "--eps1", "1", "--eps2", "0.5"]
    flags += ["--trials", "60", "--seed", "7", "--family", "uniform", "--family", "paninski"]
    expected = cli_json(["validate", *flags, "--json"], capsys)
    seen: list[str] = []
    document = api.validate_document(
        model="central",
        k=64,
        alpha=0.3,
        eps1=1,
        eps2=0.5,
        trials=60,
        seed=7,
        families=["uniform", "paninski"],
        progress=seen.append,
    )
    for volatile in ("elapsed_seconds",):
        expected.pop(volatile), document.pop(volatile)
    assert document == expected
    assert len(seen) == 2


def test_version_document_names_the_packaged_constants() -> None:
    from planner.constants import default_constants

    document = api.version_document()
    assert document["constants_version"] == default_constants().version
    assert document["code_version"]


def test_outside_the_covered_region_a_plan_is_refused_with_the_cli_line(capsys) -> None:
    pytest.importorskip("planner.coverage")
    # k = 200,000: above every protocol's covered k (10⁵), the shuffle's and the local ones
    # a shuffle query may run
    flags = ["--model", "shuffle", "--coin", "public", "-k", "200000", "--alpha", "0.2"]
    flags += ["--eps1", "1", "--eps2", "0.005", "--delta", "1e-7", "--allocation", "paper"]
    assert main(["plan", *flags, "--simulation-budget", "0", "--json"]) == 2
    line = capsys.readouterr().err.strip().removeprefix("error: ")
    asked = dict(model="shuffle", coin="public", k=200_000, alpha=0.2, eps1=1, eps2=0.005)
    with pytest.raises(InputError) as caught:
        api.plan_document(**asked, delta=1e-7, allocation="paper", simulation_budget=0)
    assert str(caught.value) == line and caught.value.parameter == "k"
    # at k = 500 the paper's split at ε1 = 1 is outside the shuffle's covered ratio
    # ε2/ε1 ≥ 0.01; the default runs a covered plan (a lower tester point, or a local
    # protocol, which a shuffle query may run)
    document = api.plan_document(**(asked | {"k": 500}), delta=1e-7, simulation_budget=0)
    assert document["coverage"] == "calibrated"
    with pytest.raises(InputError) as caught:
        api.plan_document(model="local", k=100, alpha=0.1, eps1=1, eps2=1, simulation_budget=-1)
    assert caught.value.parameter == "simulation-budget"


def test_solve_weighs_every_split_fixed_n2_weighs_and_its_answer_validates(capsys) -> None:
    """Central, k = 1000, α = 0.1, ε1 = 1, 50,000 users in each group (a fresh-user
    review): solve kept the paper's split and answered ε2 = 0.128, while the default plan
    at ε2 = 0.01 needs 17,502 + 17,502 and passes. Weighing the fixed-n2 allocation, the
    answer is at most 0.01 (there the default's own sizes fit), its plan's sizes fit, and
    the command its line names, ``planner validate --allocation fixed-n2 --n2 50000`` at
    the solved ε2, checks those very sizes and passes (seeded)."""
    from planner.cli import main

    asked = dict(model="central", k=1000, alpha=0.1, eps1=1)
    assert plan(_library_query(asked | {"eps2": 0.01})).n_users_group1 <= 50000
    solved = api.solve_document(**asked, n1=50000, n2=50000)
    assert solved["feasible"] and solved["value"] <= 0.01
    sizes = solved["plan"]["n_users_group1"], solved["plan"]["n_users_group2"]
    assert sizes[0] <= 50000 and sizes[1] == 50000
    target = api.validation_query(**asked, eps2=solved["value"], allocation="fixed-n2", n2=sizes[1])
    assert (target.n1, target.n2) == sizes
    argv = ["validate", "--model", "central", "-k", "1000", "--alpha", "0.1", "--eps1", "1"]
    argv += ["--eps2", repr(solved["value"]), "--allocation", "fixed-n2", "--n2", str(sizes[1])]
    code = main([*argv, "--seed", "5", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["verdict"] == "pass"
    assert (report["n_users_group1"], report["n_users_group2"]) == sizes


@pytest.mark.parametrize(
    "asked",
    [
        # a review: the default's own sizes where the paper split is outside the covered
        # region (ε2 below the covered ratio) crashed solve (AssertionError, HTTP 500)
        dict(model="shuffle", coin="public", k=1000, alpha=0.2, eps1=2, delta=1e-6),
        dict(model="shuffle", k=1000, alpha=0.1, eps1=1, delta=1e-6),
    ],
)
def test_solve_answers_where_only_the_default_split_is_covered(asked: dict) -> None:
    """The default plan at ε2 = 0.01 and 0.005 is calibrated; just below, the paper
    split's is not (its tester's ratio is below the covered 0.01): given the default's own
    sizes, solve answers at most that ε2 with a calibrated plan that fits them."""
    eps2 = 0.01 if asked.get("coin") == "public" else 0.005
    default = plan(_library_query(asked | {"eps2": eps2}))
    assert default.coverage.value == "calibrated"
    # just below, the paper split's own point was outside the covered ratio (the search
    # steps there); since a shuffle query may run a local protocol, a covered point may
    # answer it too: solve must answer either way
    plan(_library_query(asked | {"eps2": eps2 * 0.99}), split=Split.PAPER)
    sizes = default.n_users_group1, default.n_users_group2
    solved = api.solve_document(**asked, n1=sizes[0], n2=sizes[1])
    assert solved["feasible"] and solved["value"] <= eps2
    assert solved["plan"]["coverage"] == "calibrated"
    assert solved["plan"]["n_users_group1"] <= sizes[0]
    assert solved["plan"]["n_users_group2"] <= sizes[1]


def test_central_at_the_largest_epsilon_plans_costs_and_solves() -> None:
    """ε = 20 is accepted; a grid corner at 20 × ratio 1 ÷ 1 was 20.000000000000004 and
    refused as an input (a review: `--allocation cost` and solve said "invalid eps1")."""
    asked = dict(model="central", k=1000, eps1=20)
    cost = api.plan_document(**asked, alpha=0.1, eps2=20, allocation="cost")
    assert (
        cost["allocation"]["n_users_group1"]
        == plan(_library_query(asked | {"alpha": 0.1, "eps2": 20})).n_users_group1
    )
    solved = api.solve_document(**asked, eps2=20, n1=5000, n2=5000)
    assert solved["feasible"] and 0 < solved["value"] < 0.1
    hopeless = api.solve_document(**asked, alpha=0.1, n1=100, n2=100)
    assert not hopeless["feasible"] and "ε2 = 20" in hopeless["reason"]


def test_a_solved_value_as_printed_reproduces_its_sizes(capsys) -> None:
    """The printed α or ε2 (6 significant digits) is the answer itself, rounded up where
    its plan still fits: validating the printed value gives the sizes printed (a review:
    ε2 = 0.00359568, rounded down, was refused by the validate the line named)."""
    asked = ["--model", "central", "-k", "1000", "--alpha", "0.1", "--eps1", "1"]
    code = main(["solve", *asked, "--n1", "50000", "--n2", "50000"])
    line = capsys.readouterr().out
    assert code == 0
    printed = line.split()[2]
    solved = api.solve_document(model="central", k=1000, alpha=0.1, eps1=1, n1=50000, n2=50000)
    assert float(printed) == solved["value"]
    target = api.validation_query(
        model="central",
        k=1000,
        alpha=0.1,
        eps1=1,
        eps2=printed,
        allocation="fixed-n2",
        n2=solved["plan"]["n_users_group2"],
    )
    assert (target.n1, target.n2) == (
        solved["plan"]["n_users_group1"],
        solved["plan"]["n_users_group2"],
    )
    assert f"run as n1 = {target.n1:,}, n2 = {target.n2:,}" in line


SCENARIOS = "docs/examples/scenarios.toml"


def test_batch_document_and_csv_are_the_cli_outputs(capsys) -> None:
    """``planner batch``'s rows come through the API as its other commands' documents do."""
    assert api.batch_document(SCENARIOS) == cli_json(["batch", SCENARIOS, "--json"], capsys)
    assert main(["batch", SCENARIOS, "--format", "csv"]) == 0
    assert api.batch_csv(SCENARIOS) == capsys.readouterr().out


def test_a_validated_batch_is_the_cli_json_but_for_the_clock(capsys, tmp_path) -> None:
    scenarios = tmp_path / "two.toml"
    scenarios.write_text(
        '[[scenario]]\nmodel = "central"\nk = 64\nalpha = 0.5\neps1 = 1.0\neps2 = 0.5\n'
        '[[scenario]]\nmodel = "local"\nk = 64\nalpha = 0.9\neps1 = 0.5\neps2 = 1\n',
        "utf-8",
    )
    options = ["--validate", "--trials", "200", "--seed", "5", "--workers", "1"]
    by_cli = cli_json(["batch", str(scenarios), *options, "--json"], capsys)
    document = api.batch_document(scenarios, validate=True, trials="200", seed="5", workers="1")
    assert document == by_cli


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"validate": True, "trials": "0"}, "trials"),
        ({"validate": True, "seed": "-1"}, "seed"),
        ({"validate": True, "workers": "0"}, "workers"),
    ],
)
def test_batch_request_refuses_bad_options_as_the_cli(options, parameter, capsys) -> None:
    with pytest.raises(InputError) as refused:
        api.batch_request(SCENARIOS, **options)
    assert refused.value.parameter == parameter
    flags = [
        f"--{name}" if value is True else f"--{name}={value}" for name, value in options.items()
    ]
    assert main(["batch", SCENARIOS, *flags]) == 2
    assert capsys.readouterr().err.strip() == f"error: {refused.value}"


def test_calibrate_document_is_the_file_planner_calibrate_writes(tmp_path, capsys) -> None:
    """A quick grid run through the API: the CLI's constants file, its lines printed."""
    command = ["calibrate", "--quick", "--setting", "central", "--trials", "20", "--seed", "4"]
    output = tmp_path / "constants.json"
    assert main([*command, "--workers", "1", "-o", str(output)]) == 0
    printed = capsys.readouterr().out.splitlines()
    request = api.calibration_request(["central"], quick=True, trials="20", seed="4", workers="1")
    assert request.total == 2
    answer = api.calibration_answer(request)
    assert answer.document == json.loads(output.read_text("utf-8"))
    assert printed == [*answer.lines, f"wrote {output}"]


def test_a_direct_write_step_rebuilds_the_shipped_entry_from_its_recorded_run() -> None:
    """The direct stages' documents from the shipped raw factors (their recorded run stands
    in for a new one): each stage's entry comes back as shipped, with one printed line per
    k row (``planner calibrate`` writes and prints exactly these)."""
    from planner.calibration.direct import BELOW_ALPHA_MIN_AXES, DIRECT_AXES, _recorded_run
    from planner.constants import default_constants

    for setting, entry_name, options in [
        ("shuffle-private", "direct", {}),
        ("shuffle-private", "direct_by_node", {"below_alpha_min": True}),
        ("local-private", "direct_large_eps", {"large_eps": True}),
    ]:
        shipped = default_constants().for_setting(setting).extra[entry_name]
        rows, run = _recorded_run(setting, shipped)
        request = api.calibration_request(
            [setting], direct=True, trials=str(run["trials"]), seed=str(run["seed"]), **options
        )
        assert request.axes == (
            BELOW_ALPHA_MIN_AXES if "below_alpha_min" in options else DIRECT_AXES
        )
        answer = api.calibration_document(request, rows)
        written = answer.document["settings"][setting][entry_name]
        assert written["factor"] == shipped["factor"]
        assert answer.lines and all(line.startswith(f"{setting}, ") for line in answer.lines)
        rows_of_k = len(shipped["k"])
        if entry_name == "direct_by_node":
            rows_of_k *= len(shipped["alpha"]) * len(shipped["eps_strong"])
        assert len(answer.lines) == rows_of_k


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"setting": ["nowhere"]}, "setting"),
        ({"below_alpha_min": True}, "below-alpha-min"),
        ({"direct": True, "small_eps": True, "large_eps": True}, "small-eps"),
        ({"direct": True, "quick": True, "large_alpha": True}, "quick"),
        ({"direct": True, "large_eps": True, "setting": ["central"]}, "setting"),
        ({"trials": "5"}, "trials"),
        ({"seed": "x"}, "seed"),
        ({"workers": "0"}, "workers"),
    ],
)
def test_calibration_request_refuses_bad_options_as_the_cli(
    options, parameter, tmp_path, capsys
) -> None:
    with pytest.raises(InputError) as refused:
        api.calibration_request(**options)
    assert refused.value.parameter == parameter
    flags: list[str] = []
    for name, value in options.items():
        if value is True:
            flags.append("--" + name.replace("_", "-"))
        elif isinstance(value, list):
            flags += [f"--{name}", *value]
        else:
            flags.append(f"--{name}={value}")
    assert main(["calibrate", *flags, "-o", str(tmp_path / "c.json")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {refused.value}"
