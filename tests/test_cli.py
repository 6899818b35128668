"""The command line: real output, bad input as one line with exit code 2."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest

from planner.cli import main

PLAN = [
    "plan",
    "--model",
    "shuffle",
    "-k",
    "1000",
    "--alpha",
    "0.1",
    "--eps1",
    "1",
    "--eps2",
    "0.25",
    "--delta",
    "1e-6",
]


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_plan_json_echoes_every_input_and_has_the_documented_fields(capsys) -> None:
    code, out, _ = run([*PLAN, "--json"], capsys)
    assert code == 0
    document = json.loads(out)
    assert document["schema"] == "planner.plan/1"
    assert document["inputs"] == {
        "model": "shuffle",
        "coin": "private",
        "k": 1000,
        "alpha": 0.1,
        "eps1": 1.0,
        "eps2": 0.25,
        "delta": 1e-6,
        "beta": pytest.approx(1 / 3),
        "accounting": "exact",
    }
    for field in (
        "protocol",
        "n_users_group1",
        "n_users_group2",
        "total_users",
        "groups",
        "bound",
        "constant",
        "repetition",
        "compression",
        "alternative_accounting",
        "baseline",
        "warnings",
    ):
        assert field in document
    # the multi-message protocol needs fewer users here than the paper's (theo:sdp_ns):
    # its estimate is a curator's noisy histogram at 0.8·ε
    assert document["protocol"] == "shuffle-private+messages"
    assert document["bound"]["reference"] == "a noisy histogram per group (docs/method.md)"
    assert document["constant"]["source"] in ("order", "proof", "calibrated")
    group1, group2 = document["groups"]
    assert group1["n_users"] == document["n_users_group1"]
    assert group2["messages_per_user"] > 1


def test_plan_table_names_the_theorem_and_the_constant_source(capsys) -> None:
    code, out, _ = run(PLAN, capsys)
    assert code == 0
    # the multi-message protocol runs here: its bound's source, then the messages it sends
    assert "theorem: a noisy histogram per group" in out and "constant:" in out
    assert "users needed" in out and "messages per user" in out


def test_compare_lists_all_five_settings_cheapest_first(capsys) -> None:
    code, out, _ = run(
        [
            "compare",
            "-k",
            "500",
            "--alpha",
            "0.2",
            "--eps1",
            "1",
            "--eps2",
            "0.5",
            "--delta",
            "1e-6",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    plans = json.loads(out)["plans"]
    settings = ["local-private", "local-public", "shuffle-private", "shuffle-public", "central"]
    mechanisms = [
        "shuffle-private+messages",
        "shuffle-public+messages",
        "central+channels",
        "local-private+k-rr",
        "local-private+channels",
        "local-public+hashed",
    ]
    # each setting's plan, each mechanism alone, and each setting's own protocol alone where
    # its plan runs another (here the three whose plan runs a mechanism)
    rows = sorted((p["setting"], p["protocol"]) for p in plans)
    runs_other = {"local-private", "shuffle-private", "shuffle-public"}
    expected = [(key, key) for key in [*settings, *mechanisms]]
    expected += [
        (key, f"{key}+channels" if key == "local-private" else f"{key}+messages")
        for key in runs_other
    ]
    assert rows == sorted(expected)
    totals = [p["total_users"] for p in plans]
    assert totals == sorted(totals)


def test_explain_prints_the_formula_and_latex(capsys) -> None:
    code, out, _ = run(["explain", "--model", "local", "--latex"], capsys)
    assert code == 0
    assert "theo:ldp_ns" in out and "\\frac{k^{\\frac{3}{2}}}" in out


def test_solve_for_eps2_and_infeasible(capsys) -> None:
    code, out, _ = run(
        [
            "solve",
            "--model",
            "central",
            "-k",
            "1000",
            "--alpha",
            "0.1",
            "--eps1",
            "1",
            "--n1",
            "10000",
            "--n2",
            "400000",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    solution = json.loads(out)
    assert solution["unknown"] == "eps2" and solution["feasible"]
    assert 0 < solution["value"] < 1
    code, out, _ = run(
        [
            "solve",
            "--model",
            "local",
            "-k",
            "1000",
            "--eps1",
            "1",
            "--eps2",
            "0.5",
            "--n1",
            "100",
            "--n2",
            "100",
        ],
        capsys,
    )
    assert code == 1 and out.startswith("infeasible:")


BAD = [
    (["-k", "1"], "k"),
    (["-k", "2.5"], "k"),
    (["-k", "abc"], "k"),
    (["--alpha", "0"], "alpha"),
    (["--alpha", "1.5"], "alpha"),
    (["--alpha", "nan"], "alpha"),
    (["--eps1", "0"], "eps1"),
    (["--eps1", "-1"], "eps1"),
    (["--eps2", "inf"], "eps2"),
    (["--delta", "1"], "delta"),
    (["--delta", "0"], "delta"),
    (["--beta", "0.5"], "beta"),
    (["--beta", "0"], "beta"),
    (["--model", "quantum"], "model"),
    (["--coin", "gold"], "coin"),
    (["--accounting", "guess"], "accounting"),
]


@pytest.mark.parametrize(("override", "parameter"), BAD)
def test_bad_input_is_one_line_naming_the_parameter(override, parameter, capsys) -> None:
    args = list(PLAN)
    option = override[0]
    index = args.index(option) if option in args else None
    if index is None:
        args += override
    else:
        args[index + 1] = override[1]
    code, out, err = run(args, capsys)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: invalid {parameter} = ")
    assert "must be" in lines[0]


def test_missing_delta_for_shuffle(capsys) -> None:
    args = PLAN[:-2]
    code, _, err = run(args, capsys)
    assert code == 2 and "delta" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [["plan", "--bogus"], ["plan", "--model", "local"], ["nonsense"]])
def test_usage_errors_are_one_line_without_traceback(args) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "planner", *args], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_plan_starts_without_the_heavy_modules() -> None:
    """``planner plan``'s cold start (docs/architecture.md, Speed): no pydantic (typer's
    option coercion, skipped for text options), sympy, scipy or matplotlib on its path;
    its printed table and its refusals are those of typer's own coercion."""
    script = (
        "import sys\n"
        "from planner.cli import main\n"
        f"code = main({PLAN!r})\n"
        "heavy = {'pydantic', 'sympy', 'scipy', 'matplotlib', 'fastapi'}\n"
        "print(code, sorted(heavy & {name.split('.')[0] for name in sys.modules}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines()[-1] == "0 []"
    assert "users needed" in result.stdout


@pytest.mark.parametrize(("other_thread", "frozen"), [(False, True), (True, False)])
def test_exit_freezes_the_heap_only_when_no_other_thread_is_left(
    other_thread: bool, frozen: bool
) -> None:
    """The CLI's exit skips the interpreter's last garbage collections (``gc.freeze``):
    a fifth of ``planner plan``'s wall time. Not with a thread still running (a server,
    a cluster, a pool), whose objects may need their finalisers; exit handlers run."""
    script = (
        "import atexit, gc, threading, time\n"
        "from planner.cli import exit_with\n"
        f"if {other_thread}:\n"
        "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
        "exit_with(3)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 3
    assert result.stdout.strip() == f"frozen {frozen}"


def test_constants_sources_are_selectable_and_ordered(capsys) -> None:
    base = [
        "plan",
        "--model",
        "local",
        "-k",
        "1000",
        "--alpha",
        "0.1",
        "--eps1",
        "1",
        "--eps2",
        "0.5",
        "--json",
    ]
    sizes = {}
    for source in ("calibrated", "proof", "order"):
        code, out, _ = run([*base, "--constants", source], capsys)
        assert code == 0
        document = json.loads(out)
        assert document["constant"]["source"] == source
        sizes[source] = document["n_users_group1"]
    # the proof's constants are valid but huge; C = 1 is below what a tester needs
    assert sizes["proof"] > 100 * sizes["calibrated"] > 100 * sizes["order"]


def test_proof_constants_outside_the_local_private_coin_say_they_are_order(capsys) -> None:
    """The paper proves constants for the local private-coin tester only: asked for them
    in another setting, the plan is C = 1 and its warning says why."""
    query = ["-k", "1000", "--alpha", "0.1", "--eps1", "1", "--eps2", "0.25", "--json"]
    for model in (["shuffle", "--delta", "1e-6"], ["central"]):
        code, out, _ = run(["plan", "--model", *model, *query, "--constants", "proof"], capsys)
        assert code == 0
        document = json.loads(out)
        assert document["constant"]["source"] == "order"
        assert any("local private-coin tester only" in w for w in document["warnings"])
    code, out, _ = run(["plan", "--model", "central", *query, "--constants", "order"], capsys)
    assert not any("private-coin tester only" in w for w in json.loads(out)["warnings"])


def test_compare_and_solve_say_where_a_plan_runs_its_tester_below_the_query(capsys) -> None:
    """ε1 = 3 is above 1: the central plan runs group 1 lower (``tester_point``): the
    default on the ladder, the paper's split at ε = 1. The compare table's caption (the
    default) and the solve line (the paper's split) say so, with plan's JSON's points."""
    query = ["-k", "256", "--alpha", "0.15", "--eps1", "3", "--eps2", "0.01"]

    def words(point: dict) -> str:  # only what lies below the query (here ε1)
        assert point["eps2"] == 0.01 and point["alpha"] == 0.15
        return f"the tester runs at ε1 = {point['eps1']:.4g} (below the query"

    code, out, _ = run(["plan", "--model", "central", *query, "--json"], capsys)
    fewest = json.loads(out)["tester_point"]
    assert code == 0 and fewest["eps1"] < 1.0 and fewest["eps2"] == 0.01
    code, out, _ = run(["compare", *query, "--delta", "1e-6"], capsys)
    assert code == 0 and f"central: {words(fewest)}" in " ".join(out.split())
    code, out, _ = run(
        ["plan", "--model", "central", *query, "--allocation", "paper", "--json"], capsys
    )
    paper = json.loads(out)
    assert code == 0 and paper["tester_point"] == {
        "eps1": 1.0,
        "eps2": 0.01,
        "alpha": 0.15,
        "k": 256,
        "delta": None,
    }
    n1, n2 = paper["groups"]
    code, out, _ = run(
        [
            "solve",
            "--model",
            "central",
            *query[:-2],
            "--n1",
            str(n1["n_users"]),
            "--n2",
            str(n2["n_users"]),
        ],
        capsys,
    )
    assert code == 0 and words(paper["tester_point"]) in " ".join(out.split())


def test_validate_with_sizes_given_names_the_protocol_and_point_the_plan_runs(capsys) -> None:
    """Sizes given with --n1/--n2 are run by the plan's own tester: for this shuffle
    public-coin query (β = 0.01, α just above 0.5) the plan runs the private-coin protocol
    at α = 0.5; the JSON's protocol says so (it named the asked setting before), and the
    header too."""
    query = ["--model", "shuffle", "--coin", "public", "-k", "26", "--alpha", "0.5168"]
    query += ["--eps1", "0.031", "--eps2", "0.0145", "--delta", "1e-6", "--beta", "0.01"]
    code, out, _ = run(["plan", *query, "--json"], capsys)
    planned = json.loads(out)
    assert code == 0 and planned["protocol"] == "shuffle-private"
    assert planned["tester_point"]["alpha"] == 0.5
    sizes = ["--n1", str(planned["n_users_group1"]), "--n2", str(planned["n_users_group2"])]
    code, out, _ = run(["validate", *query, *sizes, "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["sizes_from"] == "explicit"
    assert report["protocol"] == "shuffle-private"
    code, out, _ = run(["validate", *query, *sizes], capsys)
    header = " ".join(out.split())
    assert "validate shuffle-public (runs shuffle-private):" in header
    point = planned["tester_point"]
    assert (
        f"the plan's tester runs at ε1 = {point['eps1']:g}, ε2 = {point['eps2']:g}, α = 0.5"
        in header
    )


@pytest.mark.parametrize(
    ("parameter", "spec"),
    [
        ("alpha", "0.05:0.5:10log"),  # under a decade: matplotlib labelled 3×10⁻², 4×10⁻²…
        ("alpha", "0.01:0.9:20log"),
        ("alpha", "0.2:0.9:10log"),
        ("k", "16:100000:30log"),
        ("eps2", "0.0001:20:30log"),
        ("eps2", "0.05:1:20log"),
    ],
)
def test_plot_tick_labels_on_a_log_axis_do_not_overlap(parameter: str, spec: str) -> None:
    """``planner plot``'s x tick labels on a log axis: rendered, no two labels' boxes meet
    (the minor ticks of a short log α axis had overlapping labels)."""
    pytest.importorskip("matplotlib")
    from planner import api
    from planner.plot import plot_sweep

    inputs = {"k": "1000", "alpha": "0.1", "eps1": 1.0, "eps2": 0.25, parameter: spec}
    figure = plot_sweep(api.sweep_result(settings=["central"], delta=None, **inputs), "t")
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    for axis in figure.axes:
        low, high = axis.get_xlim()
        labels = [
            label
            for label in axis.get_xticklabels(which="both")
            if label.get_visible() and label.get_text() and low <= label.get_position()[0] <= high
        ]
        assert len(labels) >= 2, [label.get_text() for label in labels]
        boxes = sorted((label.get_window_extent(renderer) for label in labels), key=lambda b: b.x0)
        for left, right in itertools.pairwise(boxes):
            assert left.x1 <= right.x0, (parameter, spec, [label.get_text() for label in labels])


def test_a_protocol_is_selectable_by_name_and_the_service_gives_the_same(capsys, tmp_path) -> None:
    """``--protocol shuffle-private`` plans the Poisson protocol alone (the default runs the
    multi-message one, with fewer users); the service's /v1/plan gives the same numbers; a
    key that does not answer the query is one line naming the keys that do (exit 2)."""
    from fastapi.testclient import TestClient

    from planner.service.app import create_app

    code, out, _ = run([*PLAN, "--json"], capsys)
    default = json.loads(out)
    code, out, _ = run([*PLAN, "--protocol", "shuffle-private", "--json"], capsys)
    assert code == 0
    alone = json.loads(out)
    assert alone["protocol"] == "shuffle-private" and alone["bound"]["reference"] == "theo:sdp_ns"
    assert default["protocol"] == "shuffle-private+messages"
    assert default["total_users"] < alone["total_users"]
    client = TestClient(create_app(tmp_path / "jobs.sqlite3", workers=1, run_jobs=False))
    body = {"model": "shuffle", "k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25}
    served = client.post("/v1/plan", json={**body, "delta": 1e-6, "protocol": "shuffle-private"})
    assert served.status_code == 200
    assert served.json()["total_users"] == alone["total_users"]
    code, out, err = run([*PLAN, "--protocol", "central"], capsys)
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "protocol" in err and "shuffle-private" in err
    refused = client.post("/v1/plan", json={**body, "delta": 1e-6, "protocol": "central"})
    assert refused.status_code == 422 and refused.json()["parameter"] == "protocol"
    # the document echoes the query as asked, with the protocol: it can be replayed
    assert alone["inputs"]["model"] == "shuffle" and alone["inputs"]["delta"] == 1e-6
    assert alone["inputs"]["protocol"] == "shuffle-private"
    mixed = ["plan", "--model", "local,shuffle", "-k", "64", "--alpha", "0.3"]
    flags = ["--eps1", "1", "--eps2", "0.2", "--delta", "1e-6", "--protocol", "shuffle-private"]
    code, out, err = run([*mixed, *flags], capsys)
    assert code == 2 and "not a mixed pair" in err and "Traceback" not in err


def test_validate_checks_the_plan_of_the_protocol_asked_by_name(capsys) -> None:
    """``validate --protocol shuffle-private`` checks the Poisson protocol's own plan (its
    sizes, its tester), not the multi-message plan the default would run."""
    query = ["--model", "shuffle", "-k", "100", "--alpha", "0.3", "--eps1", "1", "--eps2", "0.5"]
    alone = [*query, "--delta", "1e-6", "--protocol", "shuffle-private"]
    _, out, _ = run(["plan", *alone, "--json"], capsys)
    planned = json.loads(out)
    _, out, _ = run(
        ["validate", *alone, "--family", "uniform", "--trials", "200", "--seed", "3", "--json"],
        capsys,
    )
    report = json.loads(out)
    assert report["protocol"] == "shuffle-private" == planned["protocol"]
    sizes = (report["n_users_group1"], report["n_users_group2"])
    assert sizes == (planned["n_users_group1"], planned["n_users_group2"])
