"""Calibration and batch verification on a real Dask cluster (worker processes).

The cluster is a ``distributed.LocalCluster`` of two single-threaded worker processes; the
commands reach it through its scheduler's TCP address, as they would a remote one.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

distributed = pytest.importorskip(
    "distributed",
    reason="the dask extra is not installed (python -m pip install -e '.[dask]'; "
    "the test extra includes it)",
)

from planner.batch import read_scenarios, row_seed  # noqa: E402
from planner.calibration.grid import grid_points  # noqa: E402
from planner.calibration.run import calibrate  # noqa: E402
from planner.cli import main  # noqa: E402
from planner.cluster import (  # noqa: E402
    ClusterExecutor,
    connect,
    mismatch,
    scheduler_address,
    task_size,
)
from planner.inputs import InputError  # noqa: E402
from planner.protocols import PROTOCOLS  # noqa: E402
from planner.validate import PathChoice, validate  # noqa: E402
from tests.conftest import sigint_as_from_a_terminal  # noqa: E402

EXAMPLE = "docs/examples/scenarios.toml"
SCENARIOS = """\
[[scenario]]
name = "central"
model = "central"
k = 64
alpha = 0.3
eps1 = 1.0
eps2 = 0.5

[[scenario]]
name = "shuffle"
model = "shuffle"
k = 32
alpha = 0.3
eps1 = 1.0
eps2 = 0.5
delta = 1e-6

[[scenario]]
name = "solve eps2"
model = "local"
k = 16
alpha = 0.4
eps1 = 1.0
n1 = 40000
n2 = 40000

[[scenario]]
name = "typo"
model = "local"
k = 16
alpha = 1.5
eps1 = 1.0
eps2 = 0.5
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    local = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address="127.0.0.1:0",  # not 8787: a real cluster may hold it
        silence_logs=logging.ERROR,
    )
    try:
        yield local
    finally:
        local.close()


