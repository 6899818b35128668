"""A job store that refuses writes (locked by another process, disk full, I/O error).

A hostile review held ``BEGIN IMMEDIATE`` on the jobs database for 45 s: the job's
follower thread died on ``database is locked``, the job stayed ``running`` for ever in its
runner slot, and the queue stopped; a POST meanwhile answered 500. Each test here failed
before its fix. The store's busy timeout is cut to 0.1 s so a real lock fails at once.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import planner.service.runner as runner_module
from planner.service import create_app
from planner.service.runner import JobRunner, _Running
from planner.service.store import Job, JobStatus, JobStore

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SMALL_JOB = {"model": "central", "k": 64, "alpha": 0.3, "eps1": 1, "eps2": 0.5, "trials": 60}


def running_job(store: JobStore) -> Job:
    job = store.create(
        "validate",
        {"model": "central"},
        seed=1,
        trials=10,
        code_version="test",
        constants_version="test",
        progress_total=2,
    )
    assert store.mark_running(job.id)
    return job


def running_in_runner(
    database: Path, process: subprocess.Popen[str], seconds_left: float
) -> tuple[JobStore, JobRunner, _Running]:
    """A store that waits 0.1 s on a lock, one running job in a one-slot runner, followed
    by ``process`` with ``seconds_left`` of its time limit."""
    store = JobStore(database, owner=True)
    store._db.execute("PRAGMA busy_timeout = 100")
    job = running_job(store)
    runner = JobRunner(store, workers=1)
    running = _Running(job.id, process, time.monotonic() + seconds_left)
    runner._running[job.id] = running
    return store, runner, running


def locked(database: Path) -> sqlite3.Connection:
    """Another process's write transaction on the database (as ``BEGIN IMMEDIATE``)."""
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def reporting_process() -> subprocess.Popen[str]:
    """A stand-in for a job's process: one progress line, then its report."""
    lines = [{"progress": 1, "family": "uniform"}, {"done": {"verdict": "pass"}}]
    script = "".join(f"print({json.dumps(json.dumps(line))}, flush=True)\n" for line in lines)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)


def assert_recorded_done(store: JobStore, runner: JobRunner, job_id: str) -> None:
    """The job is recorded ``done`` with the stand-in's report (:func:`reporting_process`,
    :func:`refused_outcome`), and the runner holds back no outcome."""
    recorded = store.get(job_id)
    assert recorded is not None
    assert recorded.status is JobStatus.DONE and recorded.report == {"verdict": "pass"}
    assert runner.unrecorded == 0


@pytest.fixture
def fast_backoff(monkeypatch) -> None:
    monkeypatch.setattr(runner_module, "BACKOFF_SECONDS", (0.01, 0.05))


def test_a_follower_outlives_a_locked_store_and_records_the_job_once_it_answers(
    tmp_path: Path, fast_backoff
) -> None:
    database = tmp_path / "jobs.sqlite3"
    store, runner, running = running_in_runner(database, reporting_process(), 60)
    job_id = running.job_id
    holder = locked(database)
    try:
        runner._follow(running)  # had raised OperationalError on the progress line
        assert runner.busy == 0  # its slot is free for the next job
        assert runner.unrecorded == 1
        assert store.get(job_id).status is JobStatus.RUNNING
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    time.sleep(0.02)
    runner._record_pending()  # the store answers again: the report is recorded
    assert_recorded_done(store, runner, job_id)
    store.close()


def test_an_outcome_the_store_still_refuses_ends_the_job_failed_with_the_reason(
    tmp_path: Path, fast_backoff, monkeypatch
) -> None:
    store = JobStore(tmp_path / "jobs.sqlite3", owner=True)
    job = running_job(store)
    runner = JobRunner(store, workers=1)
    finish = store.finish

    def refusing_reports(job_id: str, status: JobStatus, **outcome: Any) -> None:
        if outcome.get("report") is not None:  # e.g. a full disk: the report does not fit
            raise sqlite3.OperationalError("database or disk is full")
        finish(job_id, status, **outcome)

    monkeypatch.setattr(store, "finish", refusing_reports)
    runner._record(job.id, JobStatus.DONE, report={"verdict": "pass"})
    assert runner.unrecorded == 1 and store.get(job.id).status is JobStatus.RUNNING
    monkeypatch.setattr(runner_module, "RECORD_SECONDS", 0.0)
    time.sleep(0.02)
    runner._record_pending()
    failed = store.get(job.id)
    assert failed.status is JobStatus.FAILED, failed
    assert "could not be recorded" in failed.error and "disk is full" in failed.error
    assert "\n" not in failed.error and runner.unrecorded == 0
    store.close()


