"""Runs queued jobs, at most ``workers`` at a time, each in its own process, with a time limit.

A dispatcher thread takes queued jobs from the store in order of arrival and starts one
process per job (``python -m planner.service.worker``; never the request's thread). A
follower thread per running job relays its progress lines into the store and records its
outcome. The dispatcher kills a job that outlives the time limit or is cancelled; killing
a job's process stops exactly that job, and a crash of one job fails only that job.

With a dask client (``planner serve --scheduler``) a job is a task on the cluster instead
(:func:`planner.service.worker.run_on_cluster`, the same code and seed, so the same
report); its progress comes back as dask events. A stopped job's future is cancelled and
its stop event set (the task ends after its current family); a job whose scheduler went
away fails with one line instead of waiting for it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from planner.service.store import Job, JobStatus, JobStore, passes
from planner.service.worker import MEMORY_LIMIT_BYTES, PARENT_ENV, PROGRESS_TOPIC, stop_event_name

POLL_SECONDS = 0.2
RECORD_SECONDS = 60.0
"""How long a job's outcome is retried while the job store refuses it (database locked,
disk full, I/O error) before the job is recorded ``failed`` instead, with the reason."""
BACKOFF_SECONDS = (0.2, 5.0)
"""The first and the longest wait between attempts at a store that refuses writes."""
PROGRESS_PAUSE_SECONDS = 10.0
"""How long a job's progress lines are dropped after one could not be written (each
attempt at a locked database waits up to its busy timeout, 30 s)."""
RETRY_WAIT_SECONDS = 1.0
"""How long one retry of a refused outcome waits for the store (not its busy timeout, 30 s:
the loop must notice a stop)."""
SHUTDOWN_RECORD_SECONDS = 5.0
"""At shutdown, how long the outcomes the store has not taken yet get for one last attempt;
what it still refuses then is logged as lost (the job shows ``interrupted`` at the next
start)."""
PROBE_SECONDS = 30.0
"""While the job store fails in a way that does not pass by itself (a corrupt or read-only
database, a full disk, an I/O error), how often the runner tries it again (a write that
changes nothing, then the outcomes it holds): an operator who frees the disk or mends
the file's permissions sees jobs start again within this, without a restart. Between
tries the runner starts no job and writes no progress; the time limit and cancellations
still hold."""
STORE_FAILED_LOG = (
    "planner serve: the job store's database %s fails (%s); this does not pass by itself: "
    "the runner starts no job and tries the store again every %g s (/v1/health says "
    "store failing)"
)
STORE_BACK_LOG = "planner serve: the job store's database %s takes writes again; jobs start again"
STOP_SECONDS = 10.0
"""How long :meth:`JobRunner.stop` waits for the runner's thread (beside
:data:`SHUTDOWN_RECORD_SECONDS`)."""
LOST_LINE = (
    "planner serve: job %s's outcome (%s) is lost: the job store refused it at shutdown "
    "(%s); the job shows interrupted at the next start (rerun it)"
)
STORE_FAILED_LINE = (
    "its outcome could not be recorded: the job store refused it for {seconds:g} s ({reason}); "
    "POST /v1/validations/{{id}}/rerun runs it again"
)

log = logging.getLogger("planner.service")
LOST_SCHEDULER_SECONDS = 10.0
"""How long a job on a cluster waits for a client that lost its scheduler to reconnect
before it fails."""


@dataclass
class _Running:
    job_id: str
    process: subprocess.Popen[str] | None
    """The job's own process (None for a job on a cluster)."""
    deadline: float
    stopped: tuple[JobStatus, str] | None = None
    """Set by the dispatcher before it kills the process: the status and reason to record."""
    future: Any = None
    """The job's ``distributed.Future`` (a job on a cluster)."""


@dataclass
class _Unrecorded:
    """A job's outcome the store refused, kept until the store takes it."""

    status: JobStatus
    report: dict | None
    error: str | None
    since: float
    """When the first attempt failed (``time.monotonic``)."""
    reason: str
    """The store's last refusal, in one line."""
    next_try: float
    wait: float


