"""Issue 11's reproductions: one line and exit 2 (or a correct answer), honest files and output."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from planner.cli import main
from planner.inputs import InputError, check_integer
from tests.conftest import sigint_as_from_a_terminal, wait_for_cpu_seconds

BASE = ["--alpha", "0.1", "--eps1", "1", "--eps2", "0.5"]


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(err: str, parameter: str | None = None) -> None:
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    if parameter is not None:
        assert parameter in err, err


@pytest.mark.parametrize("k", ["nan", "inf", "1e400", "-inf"])
def test_sweep_with_a_non_finite_k_is_one_line(k: str, capsys) -> None:
    """A sweep whose one k is not finite has no row to plan: one line, exit 2 (it had
    been exit 0 with an error in every row)."""
    code, out, err = run(["sweep", "-s", "central", "-k", k, *BASE, "--format", "json"], capsys)
    assert code == 2 and out == ""
    one_error_line(err, "invalid k = ")


@pytest.mark.parametrize("k", ["nan", "inf", "-inf"])
def test_sweep_with_a_non_finite_k_among_others_reports_an_invalid_row(k: str, capsys) -> None:
    args = ["sweep", "-s", "central", "-k", f"{k},1000", *BASE, "--format", "json"]
    code, out, err = run(args, capsys)
    assert code == 0, err
    bad, good = json.loads(out)["rows"]
    assert bad["status"].startswith("error: invalid k = ") and bad["n_users_group1"] is None
    assert good["status"] == "ok"


def test_plot_with_a_collapsing_range_titles_the_parsed_value(tmp_path: Path, capsys) -> None:
    pytest.importorskip("matplotlib")
    figure = tmp_path / "f.svg"
    code, _out, err = run(
        [
            "plot",
            "-s",
            "central",
            "-k",
            "1000:1000:3",
            *BASE[:4],
            "--eps2",
            "0.1:1:3",
            "-o",
            str(figure),
        ],
        capsys,
    )
    assert code == 0, err
    assert "k = 1000" in figure.read_text("utf-8") or "k = 1,000" in figure.read_text("utf-8")


def test_plot_with_every_row_invalid_is_one_line(tmp_path: Path, capsys) -> None:
    pytest.importorskip("matplotlib")
    code, _, err = run(
        [
            "plot",
            "-k",
            "1000",
            "--alpha",
            "2:3:3",
            "--eps1",
            "1",
            "--eps2",
            "0.5",
            "-o",
            str(tmp_path / "f.png"),
        ],
        capsys,
    )
    assert code == 2
    one_error_line(err, "invalid alpha = 2.0")  # no alpha valid: no row to plot
    assert not (tmp_path / "f.png").exists()


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("long.csv", "name,model,k\na,local,100,extra\n", "no longer than the header"),
        ("list.toml", "scenario = [1, 2]\n", "[[scenario]] tables"),
        ("big.csv", "name,model\nx," + "a" * 200_000 + "\n", "valid CSV"),
        (
            "date.toml",
            '[[scenario]]\nmodel = "local"\nk = 100\nalpha = 0.1\neps1 = 1\neps2 = 0.5\n'
            "when = 1979-05-27\n",
            "numbers or text",
        ),
        ("nested.toml", '[[scenario]]\nmodel = "local"\nk = [1, [2]]\n', "numbers or text"),
        ("empty.csv", "", "header row"),
        ("deep.toml", "[[scenario]]\nx = " + "[" * 900 + "]" * 900 + "\n", "nested too deeply"),
        ("twice.csv", "name,model,k,name\na,local,100,b\n", "names 'name' twice"),
        # an unterminated quote had swallowed every row after it into one field
        ("quote.csv", 'name,model,k\n"a,local,100\nb,local,100\n', "end of data, line 3"),
        ("stray.csv", 'name,model,k\n"a"x,local,100\n', "line 2"),
    ],
)
def test_malformed_batch_files_are_one_line(
    tmp_path: Path, name: str, content: str, fragment: str, capsys
) -> None:
    path = tmp_path / name
    path.write_text(content, "utf-8")
    code, out, err = run(["batch", str(path), "--format", "json"], capsys)
    assert code == 2 and out == ""
    one_error_line(err, fragment)


def test_a_batch_csv_with_blank_lines_and_short_rows_still_runs(tmp_path: Path, capsys) -> None:
    path = tmp_path / "ok.csv"
    path.write_text("name,model,k,alpha,eps1,eps2\n\na,local,100,0.5,1,1\nb,local\n", "utf-8")
    code, out, err = run(["batch", str(path), "--format", "json"], capsys)
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert [row["name"] for row in rows] == ["a", "b"]
    assert rows[0]["status"] == "ok" and rows[1]["status"].startswith("error: missing ")


@pytest.mark.parametrize(
    ("name", "writer"),
    [
        ("nested.json", lambda p: p.write_text("[" * 100_000 + "]" * 100_000)),
        ("huge.json", lambda p: p.write_text("[" + "9" * 400 + ", 1]")),
        ("struct.npy", lambda p: np.save(p, np.zeros(3, dtype=[("a", "f8"), ("b", "i4")]))),
        ("complex.npy", lambda p: np.save(p, np.full(100, 0.01, dtype=complex))),
        ("booleans.json", lambda p: p.write_text("[true, false]")),
        ("texts.json", lambda p: p.write_text('["0.5", "0.5"]')),
        # a header declaring 10^11 values over 80 bytes: refused before any allocation
        ("declared.npy", lambda p: p.write_bytes(_npy_header((10**11,)) + bytes(80))),
    ],
)
def test_hostile_pmf_files_are_one_line(tmp_path: Path, name: str, writer, capsys) -> None:
    path = tmp_path / name
    writer(path)
    good = tmp_path / "good.npy"
    np.save(good, np.full(100, 0.01))
    code, _, err = run(
        [
            "validate",
            "--model",
            "local",
            "-k",
            "100",
            *BASE,
            "--trials",
            "10",
            "--p-file",
            str(path),
            "--q-file",
            str(good),
        ],
        capsys,
    )
    assert code == 2
    one_error_line(err, "p-file")
    assert "pmf file" in err


def _npy_header(shape: tuple[int, ...]) -> bytes:
    buffer = io.BytesIO()
    header = {"descr": "<f8", "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def test_a_pmf_file_with_a_byte_order_mark_is_read(tmp_path: Path, capsys) -> None:
    """Spreadsheets save CSV with a UTF-8 BOM; it is no part of the first value."""
    marked = tmp_path / "p.csv"
    marked.write_text("0.0625\n" * 16, "utf-8-sig")
    query = ["--model", "central", "-k", "16", "--alpha", "0.5", "--eps1", "1", "--eps2", "1"]
    files = ["--p-file", str(marked), "--q-file", str(marked)]
    code, _, err = run(["validate", *query, "--trials", "10", *files], capsys)
    assert code in (0, 3), err


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--trials", "50"], "trials"),
        (["--seed", "3"], "seed"),
        (["--cost1", "5"], "cost1"),
        (["--allocation", "fixed-n2", "--n2", "5000", "--cost2", "3"], "cost2"),
        (["--n2", "5000"], "n2"),
    ],
)
def test_options_that_mean_nothing_without_their_mode_are_refused(
    extra: list[str], option: str, capsys
) -> None:
    code, out, err = run(["plan", "--model", "local", "-k", "100", *BASE, *extra], capsys)
    assert code == 2 and out == ""
    one_error_line(err, f"invalid {option} = ")


def test_seeds_are_read_exactly_up_to_the_stated_maximum() -> None:
    assert check_integer("seed", "9223372036854775807", 0, 2**63 - 1) == 2**63 - 1
    assert check_integer("seed", str(2**53 + 1), 0, 2**63 - 1) == 2**53 + 1
    assert check_integer("seed", "1e3", 0, 2**63 - 1) == 1000
    for bad in (str(2**63), "1e999999999", "2.5", "nan"):
        with pytest.raises(InputError, match="seed"):
            check_integer("seed", bad, 0, 2**63 - 1)


@pytest.mark.parametrize("rule", [["cost"], ["fixed-n2", "--n2", "100000000"]])
def test_central_allocations_never_fail_on_an_epsilon_the_user_did_not_type(
    rule: list[str], capsys
) -> None:
    code, _, err = run(
        [
            "plan",
            "--model",
            "central",
            "-k",
            "100",
            "--alpha",
            "0.1",
            "--eps1",
            "1",
            "--eps2",
            "0.0001",
            "--allocation",
            *rule,
            "--simulation-budget",
            "0",
        ],
        capsys,
    )
    assert "5.7" not in err and "Traceback" not in err
    assert code in (0, 1, 2)
    if code == 2:  # a refusal names what the user typed
        one_error_line(err)
        assert "eps2 = 0.0001" in err or "not covered" in err


def test_python_api_bad_values_are_input_errors() -> None:
    from planner import Query, Setting, plan, sweep

    setting = Setting("local", "private")
    with pytest.raises(InputError, match="alpha"):
        Query(setting, 100, 10**400, 1.0, 0.5)
    with pytest.raises(InputError, match="alpha"):
        Query(setting, 100, True, 1.0, 0.5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="query"):
        plan(None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="settings"):
        sweep([], k=100, alpha=0.1, eps1=1, eps2=0.5)
    with pytest.raises(InputError, match="k"):
        sweep([setting], k=[True], alpha=0.1, eps1=1, eps2=0.5)


# --- files -------------------------------------------------------------------------------


def sweep_args(output: str) -> list[str]:
    return ["sweep", "-s", "central", "-k", "100", *BASE, "--format", "csv", "-o", output]


def test_written_files_get_the_umask_mode(tmp_path: Path, capsys) -> None:
    previous = os.umask(0o022)
    try:
        target = tmp_path / "rows.csv"
        assert main(sweep_args(str(target))) == 0
        assert target.stat().st_mode & 0o777 == 0o644
        os.umask(0o077)
        other = tmp_path / "private.csv"
        assert main(sweep_args(str(other))) == 0
        assert other.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(previous)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".rows.csv.{dead.pid}.abc123.tmp"
    stale.write_text("half")
    unrelated = tmp_path / f".other.csv.{dead.pid}.abc123.tmp"
    unrelated.write_text("not ours")
    from planner.files import write_atomically

    write_atomically(tmp_path / "rows.csv", "whole\n")
    assert (tmp_path / "rows.csv").read_text() == "whole\n"
    assert not stale.exists() and unrelated.exists()


@pytest.mark.parametrize("output", ["", ".", "{tmp}", "{tmp}/missing/x.csv", "/dev/null/x.csv"])
def test_bad_output_paths_are_one_line_before_any_work(tmp_path: Path, output: str, capsys) -> None:
    target = output.format(tmp=tmp_path)
    start = time.perf_counter()
    code, out, err = run(
        ["validate", "--model", "central", "-k", "1000", *BASE, "--trials", "4000", "-o", target],
        capsys,
    )
    assert code == 2 and out == ""
    one_error_line(err, "output")
    assert ".tmp" not in err
    assert time.perf_counter() - start < 3  # the validation (~10 s) never started


@pytest.mark.slow
def test_killing_calibrate_kills_its_workers(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "planner",
            "calibrate",
            "--setting",
            "central",
            "--workers",
            "2",
            "--trials",
            "100",
            "-o",
            str(tmp_path / "c.json"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    children: list[str] = []
    for _ in range(60):
        time.sleep(0.5)
        children = subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        if len(children) >= 2:
            break
    assert children, "calibrate started no workers"
    process.kill()
    process.wait()
    time.sleep(1.0)
    for child in children:
        try:
            state = Path(f"/proc/{child}/status").read_text()
        except FileNotFoundError:
            continue
        assert "State:\tZ" in state, f"worker {child} still running"  # a zombie is dead


def test_ctrl_c_prints_the_aborted_line() -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "planner",
            "validate",
            "--model",
            "central",
            "-k",
            "4000",
            *BASE,
            "--trials",
            "4000",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
    )
    # past the imports (a Ctrl-C there ends Python before the CLI's handler exists), into
    # the validation, which takes many CPU seconds
    wait_for_cpu_seconds(process.pid, 2.0)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "aborted" and "Traceback" not in err, err


@pytest.mark.parametrize("turned_into", [SystemError, RuntimeError, SystemExit])
def test_a_ctrl_c_a_library_turns_into_another_exception_is_still_aborted(
    turned_into: type[BaseException], monkeypatch, capsys
) -> None:
    """A KeyboardInterrupt raised inside a C extension can surface as SystemError
    ("returned a result with an exception set"), inside a generator's cleanup as
    RuntimeError: Ctrl-C all the same, so "aborted" and 130, not a traceback and 1."""
    import planner.cli as cli

    def interrupted_command(args: list[str]) -> int:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5.0)  # the handler raises KeyboardInterrupt at once
        except KeyboardInterrupt as error:
            raise turned_into("returned a result with an exception set") from error
        raise AssertionError("SIGINT raised no KeyboardInterrupt")

    monkeypatch.setattr(cli, "_run_command", interrupted_command)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert cli.main(["plan"]) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    assert capsys.readouterr().err == "aborted\n"
    # the next command starts with no Ctrl-C on record
    monkeypatch.setattr(cli, "_run_command", lambda args: 0)
    assert cli.main(["plan"]) == 0


# --- output ------------------------------------------------------------------------------


def test_compare_prints_whole_numbers_into_a_pipe() -> None:
    args = [sys.executable, "-m", "planner", "compare", "-k", "1000", *BASE, "--delta", "1e-6"]
    table = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    document = json.loads(
        subprocess.run([*args, "--json"], capture_output=True, text=True, check=True).stdout
    )
    assert "…" not in table
    for entry in document["plans"]:
        if entry.get("total_users") is not None:
            assert f"{entry['total_users']:,}" in table


def test_version_and_help_text_keep_their_brackets(capsys) -> None:
    from planner.statistics import code_version

    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.strip() == f"planner {code_version()}"
    assert run(["plot", "--help"], capsys)[1].count("[plot]") == 1
    assert "[[scenario]]" in run(["batch", "--help"], capsys)[1]
    help_text = run(["plan", "--help"], capsys)[1]
    assert "[2, 1e+12]" in help_text and "[0.0001, 20]" in help_text


def test_a_missing_value_is_named_as_missing(capsys) -> None:
    code, _, err = run(["plan", "--model", "shuffle", "-k", "100", *BASE], capsys)
    assert code == 2
    one_error_line(err, "missing delta")
    assert "None" not in err


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null", "/"])
def test_devices_and_folders_are_refused_as_input_files(path: str, tmp_path: Path, capsys) -> None:
    code, _, err = run(["batch", path], capsys)
    assert code == 2
    one_error_line(err, "not a regular file")
    code, _, err = run(["batch", str(tmp_path / "absent.csv")], capsys)
    assert code == 2
    one_error_line(err, "(no such file)")
    good = tmp_path / "good.npy"
    np.save(good, np.full(100, 0.01))
    code, _, err = run(
        [
            "validate",
            "--model",
            "local",
            "-k",
            "100",
            *BASE,
            "--trials",
            "10",
            "--p-file",
            path,
            "--q-file",
            str(good),
        ],
        capsys,
    )
    assert code == 2
    one_error_line(err, "not a regular file")


def test_explain_prints_every_term_as_a_formula(capsys) -> None:
    for model in ("local", "shuffle", "central"):
        code, out, _ = run(["explain", "--model", model, "--coin", "public"], capsys)
        assert code == 0
        assert "**" not in out and "Min(" not in out and "mu_1" not in out  # no raw sympy


def test_sweep_and_batch_take_json_like_the_other_commands(capsys) -> None:
    args = ["sweep", "-s", "central", "-k", "100", *BASE]
    code, out, _ = run([*args, "--json"], capsys)
    assert code == 0 and json.loads(out)["schema"] == "planner.sweep/6"
    code, _, err = run([*args, "--json", "--format", "csv"], capsys)
    assert code == 2
    one_error_line(err, "format")


def test_batch_names_the_central_setting_as_the_other_commands_do(capsys) -> None:
    example = Path(__file__).parent.parent / "docs" / "examples" / "scenarios.toml"
    code, out, _ = run(["batch", str(example)], capsys)
    assert code == 0
    assert "central-private" not in out and "solve central" in out


@pytest.mark.parametrize("output", ["/dev/null", "/proc/version", "/proc/x.csv"])
def test_outputs_that_cannot_be_written_are_refused_first(output: str, capsys) -> None:
    code, _, err = run(sweep_args(output), capsys)
    assert code == 2
    one_error_line(err, "output")
    assert Path("/dev/null").is_char_device()  # never replaced by a regular file


def test_sweep_tables_and_beta_plans_render_missing_numbers(capsys) -> None:
    code, out, err = run(
        ["sweep", "-s", "central", "-k", "2", *BASE[:6], "--delta", "1e-6,1", "--format", "table"],
        capsys,
    )
    assert code == 0, err
    assert "—" in out


@pytest.mark.parametrize(
    ("extra", "parameter"),
    [
        (["--allocation", "cost", "--n1", "1000", "--n2", "1000"], "invalid n1 = "),
        (["--allocation", "fixed-n2", "--n1", "5", "--n2", "30000"], "invalid n1 = "),
        # an infeasible fixed n2 is an input error (exit 2), not a failed plan (exit 1)
        (["--allocation", "fixed-n2", "--n2", "100"], "invalid allocation = "),
        (["--trials", "AUTO"], "auto or an integer in [1, 10,000,000]"),
    ],
)
def test_validate_refuses_sizes_an_allocation_sets_and_an_infeasible_allocation(
    extra: list[str], parameter: str, capsys
) -> None:
    code, out, err = run(["validate", "--model", "central", "-k", "64", *BASE, *extra], capsys)
    assert code == 2 and out == ""
    one_error_line(err, parameter)


def test_validate_refuses_a_pmf_pair_closer_than_alpha_but_not_equal(tmp_path, capsys) -> None:
    """A pair at TV 0.05 < α = 0.1 is neither null nor far: the test promises nothing."""
    p, q = np.full(100, 0.01), np.full(100, 0.01)
    q[:10] += 0.005
    q[10:20] -= 0.005  # TV = ½ · 20 · 0.005 = 0.05
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "q.npy", q)
    files = ["--p-file", str(tmp_path / "p.npy"), "--q-file", str(tmp_path / "q.npy")]
    code, out, err = run(["validate", "--model", "central", "-k", "100", *BASE, *files], capsys)
    assert code == 2 and out == ""
    one_error_line(err, "TV is 0.05")


def test_a_pmf_pair_written_at_tv_alpha_is_far_not_refused(tmp_path, capsys) -> None:
    """A fresh-user trial: a q built at TV = α read back as 0.19999999999999996 and was
    refused as closer than α; the families' own check allows the same rounding."""
    from planner.api import file_pair

    p = np.full(30, 1 / 30)
    q = p.copy()
    q[:10] += 0.02
    q[10:20] -= 0.02  # TV = ½ · 20 · 0.02 = 0.2, read back as 0.19999999999999998
    np.save(tmp_path / "p.npy", p)
    np.save(tmp_path / "q.npy", q)
    instance = file_pair(tmp_path / "p.npy", tmp_path / "q.npy", k=30, alpha=0.2)
    assert instance is not None and 0.2 - 1e-12 < instance.tv < 0.2  # the rounding is there
    with pytest.raises(InputError, match=r"TV is 0\.2"):  # truly below α is still refused
        file_pair(tmp_path / "p.npy", tmp_path / "q.npy", k=30, alpha=0.2 * (1 + 1e-6))


