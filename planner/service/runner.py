"""Runs queued jobs, at most ``workers`` at a time, each in its own process, with a time limit.

A dispatcher thread takes queued jobs from the store in order of arrival and starts one
process per job (``python -m planner.service.worker``; never the request's thread). A
follower thread per running job relays its progress lines into the store and records its
outcome. The dispatcher kills a job that outlives the time limit or is cancelled; killing
a job's process stops exactly that job, and a crash of one job fails only that job.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from planner.service.store import JobStatus, JobStore
from planner.service.worker import MEMORY_LIMIT_BYTES, PARENT_ENV

POLL_SECONDS = 0.2


@dataclass
class _Running:
    job_id: str
    process: subprocess.Popen[str]
    deadline: float
    stopped: tuple[JobStatus, str] | None = None
    """Set by the dispatcher before it kills the process: the status and reason to record."""


class JobRunner:
    """The bounded pool of job processes behind ``POST /v1/validations``."""

    def __init__(
        self,
        store: JobStore,
        *,
        workers: int = 2,
        time_limit: float = 600.0,
        memory: int = MEMORY_LIMIT_BYTES,
    ) -> None:
        self.store = store
        self.workers = workers
        self.time_limit = time_limit
        self.memory = memory
        self._running: dict[str, _Running] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="job-runner", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop dispatching and kill the running jobs (recorded as ``interrupted``)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def wake(self) -> None:
        """A job was queued or cancelled: look now rather than at the next poll."""
        self._wake.set()

    @property
    def busy(self) -> int:
        return len(self._running)

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                self._dispatch()
                self._enforce()
                self._wake.wait(POLL_SECONDS)
                self._wake.clear()
        finally:
            with self._lock:
                running = list(self._running.values())
            for job in running:
                self._kill(job, JobStatus.INTERRUPTED, "the server stopped while this job ran")

    def _dispatch(self) -> None:
        while len(self._running) < self.workers:
            job = self.store.next_queued()
            if job is None or not self.store.mark_running(job.id):
                return
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
                self.store.finish(job.id, JobStatus.FAILED, error=f"cannot start the job: {error}")
                continue
            running = _Running(job.id, process, time.monotonic() + self.time_limit)
            with self._lock:
                self._running[job.id] = running
            threading.Thread(
                target=self._follow, args=(running,), name=f"job-{job.id[:8]}", daemon=True
            ).start()

    def _follow(self, running: _Running) -> None:
        """Relay one job's lines into the store until its process ends."""
        outcome: tuple[JobStatus, dict | None, str | None] | None = None
        assert running.process.stdout is not None
        for line in running.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "progress" in message:
                self.store.progress(running.job_id, int(message["progress"]), message["family"])
            elif "done" in message:
                outcome = (JobStatus.DONE, message["done"], None)
            elif "error" in message:
                outcome = (JobStatus.FAILED, None, str(message["error"]))
        code = running.process.wait()
        with self._lock:
            self._running.pop(running.job_id, None)
            stopped = running.stopped
        if stopped is not None:
            self.store.finish(running.job_id, stopped[0], error=stopped[1])
        elif outcome is None:
            self.store.finish(
                running.job_id,
                JobStatus.FAILED,
                error=f"the job's process ended without a result (exit code {code})",
            )
        else:
            self.store.finish(running.job_id, outcome[0], report=outcome[1], error=outcome[2])
        self._wake.set()

    def _enforce(self) -> None:
        with self._lock:
            running = list(self._running.values())
        if not running:
            return
        cancelled = self.store.cancel_requested()
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
        if running.process.poll() is None:
            running.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            running.process.wait(timeout=5)
        if self._stop.is_set():  # the follower may not get to it before exit
            self.store.finish(running.job_id, status, error=reason)
