"""Crash safety: SIGKILL the real server during a job, restart it, find the job interrupted.

A real ``planner serve`` (uvicorn) on 127.0.0.1 with a database in a temporary folder.
The job's own process must die with the server (no orphan writing a stale result), the
restarted server must list every job, show the killed one ``interrupted`` (not
``running``), run it again on request, and the database must pass SQLite's integrity check.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.servers import call, free_port, start_server, stop_server

LONG_JOB = {
    "model": "central",
    "k": 4096,
    "alpha": 0.3,
    "eps1": 1,
    "eps2": 0.5,
    "trials": 1000,
    "path": "fast",
}
SHORT_JOB = {
    "model": "central",
    "k": 64,
    "alpha": 0.3,
    "eps1": 1,
    "eps2": 0.5,
    "trials": 50,
    "families": ["uniform"],
}


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc to find the job")
def test_sigkill_during_a_job_then_restart_shows_it_interrupted(tmp_path: Path) -> None:
    database = tmp_path / "jobs.sqlite3"
    port = free_port()
    server = start_server(port, database)
    try:
        status, long_job = call(port, "POST", "/v1/validations", LONG_JOB)
        assert status == 202
        status, short_job = call(port, "POST", "/v1/validations", SHORT_JOB)
        assert status == 202
        deadline = time.monotonic() + 90
        while True:  # running, with progress reported
            job = call(port, "GET", f"/v1/validations/{long_job['id']}")[1]
            if job["status"] == "running" and job["progress"]["done"] >= 1:
                break
            assert job["status"] in ("queued", "running"), job
            assert time.monotonic() < deadline, job
            time.sleep(0.1)
        workers = children_of(server.pid)
        assert workers, "the job runs in its own process"
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(pid) for pid in workers), "the job outlived its server"

        with sqlite3.connect(database) as db:  # what the crash left
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            left = dict(db.execute("SELECT id, status FROM jobs").fetchall())
        assert left == {long_job["id"]: "running", short_job["id"]: "queued"}

        server = start_server(port, database)
        status, listed = call(port, "GET", "/v1/validations")
        assert status == 200 and listed["total"] == 2
        killed = call(port, "GET", f"/v1/validations/{long_job['id']}")[1]
        assert killed["status"] == "interrupted" and killed["report"] is None
        assert killed["progress"]["done"] >= 1 and "rerun" in killed["error"]

        deadline = time.monotonic() + 60  # the queue goes on after the restart
        while (queued := call(port, "GET", f"/v1/validations/{short_job['id']}")[1])["status"] in (
            "queued",
            "running",
        ):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert queued["status"] == "done" and queued["report"]["n_users_group1"] > 0

        status, again = call(port, "POST", f"/v1/validations/{long_job['id']}/rerun")
        assert status == 202 and again["provenance"]["rerun_of"] == long_job["id"]
        assert again["request"] == killed["request"]
        status, cancelled = call(port, "DELETE", f"/v1/validations/{again['id']}")
        assert status == 200 and cancelled["id"] == again["id"]
    finally:
        stop_server(server)
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        statuses = [row[0] for row in db.execute("SELECT status FROM jobs")]
    assert "running" not in statuses and len(statuses) == 3