def test_a_votes_report_shows_tiny_errors_in_digits_and_no_bound_above_one(capsys) -> None:
    """A 57-run vote of runs erring 0.1–0.15: its error is about 1e-20, shown as such, not
    0.000; with 1 trial a run's upper bound is 1 and the vote's stays 1, not above."""
    from planner.formulas.repetition import majority_vote_error
    from planner.report import rate_text as _rate

    assert _rate(2.4e-10) == "2.4e-10" and _rate(0.0) == "0.000" and _rate(0.0123) == "0.012"
    # bounds are rounded outward: an upper 0.0024026 is not shown as 0.002 (nor 0.0024)
    assert _rate(0.002402611, "up") == "0.0025" and _rate(0.002402611, "down") == "0.0024"
    assert _rate(0.2467, "up") == "0.247" and _rate(0.2467, "down") == "0.246"
    assert _rate(0.036, "up") == "0.036"  # already on the grid
    assert majority_vote_error(57, 1.0) == 1.0
    assert all(majority_vote_error(r, 1 - 1e-12) <= 1.0 for r in (3, 57, 1001))
    args = ["validate", "--model", "central", "-k", "64", "--alpha", "0.3", "--eps1", "1"]
    code, out, _ = run(
        [*args, "--eps2", "0.5", "--beta", "0.005", "--trials", "1", "--json"], capsys
    )
    assert code == 3
    for family in json.loads(out)["families"]:
        if family["applicable"]:
            assert 0.0 <= family["confidence_bounds"][0] <= family["confidence_bounds"][1] <= 1.0


