"""Defects a hostile review found: each test reproduces one (it failed before its fix)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from planner.cli import main
from planner.inputs import InputError
from planner.service import create_app
from planner.service.store import JobStatus, JobStore

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def idle_client(tmp_path: Path):
    app = create_app(tmp_path / "idle.sqlite3", workers=1, run_jobs=False)
    with TestClient(app) as test_client:
        yield test_client


# 2. a second server reaching the database through a symlink


def test_a_second_server_through_a_symlink_is_refused_and_leaves_running_jobs(tmp_path) -> None:
    database = tmp_path / "jobs.sqlite3"
    first = create_app(database, workers=1, run_jobs=False)
    store = first.state.service.store
    job = store.create(
        "validate", {}, seed=0, trials=1, code_version="x", constants_version="y", progress_total=1
    )
    assert store.mark_running(job.id)
    link = tmp_path / "elsewhere" / "link.sqlite3"
    link.parent.mkdir()
    link.symlink_to(database)
    with pytest.raises(InputError) as refused:
        create_app(link, workers=1, run_jobs=False)
    assert refused.value.parameter == "db" and "no other planner serve" in str(refused.value)
    assert refused.value.value == str(link)  # the name the user gave
    again = store.get(job.id)
    assert again is not None and again.status is JobStatus.RUNNING
    store.close()
    JobStore(link, owner=True).close()  # the lock goes with its holder, whatever the name


# 1. a huge query string: a quadratic check on the event loop, no token needed


def test_a_huge_query_string_is_refused_at_once_naming_its_limit(idle_client) -> None:
    from planner.service.limits import MAX_QUERY_BYTES, MAX_QUERY_PARAMETERS

    names = "&".join(f"n{i}=1" for i in range(6_000))  # ~45 KB of distinct names
    started = time.perf_counter()
    response = idle_client.get(f"/v1/health?{names}")
    assert time.perf_counter() - started < 1.0
    assert response.status_code == 414
    assert response.json() == {
        "error": f"invalid query = {len(names):,} bytes: must be at most {MAX_QUERY_BYTES:,} bytes",
        "parameter": "query",
    }
    many = "&".join(["a"] * (MAX_QUERY_PARAMETERS + 1))
    response = idle_client.get(f"/v1/health?{many}")
    assert response.status_code == 422
    assert response.json()["parameter"] == "query"
    assert f"at most {MAX_QUERY_PARAMETERS} parameters" in response.json()["error"]
    # within the caps: the usual one-line refusals, the repeated name found
    response = idle_client.get("/v1/validations?limit=1&offset=0&limit=2")
    assert response.status_code == 422 and response.json()["parameter"] == "limit"
    assert idle_client.get("/v1/health").status_code == 200


def test_the_repeated_name_check_is_linear() -> None:
    from planner.service.routes import first_repeat

    names = [f"n{i}" for i in range(200_000)]
    started = time.perf_counter()
    assert first_repeat(names) is None
    assert first_repeat([*names, "n5"]) == "n5"
    assert first_repeat(["b", "a", "a", "b"]) == "b"  # the first to appear of those repeated
    assert time.perf_counter() - started < 1.0  # names.count per name: hours
