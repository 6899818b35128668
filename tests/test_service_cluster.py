"""``planner serve --scheduler``: the service's jobs run on a real Dask cluster.

The cluster is a ``distributed.LocalCluster`` of two single-threaded worker processes,
reached through its scheduler's TCP address as a remote one would be. A job submitted
through the HTTP API must give the report the local process pool gives (jobs are seeded);
cancelling or timing out a job must stop its task; a scheduler that goes away must fail
the job with one line instead of leaving it running; a scheduler that does not answer at
start is one line and exit 2.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.servers import call, free_port, start_server, stop_server

distributed = pytest.importorskip(
    "distributed",
    reason="the dask extra is not installed (python -m pip install -e '.[dask]'; "
    "the test extra includes it)",
)

from planner.cli import main  # noqa: E402
from planner.cluster import connect  # noqa: E402
from planner.service import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

JOBS = [
    {
        "model": "central",
        "k": 64,
        "alpha": 0.3,
        "eps1": 1,
        "eps2": 0.5,
        "trials": 80,
        "seed": 11,
        "families": ["uniform", "zipf-1", "paninski"],
    },
    {"model": "shuffle", "k": 32, "alpha": 0.3, "eps1": 1, "eps2": 0.5, "delta": 1e-6}
    | {"trials": 60, "seed": 5},
    {"kind": "exact", "model": "central", "k": 16, "alpha": 0.5, "eps1": 1, "eps2": 1}
    | {"trials": 60, "seed": 3},
]
SLOW_JOB = {
    "model": "central",
    "k": 4096,
    "alpha": 0.3,
    "eps1": 1,
    "eps2": 0.5,
    "trials": 10_000,
    "path": "fast",
}
"""Minutes in all, about a second per family: a job still running when the test acts."""


def new_cluster() -> Any:
    return distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address="127.0.0.1:0",  # not 8787: a real cluster may hold it
        silence_logs=logging.ERROR,
    )


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    local = new_cluster()
    try:
        yield local
    finally:
        local.close()


def finished(port: int, job_id: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, job = call(port, "GET", f"/v1/validations/{job_id}")
        assert status == 200, job
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still {job['status']} after {timeout} s")


def scheduler_tasks_run(client: Any) -> set[str]:
    """The task prefixes the scheduler has seen (``planner-job`` for the service's jobs)."""
    return set(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes)))


def test_jobs_through_the_http_api_on_the_cluster_equal_the_local_pools(
    cluster, tmp_path: Path
) -> None:
    observer = distributed.Client(cluster.scheduler_address, set_as_default=False)
    reports: dict[str, list[dict]] = {}
    try:
        assert "planner-job" not in scheduler_tasks_run(observer)
        for label, options in (
            ("cluster", ("--scheduler", cluster.scheduler_address)),
            ("local", ()),
        ):
            port = free_port()
            server = start_server(port, tmp_path / f"{label}.sqlite3", *options)
            try:
                ids = []
                for body in JOBS:
                    status, job = call(port, "POST", "/v1/validations", body)
                    assert status == 202, job
                    ids.append(job["id"])
                jobs = [finished(port, job_id) for job_id in ids]
            finally:
                stop_server(server)
            for job in jobs:
                assert job["status"] == "done", job["error"]
                assert job["progress"]["done"] == job["progress"]["total"]
                job["report"].pop("elapsed_seconds", None)
            reports[label] = [job["report"] for job in jobs]
            if label == "cluster":
                assert "planner-job" in scheduler_tasks_run(observer)  # it ran there
    finally:
        observer.close()
    assert reports["cluster"] == reports["local"]
    assert reports["local"][0]["n_users_group1"] > 0


def wait_running(client: TestClient, job_id: str, families: int = 1) -> None:
    deadline = time.monotonic() + 60
    while True:
        job = client.get(f"/v1/validations/{job_id}").json()
        if job["status"] == "running" and job["progress"]["done"] >= families:
            return
        assert job["status"] in ("queued", "running") and time.monotonic() < deadline, job
        time.sleep(0.05)