def test_the_runner_loop_outlives_store_errors_and_goes_on_dispatching(
    tmp_path: Path, fast_backoff, monkeypatch, caplog
) -> None:
    """A store that is busy or locked for a while: the loop backs off and goes on (an
    error that does not pass by itself is the next tests')."""
    store = JobStore(tmp_path / "jobs.sqlite3", owner=True)
    runner = JobRunner(store, workers=1)
    calls = []

    def flaky_next_queued() -> None:
        calls.append(time.monotonic())
        if len(calls) <= 3:
            raise sqlite3.OperationalError("database is locked")
        return None

    monkeypatch.setattr(store, "next_queued", flaky_next_queued)
    with caplog.at_level("WARNING", logger="planner.service"):
        runner.start()
        try:
            deadline = time.monotonic() + 10
            while len(calls) < 6 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(calls) >= 6, calls  # it went on after the errors
            assert runner._thread is not None and runner._thread.is_alive()
            assert runner.store_problem is None  # it passes: not the store's failure
        finally:
            runner.stop()
            store.close()
    assert not [record for record in caplog.records if record.levelname == "ERROR"]


def read_only(store: JobStore) -> sqlite3.Connection:
    """Put a read-only connection to the store's database in place of its own, so that
    every write meets SQLite's own "attempt to write a readonly database" (a file made
    read-only, a read-only mount) while reads answer; the store's own is returned, to be
    put back (:func:`writable_again`)."""
    own = store._db
    with store._lock:
        store._db = sqlite3.connect(
            f"file:{store.path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
        )
        store._db.row_factory = sqlite3.Row
    return own


def writable_again(store: JobStore, own: sqlite3.Connection) -> None:
    with store._lock:
        read_only_connection, store._db = store._db, own
    read_only_connection.close()


def logged(caplog, level: str) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelname == level]


def test_a_store_that_fails_for_good_is_logged_once_and_no_job_is_taken_meanwhile(
    tmp_path: Path, fast_backoff, monkeypatch, caplog
) -> None:
    """An operator's review: a store that fails in a way that does not pass by itself (here
    read-only; a corrupt file, a full disk, an I/O error alike) was retried as a locked
    one, for ever: a warning every 5 s, and every pass tried to take the next queued job.
    Now: one ERROR line naming the cause and the file, no job taken, and the store tried
    again at a slow rate (PROBE_SECONDS)."""
    monkeypatch.setattr(runner_module, "PROBE_SECONDS", 0.2, raising=False)
    database = tmp_path / "jobs.sqlite3"
    store = JobStore(database, owner=True)
    queued = store.create(
        "validate", {}, seed=1, trials=10, code_version="t", constants_version="t", progress_total=1
    )
    taken: list[str] = []
    mark_running = store.mark_running

    def counted_mark_running(job_id: str) -> bool:
        taken.append(job_id)
        return mark_running(job_id)

    monkeypatch.setattr(store, "mark_running", counted_mark_running)
    own = read_only(store)
    runner = JobRunner(store, workers=1)
    with caplog.at_level("WARNING", logger="planner.service"):
        runner.start()
        try:
            time.sleep(1.5)  # about 7 slow tries at the store (the next test's)
        finally:
            runner.stop()
    writable_again(store, own)
    assert taken == [queued.id]  # the attempt that found the store failing, and no other
    assert store.get(queued.id).status is JobStatus.QUEUED
    errors = logged(caplog, "ERROR")
    assert len(errors) == 1, errors  # once, not every few seconds
    assert "readonly database" in errors[0] and str(database) in errors[0]  # cause, file
    assert logged(caplog, "WARNING") == []  # had been one a pass, for ever
    assert "readonly database" in runner.store_problem
    assert str(database) not in runner.store_problem  # /v1/health's: needs no token
    store.close()


