"""Defects the seeded hostile run (benchmarks/hostile_run.py) found: each test reproduces
one (it failed before its fix). Only :class:`planner.inputs.InputError`, one line naming
the parameter and its allowed range, may escape the Python API."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

import planner.api as api
from planner import InputError, Query, Setting, plan
from planner.batch import read_scenarios


@pytest.mark.parametrize(
    ("model", "coin", "line"),
    [
        ("quantum", "private", "invalid model = 'quantum': must be one of local, shuffle, central"),
        ("local", "both", "invalid coin = 'both': must be one of private, public"),
        ([], "private", "invalid model = []: must be one of local, shuffle, central"),
        (10**5000, "private", "invalid model = <int too large to print>: must be one of local"),
    ],
    ids=["quantum", "both", "list", "huge-int"],
)
def test_a_bad_setting_is_an_input_error(model: object, coin: object, line: str) -> None:
    """``planner.Setting`` raised a bare ValueError (and a 5,000-digit model's message
    could not even be built); it is the API's one error now, also inside ``Query``."""
    with pytest.raises(InputError, match="^" + re.escape(line)) as refused:
        Setting(model, coin)  # type: ignore[arg-type]
    assert refused.value.parameter == ("coin" if coin == "both" else "model")
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 200
    with pytest.raises(InputError):
        Query(Setting(model, coin), k=100, alpha=0.1, eps1=1.0, eps2=0.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", [["x"], {"a": 1}, bytearray(b"2"), {1, 2}])
def test_explain_document_refuses_an_unhashable_model(model: object) -> None:
    """The cached explain_document raised TypeError (unhashable) before checking."""
    with pytest.raises(InputError, match=r"^invalid model = .*: must be one of local"):
        api.explain_document(model)
    assert api.explain_document("Shuffle", "PUBLIC")["setting"] == "shuffle-public"


@pytest.mark.parametrize("file", [None, 5, b"x", "x" * 5000], ids=["none", "int", "bytes", "long"])
def test_batch_file_that_is_no_path_or_too_long_a_name(file: object) -> None:
    """``read_scenarios`` raised TypeError for a non-path and OSError (ENAMETOOLONG) from
    ``Path.is_file`` for a 5,000-character name."""
    with pytest.raises(InputError) as refused:
        api.batch_request(file)  # type: ignore[arg-type]
    assert refused.value.parameter == "file"
    assert len(str(refused.value)) < 300
    with pytest.raises(InputError):
        read_scenarios(file)  # type: ignore[arg-type]


def test_pmf_file_name_too_long(tmp_path: Path) -> None:
    """``load_pmf`` let the OSError of ``Path.is_file`` escape ``file_pair``."""
    good = tmp_path / "p.csv"
    good.write_text("0.5\n0.5\n")
    with pytest.raises(InputError, match=r"p-file .*cannot read it \(File name too long\)"):
        api.file_pair("x" * 5000, good, 2)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="q-file"):
        api.file_pair(good, 5, 2)  # type: ignore[arg-type]


QUERY = Query.build("central", "private", 200, 0.1, 1.0, 0.25)


@pytest.mark.parametrize("budget", ["x", -1, float("nan"), None, 3601])
def test_plan_budget_is_checked(budget: object) -> None:
    """``planner.plan(query, budget_seconds="x")`` compared a float with a str (TypeError)."""
    with pytest.raises(InputError, match=r"^(invalid|missing) simulation-budget"):
        plan(QUERY, budget_seconds=budget)  # type: ignore[arg-type]


@pytest.mark.parametrize("split", [3, "x", None])
def test_plan_split_is_checked(split: object) -> None:
    """``planner.plan(query, split=3)`` planned the default split without a word."""
    with pytest.raises(InputError, match=r"split.*: must be one of fewest, paper"):
        plan(QUERY, split=split)  # type: ignore[arg-type]
    assert plan(QUERY, split="paper").split.value == "paper"  # type: ignore[arg-type]