def one_error_line(err: str, parameter: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: invalid {parameter} = "), err
    assert "Traceback" not in err


def test_quick_calibration_on_the_cluster_equals_one_local_worker(
    cluster, tmp_path: Path, capsys
) -> None:
    address = cluster.scheduler_address
    common = ["calibrate", "--quick", "--trials", "100", "--seed", "7"]
    assert main([*common, "--scheduler", address, "-o", str(tmp_path / "cluster.json")]) == 0
    assert main([*common, "--workers", "1", "-o", str(tmp_path / "one.json")]) == 0
    capsys.readouterr()
    on_cluster = json.loads((tmp_path / "cluster.json").read_text())
    on_one = json.loads((tmp_path / "one.json").read_text())
    assert on_cluster == on_one
    grids = [entry["grid"]["raw_multipliers"] for entry in on_one["settings"].values()]
    # every protocol (the settings' own, k-RR, a channel per group, a shared hash, the
    # multi-message shuffle protocol on either coin, the mixed pair's two orientations),
    # two quick points each
    assert len(grids) == len(PROTOCOLS) == 13 and all(len(raw) == 2 for raw in grids)


def test_a_worker_killed_mid_run_has_its_tasks_rerun_with_identical_results(cluster) -> None:
    settings = ["central", "shuffle-private", "local-private"]
    axes: dict[str, list[float]] = {
        "k": [16, 64],
        "alpha": [0.3],
        "eps_strong": [1.0],
        "eps_ratio": [0.5],
    }
    serial = calibrate(settings, trials=200, seed=11, axes=axes, workers=1)
    client = connect(cluster.scheduler_address)
    killed: list[tuple[str, int, tuple[str, ...]]] = []

    def kill_a_busy_worker(_result: object) -> None:
        if killed:
            return
        pids = client.run(os.getpid)
        for worker, keys in client.processing().items():
            if keys:  # a worker in the middle of a grid point
                os.kill(pids[worker], signal.SIGKILL)
                killed.append((worker, pids[worker], keys))
                return

    try:
        on_cluster = calibrate(
            settings,
            trials=200,
            seed=11,
            axes=axes,
            executor=ClusterExecutor(client),
            progress=kill_a_busy_worker,
        )
        workers_after = set(client.scheduler_info()["workers"])
    finally:
        client.close()
    assert killed, "no worker was busy after the first result"
    worker, pid, _ = killed[0]
    assert worker not in workers_after  # it really died (its nanny started a new one)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert on_cluster == serial


def test_batch_validate_on_the_cluster_equals_one_local_worker(
    cluster, tmp_path: Path, capsys
) -> None:
    scenarios = tmp_path / "scenarios.toml"
    scenarios.write_text(SCENARIOS)
    common = ["batch", str(scenarios), "--validate", "--trials", "200", "--seed", "3", "--json"]
    documents = {}
    for label, choice in (
        ("cluster", ["--scheduler", cluster.scheduler_address]),
        ("one", ["--workers", "1"]),
        ("two", ["--workers", "2"]),
    ):
        code = main([*common, *choice])
        out, _ = capsys.readouterr()
        documents[label] = json.loads(out)
        assert code in (0, 3)  # 200 trials certify a pass or leave it open, never fail
    assert documents["cluster"] == documents["one"] == documents["two"]
    rows = documents["one"]["rows"]
    assert rows[3]["verdict"] == "not run: no plan"
    assert rows[3]["status"].startswith("error: invalid alpha")
    assert {row["verdict"] for row in rows[:3]} <= {"pass", "inconclusive"}
    assert [row["validation_seed"] for row in rows[:3]] == [row_seed(3, i) for i in range(3)]
    # a row is exactly `planner validate` of its plan with the row's seed
    first = read_scenarios(scenarios)[0]
    from planner.coverage import covered_plan
    from planner.inputs import Query

    query = Query.build(
        first["model"], "private", first["k"], first["alpha"], first["eps1"], first["eps2"]
    )
    report = validate(
        query,
        trials=200,
        seed=rows[0]["validation_seed"],
        path=PathChoice.AUTO,
        checked_plan=covered_plan(query),
    )
    assert rows[0]["verdict"] == report.verdict.value
    assert rows[0]["worst_error_rate"] == report.verification.worst_error_rate


def test_ctrl_c_cancels_the_clusters_tasks(cluster, tmp_path: Path) -> None:
    address = cluster.scheduler_address
    client = distributed.Client(address, set_as_default=False)

    def tasks() -> int:
        return int(client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)))

    assert tasks() == 0
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "planner", "calibrate", "--setting", "central"),
            *("--trials", "300", "--scheduler", address, "-o", str(tmp_path / "c.json")),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
    )
    try:
        deadline = time.monotonic() + 30
        while tasks() == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        # the central grid (120 points) was sent at once; its quickest points may already be
        # done and released by the time the test looks
        assert 0 < tasks() <= len(grid_points("central"))
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 130
        assert err.strip() == "aborted"
        deadline = time.monotonic() + 10
        while tasks() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert tasks() == 0  # every task cancelled, none left to run
    finally:
        if process.poll() is None:
            process.kill()
        client.close()
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize(
    "command",
    [
        ("batch", EXAMPLE, "--validate", "--workers", "2", "--trials", "20000"),
        # direct-calibration points at 20,000 trials take minutes each
        (
            "calibrate",
            "--direct",
            "--setting",
            "local-private",
            "--trials",
            "20000",
            "--workers",
            "2",
            "-o",
            "OUTPUT",
        ),
    ],
    ids=["batch", "calibrate"],
)
def test_ctrl_c_stops_a_local_pool_at_once(command: tuple[str, ...], tmp_path: Path) -> None:
    """--workers N: the running validations (grid points) are stopped, not waited for,
    also when SIGINT reaches the command alone (not the whole terminal's process group)."""
    output = str(tmp_path / "constants.json")
    process = subprocess.Popen(
        [sys.executable, "-m", "planner", *(output if a == "OUTPUT" else a for a in command)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
    )
    try:
        children: list[str] = []
        deadline = time.monotonic() + 30
        while len(children) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            children = subprocess.run(
                ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
            ).stdout.split()
        assert len(children) >= 2, "the pool did not start"
        time.sleep(1.0)  # the workers are inside their validations (minutes each)
        start = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
        assert time.monotonic() - start < 5
        assert process.returncode == 130 and err.strip() == "aborted"
    finally:
        if process.poll() is None:
            process.kill()
    time.sleep(0.5)
    for child in children:
        status = Path(f"/proc/{child}/status")
        assert not status.exists() or "State:\tZ" in status.read_text(), f"{child} still runs"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_no_scheduler_listening_is_one_line_naming_scheduler(tmp_path: Path, capsys) -> None:
    start = time.monotonic()
    address = f"tcp://127.0.0.1:{free_port()}"
    code = main(["calibrate", "--quick", "--scheduler", address, "-o", str(tmp_path / "c.json")])
    assert code == 2
    one_error_line(capsys.readouterr().err, "scheduler")
    assert time.monotonic() - start < 3


def test_a_scheduler_that_never_answers_is_one_line_within_seconds(tmp_path: Path, capsys) -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does), never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        code = main(["calibrate", "--quick", "--scheduler", address, "-o", str(tmp_path / "c")])
        elapsed = time.monotonic() - start
    assert code == 2
    err = capsys.readouterr().err
    one_error_line(err, "scheduler")
    assert "no answer" in err
    assert elapsed < 10