def test_a_failed_store_found_writable_again_gets_its_outcome_and_the_failure_ends(
    tmp_path: Path, fast_backoff, monkeypatch, caplog
) -> None:
    """The slow tries find the store mended (space freed, the file writable again)
    without a restart: the outcome it had refused is recorded and the runner works on."""
    monkeypatch.setattr(runner_module, "PROBE_SECONDS", 0.2, raising=False)
    store = JobStore(tmp_path / "jobs.sqlite3", owner=True)
    job = running_job(store)
    own = read_only(store)
    runner = JobRunner(store, workers=1)
    with caplog.at_level("WARNING", logger="planner.service"):
        runner._record(job.id, JobStatus.DONE, report={"verdict": "pass"})
        runner.start()
        try:
            time.sleep(0.8)  # a few refused tries
            assert store.get(job.id).status is JobStatus.RUNNING
            assert runner.store_problem is not None
            writable_again(store, own)
            deadline = time.monotonic() + 5
            while runner.unrecorded and time.monotonic() < deadline:
                time.sleep(0.05)
            assert_recorded_done(store, runner, job.id)
            assert runner.store_problem is None
        finally:
            runner.stop()
    assert len(logged(caplog, "ERROR")) == 1
    assert any("takes writes again" in line for line in logged(caplog, "WARNING"))
    store.close()


@pytest.mark.parametrize(
    ("kind", "fails"),
    [
        ("locked", False),
        ("busy", False),
        ("not a database", True),
        ("read-only", True),
        ("I/O", True),
        ("full", True),
    ],
)
def test_the_runner_fails_only_on_the_errors_that_do_not_pass_by_themselves(
    tmp_path: Path, kind: str, fails: bool, caplog
) -> None:
    """As the HTTP answers say (503 only for busy or locked)."""
    store = JobStore(tmp_path / "jobs.sqlite3", owner=True)
    runner = JobRunner(store, workers=1)
    with caplog.at_level("ERROR", logger="planner.service"):
        assert runner._store_refused(sqlite_error(kind, tmp_path)) is fails
    assert (runner.store_problem is not None) is fails
    assert len(logged(caplog, "ERROR")) == int(fails)
    store.close()


def test_health_says_the_store_is_failing_without_naming_its_file(
    tmp_path: Path, monkeypatch
) -> None:
    """``/v1/health`` had said ``ok`` while the runner could write nothing."""
    database = tmp_path / "jobs.sqlite3"
    app = create_app(database, workers=1)
    store = app.state.service.store
    with TestClient(app) as client:
        assert client.get("/v1/health").json()["store"] == "ok"
        own = read_only(store)
        try:
            with JobStore(database) as other:  # another HTTP process queues a job
                other.create(
                    "validate",
                    {},
                    seed=1,
                    trials=10,
                    code_version="t",
                    constants_version="t",
                    progress_total=1,
                )
            deadline = time.monotonic() + 10
            while (health := client.get("/v1/health")).json()["store"] == "ok":
                assert time.monotonic() < deadline, health.text
                time.sleep(0.05)
        finally:
            writable_again(store, own)
    assert health.status_code == 200  # the plans go on: the service is degraded, not down
    answer = health.json()
    assert answer["status"] == "degraded" and answer["store"] == "failing"
    assert "readonly database" in answer["problem"] and answer["queued"] == 1
    assert str(database) not in health.text and database.name not in health.text
    store.close()


def test_a_post_while_the_store_is_locked_is_503_with_retry_after(tmp_path: Path) -> None:
    database = tmp_path / "jobs.sqlite3"
    app = create_app(database, workers=1, run_jobs=False)
    with TestClient(app) as client:
        app.state.service.store._db.execute("PRAGMA busy_timeout = 100")
        holder = locked(database)
        try:
            response = client.post("/v1/validations", json=SMALL_JOB)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert response.status_code == 503, response.text  # had been 500
        assert response.headers["retry-after"] == "5"
        line = response.json()["error"]
        assert "database is locked" in line and "\n" not in line
        assert client.post("/v1/validations", json=SMALL_JOB).status_code == 202