class JobRunner:
    """The bounded pool of job processes (or of a dask cluster's tasks, with ``client``)
    behind ``POST /v1/validations``."""

    def __init__(
        self,
        store: JobStore,
        *,
        workers: int = 2,
        time_limit: float = 600.0,
        memory: int = MEMORY_LIMIT_BYTES,
        client: Any = None,
        scheduler: str | None = None,
    ) -> None:
        self.store = store
        self.workers = workers
        self.time_limit = time_limit
        self.memory = memory
        self.client = client
        """A ``distributed.Client``: jobs run on its cluster; None: in local processes."""
        self.scheduler = scheduler or (None if client is None else str(client.scheduler.address))
        self._running: dict[str, _Running] = {}
        self._unrecorded: dict[str, _Unrecorded] = {}
        """Outcomes the store refused (the loop retries them): their jobs' slots are free."""
        self._recording: set[str] = set()
        """Jobs whose outcome is being written for the first time (:meth:`_record`)."""
        self._closed = False
        """Set by the last attempt at shutdown: an outcome refused after it is lost (logged)."""
        self._progress_paused_until = 0.0
        self._lost_since: float | None = None
        self._store_failure: str | None = None
        """The cause, in one line, while the store fails in a way that does not pass by
        itself (:meth:`_store_refused`); None while it works or only waits (busy, locked)."""
        self._store_failures = 0
        """How many such errors the store has given (a probe's pass that adds none ends the
        failure)."""
        self._next_probe = 0.0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._closed = False
            if self.client is not None:
                self.client.subscribe_topic(PROGRESS_TOPIC, self._remote_progress)
            self._thread = threading.Thread(target=self._loop, name="job-runner", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop dispatching and kill the running jobs (recorded as ``interrupted``)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_SECONDS + SHUTDOWN_RECORD_SECONDS)
            if self._thread.is_alive():  # e.g. a write waiting on a locked database
                with self._lock:
                    left = sorted({*self._unrecorded, *self._recording})
                if left:
                    log.error(
                        "planner serve: the job runner did not stop in time; the outcomes of "
                        "jobs %s may be lost (they show interrupted at the next start)",
                        ", ".join(left),
                    )
            self._thread = None
        if self.client is not None and self.client.status == "running":
            with contextlib.suppress(Exception):
                self.client.unsubscribe_topic(PROGRESS_TOPIC)

    def wake(self) -> None:
        """A job was queued or cancelled: look now rather than at the next poll."""
        self._wake.set()

    @property
    def busy(self) -> int:
        return len(self._running)

    def _loop(self) -> None:
        try:
            wait = BACKOFF_SECONDS[0]
            while not self._stop.is_set():
                if self._turn():
                    wait = BACKOFF_SECONDS[0]
                    self._wake.wait(POLL_SECONDS)
                else:  # the store refused: back off, then try again (never give up)
                    self._stop.wait(wait)
                    wait = min(2 * wait, BACKOFF_SECONDS[1])
                self._wake.clear()
        finally:
            with self._lock:
                running = list(self._running.values())
            for job in running:
                self._kill(job, JobStatus.INTERRUPTED, "the server stopped while this job ran")
            self._record_at_shutdown()

    def _turn(self) -> bool:
        """One pass of the loop: record pending outcomes, start queued jobs, stop overlong
        and cancelled ones. False when the store refused for now (busy, locked): the loop
        backs off.

        A hostile review held the database locked for 45 s: the loop (and a job's follower)
        died on the store's error, the job stayed ``running`` for ever in its slot, and the
        queue stopped. The loop now survives any error and backs off. An operator's review:
        a store that fails for good (a corrupt or read-only file, a full disk) had been
        retried the same way for ever, a warning every 5 s, jobs still taken; now it is
        logged once (:meth:`_store_refused`), and while it lasts a pass only holds the time
        limit and cancellations, trying the store every :data:`PROBE_SECONDS`."""
        try:
            # the time limit and cancellations first: retrying refused outcomes may wait on
            # the store's busy timeout (a review of this fix)
            self._enforce()  # before starting more: a slot may be freed here
            failures = self._store_failures
            if self._store_failure is not None:  # failing for good: only a probe, now and then
                if time.monotonic() < self._next_probe:
                    return True
                self._next_probe = time.monotonic() + PROBE_SECONDS
                self.store.probe(wait=RETRY_WAIT_SECONDS)
            self._record_pending()
            if self._store_failures == failures:  # no job for a store found failing
                self._dispatch()
        except Exception as error:  # any: the loop must outlive every failure
            if isinstance(error, sqlite3.Error) and self._store_refused(error):
                return True  # said once; tried again in PROBE_SECONDS
            log.warning("planner serve: the job runner's pass failed, retrying: %s", _line(error))
            return False
        if self._store_failure is not None and self._store_failures == failures:
            with self._lock:
                self._store_failure = None
            log.warning(STORE_BACK_LOG, self.store.path)
        return True

    def _store_refused(self, error: sqlite3.Error) -> bool:
        """Note a store's error: False for one that passes by itself (busy, locked: the
        caller retries as before); True for any other, the store's failure, logged once at
        ERROR with its cause (the path only in the log: ``/v1/health`` needs no token)."""
        if passes(error):
            return False
        cause = _line(error)
        with self._lock:
            self._store_failures += 1
            first = self._store_failure is None
            self._store_failure = cause
            if first:
                self._next_probe = time.monotonic() + PROBE_SECONDS
        if first:
            log.error(STORE_FAILED_LOG, self.store.path, cause, PROBE_SECONDS)
        return True

    @property
    def store_problem(self) -> str | None:
        """Why the runner starts no job (the store fails in a way that does not pass by
        itself), in one line without the database's path, or None."""
        cause = self._store_failure
        if cause is None:
            return None
        return (
            f"the job store fails ({cause}): no job starts until it takes writes again "
            f"(tried every {PROBE_SECONDS:g} s); the server's log names the file"
        )

    def _dispatch(self) -> None:
        failures = self._store_failures
        while len(self._running) < self.workers and self._store_failures == failures:
            if self.client is not None and self.client.status != "running":
                if not self._scheduler_lost():
                    return  # reconnecting: the queue waits
                job = self.store.next_queued()
                if job is None or not self.store.mark_running(job.id):
                    return
                self._record(job.id, JobStatus.FAILED, error=self._lost_line())
                continue
            job = self.store.next_queued()
            if job is None or not self.store.mark_running(job.id):
                return
            if self.client is not None:
                self._submit(job)
                continue
            environment = {
                **os.environ,
                PARENT_ENV: str(os.getpid()),
                "PLANNER_JOB_MEMORY": str(self.memory),
                "OPENBLAS_NUM_THREADS": "1",
                "OMP_NUM_THREADS": "1",
            }
            try:
                process = subprocess.Popen(
                    [sys.executable, "-m", "planner.service.worker"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    env=environment,
                )
                assert process.stdin is not None
                process.stdin.write(json.dumps({"kind": job.kind, "request": job.request}) + "\n")
                process.stdin.close()
            except OSError as error:
                self._record(job.id, JobStatus.FAILED, error=f"cannot start the job: {error}")
                continue
            running = _Running(job.id, process, time.monotonic() + self.time_limit)
            with self._lock:
                self._running[job.id] = running
            threading.Thread(
                target=self._follow, args=(running,), name=f"job-{job.id[:8]}", daemon=True
            ).start()

    def _submit(self, job: Job) -> None:
        """Start a job as a task on the cluster, and its follower thread."""
        from planner.service.worker import run_on_cluster

        try:
            future = self.client.submit(
                run_on_cluster,
                job.id,
                job.kind,
                job.request,
                pure=False,
                key=f"planner-job-{job.id}",
            )
        except Exception as error:  # the client closed between the check and the call
            self._record(job.id, JobStatus.FAILED, error=self._lost_line(error))
            return
        running = _Running(job.id, None, time.monotonic() + self.time_limit, future=future)
        with self._lock:
            self._running[job.id] = running
        threading.Thread(
            target=self._follow_remote, args=(running,), name=f"job-{job.id[:8]}", daemon=True
        ).start()

    def _remote_progress(self, event: tuple[float, Any]) -> None:
        """A dask event from a job's task (runs on the client's event loop)."""
        _, message = event
        try:
            job_id = str(message["job"])
            if job_id in self._running:
                self._progress(job_id, int(message["progress"]), str(message["family"]))
        except (KeyError, TypeError, ValueError):  # not an event this code sent
            return

    def _follow_remote(self, running: _Running) -> None:
        """Wait for one job's task and record its outcome."""
        status, report, error = self._remote_outcome(running.future)
        with self._lock:
            self._running.pop(running.job_id, None)
            self._recording.add(running.job_id)  # in the same step: see _record_at_shutdown
            stopped = running.stopped
        if stopped is not None:
            self._record(running.job_id, stopped[0], error=stopped[1])
            self._clear_stop(running.job_id)
        else:
            self._record(running.job_id, status, report=report, error=error)
        self._wake.set()

    def _remote_outcome(self, future: Any) -> tuple[JobStatus, dict | None, str | None]:
        """The task's result as (status, report, error), however it ends: done, failed,
        its workers dead, cancelled, or its scheduler gone (after
        :data:`LOST_SCHEDULER_SECONDS` without it, or at once when the client closed)."""
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker

        while True:
            try:
                message = future.result(timeout=POLL_SECONDS)
            except TimeoutError:
                if self._scheduler_lost():
                    return JobStatus.FAILED, None, self._lost_line()
                continue
            except KilledWorker as error:
                reason = str(error).splitlines()[0]
                return JobStatus.FAILED, None, f"the cluster's workers died running it ({reason})"
            except (FutureCancelledError, concurrent.futures.CancelledError) as error:
                return JobStatus.FAILED, None, self._lost_line(error)
            except Exception as error:  # e.g. the package is missing on a worker
                line = f"{type(error).__name__}: {error}".splitlines()[0]
                return JobStatus.FAILED, None, f"the job failed on the cluster: {line}"
            if isinstance(message, dict) and "done" in message:
                return JobStatus.DONE, message["done"], None
            error_line = message.get("error") if isinstance(message, dict) else None
            return JobStatus.FAILED, None, str(error_line or "the job's task gave no result")

    def cluster_problem(self) -> str | None:
        """Why jobs cannot run now (the Dask client is not connected to its scheduler), or
        None: local processes, or a connected cluster."""
        if self.client is None or self.client.status == "running":
            return None
        return (
            f"the dask scheduler at {self.scheduler} is not reachable (client "
            f"{self.client.status}): jobs fail until it and planner serve --scheduler are "
            "restarted"
        )

    def _scheduler_lost(self) -> bool:
        """The client closed, or has been without its scheduler for longer than
        :data:`LOST_SCHEDULER_SECONDS` (dask's client may try to reconnect for ever)."""
        if self.client.status == "running":
            self._lost_since = None
            return False
        if self._lost_since is None:
            self._lost_since = time.monotonic()
        return (
            self.client.status in ("closing", "closed")
            or time.monotonic() - self._lost_since > LOST_SCHEDULER_SECONDS
        )

    def _lost_line(self, error: BaseException | None = None) -> str:
        """The one line a job gets when the cluster's scheduler is no longer reachable."""
        why = "" if error is None else f" ({str(error).splitlines()[0] or type(error).__name__})"
        return (
            f"the dask scheduler at {self.scheduler} went away{why}; the job did not finish: "
            "restart the scheduler and planner serve --scheduler, then rerun it"
        )

    def _clear_stop(self, job_id: str) -> None:
        """Drop a stopped job's stop event from the scheduler (if it is still there)."""
        if self.client is None or self.client.status != "running":
            return
        from distributed import Event

        with contextlib.suppress(Exception):
            Event(stop_event_name(job_id), client=self.client).clear()

    def _follow(self, running: _Running) -> None:
        """Relay one job's lines into the store until its process ends, then free its slot
        and record its outcome. No store error ends this thread early (a hostile review:
        a locked database had killed it, leaving the job ``running`` in its slot for ever):
        a progress line the store refuses is dropped, an outcome it refuses is kept and
        retried (:meth:`_record`)."""
        outcome: tuple[JobStatus, dict | None, str | None] | None = None
        assert running.process is not None and running.process.stdout is not None
        read_to_end = False
        try:
            for line in running.process.stdout:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                if "progress" in message:
                    self._progress(
                        running.job_id, int(message["progress"]), str(message.get("family"))
                    )
                elif "done" in message:
                    outcome = (JobStatus.DONE, message["done"], None)
                elif "error" in message:
                    outcome = (JobStatus.FAILED, None, str(message["error"]))
            read_to_end = True
        finally:
            if not read_to_end and running.process.poll() is None:
                running.process.kill()  # no one would read its lines
            code = running.process.wait()
            with self._lock:
                self._running.pop(running.job_id, None)
                self._recording.add(running.job_id)  # in the same step: see _record_at_shutdown
                stopped = running.stopped
            if stopped is not None:
                self._record(running.job_id, stopped[0], error=stopped[1])
            elif outcome is None:
                self._record(
                    running.job_id,
                    JobStatus.FAILED,
                    error=f"the job's process ended without a result (exit code {code})",
                )
            else:
                self._record(running.job_id, outcome[0], report=outcome[1], error=outcome[2])
            self._wake.set()

    def _progress(self, job_id: str, done: int, note: str) -> None:
        """Write a job's progress, or drop it (and the next ones for
        :data:`PROGRESS_PAUSE_SECONDS`) when the store refuses: progress is worth no
        thread's death and no 30 s wait per line."""
        if self._store_failure is not None or time.monotonic() < self._progress_paused_until:
            return
        try:
            self.store.progress(job_id, done, note)
        except sqlite3.Error as error:
            self._progress_paused_until = time.monotonic() + PROGRESS_PAUSE_SECONDS
            if not self._store_refused(error):
                log.warning(
                    "planner serve: job %s's progress not recorded: %s", job_id, _line(error)
                )

    def _record(
        self,
        job_id: str,
        status: JobStatus,
        *,
        report: dict | None = None,
        error: str | None = None,
    ) -> None:
        """Record a job's outcome now, or keep it for the loop to retry (with backoff) while
        the store refuses it; past :data:`RECORD_SECONDS` the job is recorded ``failed``
        with the reason instead, as soon as the store answers. Never raises: the caller's
        thread (a follower, the loop) must go on."""
        with self._lock:
            self._recording.add(job_id)
        try:
            self.store.finish(job_id, status, report=report, error=error)
        except sqlite3.Error as failure:
            self._store_refused(failure)
            self._keep(job_id, status, report, error, _line(failure))
        finally:
            with self._lock:
                self._recording.discard(job_id)

    def _keep(
        self,
        job_id: str,
        status: JobStatus,
        report: dict | None,
        error: str | None,
        reason: str,
        *,
        quiet: bool = False,
    ) -> None:
        """Keep an outcome the store refused (``quiet``: not tried yet) for the loop to
        retry; after the last attempt at shutdown (:meth:`_record_at_shutdown`), log it as
        lost instead."""
        now = time.monotonic()
        with self._lock:
            closed = self._closed
            if not closed:
                self._unrecorded[job_id] = _Unrecorded(
                    status=status,
                    report=report,
                    error=error,
                    since=now,
                    reason=reason,
                    next_try=now + BACKOFF_SECONDS[0],
                    wait=BACKOFF_SECONDS[0],
                )
        if closed:
            log.error(LOST_LINE, job_id, status.value, reason)
        elif not quiet:
            log.warning("planner serve: job %s's outcome not recorded yet: %s", job_id, reason)

    def _record_at_shutdown(self) -> None:
        """One last attempt, within :data:`SHUTDOWN_RECORD_SECONDS` in all, at every outcome
        the store has not taken, whether or not its backoff is over (the loop's last pass
        had tried only those due, and dropped the rest unsaid: a finished job's report was
        lost and the job came back ``interrupted``). What the store still refuses is logged
        as lost, one line per job.

        It waits first, within the same bound, for the followers of the jobs just stopped
        (a job leaves ``_running`` for ``_recording`` in one step): the store is closed
        after this (the app's lifespan), and a follower that wrote after that had been
        logged as a failed store and a lost outcome, for an outcome recorded here."""
        deadline = time.monotonic() + SHUTDOWN_RECORD_SECONDS
        while (self._running or self._recording) and time.monotonic() < deadline:
            time.sleep(0.02)
        with self._lock:
            pending = list(self._unrecorded.items())
            self._unrecorded.clear()
            self._closed = True
            writing = sorted(self._recording - {job_id for job_id, _ in pending})
        for job_id, item in pending:
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise sqlite3.OperationalError(f"no time left: {item.reason}")
                self.store.finish(
                    job_id, item.status, report=item.report, error=item.error, wait=left
                )
            except sqlite3.Error as failure:
                log.error(LOST_LINE, job_id, item.status.value, _line(failure))
        for job_id in writing:
            log.error(
                "planner serve: job %s's outcome may be lost: its first write still waited for "
                "the job store at shutdown",
                job_id,
            )

    def _record_pending(self) -> None:
        """Try again the outcomes the store refused (each on its own backoff). Past
        :data:`RECORD_SECONDS` a report the store still refuses (it may be the report
        itself, on a full disk) gives way to ``failed`` with the store's reason."""
        now = time.monotonic()
        with self._lock:
            due = [(key, item) for key, item in self._unrecorded.items() if item.next_try <= now]
        for job_id, item in due:
            if self._stop.is_set():
                return  # the last attempt at shutdown takes the rest, within its bound
            attempts = [(item.status, item.report, item.error)]
            if item.report is not None and now - item.since > RECORD_SECONDS:
                line = STORE_FAILED_LINE.format(seconds=RECORD_SECONDS, reason=item.reason)
                attempts.append((JobStatus.FAILED, None, line))
            for status, report, error in attempts:
                try:
                    self.store.finish(
                        job_id, status, report=report, error=error, wait=RETRY_WAIT_SECONDS
                    )
                except sqlite3.Error as failure:
                    self._store_refused(failure)
                    item.reason = _line(failure)
                    continue
                with self._lock:
                    self._unrecorded.pop(job_id, None)
                break
            else:
                item.next_try = time.monotonic() + item.wait
                item.wait = min(2 * item.wait, BACKOFF_SECONDS[1])

    @property
    def unrecorded(self) -> int:
        """Finished jobs whose outcome the store has not taken yet."""
        return len(self._unrecorded)

    def _enforce(self) -> None:
        with self._lock:
            running = list(self._running.values())
        if not running:
            return
        try:
            cancelled = self.store.cancel_requested()
        except sqlite3.Error as error:  # the time limit holds all the same
            if not self._store_refused(error) and self._store_failure is None:
                log.warning("planner serve: cancellations not read: %s", _line(error))
            cancelled = set()
        now = time.monotonic()
        for job in running:
            if job.job_id in cancelled:
                self._kill(job, JobStatus.CANCELLED, "cancelled while running")
            elif now > job.deadline:
                reason = f"time limit of {self.time_limit:g} s exceeded; the job was stopped"
                self._kill(job, JobStatus.FAILED, reason)

    def _kill(self, running: _Running, status: JobStatus, reason: str) -> None:
        with self._lock:
            if running.stopped is None:
                running.stopped = (status, reason)
        if running.future is not None:
            self._stop_remote(running)
        elif running.process is not None:
            if running.process.poll() is None:
                running.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                running.process.wait(timeout=5)
        if self._stop.is_set():  # the follower may not get to it before exit: recorded by
            # the last attempt at shutdown, within its bound (not the store's busy timeout)
            self._keep(running.job_id, status, None, reason, "not written yet", quiet=True)

    def _stop_remote(self, running: _Running) -> None:
        """Set the job's stop event (its task ends after its current family) and cancel
        its future (a task not started yet never starts)."""
        if self.client.status != "running":
            return  # the follower fails it as lost
        from distributed import Event

        with contextlib.suppress(Exception):
            Event(stop_event_name(running.job_id), client=self.client).set()
        with contextlib.suppress(Exception):
            running.future.cancel()


def _line(error: BaseException) -> str:
    """An exception as one line: its first line, or its type's name."""
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