def test_validate_takes_the_simulation_budget_its_refusal_names(capsys) -> None:
    """Outside the covered region validate checks the simulated plan `planner plan` prints;
    with --simulation-budget 0 that plan is refused, as the refusal line suggests."""
    args = ["validate", "--model", "central", "-k", "16", "--alpha", "0.005"]
    args += ["--eps1", "1", "--eps2", "0.5", "--simulation-budget", "0"]
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    one_error_line(err, "--simulation-budget")
    assert "not covered" in err


def test_an_output_named_dash_is_refused_not_written_as_a_file(
    tmp_path, capsys, monkeypatch
) -> None:
    """``-o -`` usually means stdout; here it would have written a file named "-"."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["validate", "--model", "central", "-k", "64", *BASE, "-o", "-"], capsys)
    assert code == 2 and out == ""
    one_error_line(err, "for stdout, leave --output out")
    assert not (tmp_path / "-").exists()


def test_validate_shows_the_inputs_warnings_as_plan_does(capsys) -> None:
    """δ given to the local model is ignored: plan says so, and now validate too (a central
    query keeps its δ: its curator may spend it on a shuffle protocol)."""
    args = ["validate", "--model", "local", "-k", "64", *BASE, "-d", "1e-6", "--trials", "50"]
    code, out, _ = run(args, capsys)
    assert code in (0, 3)
    assert "warning: delta is ignored: the local protocol is pure ε-DP" in out
    code, out, _ = run([*args, "--json"], capsys)
    assert json.loads(out)["warnings"] == ["delta is ignored: the local protocol is pure ε-DP"]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=sigint_as_from_a_terminal,
    )


def test_ctrl_c_while_the_command_line_starts_prints_the_aborted_line() -> None:
    """Between importing the package and ``main`` (numpy, sympy, typer: a third of a
    second), Ctrl-C to the ``planner`` command ends it with the CLI's line and exit code,
    no traceback; once ``main`` runs, Python's KeyboardInterrupt is back for the CLI to
    report (remembered, :func:`planner.startup.interrupted`). A process that is not the
    command line keeps its own handler."""
    starting = _python(
        "import os, signal, sys, time\n"
        "sys.argv[0] = '/usr/local/bin/planner'\n"
        "import planner\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(30)\n"
    )
    assert (starting.returncode, starting.stderr) == (130, "aborted\n")
    running = _python(
        "import signal, sys\n"
        "sys.argv[0] = '/usr/local/bin/planner'\n"
        "import planner\n"
        "assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler\n"
        "from planner.cli import main\n"
        "main(['--version'])\n"
        "from planner.startup import interrupt\n"
        "assert signal.getsignal(signal.SIGINT) is interrupt\n"
    )
    assert running.returncode == 0, running.stderr
    library = _python(
        "import signal\n"
        "import planner\n"
        "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
    )
    assert library.returncode == 0, library.stderr


def test_output_streams_that_fail_are_one_line_not_a_traceback(tmp_path: Path) -> None:
    """A hostile review: an ASCII-only locale (α unencodable), standard output closed,
    and a full device were tracebacks or "cannot write None"."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "planner", "plan", "--model", "central", "-k", "1000"]
    command += ["--alpha", "0.1", "--eps1", "1", "--eps2", "0.25"]
    ascii_env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    shown = subprocess.run(command, capture_output=True, env=ascii_env, timeout=120)
    assert shown.returncode == 0 and b"Traceback" not in shown.stderr
    assert b"\\u03b1 = 0.1" in shown.stdout  # α, escaped
    as_json = subprocess.run([*command, "--json"], capture_output=True, env=ascii_env, timeout=120)
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout)["total_users"] > 0  # still strict JSON
    closed = subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert closed.returncode == 2 and closed.stderr.count(b"\n") == 1
    assert b"standard output is closed" in closed.stderr
    to_file = [sys.executable, "-m", "planner", "sweep", "-k", "1000", "--alpha", "0.1"]
    to_file += ["--eps1", "1", "--eps2", "0.25,0.5", "--format", "csv"]
    written = tmp_path / "sweep.csv"
    kept = subprocess.run(  # a closed stdout does not stop a command writing to a file
        [*to_file, "--output", str(written)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert kept.returncode == 0, kept.stderr
    assert written.read_text().startswith("setting,")
    if Path("/dev/full").exists():
        with open("/dev/full", "w") as full:
            failed = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, timeout=120)
        assert failed.returncode == 2
        assert failed.stderr.startswith(b"error: cannot write standard output")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["-k", "1000", "-k", "50"], "invalid k = '1000 and 50': must be given once"),
        (["-k", "1000", "--eps2=0.5"], "invalid eps2 = '0.25 and 0.5'"),
        (["-k1000", "-k50"], "invalid k = '1000 and 50'"),
        (["-k", "1000", "-m", "local"], "invalid model = 'central and local'"),
    ],
)
def test_an_option_given_twice_is_one_line_not_its_last_value(args, named, capsys) -> None:
    """click keeps an option's last value silently (-k 1000 -k 50 planned k = 50); the
    service refuses a field named twice, and so does the CLI."""
    base = ["plan", "--model", "central", "--alpha", "0.1", "--eps1", "1", "--eps2", "0.25"]
    code, out, err = run([*base, *args], capsys)
    assert code == 2 and out == ""
    one_error_line(err, named)