def test_a_running_job_is_killed_at_its_time_limit_while_the_store_refuses(
    tmp_path: Path, fast_backoff
) -> None:
    """The time limit does not wait for the store: cancellations unread, it still holds."""
    database = tmp_path / "jobs.sqlite3"
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], stdout=subprocess.PIPE, text=True
    )
    store, runner, running = running_in_runner(database, sleeper, -1)  # past its limit
    job_id = running.job_id
    follower = threading.Thread(target=runner._follow, args=(running,))
    follower.start()
    holder = locked(database)
    try:
        runner._enforce()  # reads the cancellations (a read: WAL lets it) and kills it
        follower.join(timeout=10)
        assert not follower.is_alive() and sleeper.poll() is not None
        assert runner.busy == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    time.sleep(0.02)
    runner._record_pending()
    stopped = store.get(job_id)
    assert stopped.status is JobStatus.FAILED and "time limit" in stopped.error
    store.close()


def test_a_second_server_on_the_same_database_through_a_hard_link_is_refused(
    tmp_path: Path,
) -> None:
    """The lock had been ``<realpath>.lock``: a hard link (or a bind mount) is another path
    with its own lock file, and a second server started on the same database."""
    from planner.inputs import InputError

    database = tmp_path / "jobs.sqlite3"
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    first = create_app(database, workers=1, run_jobs=False)
    try:
        alias = elsewhere / "alias.sqlite3"
        alias.hardlink_to(database)
        with pytest.raises(InputError) as refused:
            create_app(alias, workers=1, run_jobs=False)
        line = str(refused.value)
        assert refused.value.parameter == "db" and "\n" not in line
        assert "no other planner serve is using" in line and "another name" in line
        assert not (elsewhere / "alias.sqlite3.lock").exists()  # nothing left behind
    finally:
        first.state.service.store.close()
    create_app(alias, workers=1, run_jobs=False).state.service.store.close()  # free again


def refused_outcome(store: JobStore, runner: JobRunner, monkeypatch) -> str:
    """A job whose report the store refused once: kept, backing off (its next attempt 5 s
    away, as after a few refusals)."""
    job = running_job(store)
    finish = store.finish

    def refusing(*args: Any, **kwargs: Any) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store, "finish", refusing)
    runner._record(job.id, JobStatus.DONE, report={"verdict": "pass"})
    monkeypatch.setattr(store, "finish", finish)
    item = runner._unrecorded[job.id]
    item.next_try, item.wait = time.monotonic() + 5, 5.0
    return job.id


def test_an_outcome_backing_off_at_shutdown_gets_one_last_attempt(
    tmp_path: Path, monkeypatch
) -> None:
    """The runner's last pass at shutdown had tried only the outcomes whose backoff was
    over: one still waiting was dropped, and its finished job came back ``interrupted``."""
    store = JobStore(tmp_path / "jobs.sqlite3", owner=True)
    runner = JobRunner(store, workers=1)
    job_id = refused_outcome(store, runner, monkeypatch)
    runner.start()
    runner.stop()  # the store takes writes again by now
    assert_recorded_done(store, runner, job_id)
    store.close()


def test_an_outcome_the_store_refuses_at_shutdown_is_logged_as_lost_within_the_bound(
    tmp_path: Path, monkeypatch, caplog
) -> None:
    database = tmp_path / "jobs.sqlite3"
    store = JobStore(database, owner=True)
    runner = JobRunner(store, workers=1)
    job_id = refused_outcome(store, runner, monkeypatch)
    monkeypatch.setattr(runner_module, "SHUTDOWN_RECORD_SECONDS", 1.0, raising=False)
    runner.start()
    holder = locked(database)  # another process's write: the store's busy wait is 30 s
    try:
        started = time.monotonic()
        with caplog.at_level("ERROR", logger="planner.service"):
            runner.stop()
        took = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert took < 5, took  # bounded: not the store's 30 s busy timeout
    lost = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert any(job_id in line and "lost" in line for line in lost), lost
    assert all("\n" not in line for line in lost)
    assert store.get(job_id).status is JobStatus.RUNNING  # interrupted at the next start
    store.close()


def test_a_job_stopped_at_shutdown_while_the_store_is_locked_does_not_hold_up_the_stop(
    tmp_path: Path, monkeypatch, caplog
) -> None:
    """Stopping a running job at shutdown had written its ``interrupted`` at once, waiting
    the store's busy timeout (30 s) past the runner's own wait for its thread (10 s)."""
    database = tmp_path / "jobs.sqlite3"
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], stdout=subprocess.PIPE, text=True
    )
    store, runner, running = running_in_runner(database, sleeper, 60)
    store._db.execute("PRAGMA busy_timeout = 30000")  # the store's own
    monkeypatch.setattr(runner_module, "SHUTDOWN_RECORD_SECONDS", 1.0, raising=False)
    follower = threading.Thread(target=runner._follow, args=(running,), daemon=True)
    follower.start()
    runner.start()
    holder = locked(database)
    try:
        started = time.monotonic()
        with caplog.at_level("ERROR", logger="planner.service"):
            runner.stop()
        took = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert took < 8, took
    assert sleeper.poll() is not None
    lines = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert any(running.job_id in line and "lost" in line for line in lines), lines
    follower.join(timeout=35)
    store.close()