def wait_idle(observer: Any, timeout: float = 20) -> bool:
    """True once no worker of the cluster is running or holding a task."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(observer.processing().values()):
            return True
        time.sleep(0.1)
    return False


def test_cancel_and_time_limit_stop_the_jobs_task_on_the_cluster(cluster, tmp_path: Path) -> None:
    client = connect(cluster.scheduler_address)
    try:
        app = create_app(tmp_path / "stop.sqlite3", workers=1, time_limit=120, client=client)
        with TestClient(app) as http:
            job_id = http.post("/v1/validations", json=SLOW_JOB).json()["id"]
            wait_running(http, job_id)  # progress came back from the worker
            assert any(client.processing().values())
            assert http.delete(f"/v1/validations/{job_id}").status_code == 200
            deadline = time.monotonic() + 10
            while (job := http.get(f"/v1/validations/{job_id}").json())["status"] == "running":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert job["status"] == "cancelled" and job["report"] is None
            assert wait_idle(client), "the cancelled job's task still runs on a worker"

        app = create_app(tmp_path / "limit.sqlite3", workers=1, time_limit=2, client=client)
        with TestClient(app) as http:
            started = time.monotonic()
            job_id = http.post("/v1/validations", json=SLOW_JOB).json()["id"]
            while (job := http.get(f"/v1/validations/{job_id}").json())["status"] in (
                "queued",
                "running",
            ):
                assert time.monotonic() - started < 30, job
                time.sleep(0.1)
            assert job["status"] == "failed" and "time limit of 2 s" in job["error"]
            assert wait_idle(client), "the timed-out job's task still runs on a worker"
    finally:
        client.close()


def test_a_scheduler_gone_mid_run_fails_the_job_in_one_line(tmp_path: Path) -> None:
    own = new_cluster()  # this test closes its cluster
    address = own.scheduler_address
    client = connect(address)
    try:
        app = create_app(tmp_path / "lost.sqlite3", workers=1, time_limit=600, client=client)
        with TestClient(app) as http:
            job_id = http.post("/v1/validations", json=SLOW_JOB).json()["id"]
            wait_running(http, job_id)
            own.close()
            started = time.monotonic()
            while (job := http.get(f"/v1/validations/{job_id}").json())["status"] == "running":
                assert time.monotonic() - started < 30, "the job waits for a scheduler gone"
                time.sleep(0.1)
            assert job["status"] == "failed" and job["report"] is None
            assert job["error"].startswith(f"the dask scheduler at {address} went away")
            assert "\n" not in job["error"] and "Traceback" not in job["error"]
            # a job sent afterwards fails the same way rather than staying queued
            later = http.post("/v1/validations", json=JOBS[0]).json()["id"]
            while (job := http.get(f"/v1/validations/{later}").json())["status"] == "queued":
                assert time.monotonic() - started < 60, "the queue waits for a scheduler gone"
                time.sleep(0.1)
            assert job["status"] == "failed" and "went away" in job["error"]
            health = http.get("/v1/health")  # the service itself goes on, and says so
            assert health.status_code == 200 and health.json()["status"] == "degraded"
            assert health.json()["problem"].startswith(f"the dask scheduler at {address}")
    finally:
        client.close()
        own.close()


def test_serve_with_no_scheduler_answering_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nobody = probe.getsockname()[1]
    database = str(tmp_path / "jobs.sqlite3")
    common = ["serve", "--port", str(free_port()), "--db", database]
    for address in (f"tcp://127.0.0.1:{nobody}", "http://127.0.0.1:8786", "tcp://127.0.0.1"):
        started = time.monotonic()
        assert main([*common, "--scheduler", address]) == 2
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: invalid scheduler = "), err
        assert "Traceback" not in err
        assert time.monotonic() - started < 5
    assert not Path(database).exists()  # refused before the service was built