def test_an_option_the_model_does_not_read_is_named_in_a_warning() -> None:
    """δ with a pure-ε model warned that it is ignored; --accounting paper (the shuffle
    noise's) was taken silently by the local and central models (a fresh-user trial)."""
    from planner.inputs import Accounting, Query

    for model in ("local", "central"):
        query = Query.build(model, "private", 100, 0.2, 1, 0.5, None, 1 / 3, "paper")
        assert query.accounting is Accounting.EXACT
        assert query.warnings == (
            f"accounting paper is ignored: the {model} protocol adds no shuffle noise to "
            "account for",
        )
    shuffle = Query.build("shuffle", "private", 100, 0.2, 1, 0.5, 1e-6, 1 / 3, "paper")
    assert shuffle.accounting is Accounting.PAPER and shuffle.warnings == ()


@pytest.mark.parametrize(
    "output", ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/1", "link"]
)
def test_an_output_that_names_a_standard_stream_is_refused(
    output: str, tmp_path: Path, capsys
) -> None:
    """A hostile review: ``--output /dev/stdout`` followed the link to the file stdout was
    redirected to and renamed the output over it (the log was lost); into a pipe it said
    "No such file or directory"."""
    if output == "link":
        output = str(tmp_path / "rows.csv")
        os.symlink("/dev/stdout", output)
    code, out, err = run(sweep_args(output), capsys)
    assert code == 2 and out == ""
    one_error_line(err, "output")
    assert "an open stream, not a file" in err and "leave --output out" in err


def test_output_dev_stdout_leaves_the_redirected_log_alone(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("earlier lines\n")
    command = [sys.executable, "-m", "planner", *sweep_args("/dev/stdout")]
    with open(log, "a", encoding="utf-8") as appended:
        finished = subprocess.run(
            command, stdout=appended, stderr=subprocess.PIPE, text=True, timeout=60
        )
    assert finished.returncode == 2 and log.read_text() == "earlier lines\n"
    piped = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert piped.returncode == 2 and "No such file" not in piped.stderr
    assert "an open stream" in piped.stderr