def test_a_start_that_fails_after_the_store_is_opened_leaves_the_database_free(
    tmp_path: Path, monkeypatch
) -> None:
    """create_app had opened the store (and its locks) and then failed (here: the
    recovery's write refused), leaving the store unclosed: its lock on the database
    file (a bare descriptor) stayed held, and a second start in the process was refused."""
    database = tmp_path / "jobs.sqlite3"

    def refusing(self: JobStore) -> int:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(JobStore, "recover", refusing)
    with pytest.raises(sqlite3.OperationalError) as failed:
        create_app(database, workers=1, run_jobs=False)
    monkeypatch.undo()
    assert failed.value is not None  # the error (and its traceback) kept, as serve keeps it
    JobStore(database, owner=True).close()  # had been refused: "another process serves…"


def test_a_store_never_closed_releases_its_locks_once_collected(tmp_path: Path) -> None:
    import gc

    database = tmp_path / "jobs.sqlite3"
    forgotten = JobStore(database, owner=True)
    del forgotten
    gc.collect()
    JobStore(database, owner=True).close()


def test_a_store_as_a_context_manager_releases_its_locks_on_an_error(tmp_path: Path) -> None:
    database = tmp_path / "jobs.sqlite3"
    with pytest.raises(RuntimeError), JobStore(database, owner=True) as store:
        running_job(store)
        raise RuntimeError("start-up failed")
    with JobStore(database, owner=True) as again:
        assert again.get(running_job(again).id) is not None


def sqlite_error(kind: str, tmp_path: Path) -> sqlite3.Error:
    """A real SQLite error of each kind (its code set as SQLite sets it), or, where it
    cannot be made here (a full disk, an I/O error), one with SQLite's code."""
    if kind == "not a database":
        garbage = tmp_path / "garbage.sqlite3"
        garbage.write_bytes(b"not a database at all" * 50)
        try:
            sqlite3.connect(garbage).execute("SELECT * FROM sqlite_master")
        except sqlite3.Error as error:
            return error
    if kind == "read-only":
        made = tmp_path / "ro.sqlite3"
        sqlite3.connect(made).execute("CREATE TABLE t (x)").connection.close()
        try:
            sqlite3.connect(f"file:{made}?mode=ro", uri=True).execute("INSERT INTO t VALUES (1)")
        except sqlite3.Error as error:
            return error
    if kind == "locked":
        made = tmp_path / "locked.sqlite3"
        holder = locked(made)
        try:
            sqlite3.connect(made, timeout=0).execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            return error
        finally:
            holder.close()
    line, code, name = {
        "full": ("database or disk is full", 13, "SQLITE_FULL"),
        "I/O": ("disk I/O error", 10, "SQLITE_IOERR"),
        "busy": ("database is busy", 5, "SQLITE_BUSY"),
    }[kind]
    error = sqlite3.OperationalError(line)
    error.sqlite_errorcode, error.sqlite_errorname = code, name  # type: ignore[attr-defined]
    return error