def test_a_sweep_counts_the_noise_searches_its_plans_make() -> None:
    """400 δ at ε = (0.5, 0.25) passed the root-find limit, which counted 800 searches,
    and ran 12 s: the plans search every δ also at the ladder's and the grid's ε (8,379
    searches; 4,221 since the δ above the covered 10⁻³ are planned at it, one search).
    Refused before any row is built; 120 δ still run."""
    started = time.perf_counter()
    with pytest.raises(InputError, match=r"4,221 noise searches .*at most 3,000"):
        api.sweep_result(k=100, alpha=0.1, eps1=0.5, eps2=0.25, delta="1e-6:1:400log")
    assert time.perf_counter() - started < 1.0
    assert len(api.sweep_result(k=100, alpha=0.1, eps1=1, eps2=0.25, delta="1e-6:1:20log")) > 0


def test_an_output_that_is_a_loop_of_links_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` a link in a loop (a → b → a) passed the check, so ``calibrate --quick`` ran
    ~10 s and a sweep replaced the link by a file; refused at once now. A dangling link is
    still written through (its target created)."""
    from planner.cli import main
    from planner.files import check_output_path, write_atomically

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "dangling").symlink_to(tmp_path / "target.csv")
    with pytest.raises(InputError, match=r"^invalid output = .*Too many levels of symbolic"):
        check_output_path(tmp_path / "a")
    started = time.perf_counter()
    assert main(["calibrate", "--quick", "-o", str(tmp_path / "b")]) == 2
    assert time.perf_counter() - started < 5.0
    error = capsys.readouterr().err
    assert error.startswith("error: invalid output") and error.count("\n") == 1
    assert (tmp_path / "a").is_symlink() and (tmp_path / "b").is_symlink()
    write_atomically(tmp_path / "dangling", "x\n")
    assert (tmp_path / "target.csv").read_text() == "x\n" and (tmp_path / "dangling").is_symlink()


def test_a_figure_of_power_curves_stays_within_ten_seconds() -> None:
    """``planner plot --power`` ran 17 s at its defaults (24 points for each of five
    settings, each a full solve for β) and 85 s with ``--users`` of 200 values: no
    simulation, past every limit. The solves now search down from the previous point's β
    (a plateau is two plans), a total no plan fits is one plan, the node tables of the
    direct factors are read once per (β, k), and a figure holds at most 60 points."""
    from planner.power import CURVE_PRECISION, MAX_CURVE_POINTS, settings_curves, solve_power

    with pytest.raises(InputError, match=r"^invalid users = .*at most 60 points in all") as refused:
        settings_curves(None, k=1000, alpha=0.1, eps1=1, eps2=0.25, delta=1e-6, users="1e4:1e6:13")
    assert refused.value.parameter == "users" and "\n" not in str(refused.value)
    started = time.process_time()
    curves = settings_curves(None, k=1000, alpha=0.1, eps1=1, eps2=0.25, delta=1e-6)
    assert time.process_time() - started < 8.0
    assert sum(len(points) for _, points in curves) == MAX_CURVE_POINTS
    query, points = curves[-1]
    assert query.setting.key == "central" and points[0].beta is None and points[-1].beta
    for point in points:  # the searches down from the previous β: the full solve's answers
        solved = solve_power(query, point.n1, point.n2, precision=CURVE_PRECISION)
        if point.beta is None or solved.value is None:
            assert point.beta is None and solved.value is None
        else:
            assert point.beta == pytest.approx(float(solved.value), rel=3 * CURVE_PRECISION)


def test_a_sample_of_the_hostile_run_is_clean(tmp_path: Path) -> None:
    """A few hundred API cases and a few CLI cases of benchmarks/hostile_run.py (the full
    run's figures are in docs/evidence.md): no defect."""
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        import hostile_run
    finally:
        sys.path.pop(0)
    output = tmp_path / "run.json"
    args = ["--seed", "7", "--api", "300", "--cli", "6", "--http", "0", "--output", str(output)]
    code = hostile_run.main(args)
    summary = json.loads(output.read_text())
    assert summary["api"]["cases"] == 300 and summary["cli"]["cases"] == 6
    assert code == 0, summary["defect_list"][:3]


def test_the_openapi_description_is_built_off_the_event_loop(tmp_path: Path) -> None:
    """The first ``GET /openapi.json`` built the description on the event loop (FastAPI's
    route is a coroutine; 0.3 s of CPU): a hostile run's ``/v1/health`` probe waited 2.7 s
    behind it (``planner serve --workers 2`` on the loaded 2-core machine). The route is a
    plain function now, run on a worker thread: here a build made to take 1 s does not
    delay a health check sent after it."""
    import asyncio
    import inspect

    import httpx

    import planner.service.apidocs as apidocs
    from planner.service.app import create_app

    app = create_app(tmp_path / "jobs.sqlite3", run_jobs=False)
    assert not inspect.iscoroutinefunction(apidocs.openapi_json)  # Starlette: a worker thread
    build = app.openapi

    def slow_build() -> dict[str, object]:
        time.sleep(1.0)
        return build()

    app.openapi = slow_build  # type: ignore[method-assign]

    async def both() -> tuple[float, float, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            started = time.perf_counter()

            async def timed(path: str, delay: float) -> tuple[float, httpx.Response]:
                await asyncio.sleep(delay)
                response = await client.get(path)
                return time.perf_counter() - started, response

            (spec_at, spec), (health_at, health) = await asyncio.gather(
                timed("/openapi.json", 0.0), timed("/v1/health", 0.1)
            )
            assert health.status_code == 200
            return spec_at, health_at, spec

    spec_at, health_at, spec = asyncio.run(both())
    assert spec.status_code == 200 and "/v1/power" in spec.json()["paths"]
    assert health_at < 0.8 < spec_at


def test_health_counts_wait_for_no_other_store_operation(tmp_path: Path) -> None:
    """``/v1/health`` counts the jobs on the event loop; behind the store's one lock it
    waited for whatever held it, e.g. a job's insert waiting for another process's write
    (``planner serve --workers 2``): the hostile run's probe stood 1.2–1.6 s. The counts
    have a connection and lock of their own now (in WAL mode a reader waits for no
    writer): here they answer while an insert waits 1.5 s for another connection's write."""
    import sqlite3
    import threading

    from planner.service.store import JobStore

    store = JobStore(tmp_path / "jobs.sqlite3", owner=True)
    other = sqlite3.connect(tmp_path / "jobs.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's write in progress
    inserted = threading.Event()

    def insert() -> None:
        store.create(
            "validate", {"k": 16}, seed=1, trials=5, code_version="x",
            constants_version="y", progress_total=1,
        )  # fmt: skip
        inserted.set()

    writer = threading.Thread(target=insert)
    writer.start()
    time.sleep(0.2)  # the insert now waits for the write lock, holding the store's lock
    started = time.perf_counter()
    counts = store.counts()
    waited = time.perf_counter() - started
    time.sleep(max(0.0, 1.5 - waited))
    other.execute("COMMIT")
    writer.join(10)
    assert inserted.is_set() and counts["queued"] == 0 and waited < 0.5
    assert store.counts()["queued"] == 1
    other.close()
    store.close()


def test_batch_csv_neutralises_cells_a_spreadsheet_would_run_as_formulas(
    tmp_path: Path, capsys
) -> None:
    """``planner batch --format csv`` echoed a name like ``=HYPERLINK(…)`` verbatim: a
    formula once the file is opened in a spreadsheet (CSV injection). Text cells starting
    with = + - @ (or a tab or CR) now start with a single quote; numbers are left alone."""
    import csv
    import io

    from planner.cli import main
    from planner.files import csv_cell

    names = ['=HYPERLINK("http://x.example")', "+cmd|calc", "@SUM(1)", "-2+3", "plain"]
    scenarios = tmp_path / "scenarios.csv"
    with scenarios.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name", "model", "k", "alpha", "eps1", "eps2"])
        for name in names:
            writer.writerow([name, "central", "1000", "0.1", "1", "0.25"])
        writer.writerow(["negative", "central", "-5", "-0.1", "1", "0.25"])
    assert main(["batch", str(scenarios), "--format", "csv"]) in (0, 1)
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["name"] for row in rows[: len(names)]] == [
        "'" + name if name != "plain" else name for name in names
    ]
    assert rows[0]["n_users_group1"] == "4663"  # the numbers themselves unchanged
    assert rows[-1]["k"] == "-5" and rows[-1]["alpha"] == "-0.1"  # a number stays one
    assert csv_cell("\t=1") == "'\t=1" and csv_cell("\r=1") == "'\r=1"  # the reader strips
    assert csv_cell(-5) == -5 and csv_cell("-1e-3") == "-1e-3" and csv_cell(None) == ""
