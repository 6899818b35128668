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