@pytest.mark.parametrize(
    ("args", "parameter"),
    [
        (["calibrate", "--quick", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "workers"),
        (["batch", EXAMPLE, "--scheduler", "tcp://127.0.0.1:1"], "scheduler"),
        (["batch", EXAMPLE, "--workers", "2"], "workers"),
        (["batch", EXAMPLE, "--validate", "--trials", "0"], "trials"),
        (["calibrate", "--quick", "--scheduler", "http://127.0.0.1:8786"], "scheduler"),
        (["calibrate", "--quick", "--scheduler", "tcp://127.0.0.1:99999"], "scheduler"),
        (["calibrate", "--quick", "--scheduler", "tcp://127.0.0.1"], "scheduler"),
    ],
)
def test_bad_executor_options_are_one_line_before_any_connection(
    args: list[str], parameter: str, tmp_path: Path, capsys
) -> None:
    start = time.monotonic()
    assert main([*args, "-o", str(tmp_path / "out.json")] if args[0] == "calibrate" else args) == 2
    one_error_line(capsys.readouterr().err, parameter)
    assert time.monotonic() - start < 2  # refused before connecting or computing anything


def test_without_dask_the_scheduler_option_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    with pytest.raises(InputError, match=r"scheduler.*\[dask\]"):
        connect("tcp://127.0.0.1:8786")


def test_addresses_and_version_checks() -> None:
    assert scheduler_address("127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert scheduler_address("tls://node-1.example:9000") == "tls://node-1.example:9000"
    assert scheduler_address("tcp://[::1]:8786") == "tcp://[::1]:8786"
    same = ("0.1.0", "constants-a")
    assert mismatch(same, {"tcp://w1:1": same, "tcp://w2:2": list(same)}) is None
    message = mismatch(same, {"tcp://w1:1": same, "tcp://w2:2": ("0.0.9", "constants-a")})
    assert message is not None and "tcp://w2:2 has 0.0.9" in message


def test_the_largest_tasks_are_sent_first() -> None:
    from planner.calibration.grid import GridPoint

    point = GridPoint("central", 4096, 0.1, 1.0, 1.0)
    assert task_size((point, 500, 0, {})) == 4096  # a calibration task
    assert task_size(({"k": "1000", "model": "local"}, "auto", 7)) == 1000  # a batch row
    assert task_size(({"model": "local"}, "auto", 7)) == 0  # no k: an error row, cheap
    assert task_size(({"k": "x"}, "auto", 7)) == 0


def test_tasks_start_costliest_first_and_results_stay_in_task_order() -> None:
    """map_in_order on an executor: a one-thread executor runs the tasks in the order they
    were sent, which must be costliest first; the results come back in task order, and
    progress sees every result once."""
    from concurrent.futures import ThreadPoolExecutor

    from planner.cluster import map_in_order

    started: list[int] = []

    def square(task: int) -> int:
        started.append(task)
        return task * task

    tasks = [3, 1, 4, 1, 5, 9, 2, 6]
    seen: list[int] = []
    with ThreadPoolExecutor(max_workers=1) as one_thread:
        results = map_in_order(square, tasks, executor=one_thread, progress=seen.append, cost=float)
    assert results == [task * task for task in tasks]
    assert started == sorted(tasks, reverse=True)
    assert sorted(seen) == sorted(results)
    # a local pool takes the same path (and the same order); its results are the same
    assert map_in_order(abs, [-3, 1, -4], workers=2, cost=float) == [3, 1, 4]


def test_the_cluster_runs_the_costliest_first() -> None:
    """ClusterExecutor gives dask a higher priority (runs first) to a costlier task."""

    class Recorder:
        def __init__(self) -> None:
            self.priorities: dict[int, int] = {}

        def submit(self, fn: object, task: int, *, pure: bool, priority: int) -> int:
            assert pure is False
            self.priorities[task] = priority
            return task

    recorder = Recorder()
    executor = ClusterExecutor(recorder, "tcp://127.0.0.1:1")
    costs = [0.5, 3.0, 0.5, 9.0, 1.0]
    futures = executor.send(abs, [(index,) for index in range(len(costs))], costs)
    assert futures == list(range(len(costs)))  # in task order
    by_priority = sorted(recorder.priorities, key=lambda task: -recorder.priorities[task])
    assert by_priority == [3, 1, 4, 0, 2]  # costliest first, equal costs in task order


def test_a_grid_points_cost_estimate_orders_the_quick_grid() -> None:
    """point_cost grows with k and trials, and puts the quick grid's costliest measured
    points (central and shuffle private coin at k = 64) first, its cheapest (local public
    coin at k = 16) last."""
    from planner.calibration.grid import GridPoint, grid_points
    from planner.calibration.run import point_cost

    for setting in ("central", "shuffle-private", "local-private", "local-public"):
        costs = [point_cost(GridPoint(setting, k, 0.25, 1.0, 0.5), 500) for k in (4, 16, 100)]
        assert costs == sorted(costs) and costs[0] > 0
        point = GridPoint(setting, 64, 0.25, 1.0, 0.5)
        assert point_cost(point, 1000) == pytest.approx(2 * point_cost(point, 500))
    quick = {"k": [16, 64], "alpha": [0.25], "eps_strong": [1.0], "eps_ratio": [0.5]}
    settings = ("central", "shuffle-private", "local-public")
    points = [point for setting in settings for point in grid_points(setting, quick)]
    ranked = sorted(points, key=lambda p: -point_cost(p, 500))
    assert {(p.setting, p.k) for p in ranked[:2]} == {("central", 64), ("shuffle-private", 64)}
    assert (ranked[-1].setting, ranked[-1].k) == ("local-public", 16)


class _InterruptedClient:
    """A client whose third ``submit`` receives Ctrl-C (SIGINT to this process)."""

    def __init__(self) -> None:
        self.submitted: list[int] = []
        self.cancelled: list[int] = []

    def submit(self, fn, *args, pure: bool, priority: int) -> int:
        self.submitted.append(priority)
        if len(self.submitted) == 3:
            os.kill(os.getpid(), signal.SIGINT)
        return priority

    def cancel(self, futures: list[int]) -> None:
        self.cancelled.extend(futures)


def test_ctrl_c_while_submitting_lets_every_submit_finish_then_cancels_them() -> None:
    """Ctrl-C is held back during submission (a KeyboardInterrupt inside the dask client's
    submit could leave it stuck), then raised, with every submitted task cancelled."""
    client = _InterruptedClient()
    executor = ClusterExecutor(client, address="tcp://127.0.0.1:1")
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        executor.send(len, [((1,),)] * 5, [1.0] * 5)
    assert len(client.submitted) == 5  # no submit was cut in the middle
    assert sorted(client.cancelled) == sorted(client.submitted)
    assert signal.getsignal(signal.SIGINT) is handler