@pytest.mark.parametrize(
    ("kind", "status", "said"),
    [
        ("locked", 503, "database is locked"),
        ("busy", 503, "database is busy"),
        ("not a database", 500, "file is not a database"),
        ("read-only", 500, "readonly database"),
        ("I/O", 500, "disk I/O error"),
        ("full", 507, "disk is full"),
    ],
)
def test_only_a_busy_or_locked_store_is_503_with_retry_after(
    tmp_path: Path, monkeypatch, kind: str, status: int, said: str
) -> None:
    """Every SQLite error had been 503 and Retry-After (a corrupt file's DatabaseError a
    bare 500 naming its type): a client was told to come back for a database that will
    not get better by itself."""
    error = sqlite_error(kind, tmp_path)
    database = tmp_path / "jobs.sqlite3"
    app = create_app(database, workers=1, run_jobs=False)
    try:
        with TestClient(app, raise_server_exceptions=False) as client:

            def refusing(*_: Any, **__: Any) -> Any:
                raise error

            monkeypatch.setattr(app.state.service.store, "page", refusing)
            monkeypatch.setattr(app.state.service.store, "create", refusing)
            for response in (
                client.get("/v1/validations"),
                client.post("/v1/validations", json=SMALL_JOB),
            ):
                assert response.status_code == status, response.text
                line = response.json()["error"]
                assert said in line and "\n" not in line, line
                if status == 503:
                    assert response.headers["retry-after"] == "5"
                else:
                    assert "retry-after" not in response.headers
                    # the path is the operator's, in the log: not told to any client
                    assert str(database) not in line, line
                assert response.headers["x-content-type-options"] == "nosniff"
    finally:
        app.state.service.store.close()


def test_health_says_so_when_the_store_cannot_even_be_counted(
    tmp_path: Path, monkeypatch, caplog
) -> None:
    """A corrupt database: ``/v1/health``'s own count fails. It had been a 500, with an
    error line in the server's log at every poll of a monitor."""
    error = sqlite_error("not a database", tmp_path)
    database = tmp_path / "jobs.sqlite3"
    app = create_app(database, workers=1, run_jobs=False)
    store = app.state.service.store

    def refusing() -> dict[str, int]:
        raise error

    with TestClient(app) as client, caplog.at_level("ERROR", logger="planner.service"):
        monkeypatch.setattr(store, "counts", refusing)
        health = client.get("/v1/health")
    assert health.status_code == 200, health.text
    answer = health.json()
    assert answer["status"] == "degraded" and answer["store"] == "failing"
    assert answer["queued"] is None and answer["running"] is None
    assert "file is not a database" in answer["problem"] and str(database) not in health.text
    assert logged(caplog, "ERROR") == []  # the runner's line says it once
    store.close()


def test_the_apps_shutdown_records_the_last_outcomes_then_closes_the_store(
    tmp_path: Path, monkeypatch
) -> None:
    """An operator's review: the app's shutdown stopped the runner but never closed the
    store, so its connections and its locks on the database file lived as long as the
    process (a second store in it was refused)."""
    database = tmp_path / "jobs.sqlite3"
    app = create_app(database, workers=1)
    store, runner = app.state.service.store, app.state.service.runner
    job_id = refused_outcome(store, runner, monkeypatch)  # taken only at shutdown
    with TestClient(app) as client:
        assert client.get("/v1/health").status_code == 200
    for connection in (store._db, store._reader):
        with pytest.raises(sqlite3.ProgrammingError, match="closed"):
            connection.execute("SELECT 1")
    with JobStore(database, owner=True) as again:  # had been refused: "process … serves it"
        assert_recorded_done(again, runner, job_id)  # the runner's last attempt came first


def test_a_job_stopped_at_shutdown_is_recorded_before_the_store_closes(
    tmp_path: Path, caplog
) -> None:
    """The store closes after the runner stops: a stopped job's follower that was slow to
    write (here its process's wait held up 0.2 s) had written after the close and was
    logged as a failing store and a lost outcome, for an outcome recorded already."""
    database = tmp_path / "jobs.sqlite3"
    app = create_app(database, workers=1)
    store, runner = app.state.service.store, app.state.service.runner
    with caplog.at_level("WARNING", logger="planner.service"), TestClient(app):
        job = running_job(store)
        sleeper = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], stdout=subprocess.PIPE, text=True
        )
        waits = sleeper.wait

        def slow_wait(timeout: float | None = None) -> int:
            if threading.current_thread().name == "follower":
                time.sleep(0.2)
            return waits(timeout)

        sleeper.wait = slow_wait  # type: ignore[method-assign]
        running = _Running(job.id, sleeper, time.monotonic() + 60)
        runner._running[job.id] = running
        follower = threading.Thread(target=runner._follow, args=(running,), name="follower")
        follower.start()
    follower.join(timeout=10)  # whatever it had still to write or log
    assert sleeper.poll() is not None and not follower.is_alive()
    assert logged(caplog, "ERROR") == []
    with JobStore(database, owner=True) as again:
        assert again.get(job.id).status is JobStatus.INTERRUPTED
